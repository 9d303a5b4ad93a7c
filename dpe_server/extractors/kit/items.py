"""Elements found inside a paragraph before they are numbered (`Item`), and a paragraph's
visible text with them (`Para`): what a format's paragraph reader hands its page writer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dpe_server.model.tree import JSON, Category


@dataclass(slots=True)
class Item:
    """An element found inside a paragraph (a link, a picture, a note...), not yet numbered.

    `at` is the text offset where it was found: items at 0 are emitted before the
    paragraph's text element, the others after it.
    """

    category: Category
    summary: str
    content: Mapping[str, JSON]
    metadata: dict[str, JSON] = field(default_factory=dict)
    at: int = 0


@dataclass(slots=True)
class Para:
    """A paragraph's visible text and the items inside it."""

    text: str
    items: list[Item]
    has_text: bool
    """False when the text is only math or white space (no text element for it)."""
