"""The Markdown-recall rule on every document of ../shared/corpus that opens: each page's
Level 2 Markdown holds every phrase of its elements' content (`model/words.py`). Extracted
in-process, once per file; skipped without a corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.check import rules_page
from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.model.errors import ExtractionError
from dpe_server.model.uri import parse
from dpe_server.views.payloads import page_view
from dpe_server.views.render import render

pytestmark = pytest.mark.corpus


def test_every_corpus_page_markdown_carries_every_phrase(corpus: Path) -> None:
    failures: list[str] = []
    opened = 0
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        extractor = for_path(path)
        if extractor is None:
            continue
        try:
            with path.open("rb") as f:
                doc = extractor.extract(f, DEFAULT_LIMITS)
        except ExtractionError:
            continue  # does not open: the corpus tests of each format check the error kind
        opened += 1
        for page in doc.pages:
            payload = page_view("h", "d", page, parse(f"dpe://h/d/pages/{page.page_index}"))
            markdown = render(2, payload, "markdown")
            lost = rules_page.l2_markdown_recall(payload["elements"], markdown)
            failures += [f"{path.name} page {page.page_index}: {p.expected} {p.got}" for p in lost]
    assert opened > 0
    assert failures == []
