"""A page's text as PDFium laid it out, cut into positioned words and runs.

PDFium lays out every glyph itself (font widths, `Tc`, `Tw`, `Tz`, `TJ` adjustments, text
rise, the text and graphics matrices, form XObjects) and reads the page in logical order: it
splits words at measured gaps (inserting a space where the gap exceeds what the font's
spacing explains, so letter-spaced words stay whole), applies the Unicode bidirectional
algorithm to right-to-left text, decomposes ligatures and marks a hyphen that ends a line
(U+FFFE). Its page text is read in one call; each word is then measured by the exact boxes of
its first and last glyphs (`FPDFText_GetLooseCharBox`: from the glyph's origin to origin plus
advance, font descent to ascent), not glyph by glyph, which keeps the per-glyph work in C.

- A word whose first and last glyphs come from different text objects (text drawn in pieces
  with no gap PDFium saw as a space) is cut where the object changes; the pieces are runs of
  their own, which `lines` joins without a space when they touch (`impor`+`tant`).
- Runs: consecutive words of one text object on one baseline, less than `RUN_GAP` em apart
  (a wider gap is a table cell, a tab stop or a column gutter, so the two columns of CJK prose
  never share a run). A list marker or a table cell drawn on its own stays a run of its own;
  `lines` joins runs with a space where they are more than 0.15 em apart. A run keeps each
  word's extent (`Run.spans`), from which a link's anchor text is cut (`extract._clip`).
- Rotated text (a vertical margin note) is one run per text object, in PDFium's order.
- Text goes through `accents.compose` (an accent glyph drawn over a letter → the accented
  letter) and `textnorm.clean` (presentation forms → letters, soft hyphens out).
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

import pypdfium2.raw as pdfium_c
from pypdfium2_raw.bindings import _libs

from dpe_server.extractors.pdf.accents import compose_on_page
from dpe_server.extractors.pdf.items import Run, is_bold, is_mono, plain
from dpe_server.extractors.pdf.textnorm import clean

RUN_GAP = 1.0
"""A gap wider than this many ems between two words ends a run."""
_FIXED_PITCH = 1
_FORCE_BOLD = 1 << 18
_LINE_HYPHEN = "\ufffe"
_WORD = re.compile("[^\\s\ufffe]+\ufffe?|\ufffe")

# Private prototypes of the calls made once per word: plain integers and a reused struct,
# without pypdfium2's pointer wrappers (the text object comes back as an address).
_lib = _libs["pdfium"]
_text_object = _lib["FPDFText_GetTextObject"]
_text_object.argtypes = (ctypes.c_void_p, ctypes.c_int)
_text_object.restype = ctypes.c_void_p
_loose_box = _lib["FPDFText_GetLooseCharBox"]
_loose_box.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(pdfium_c.FS_RECTF))
_loose_box.restype = ctypes.c_int
_object_font = _lib["FPDFTextObj_GetFont"]
_object_font.argtypes = (ctypes.c_void_p,)
_object_font.restype = ctypes.c_void_p

Fonts = dict[int, tuple[str, bool, bool]]


@dataclass(slots=True)
class _Style:
    font: str
    bold: bool
    mono: bool
    size: float
    rise: float
    """Baseline minus the bottom of a glyph's loose box."""
    upright: bool
    """Its baseline runs left to right across the page (not rotated, not mirrored)."""


class _Word(NamedTuple):
    text: str
    start: float
    """x of the first glyph's leading edge (its right edge for right-to-left words)."""
    end: float
    """x of the last glyph's trailing edge."""
    y: float
    style: _Style


def _font_of(obj: int, fonts: Fonts) -> tuple[str, bool, bool]:
    key = _object_font(obj)
    if not key:
        return "", False, False
    hit = fonts.get(key)
    if hit is None:
        font = ctypes.cast(key, pdfium_c.FPDF_FONT)
        buf = ctypes.create_string_buffer(256)
        got = pdfium_c.FPDFFont_GetBaseFontName(font, buf, 256)
        name = buf.raw[: max(0, got - 1)].decode("latin-1") if got else ""
        if len(name) > 7 and name[6] == "+":
            name = name[7:]
        flags = pdfium_c.FPDFFont_GetFlags(font)
        bold = (
            is_bold(name) or pdfium_c.FPDFFont_GetWeight(font) >= 600 or bool(flags & _FORCE_BOLD)
        )
        hit = fonts[key] = (name, bold, is_mono(name) or bool(flags & _FIXED_PITCH))
    return hit


class _Reader:
    """Reads words off one text page (see the module doc)."""

    def __init__(self, textpage: Any) -> None:
        self.textpage = textpage
        self.tp = ctypes.cast(textpage, ctypes.c_void_p)
        self.box = pdfium_c.FS_RECTF()
        self.box_ref = ctypes.byref(self.box)
        self.styles: dict[int, _Style] = {}
        self.fonts: Fonts = {}

    def style(self, k: int, obj: int) -> _Style:
        hit = self.styles.get(obj)
        if hit is not None:
            return hit
        name, bold, mono = _font_of(obj, self.fonts)
        tp = self.textpage
        matrix = pdfium_c.FS_MATRIX()
        scale = 1.0
        upright = True
        if pdfium_c.FPDFText_GetMatrix(tp, k, matrix):
            scale = math.hypot(matrix.c, matrix.d) or 1.0
            upright = matrix.a > 0 and abs(matrix.b) < 0.05 * abs(matrix.a)
        size = abs(float(pdfium_c.FPDFText_GetFontSize(tp, k))) * scale
        x, y = ctypes.c_double(), ctypes.c_double()
        box = self.box
        _loose_box(self.tp, k, self.box_ref)
        rise = y.value - box.bottom if pdfium_c.FPDFText_GetCharOrigin(tp, k, x, y) else 0.0
        if not math.isfinite(size) or size <= 0:
            size = max(1.0, box.top - box.bottom)
        hit = self.styles[obj] = _Style(name, bold, mono, size, rise, upright)
        return hit

    def word(self, text: str, k0: int, k1: int, out: list[_Word]) -> None:
        """The glyphs k0..k1 (inclusive) as one or more words appended to `out`."""
        tp, box, ref = self.tp, self.box, self.box_ref
        obj0 = _text_object(tp, k0)
        obj1 = _text_object(tp, k1) if k1 != k0 else obj0
        if not obj0 or not obj1:
            return
        if obj0 != obj1:
            self.split(text, k0, k1, out)
            return
        style = self.styles.get(obj0) or self.style(k0, obj0)
        if not _loose_box(tp, k0, ref):
            return
        l0, r0, b0 = box.left, box.right, box.bottom
        if k1 == k0:
            l1, r1 = l0, r0
        elif _loose_box(tp, k1, ref):
            l1, r1 = box.left, box.right
        else:
            return
        if l1 >= l0:
            start, end = min(l0, r0), max(l1, r1)
        else:  # right to left: the first glyph is the rightmost
            start, end = max(l0, r0), min(l1, r1)
        out.append(_Word(text, start, end, b0 + style.rise, style))

    def split(self, text: str, k0: int, k1: int, out: list[_Word]) -> None:
        """A word spanning text objects: cut where the object changes."""
        i = 0
        start = k0
        obj = _text_object(self.tp, k0)
        for k in range(k0 + 1, k1 + 2):
            here = _text_object(self.tp, k) if k <= k1 else 0
            if here == obj:
                continue
            n = k - start
            self.word(text[i : i + n], start, k - 1, out)
            i += n
            start = k
            obj = here


def read_words(textpage: Any, max_chars: int) -> tuple[list[_Word], bool]:
    """The page's words in PDFium's reading order (at most `max_chars` characters)."""
    count = pdfium_c.FPDFText_CountChars(textpage)
    if count <= 0:
        return [], False
    units = (ctypes.c_ushort * (count + 1))()
    pdfium_c.FPDFText_GetText(textpage, 0, count, units)
    codes = ctypes.string_at(units, 2 * count).decode("utf-16-le", "surrogatepass")
    reader = _Reader(textpage)
    words: list[_Word] = []
    chars = 0
    for match in _WORD.finditer(codes):
        raw = match.group()
        chars += len(raw)
        if chars > max_chars:
            return words, True
        if raw.isascii() and raw.isprintable() and "`" not in raw:
            text = raw
        else:
            text = compose_on_page(raw, textpage, match.start())
            text = clean(plain(text.replace(_LINE_HYPHEN, "-")))
        if text and len(text) == len(raw):
            reader.word(text, match.start(), match.end() - 1, words)
        elif text:  # the text changed length (ligatures, soft hyphens): measure it whole
            before = len(words)
            reader.word(raw, match.start(), match.end() - 1, words)
            if len(words) > before:
                merged = words[before]._replace(text=text, end=words[-1].end)
                del words[before:]
                words.append(merged)
    return words, False


def _run(words: list[_Word]) -> Run:
    style = words[0].style
    text = ""
    spans: list[tuple[int, float, float]] = []
    for w in words:
        if text:
            text += " "
        spans.append((len(text), w.start, w.end))
        text += w.text
    x0 = min(min(w.start, w.end) for w in words)
    x1 = max(max(w.start, w.end) for w in words)
    return Run(
        text, x0, x1, words[0].y, style.size, style.font, style.bold, style.mono, tuple(spans)
    )


def make_runs(words: list[_Word]) -> list[Run]:
    """Runs from words in reading order: cut at a new baseline, a style change or a gap."""
    runs: list[Run] = []
    current: list[_Word] = []
    for w in words:
        if current:
            last = current[-1]
            size = last.style.size
            a0, a1 = (last.start, last.end) if last.start <= last.end else (last.end, last.start)
            b0, b1 = (w.start, w.end) if w.start <= w.end else (w.end, w.start)
            gap = b0 - a1 if b0 - a1 > a0 - b1 else a0 - b1
            if w.style is last.style and not w.style.upright:
                pass  # rotated text: one run per text object, as drawn
            elif (
                w.style is not last.style or abs(w.y - last.y) > 0.25 * size or gap > RUN_GAP * size
            ):
                runs.append(_run(current))
                current = []
        current.append(w)
    if current:
        runs.append(_run(current))
    return [r for r in runs if r.text.strip()]
