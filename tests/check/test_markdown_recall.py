"""The Markdown-recall rule (`L2.markdown_recall`) over every page of every fixture: each
phrase of an element's Level 2 content is in its page's Level 2 Markdown, and in its text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpe_server.check import rules_page
from dpe_server.model.words import missing

EXPECTED = Path(__file__).resolve().parents[2] / "fixtures" / "expected"
PAGES = sorted(EXPECTED.glob("*/*/pages/*.json"))


def test_there_are_fixture_pages() -> None:
    assert len(PAGES) > 20


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(EXPECTED)) for p in PAGES])
def test_every_phrase_of_a_fixture_page_reaches_its_markdown_and_text(page: Path) -> None:
    payload = json.loads(page.read_text(encoding="utf-8"))
    markdown = page.with_suffix(".md").read_text(encoding="utf-8")
    text = page.with_suffix(".txt").read_text(encoding="utf-8")
    assert rules_page.l2_markdown_recall(payload["elements"], markdown) == []
    for e in payload["elements"]:
        assert missing(e["category"], e["content"], text) == [], e["element_id"]
