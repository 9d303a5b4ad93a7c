"""Every element's content fits its category's shape (dpe_server/model/content.py,
docs/content.md), on every fixture document and on the shared corpus when present."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_suffix
from dpe_server.model.content import SHAPES, problems
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import Category, Document
from tests.corpus_trees import Outcome

SUFFIXES = (".xlsx", ".docx", ".pptx", ".pdf")


def _documents(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())


def _shape_problems(path: Path) -> list[str]:
    extractor = for_suffix(path.suffix.lower())
    assert extractor is not None
    try:
        with path.open("rb") as f:
            doc = extractor.extract(f, DEFAULT_LIMITS)
    except ExtractionError:
        return []
    return _problems(path.name, doc)


def _problems(name: str, doc: Document | None) -> list[str]:
    """What does not fit its shape in `doc` (None: a file that does not open)."""
    if doc is None:
        return []
    return [
        f"{name} {e.element_id}: {p}"
        for page in doc.pages
        for e in page.elements
        for p in problems(e.category, e.content)
    ]


def test_every_category_has_a_shape() -> None:
    assert set(SHAPES) == set(Category)


def test_problems_names_missing_unknown_and_mistyped_fields() -> None:
    content = {"headers": ["a"], "rows": [["1", 2]], "total_rows": "1", "extra": 1}
    assert problems(Category.TABLE, content) == [
        "content.total_columns is missing",
        "content.rows[0][1] is int, not str",
        "content.total_rows is str, not int",
        "content.extra is not a field of TableContent",
    ]
    assert (
        problems(
            Category.CHART,
            {
                "chart_type": "bar",
                "title": "",
                "data_summary": "",
                "series": [{"name": "s", "categories": ["a"], "values": [1.5, None]}],
            },
        )
        == []
    )


def test_fields_the_extractors_write_beyond_the_fixtures_are_declared() -> None:
    """Fields no fixture shows but an extractor writes (typing the builders found them)."""
    chart = {"chart_type": "bar", "title": "", "series": [], "data_summary": ""}
    cases = [
        (Category.LINK, {"text": "a", "url": "u", "cell": "A1", "internal": False, "tooltip": "t"}),
        (Category.WIDGET, {"kind": "embedded_object", "name": "x", "text": "", "link": "a.pdf"}),
        (Category.CHART, chart | {"chart_types": ["bar", "line"], "axis_titles": {"y2": "%"}}),
        (Category.ANNOTATION, {"text": "t", "kind": "comment", "resolved": True}),
    ]
    assert [p for category, content in cases for p in problems(category, content)] == []


def test_fixture_contents_fit_their_shapes(fixture_dir: Path) -> None:
    found = [p for path in _documents(fixture_dir) for p in _shape_problems(path)]
    assert found == []


@pytest.mark.corpus
def test_corpus_contents_fit_their_shapes(
    corpus: Path, corpus_outcomes: dict[Path, Outcome]
) -> None:
    """On the session's one extraction of the corpus (tests/corpus_trees.py)."""
    found = [
        p for path in _documents(corpus) for p in _problems(path.name, corpus_outcomes[path].doc)
    ]
    assert found == []
