"""The part a docx module reads (`PartCtx`: the body, a header, the footnotes...); the
elements found inside paragraphs are `kit.items`'."""

from __future__ import annotations

from functools import cached_property

from dpe_server.extractors.kit.package import Package, Relationship


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
