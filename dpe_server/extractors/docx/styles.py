"""What the styles part of a docx says about a paragraph.

- heading level: a style named `heading N` (by `w:name`, so localized style ids such as
  `berschrift1` resolve), the `Title` style, or an outline level (`w:outlineLvl`, on the
  paragraph or inherited through `w:basedOn`);
- list membership: `w:numPr` inherited from the style (what it means: numbering.py);
- code: a code-like style name or a monospace font (on the style chain or on every run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from dpe_server.extractors.docx.xml import W, int_or, val
from dpe_server.extractors.kit.fonts import is_monospace
from dpe_server.extractors.kit.pages import TITLE_LEVEL

_HEADING = re.compile(r"heading\s*([1-9])$")
_CODE = re.compile(r"code|source|preformatted|verbatim|listing|macro text|console|monospace")
_MAX_CHAIN = 20


def run_font(rpr: etree._Element | None) -> str | None:
    """The ascii (else hAnsi) font a run properties element names."""
    if rpr is None:
        return None
    fonts = rpr.find(W + "rFonts")
    if fonts is None:
        return None
    return fonts.get(W + "ascii") or fonts.get(W + "hAnsi")


@dataclass(frozen=True, slots=True)
class StyleInfo:
    name: str
    heading_level: int | None
    """1-9 for headings, `TITLE_LEVEL` for Title, None for body text."""
    num: tuple[str, int] | None
    """(numId, ilvl) inherited from the style, if any."""
    code: bool


_PLAIN = StyleInfo("", None, None, False)


@dataclass(slots=True)
class _Raw:
    name: str
    based_on: str | None
    outline: int | None
    num_id: str | None
    ilvl: int | None
    font: str | None


def _raw(style: etree._Element) -> _Raw:
    ppr = style.find(W + "pPr")
    num_id = ilvl = outline = None
    if ppr is not None:
        outline_val = val(ppr, "outlineLvl")
        outline = int_or(outline_val, 9) if outline_val is not None else None
        numpr = ppr.find(W + "numPr")
        if numpr is not None:
            num_id = val(numpr, "numId")
            ilvl_val = val(numpr, "ilvl")
            ilvl = int_or(ilvl_val, 0) if ilvl_val is not None else None
    return _Raw(
        name=(val(style, "name") or style.get(W + "styleId") or "").strip().lower(),
        based_on=val(style, "basedOn"),
        outline=outline,
        num_id=num_id,
        ilvl=ilvl,
        font=run_font(style.find(W + "rPr")),
    )


class Styles:
    """Paragraph and character styles of styles.xml, resolved through `w:basedOn`."""

    def __init__(self, root: etree._Element | None) -> None:
        self._raw: dict[str, _Raw] = {}
        self._elements: dict[str, etree._Element] = {}
        self._char: dict[str, etree._Element] = {}
        self._cache: dict[str | None, StyleInfo] = {}
        self._char_cache: dict[str, bool] = {}
        self.default_paragraph: str | None = None
        if root is None:
            return
        for style in root.iterchildren(W + "style"):
            sid = style.get(W + "styleId")
            if not sid:
                continue
            kind = style.get(W + "type", "paragraph")
            if kind == "paragraph":
                self._elements[sid] = style
                if style.get(W + "default") in ("1", "true", "on"):
                    self.default_paragraph = sid
            elif kind == "character":
                self._char[sid] = style

    def _raw_of(self, sid: str) -> _Raw | None:
        raw = self._raw.get(sid)
        if raw is None and sid in self._elements:
            raw = self._raw[sid] = _raw(self._elements[sid])
        return raw

    def char_is_code(self, style_id: str | None) -> bool:
        """A character style with a code-like name or a monospace font."""
        if style_id is None or style_id not in self._char:
            return False
        known = self._char_cache.get(style_id)
        if known is None:
            raw = _raw(self._char[style_id])
            known = self._char_cache[style_id] = bool(
                _CODE.search(raw.name) or is_monospace(raw.font)
            )
        return known

    def info(self, style_id: str | None) -> StyleInfo:
        """The resolved facts of a paragraph style (the default style when None)."""
        key = style_id if style_id in self._elements else self.default_paragraph
        cached = self._cache.get(key)
        if cached is None:
            cached = self._resolve(key)
            self._cache[key] = cached
        return cached

    def _resolve(self, style_id: str | None) -> StyleInfo:
        first = None if style_id is None else self._raw_of(style_id)
        if first is None:
            return _PLAIN
        name = first.name
        level: int | None = None
        outline: int | None = None
        num: tuple[str, int] | None = None
        num_id: str | None = None
        ilvl: int | None = None
        font: str | None = None
        code = False
        seen: set[str] = set()
        sid: str | None = style_id
        while sid is not None and sid not in seen and len(seen) < _MAX_CHAIN:
            seen.add(sid)
            raw = self._raw_of(sid)
            if raw is None:
                break
            if level is None:
                m = _HEADING.search(raw.name)
                if m:
                    level = int(m[1])
                elif raw.name == "title":
                    level = TITLE_LEVEL
            if outline is None and raw.outline is not None:
                outline = raw.outline
            if num_id is None and raw.num_id is not None:
                num_id = raw.num_id
            if ilvl is None and raw.ilvl is not None:
                ilvl = raw.ilvl
            if font is None:
                font = raw.font
            code = code or bool(_CODE.search(raw.name))
            sid = raw.based_on
        if level is None and outline is not None and 0 <= outline <= 8:
            level = outline + 1
        if num_id is not None and num_id != "0":
            num = (num_id, ilvl or 0)
        code = code or is_monospace(font)
        return StyleInfo(name, level, num, code)
