"""Markdown nested deeply loses no word silently: markdown-it skips what lies deeper than its
`maxNesting` without a word (the commonmark preset's 20 levels), so the reader lets it nest
to 100 and refuses a text nesting its quotes and lists past 90 levels as `too_large`."""

from __future__ import annotations

import io

import pytest

from dpe_server.extractors import DEFAULT_LIMITS
from dpe_server.extractors.markdown.extract import EXTRACTOR
from dpe_server.model.errors import TooLargeError
from dpe_server.model.tree import Document


def _read(text: str) -> Document:
    return EXTRACTOR.extract(io.BytesIO(text.encode()), DEFAULT_LIMITS)


def _words(doc: Document) -> str:
    return " ".join(str(e.content) for p in doc.pages for e in p.elements)


@pytest.mark.parametrize("depth", [21, 30, 60, 89])
def test_a_deep_quote_keeps_its_words(depth: int) -> None:
    assert "deepword" in _words(_read(">" * depth + " deepword\n\nafter\n"))


def test_a_deep_list_keeps_its_words() -> None:
    assert "deepword" in _words(_read("- " * 30 + "deepword\n"))


@pytest.mark.parametrize(
    "text", [">" * 100_000 + " deep\n", "- " * 50_000 + "x\n", "ok\n\n" + ">" * 91 + " x\n"]
)
def test_nesting_past_the_bound_is_too_large(text: str) -> None:
    with pytest.raises(TooLargeError, match="more than 90 levels deep"):
        _read(text)
