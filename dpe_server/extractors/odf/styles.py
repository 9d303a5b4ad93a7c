"""OpenDocument styles as far as the content needs them: whether a paragraph style breaks the
page before it or is a code style, and what a list style numbers at each level.

Paragraph styles follow `style:parent-style-name` (at most `_DEPTH` steps). A list level is
ordered when its style is `text:list-level-style-number` with a `style:num-format` (`1`, `a`,
`A`, `i`, `I`); its label is `style:num-prefix`, the numbers of `text:display-levels` levels
joined by `.`, then `style:num-suffix` (`1.`, `1.1.`, `a)`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from dpe_server.extractors.docx.numformat import number
from dpe_server.extractors.odf.package import FO, OFFICE, STYLE, TEXT

_DEPTH = 16
_CODE_STYLES = frozenset({"preformatted text", "source text", "code"})
_FORMATS = {"1": "decimal", "a": "lowerLetter", "A": "upperLetter", "i": "lowerRoman"}
_FORMATS["I"] = "upperRoman"


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
    break_before: bool
    automatic: bool


def _int(value: str | None, default: int) -> int:
    try:
        return max(0, min(int(value or ""), 1_000_000))
    except ValueError:
        return default


class Styles:
    def __init__(self, *roots: etree._Element | None) -> None:
        self._para: dict[str, _Para] = {}
        self._lists: dict[str, dict[int, ListLevel]] = {}
        for root in roots:
            if root is None:
                continue
            for group in (OFFICE + "styles", OFFICE + "automatic-styles"):
                for holder in root.iter(group):
                    self._read(holder, group == OFFICE + "automatic-styles")

    def _read(self, holder: etree._Element, automatic: bool) -> None:
        for st in holder:
            if st.tag == STYLE + "style":
                name = st.get(STYLE + "name", "")
                props = st.find(STYLE + "paragraph-properties")
                brk = props is not None and props.get(FO + "break-before") == "page"
                display = st.get(STYLE + "display-name") or name.replace("_20_", " ")
                parent = st.get(STYLE + "parent-style-name")
                self._para.setdefault(name, _Para(parent, display, brk, automatic))
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

    def breaks_before(self, name: str | None) -> bool:
        return any(p.break_before for p in self._chain(name)[:1])

    def is_code(self, name: str | None) -> bool:
        return any(p.display.lower() in _CODE_STYLES for p in self._chain(name))

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
