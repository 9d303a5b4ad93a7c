"""Every word a reader shows of a web page, a Markdown text, an e-book or a plain text file
is served: the word check of the pdf pages (`check/fidelity.py`: the same normalisation, the
same served text, Level 2 Markdown with cut tables read whole at Level 3) against
`check/webtext.py`'s reading of the same file, made without the server's extractors (a web
page: lxml's `text_content()` of `<body>`, less scripts, styles and hidden elements, as a
browser shows it; Markdown: the same of markdown-it's HTML, front matter off; an EPUB: each
chapter of its spine; plain text: the file decoded). A document's words may sit on any of its
pages (the pages cut it at its headings), so the served text is every page's. At least 0.99
of each file's words, on every such fixture and every such file of ../shared/corpus; files
the reader misreads would be listed here one by one with the reason (none is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.check.fidelity import PageWords, browser_text, compare, served_text
from dpe_server.check.webtext import TYPES, document_text
from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.model.tree import Document
from fixtures.builders import web
from tests.corpus_trees import Outcome

RECALL = 0.99
"""The share of a document's words a reader shows that must be served."""
SUFFIXES = frozenset(f".{kind}" for kind in TYPES)
READER_MISREADS: dict[str, str] = {}
"""Files where lxml's text misreads what a browser shows, with the reason."""


def recall(path: Path, doc: Document) -> PageWords:
    served = "\n\n".join(served_text(page) for page in doc.pages)
    return compare(0, document_text(path), served)


FIXTURES = sorted(
    p.name
    for p in Path(__file__).parents[2].joinpath("fixtures").iterdir()
    if p.suffix.lower() in SUFFIXES
)


def test_every_kind_has_fixtures() -> None:
    kinds = {Path(name).suffix for name in FIXTURES}
    assert {".html", ".htm", ".mhtml", ".md", ".epub", ".txt"} <= kinds
    assert set(web.FILES) <= set(FIXTURES)


@pytest.mark.parametrize("name", FIXTURES)
def test_every_word_of_a_fixture_document_is_served(fixture_dir: Path, name: str) -> None:
    path = fixture_dir / name
    extractor = for_path(path)
    assert extractor is not None
    with path.open("rb") as f:
        found = recall(path, extractor.extract(f, DEFAULT_LIMITS))
    assert found.found > 15
    assert found.missing == ()


def test_hidden_words_are_not_asked_for() -> None:
    """The reader leaves out what no browser shows, so the served page need not hold it."""
    page = (
        b"<body><p>shown words</p><script>var hiddenscript;</script><style>.cls{}</style>"
        b"<div hidden>attrhidden</div><p style='display: none'>stylehidden</p>"
        b"<span aria-hidden='true'>ariahidden</span><p>two</p><p>blocks</p></body>"
    )
    text = browser_text(page)
    assert set(text.split()) == {"shown", "words", "two", "blocks"}


@pytest.mark.corpus
def test_every_word_of_a_corpus_document_is_served(corpus_outcomes: dict[Path, Outcome]) -> None:
    judged: list[tuple[float, str]] = []
    failures: list[str] = []
    for path, outcome in corpus_outcomes.items():
        if path.suffix.lower() not in SUFFIXES or path.name in READER_MISREADS:
            continue
        assert outcome.doc is not None, f"{path.name}: {outcome.kind} {outcome.message}"
        found = recall(path, outcome.doc)
        judged.append((found.recall, path.name))
        if found.recall < RECALL:
            failures.append(f"{path.name}: {found.recall:.3f}, missing {list(found.missing)[:20]}")
    judged.sort()
    print(f"\n{len(judged)} documents; worst: {judged[:5]}")
    assert {Path(name).suffix for _, name in judged} >= {".html", ".md", ".epub"}
    assert failures == []
