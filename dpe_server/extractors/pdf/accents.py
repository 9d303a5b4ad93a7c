"""Accents set as glyphs of their own over a letter, composed into the accented letter.

TeX (LaTeX with Computer Modern, Type 1) sets `\\"{\\i}` or `\\'e` as two glyphs: a spacing
accent (diaeresis U+00A8, acute U+00B4, grave U+0060, circumflex U+02C6, tilde U+02DC, macron
U+00AF, caron U+02C7, cedilla U+00B8, ring U+02DA, dot U+02D9, breve U+02D8, double acute
U+02DD, ogonek U+02DB) moved over (or under) the letter, usually just before it, and a dotless
i or j (U+0131, U+0237) under an accent on i or j. Its text layer then reads `na¨ıve`,
`caf´e`. `compose` gives the letter with the accent (NFC of the letter and the combining
mark: `naïve`, `café`) where the accent's glyph overlaps, for at least half its own width,
the glyph of the letter before or after it (the one it overlaps more). The test is on where
the glyphs are drawn, not on their order in the text, so an accent character standing in
the text beside a letter (`¨` written as itself) is left as it is.
"""

from __future__ import annotations

import ctypes
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import pypdfium2.raw as pdfium_c

COMBINING = {
    "\u00a8": "\u0308",
    "\u00b4": "\u0301",
    "`": "\u0300",
    "\u02c6": "\u0302",
    "\u02dc": "\u0303",
    "\u00af": "\u0304",
    "\u02c7": "\u030c",
    "\u00b8": "\u0327",
    "\u02da": "\u030a",
    "\u02d9": "\u0307",
    "\u02d8": "\u0306",
    "\u02dd": "\u030b",
    "\u02db": "\u0328",
}
"""Spacing accent → the combining mark it draws."""
_DOTLESS = {"\u0131": "i", "\u0237": "j"}
MARKS = re.compile("[" + "".join(COMBINING) + "]")
_MIN_OVERLAP = 0.5

Extent = Callable[[int], tuple[float, float] | None]
"""The left and right x of the glyph at an index of the text (None when it has no box)."""


def compose(text: str, extent: Extent) -> str:
    """`text` with each accent whose glyph overlaps a neighbouring letter's put on that letter
    (see the module doc); `extent(i)` measures the glyph of `text[i]`."""
    if MARKS.search(text) is None:
        return text
    marks: dict[int, list[str]] = {}
    taken: set[int] = set()
    for i, ch in enumerate(text):
        mark = COMBINING.get(ch)
        accent = extent(i) if mark is not None else None
        if mark is None or accent is None or accent[1] <= accent[0]:
            continue
        best, most = -1, _MIN_OVERLAP * (accent[1] - accent[0])
        for j in (i + 1, i - 1):
            if 0 <= j < len(text) and _letter(text[j]):
                box = extent(j)
                overlap = min(accent[1], box[1]) - max(accent[0], box[0]) if box else 0.0
                if overlap >= most:
                    best, most = j, overlap
        if best >= 0:
            marks.setdefault(best, []).append(mark)
            taken.add(i)
    if not marks:
        return text
    out = []
    for i, ch in enumerate(text):
        if i in marks:
            out.append(unicodedata.normalize("NFC", _DOTLESS.get(ch, ch) + "".join(marks[i])))
        elif i not in taken:
            out.append(ch)
    return "".join(out)


def _letter(ch: str) -> bool:
    return ch.isalpha() and ch not in COMBINING


def compose_on_page(text: str, textpage: Any, first: int) -> str:
    """`compose` measuring PDFium's tight glyph boxes on a text page, `text[0]` being its
    glyph `first` (nothing is measured in a text without accents)."""
    if MARKS.search(text) is None:
        return text
    return compose(text, _page_extent(textpage, first))


def _page_extent(textpage: Any, first: int) -> Extent:
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    refs = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))

    def extent(i: int) -> tuple[float, float] | None:
        if not pdfium_c.FPDFText_GetCharBox(textpage, first + i, *refs):
            return None
        return left.value, right.value

    return extent
