"""Text bodies of slides: paragraphs → text, list, code and formula blocks.

A paragraph's bullet and font are inherited when the paragraph does not set them: from the
shape's own `a:lstStyle`, then (for placeholders) the matching layout and master
placeholders' list styles, then the master's `p:txStyles` (title / body / other style). A
`Chain` is that ordered list of list-style elements for one shape; `read_paragraphs` walks a
text body with it, and `blocks` groups consecutive paragraphs into elements:

- bulleted (`a:buChar`, `a:buBlip`) or numbered (`a:buAutoNum`) paragraphs → one list;
- paragraphs whose runs are all set in a monospace font → one code block;
- other paragraphs → one text block;
- an OMML equation (`a14:m`) → a formula, between the blocks around it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from lxml import etree

from dpe_server.extractors.kit.fonts import is_monospace
from dpe_server.extractors.ooxml.drawingml import omml_to_linear
from dpe_server.model.direction import is_rtl

NS_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
NS_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
NS_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_A14 = "http://schemas.microsoft.com/office/drawing/2010/main"
NS_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
NS_M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
A = f"{{{NS_A}}}"
P = f"{{{NS_P}}}"
R = f"{{{NS_R}}}"
A14 = f"{{{NS_A14}}}"
MC = f"{{{NS_MC}}}"
M = f"{{{NS_M}}}"


Bullet = Literal["none", "char", "num"]
_BULLET_TAGS: dict[str, Bullet] = {
    A + "buNone": "none",
    A + "buChar": "char",
    A + "buBlip": "char",
    A + "buAutoNum": "num",
}


@dataclass(frozen=True, slots=True)
class Chain:
    """The list styles a shape's paragraphs inherit from, nearest first."""

    styles: tuple[etree._Element, ...]

    def _levels(self, level: int) -> Iterator[etree._Element]:
        tag = f"{A}lvl{level + 1}pPr"
        for style in self.styles:
            lvl = style.find(tag)
            if lvl is not None:
                yield lvl

    def bullet(self, level: int) -> Bullet:
        for lvl in self._levels(level):
            for child in lvl:
                kind = _BULLET_TAGS.get(child.tag) if isinstance(child.tag, str) else None
                if kind is not None:
                    return kind
        return "none"

    def typeface(self, level: int) -> str | None:
        for lvl in self._levels(level):
            latin = lvl.find(f"{A}defRPr/{A}latin")
            if latin is not None and latin.get("typeface"):
                return latin.get("typeface")
        return None


EMPTY_CHAIN = Chain(())


@dataclass(slots=True)
class RunLink:
    """A hyperlink on a text run: the run's text and its `a:hlinkClick`."""

    text: str
    rid: str
    action: str
    follows: bool = False
    """True when the previous run was linked too (by another relationship, maybe the same
    target): the reader joins them when they resolve to the same place."""


@dataclass(slots=True)
class Paragraph:
    text: str
    level: int
    bullet: Bullet
    mono: bool
    links: list[RunLink] = field(default_factory=list)
    formula: str | None = None
    rtl: bool = False


def _bullet_of(ppr: etree._Element | None) -> Bullet | None:
    if ppr is None:
        return None
    for child in ppr:
        if isinstance(child.tag, str) and child.tag in _BULLET_TAGS:
            return _BULLET_TAGS[child.tag]
    return None


def _math_of(el: etree._Element) -> etree._Element | None:
    """The `a14:m` of an `mc:AlternateContent` inside a paragraph, when its choice has one."""
    for choice in el.iterfind(f"{MC}Choice"):
        m = choice.find(f"{A14}m")
        if m is not None:
            return m
    return None


def _formula_text(m: etree._Element) -> str:
    parts = [omml_to_linear(x) for x in m if isinstance(x.tag, str) and x.tag.startswith(M)]
    return " ".join(p for p in parts if p)


class _ParaReader:
    """Reads one `a:p`: text, run fonts, links, embedded equations."""

    def __init__(self, default_face: str | None) -> None:
        self.default_face = default_face
        self.texts: list[str] = []
        self.faces: list[bool] = []
        self.links: list[RunLink] = []
        self.formulas: list[str] = []
        self.linked = -1

    def link(self, text: str, rid: str, action: str) -> None:
        """A linked run; one that continues the previous run's link extends it."""
        last = self.links[-1] if self.links else None
        here = len(self.texts) - 1
        follows = last is not None and self.linked == here - 1
        if last and follows and (last.rid, last.action) == (rid, action):
            last.text += text
        else:
            self.links.append(RunLink(text, rid, action, follows))
        self.linked = here

    def run(self, r: etree._Element) -> None:
        t = r.find(f"{A}t")
        text = (t.text or "") if t is not None else ""
        if not text:
            return
        self.texts.append(text)
        rpr = r.find(f"{A}rPr")
        face = self.default_face
        if rpr is not None:
            latin = rpr.find(f"{A}latin")
            if latin is not None and latin.get("typeface"):
                face = latin.get("typeface")
            click = rpr.find(f"{A}hlinkClick")
            if click is not None:
                self.link(text, click.get(f"{R}id", ""), click.get("action", ""))
        if text.strip():
            self.faces.append(is_monospace(face))

    def read(self, p: etree._Element) -> None:
        for child in p:
            tag = child.tag
            if tag == A + "r" or tag == A + "fld":
                self.run(child)
            elif tag == A + "br":
                self.texts.append("\n")
            elif tag == A14 + "m":
                self.formulas.append(_formula_text(child))
            elif tag == MC + "AlternateContent":
                m = _math_of(child)
                if m is not None:
                    self.formulas.append(_formula_text(m))
                else:
                    fallback = child.find(f"{MC}Fallback")
                    if fallback is not None:
                        self.read(fallback)


def read_paragraphs(txbody: etree._Element | None, chain: Chain) -> list[Paragraph]:
    """The paragraphs of a text body, with bullets and fonts resolved through `chain`."""
    if txbody is None:
        return []
    out: list[Paragraph] = []
    own = txbody.find(f"{A}lstStyle")
    if own is not None and len(own):
        chain = Chain((own, *chain.styles))
    for p in txbody.iterfind(f"{A}p"):
        ppr = p.find(f"{A}pPr")
        level = 0
        if ppr is not None:
            raw = ppr.get("lvl")
            if raw is not None and raw.isdigit():
                level = min(int(raw), 8)
        reader = _ParaReader(_para_face(ppr) or chain.typeface(level))
        reader.read(p)
        text = "".join(reader.texts).rstrip()
        if text.strip():
            bullet = _bullet_of(ppr) or chain.bullet(level)
            mono = bool(reader.faces) and all(reader.faces)
            rtl = (ppr is not None and ppr.get("rtl") in ("1", "true")) or is_rtl(text)
            out.append(Paragraph(text, level, bullet, mono, reader.links, rtl=rtl))
        out.extend(Paragraph("", level, "none", False, formula=f) for f in reader.formulas if f)
    return out


def _para_face(ppr: etree._Element | None) -> str | None:
    if ppr is None:
        return None
    latin = ppr.find(f"{A}defRPr/{A}latin")
    return None if latin is None else latin.get("typeface")


BlockKind = Literal["text", "list", "code", "formula"]


@dataclass(slots=True)
class Block:
    kind: BlockKind
    paragraphs: list[Paragraph]

    @property
    def text(self) -> str:
        if self.kind == "code":
            return "\n".join(p.text for p in self.paragraphs)
        return "\n".join(p.formula or p.text.strip() for p in self.paragraphs)

    @property
    def ordered(self) -> bool:
        top = min(p.level for p in self.paragraphs)
        return any(p.bullet == "num" for p in self.paragraphs if p.level == top)


def _kind(p: Paragraph) -> BlockKind:
    if p.formula is not None:
        return "formula"
    if p.mono:
        return "code"
    if p.bullet != "none":
        return "list"
    return "text"


def blocks(paragraphs: Sequence[Paragraph]) -> list[Block]:
    """Consecutive paragraphs of one kind grouped; each formula is a block of its own."""
    out: list[Block] = []
    for p in paragraphs:
        kind = _kind(p)
        if out and out[-1].kind == kind and kind != "formula":
            out[-1].paragraphs.append(p)
        else:
            out.append(Block(kind, [p]))
    return out


def cell_links(el: etree._Element) -> list[RunLink]:
    """The linked runs anywhere under `el` (a table), adjacent runs of one link joined."""
    out: list[RunLink] = []
    for p in el.iter(f"{A}p"):
        reader = _ParaReader(None)
        reader.read(p)
        out.extend(reader.links)
    return out


def plain_text(txbody: etree._Element | None, sep: str = "\n") -> str:
    """All the text of a text body (runs, fields, breaks), paragraphs joined by `sep`."""
    if txbody is None:
        return ""
    lines = []
    for p in txbody.iter(f"{A}p"):
        parts = []
        for el in p.iter(f"{A}t", f"{A}br"):
            parts.append("\n" if el.tag == A + "br" else (el.text or ""))
        line = "".join(parts).strip()
        if line:
            lines.append(line)
    return sep.join(lines)
