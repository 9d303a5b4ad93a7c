"""The Markdown-recall rule on every document of ../shared/corpus that opens: each page's
Level 2 Markdown holds every phrase of its elements' content (`model/words.py`). The trees
come from the session's one extraction of the corpus (tests/corpus_trees.py); skipped
without a corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpe_server.check import rules_page
from dpe_server.model.uri import parse
from dpe_server.views.payloads import page_view
from dpe_server.views.render import render
from tests.corpus_trees import Outcome

pytestmark = pytest.mark.corpus


def test_every_corpus_page_markdown_carries_every_phrase(
    corpus_outcomes: dict[Path, Outcome],
) -> None:
    failures: list[str] = []
    opened = 0
    for path, outcome in corpus_outcomes.items():
        doc = outcome.doc
        if doc is None:
            continue  # does not open: the corpus tests of each format check the error kind
        opened += 1
        for page in doc.pages:
            payload = page_view("h", "d", page, parse(f"dpe://h/d/pages/{page.page_index}"))
            markdown = render(2, payload, "markdown")
            lost = rules_page.l2_markdown_recall(payload["elements"], markdown)
            failures += [f"{path.name} page {page.page_index}: {p.expected} {p.got}" for p in lost]
    assert opened > 0
    assert failures == []
