"""Comment threads (dpe_server/extractors/threads.py): answers under the root of their chain."""

from __future__ import annotations

from dpe_server.extractors.kit.threads import as_reply, roots


def test_an_answer_to_an_answer_joins_the_root() -> None:
    assert roots({"b": "a", "c": "b"}, {"a", "b", "c"}) == {"b": "a", "c": "a"}


def test_a_chain_ending_at_nothing_known_stops_at_its_last_known_comment() -> None:
    """`b` answers something unknown, so it stands alone, and `c`, answering `b`, joins it."""
    assert roots({"b": "gone", "c": "b"}, {"b", "c"}) == {"c": "b"}


def test_loops_leave_every_comment_in_them_standing() -> None:
    assert roots({"a": "b", "b": "a"}, {"a", "b"}) == {}
    assert roots({"a": "a"}, {"a"}) == {}
    assert roots({"c": "a", "a": "b", "b": "a"}, {"a", "b", "c"}) == {}


def test_as_reply_keeps_text_author_and_date_only() -> None:
    note = {"text": "ok", "kind": "comment", "author": "", "date": "2024-01-01", "anchor": "x"}
    assert as_reply(note) == {"text": "ok", "date": "2024-01-01"}
