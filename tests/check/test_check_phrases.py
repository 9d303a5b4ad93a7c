"""The check judges by its own account of a page's phrases and of a cut string
(`check/phrases.py`), not by the server's (`model/words.py`, `views/element_cap.py`): the two
agree on every fixture page, and a mistake planted in the server's is caught by the check."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from dpe_server.check import phrases, rules_page
from dpe_server.model import words
from dpe_server.views.element_cap import cut_string, kept_part

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "fixtures" / "expected").glob("*/*/pages/*.json"))


def test_the_check_and_the_server_find_the_same_phrases_on_every_fixture_page() -> None:
    assert len(PAGES) > 20
    for page in PAGES:
        for e in json.loads(page.read_text(encoding="utf-8"))["elements"]:
            theirs = words.phrases(e["category"], e["content"])
            assert list(phrases.said(e["category"], e["content"])) == theirs, (page, e)


@pytest.mark.parametrize("text", ["", "abc", "a\nb …[cut: x", "line one\nline two" * 50])
def test_the_check_reads_a_cut_string_as_the_server_writes_it(text: str) -> None:
    for kept in (0, 1, 5, len(text)):
        cut = cut_string(text, kept)
        assert phrases.kept(cut) == kept_part(cut) == text[:kept]
    assert phrases.kept(text) is None


def test_a_phrase_the_servers_account_forgets_is_still_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Were the server's list of keys that hold no words to take in `text` by mistake, its
    own recall would find nothing missing; the check still reports the page's lost text."""
    monkeypatch.setattr(words, "NOT_WORDS", words.NOT_WORDS | {"text"})
    content = {"text": "Revenue rose"}
    assert words.missing("text", content, "") == []  # the planted mistake
    element = {"element_id": "p0-txt0", "category": "text", "content": content}
    found = rules_page.l2_markdown_recall([element], "")
    assert [p.expected for p in found] == ["p0-txt0: every phrase"]


def test_no_module_of_the_check_imports_what_it_judges_by_from_the_server() -> None:
    for module in sorted((ROOT / "dpe_server" / "check").glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not imported & {"dpe_server.model.words", "dpe_server.views.element_cap"}, module
