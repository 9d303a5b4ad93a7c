"""Markdown (.md): rendered by markdown-it-py and read by the web page reader; the README
fixture's tree (front matter as metadata, code with languages, a GFM table, a task list,
nested lists, raw HTML), TOML front matter, the flat YAML reader, and the size cap."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.extractors.markdown.front import split_front_matter
from dpe_server.model.errors import TooLargeError
from dpe_server.model.tree import Category, Document, Element
from fixtures.builders import markdown


def _md(text: str, limits: object = DEFAULT_LIMITS) -> Document:
    extractor = for_path("notes.md")
    assert extractor is not None
    return extractor.extract(io.BytesIO(text.encode()), limits)  # type: ignore[arg-type]


def _all(doc: Document, category: Category) -> list[Element]:
    return [e for p in doc.pages for e in p.elements if e.category is category]


def test_github_readme(fixture_dir: Path) -> None:
    extractor = for_path(markdown.README)
    assert extractor is not None
    with (fixture_dir / markdown.README).open("rb") as f:
        doc = extractor.extract(f, DEFAULT_LIMITS)
    props = doc.properties
    assert props.title == "MD-Title otterkit"
    assert props.summary == "MD-Summary A small toolkit for counting river otters."
    assert props.keywords == ("otters", "field-work", "python")
    assert props.extra["front_matter"] == {
        "title": "MD-Title otterkit",
        "description": "MD-Summary A small toolkit for counting river otters.",
        "tags": ["otters", "field-work", "python"],
        "date": "2026-01-01",
        "draft": False,
    }
    assert [p.title for p in doc.pages] == ["otterkit"]  # one # heading, ## sections in it
    levels = [(h.content["level"], h.content["text"]) for h in _all(doc, Category.HEADING)]
    assert levels[:3] == [(1, "otterkit"), (2, "Installation"), (2, "Usage")]
    code = {c.content["language"]: c.content["text"] for c in _all(doc, Category.CODE)}
    assert code["bash"] == "pip install otterkit  # MD-Code"
    assert code["python"].splitlines()[-1] == 'print(count("survey.csv"))'
    (table,) = _all(doc, Category.TABLE)
    assert table.content["headers"] == ["Feature", "Status", "Since"]
    assert table.content["rows"][0] == ["MD-Cell CSV import", "stable", "0.1"]
    (tasks,) = _all(doc, Category.LIST)
    assert tasks.content["items"] == [
        {"text": "☒ MD-Done Read CSV surveys", "level": 0},
        {"text": "☐ MD-Todo Read GPX tracks", "level": 0},
        {"text": "Platforms", "level": 0},
        {"text": "Linux", "level": 1},
        {"text": "MD-Nested macOS", "level": 1},
    ]
    links = {e.content["text"]: e.content["url"] for e in _all(doc, Category.LINK)}
    assert links["build"] == "https://ci.example.com/otterkit"  # a badge: the picture's alt
    texts = [str(e.content.get("text")) for e in _all(doc, Category.TEXT)]
    assert "MD-Intro otterkit counts otters from survey sheets and paper tablets. " in texts[0]
    assert "MD-Details Why otters?" in texts
    images = _all(doc, Category.IMAGE)
    assert images[-1].content["description"] == "MD-Alt Otter diagram"
    assert images[-1].metadata == {"file": "docs/otter.png"}  # beside it: served at Level 3
    assert images[0].metadata == {"url": "https://img.shields.io/badge/build-passing-green.svg"}
    assert [s.content["kind"] for s in _all(doc, Category.SEPARATOR)] == ["rule"]


def test_toml_front_matter_and_pages_at_top_level_headings() -> None:
    doc = _md('+++\ntitle = "Hugo post"\ntags = ["a", "b"]\n+++\nIntro.\n\n# One\n\nx\n\n# Two\n')
    assert doc.properties.title == "Hugo post"
    assert doc.properties.keywords == ("a", "b")
    assert [p.title for p in doc.pages] == ["Hugo post", "One", "Two"]
    assert "title" not in str(doc.pages[0].elements)  # the front matter is not text


@pytest.mark.parametrize(
    ("text", "fields", "body"),
    [
        ("---\na: 1\nb: 'x: y'\nc:\n  - p\n  - q\nd: [1, two]\n---\nbody", None, "body"),
        ("---\nnested:\n  k: v\nflag: true\n---\n", {"flag": True}, ""),
        ("--- not front matter\n", {}, "--- not front matter\n"),
        ("---\nnever closed: 1\n", {}, "---\nnever closed: 1\n"),
        ("+++\nbad = \n+++\nrest", {}, "rest"),
    ],
)
def test_front_matter(text: str, fields: dict[str, object] | None, body: str) -> None:
    found, rest = split_front_matter(text)
    if fields is None:
        fields = {"a": 1, "b": "x: y", "c": ["p", "q"], "d": [1, "two"]}
    assert found == fields
    assert rest == body


def test_a_file_over_the_size_cap_is_too_large() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, max_part_bytes=100)
    with pytest.raises(TooLargeError):
        _md("# x\n" + "word " * 100, limits)
