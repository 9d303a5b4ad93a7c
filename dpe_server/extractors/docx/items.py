"""Plain records shared by the docx modules: elements found inside paragraphs, part context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from dpe_server.extractors.ooxml.package import Package, Relationship
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


class PartCtx:
    """One part being read (the body, a header, the footnotes...) and its relationships."""

    def __init__(self, pkg: Package, part: str) -> None:
        self.pkg = pkg
        self.part = part

    @cached_property
    def rels(self) -> dict[str, Relationship]:
        return self.pkg.rels(self.part)

    def target(self, rid: str | None) -> Relationship | None:
        if not rid:
            return None
        return self.rels.get(rid)
