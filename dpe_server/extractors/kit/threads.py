"""Comment threads: which comment each answer belongs under.

A format links an answer to the comment it answers (pdf `/IRT`, Word `w15:paraIdParent`); an
answer to an answer joins the same thread, so every answer is nested under the root of its
chain. A link to nothing known, or a chain that runs round in a loop, leaves the comment
standing on its own: nothing is lost and nothing hangs.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any, TypeVar

from dpe_server.model.content import Reply

K = TypeVar("K")


def roots(answers: Mapping[K, K], known: Container[K]) -> dict[K, K]:
    """Each answer (`answers`: its key → the key it answers) → the root of its thread, for
    the answers whose chain ends at a `known` comment that answers nothing."""
    out: dict[K, K] = {}
    for key in answers:
        seen = {key}
        at = key
        while at in answers and answers[at] in known:
            at = answers[at]
            if at in seen:
                break
            seen.add(at)
        else:
            if at != key:
                out[key] = at
    return out


def as_reply(note: Mapping[str, Any]) -> Reply:
    """A comment, as the reply it is: its text, author and date."""
    reply: Reply = {"text": str(note.get("text", ""))}
    if isinstance(author := note.get("author"), str) and author:
        reply["author"] = author
    if isinstance(date := note.get("date"), str) and date:
        reply["date"] = date
    return reply
