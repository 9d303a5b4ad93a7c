"""OpenDocument styles as far as the content needs them: whether a paragraph style breaks the
page (or column) before it, is a code style or a heading style, what font a paragraph or text
style sets, and what a list style numbers at each level.

A font is monospace when its `style:font-face` says `style:font-pitch="fixed"` or its family
is one the pptx reader knows as monospace (Consolas, Courier New...).

Paragraph styles follow `style:parent-style-name` (at most `_DEPTH` steps). A list level is
ordered when its style is `text:list-level-style-number` with a `style:num-format` (`1`, `a`,
`A`, `i`, `I`); its label is `style:num-prefix`, the numbers of `text:display-levels` levels
joined by `.`, then `style:num-suffix` (`1.`, `1.1.`, `a)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from dpe_server.extractors.kit.fonts import is_monospace
from dpe_server.extractors.kit.numformat import number
from dpe_server.extractors.odf.package import FO, OFFICE, STYLE, SVG, TEXT

_DEPTH = 16
_CODE_STYLES = frozenset({"preformatted text", "source text", "code"})
_FORMATS = {"1": "decimal", "a": "lowerLetter", "A": "upperLetter", "i": "lowerRoman"}
_FORMATS["I"] = "upperRoman"
_HEADING = re.compile(r"heading (\d{1,2})")


@dataclass(frozen=True, slots=True)
class ListLevel:
    ordered: bool
    num_format: str = ""
    prefix: str = ""
    suffix: str = ""
    start: int = 1
    display_levels: int = 1

    def label(self, counters: list[int]) -> str:
        """The label of an item whose counters (one per level, from 0) are `counters`."""
        if not self.ordered:
            return ""
        shown = counters[-max(1, min(self.display_levels, len(counters))) :]
        numbers = ".".join(number(n, _FORMATS.get(self.num_format, "decimal")) for n in shown)
        return f"{self.prefix}{numbers}{self.suffix}"


@dataclass(frozen=True, slots=True)
class _Para:
    parent: str | None
    display: str
    break_before: str
    """`page`, `column` or empty."""
    automatic: bool
    font: str
    """`style:font-name` of its text properties (a font face), empty when it sets none."""
    outline: int
    """`style:default-outline-level`, 0 when none."""
    master: str
    """`style:master-page-name`: the master page a paragraph (table) of the style starts."""
    border: bool | None
    """Whether its paragraph properties draw a top or bottom border; None when they say
    nothing of borders."""


def _border(props: etree._Element | None) -> bool | None:
    if props is None:
        return None
    sides = [props.get(FO + a) for a in ("border", "border-top", "border-bottom")]
    said = [v for v in sides if v is not None]
    return any(v.strip() != "none" for v in said) if said else None


def _int(value: str | None, default: int) -> int:
    try:
        return max(0, min(int(value or ""), 1_000_000))
    except ValueError:
        return default


class Styles:
    def __init__(self, *roots: etree._Element | None) -> None:
        self._para: dict[str, _Para] = {}
        self._lists: dict[str, dict[int, ListLevel]] = {}
        self._mono: set[str] = set()
        """Font faces (`style:name`) that are monospace."""
        for root in roots:
            if root is None:
                continue
            for face in root.iter(STYLE + "font-face"):
                family = (face.get(SVG + "font-family") or "").strip("'\" ")
                if face.get(STYLE + "font-pitch") == "fixed" or is_monospace(family):
                    self._mono.add(face.get(STYLE + "name", ""))
            for group in (OFFICE + "styles", OFFICE + "automatic-styles"):
                for holder in root.iter(group):
                    self._read(holder, group == OFFICE + "automatic-styles")

    def _read(self, holder: etree._Element, automatic: bool) -> None:
        for st in holder:
            if st.tag == STYLE + "style":
                name = st.get(STYLE + "name", "")
                props = st.find(STYLE + "paragraph-properties")
                brk = props.get(FO + "break-before", "") if props is not None else ""
                display = st.get(STYLE + "display-name") or name.replace("_20_", " ")
                parent = st.get(STYLE + "parent-style-name")
                text = st.find(STYLE + "text-properties")
                font = text.get(STYLE + "font-name", "") if text is not None else ""
                outline = _int(st.get(STYLE + "default-outline-level"), 0)
                master = st.get(STYLE + "master-page-name", "")
                para = _Para(parent, display, brk, automatic, font, outline, master, _border(props))
                self._para.setdefault(name, para)
            elif st.tag == TEXT + "list-style":
                levels: dict[int, ListLevel] = {}
                for lvl in st:
                    level = _int(lvl.get(TEXT + "level"), 1)
                    if lvl.tag == TEXT + "list-level-style-number":
                        fmt = lvl.get(STYLE + "num-format", "")
                        levels[level] = ListLevel(
                            ordered=bool(fmt),
                            num_format=fmt,
                            prefix=lvl.get(STYLE + "num-prefix", ""),
                            suffix=lvl.get(STYLE + "num-suffix", ""),
                            start=_int(lvl.get(TEXT + "start-value"), 1),
                            display_levels=_int(lvl.get(TEXT + "display-levels"), 1),
                        )
                    elif isinstance(lvl.tag, str):
                        levels[level] = ListLevel(ordered=False)
                self._lists.setdefault(st.get(STYLE + "name", ""), levels)

    def _chain(self, name: str | None) -> list[_Para]:
        out: list[_Para] = []
        while name and len(out) < _DEPTH:
            found = self._para.get(name)
            if found is None:
                break
            out.append(found)
            name = found.parent
        return out

    def break_before(self, name: str | None) -> str:
        """`page` or `column` when the style breaks before the paragraph, else empty."""
        kinds = [p.break_before for p in self._chain(name)[:1]]
        return kinds[0] if kinds and kinds[0] in ("page", "column") else ""

    def has_border(self, name: str | None) -> bool:
        """Whether the paragraph style (or the nearest parent that says) draws a top or bottom
        border: an empty paragraph of it is a rule, as Word's bordered empty paragraph."""
        for p in self._chain(name):
            if p.border is not None:
                return p.border
        return False

    def master_page(self, name: str | None) -> str:
        """The master page a paragraph or table of style `name` starts (a new page, with that
        master's headers and footers: how LibreOffice writes a Word section), else empty."""
        found = self._para.get(name or "")
        return found.master if found is not None else ""

    def is_code(self, name: str | None) -> bool:
        return any(p.display.lower() in _CODE_STYLES for p in self._chain(name))

    def monospace(self, name: str | None) -> bool | None:
        """Whether the (paragraph or text) style sets a monospace font; None when neither it
        nor its parents set a font."""
        for p in self._chain(name):
            if p.font:
                return p.font in self._mono
        return None

    def heading_level(self, name: str | None) -> int:
        """The outline level a paragraph style gives (`style:default-outline-level`, else a
        `Heading N` name), 0 when none."""
        for p in self._chain(name):
            if p.outline:
                return min(p.outline, 10)
            found = _HEADING.fullmatch(p.display.lower())
            if found and not p.automatic:
                return max(1, min(int(found.group(1)), 10))
        return 0

    def display_name(self, name: str | None) -> str:
        """The name of the paragraph's style as the user knows it (an automatic style, which
        only carries direct formatting, stands for its parent)."""
        named = [p for p in self._chain(name) if not p.automatic]
        return named[0].display if named else ""

    def is_title(self, p: etree._Element) -> bool:
        """Whether a paragraph has the `Title` style (a heading above the outline levels)."""
        return self.display_name(p.get(TEXT + "style-name")).lower() == "title"

    def list_level(self, style: str | None, level: int) -> ListLevel:
        """How the list style `style` numbers its `level` (from 1); bullets when unknown."""
        levels = self._lists.get(style or "", {})
        return levels.get(level) or ListLevel(ordered=False)
