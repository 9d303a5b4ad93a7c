"""A page's text as PDFium laid it out, cut into positioned words and runs.

PDFium lays out every glyph itself (font widths, `Tc`, `Tw`, `Tz`, `TJ` adjustments, text
rise, the text and graphics matrices, form XObjects) and reads the page in logical order: it
splits words at measured gaps (inserting a space where the gap exceeds what the font's
spacing explains, so letter-spaced words stay whole), reorders right-to-left text (roughly:
see `visual`), decomposes ligatures and marks a hyphen that ends a line
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
- On a page holding right-to-left text, PDFium's reordering is not used (`visual`): each
  word is its glyphs sorted by x (one glyph's letters kept together), a run is its words
  left to right (`Run.visual`) and its text that read in logical order (`visual.logical`);
  `lines` reads a line from its runs' visual texts the same way.

Speed: a word of printable ASCII drawn by one text object (most words) is measured inline
in `_words`' loop with four calls into PDFium (its first and last glyphs' text objects and
loose boxes) through private ctypes prototypes, without a call or a `_Word` per word; the
words (plain tuples) are then cut into runs in one loop (`read_runs`).
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pypdfium2.raw as pdfium_c

from dpe_server.extractors.pdf.accents import compose_on_page
from dpe_server.extractors.pdf.items import Run, is_bold, is_mono, plain
from dpe_server.extractors.pdf.prototypes import prototype
from dpe_server.extractors.pdf.textnorm import clean
from dpe_server.extractors.pdf.visual import Glyph, is_rtl_char, logical, visual_word
from dpe_server.model.direction import has_rtl, is_rtl

RUN_GAP = 1.0
"""A gap wider than this many ems between two words ends a run."""
_FIXED_PITCH = 1
_FORCE_BOLD = 1 << 18
_LINE_HYPHEN = "\ufffe"
_WORD = re.compile("[^\\s\ufffe]+\ufffe?|\ufffe")
_UNMAPPED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""A control code for a character: the glyph's font gives it no letter."""
_SPACE_AT_LINE_END = re.compile(" (?=[\r\n])")
_NOT_PLAIN = re.compile("[^!-_a-~\\s]")
"""A character that is neither printable ASCII (but a backtick, which may be an accent drawn
over a letter: `accents`) nor white space: where a page has none, each of its words is
printable ASCII with nothing to compose or normalise."""

# The calls made once per word and once per text object (its style), through private
# prototypes (`prototypes`): the text object comes back as an address, the text page goes in
# as a `ctypes.c_void_p` and the box by `ctypes.byref` of a reused FS_RECTF (`_Reader`).
_text_object = prototype("FPDFText_GetTextObject", ctypes.c_void_p)
_loose_box = prototype("FPDFText_GetLooseCharBox", ctypes.c_int)
_char_matrix = prototype("FPDFText_GetMatrix", ctypes.c_int)
_font_size = prototype("FPDFText_GetFontSize", ctypes.c_double)
_char_origin = prototype("FPDFText_GetCharOrigin", ctypes.c_int)
_unicode = prototype("FPDFText_GetUnicode", ctypes.c_uint)
_object_font = prototype("FPDFTextObj_GetFont", ctypes.c_void_p, (ctypes.c_void_p,))

Fonts = dict[int, tuple[str, bool, bool]]
Span = tuple[int, float, float]


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


WordAt = tuple[str, float, float, float, "_Style"]
"""A measured word as `_Word`'s fields, without building one."""


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
        self.matrix = pdfium_c.FS_MATRIX()
        self.matrix_ref = ctypes.byref(self.matrix)
        self.x, self.y = ctypes.c_double(), ctypes.c_double()
        self.x_ref, self.y_ref = ctypes.byref(self.x), ctypes.byref(self.y)
        self.styles: dict[int, _Style] = {}
        self.fonts: Fonts = {}

    def style(self, k: int, obj: int) -> _Style:
        """The style of text object `obj`, read at its glyph `k` (once per object)."""
        hit = self.styles.get(obj)
        if hit is not None:
            return hit
        name, bold, mono = _font_of(obj, self.fonts)
        tp, m, box = self.tp, self.matrix, self.box
        scale = 1.0
        upright = True
        if _char_matrix(tp, k, self.matrix_ref):
            scale = math.hypot(m.c, m.d) or 1.0
            upright = m.a > 0 and abs(m.b) < 0.05 * abs(m.a)
        size = abs(float(_font_size(tp, k))) * scale
        _loose_box(tp, k, self.box_ref)
        found = _char_origin(tp, k, self.x_ref, self.y_ref)
        rise = self.y.value - box.bottom if found else 0.0
        if not math.isfinite(size) or size <= 0:
            size = max(1.0, box.top - box.bottom)
        hit = self.styles[obj] = _Style(name, bold, mono, size, rise, upright)
        return hit

    def word(self, text: str, k0: int, k1: int, out: list[_Word]) -> None:
        """The glyphs k0..k1 (inclusive) as one or more words appended to `out`."""
        obj0 = _text_object(self.tp, k0)
        obj1 = _text_object(self.tp, k1) if k1 != k0 else obj0
        if not obj0 or not obj1:
            return
        if obj0 != obj1:
            self.split(text, k0, k1, out)
            return
        found = self.measure(text, k0, k1, obj0)
        if found is not None:
            out.append(_Word(*found))

    def measure(self, text: str, k0: int, k1: int, obj: int) -> WordAt | None:
        """The word `text` at the glyphs k0..k1 of text object `obj`: its text, start, end,
        baseline and style (`_Word`'s fields); None when PDFium gives no box for them."""
        tp, box, ref = self.tp, self.box, self.box_ref
        style = self.styles.get(obj) or self.style(k0, obj)
        if not _loose_box(tp, k0, ref):
            return None
        l0, r0, b0 = box.left, box.right, box.bottom
        if k1 == k0:
            l1, r1 = l0, r0
        elif _loose_box(tp, k1, ref):
            l1, r1 = box.left, box.right
        else:
            return None
        if l1 >= l0:
            return text, min(l0, r0), max(l1, r1), b0 + style.rise, style
        # right to left: the first glyph is the rightmost
        return text, max(l0, r0), min(l1, r1), b0 + style.rise, style

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

    def measured(self, raw: str, k0: int, k1: int) -> list[_Word]:
        """The word `raw` at glyphs k0..k1 as measured words, its accents composed and its
        text normalised (`accents.compose_on_page`, `textnorm.clean`); a word whose text
        changed length (accents, ligatures, soft hyphens) is measured whole and kept as one
        word."""
        text = compose_on_page(raw, self.textpage, k0)
        text = clean(plain(text.replace(_LINE_HYPHEN, "-")))
        out: list[_Word] = []
        if text and len(text) == len(raw):
            self.word(text, k0, k1, out)
        elif text:
            self.word(raw, k0, k1, out)
            if out:
                out[:] = [out[0]._replace(text=text, end=out[-1].end)]
        return out

    def visual(self, raw: str, k0: int, k1: int) -> Sequence[WordAt]:
        """The word `raw` at glyphs k0..k1 on a page holding right-to-left text: a word per
        text object its glyphs come from, each as drawn, left to right
        (`visual.visual_word`)."""
        tp, box, ref = self.tp, self.box, self.box_ref
        text = plain(raw.replace(_LINE_HYPHEN, "-"))
        if len(text) != k1 - k0 + 1 or any(
            ch != _LINE_HYPHEN and _unicode(tp, k) != ord(ch) for k, ch in enumerate(raw, k0)
        ):
            # (PDFium's text and its characters disagree: read as PDFium orders it)
            return self.measured(raw, k0, k1)
        raw = text
        out: list[WordAt] = []
        glyphs: list[Glyph] = []
        obj = _text_object(tp, k0)
        y = 0.0
        for k in range(k0, k1 + 2):
            here = _text_object(tp, k) if k <= k1 else 0
            if here != obj or k > k1:
                if glyphs and obj:
                    style = self.styles.get(obj) or self.style(k - len(glyphs), obj)
                    text = visual_word(glyphs, style.size)
                    lo = min(g[1] for g in glyphs)
                    hi = max(g[2] for g in glyphs)
                    if text:
                        rtl = any(map(is_rtl_char, text))
                        out.append((text, hi if rtl else lo, lo if rtl else hi, y, style))
                glyphs = []
                obj = here
            if k > k1:
                break
            if _loose_box(tp, k, ref):
                if not glyphs:
                    style = self.styles.get(obj) or self.style(k, obj)
                    if not style.upright:  # (rotated text: PDFium's order)
                        return self.measured(raw, k0, k1)
                    y = box.bottom + style.rise
                glyphs.append((raw[k - k0], box.left, box.right))
        return out


def _words(
    reader: _Reader,
    codes: str,
    max_chars: int,
    spaced: set[int],
    *,
    plain_page: bool,
    rtl_page: bool,
) -> tuple[list[WordAt], bool]:
    """The page's measured words in PDFium's reading order, at most `max_chars` characters,
    and whether that bound cut the text; the positions of the words that end a line with a
    space character after them are added to `spaced`.

    The common word (printable ASCII, nothing to compose or normalise, drawn by one text
    object) is measured here inline, as `_Reader.measure` does, without a call per word."""
    tp, box, ref, styles = reader.tp, reader.box, reader.box_ref, reader.styles
    text_object, loose_box, style_of = _text_object, _loose_box, reader.style
    out: list[WordAt] = []
    add = out.append
    chars = 0
    # where a space character ends a line (found once: most pages have none)
    line_ends = {m.start() for m in _SPACE_AT_LINE_END.finditer(codes)}
    for match in _WORD.finditer(codes):
        k0, k1 = match.span()
        chars += k1 - k0
        if chars > max_chars:
            return out, True
        ends = bool(line_ends) and k1 in line_ends
        raw = codes[k0:k1]
        k1 -= 1
        if rtl_page:
            drawn = reader.visual(raw, k0, k1)
            out.extend(drawn)
            if ends and drawn:
                spaced.add(len(out) - 1)
            continue
        if plain_page or (raw.isascii() and raw.isprintable() and "`" not in raw):
            obj = text_object(tp, k0)
            if obj and (k1 == k0 or text_object(tp, k1) == obj):
                style = styles.get(obj) or style_of(k0, obj)
                if not loose_box(tp, k0, ref):
                    continue
                l0, r0 = box.left, box.right
                y = box.bottom + style.rise
                if k1 == k0:
                    l1, r1 = l0, r0
                elif loose_box(tp, k1, ref):
                    l1, r1 = box.left, box.right
                else:
                    continue
                # (the min and max of `_Reader.measure`, NaN alike)
                if l1 >= l0:
                    add((raw, r0 if r0 < l0 else l0, r1 if r1 > l1 else l1, y, style))
                else:  # right to left: the first glyph is the rightmost
                    add((raw, r0 if r0 > l0 else l0, r1 if r1 < l1 else l1, y, style))
                if ends:
                    spaced.add(len(out) - 1)
                continue
            words: list[_Word] = []
            reader.word(raw, k0, k1, words)
        else:
            words = reader.measured(raw, k0, k1)
        out.extend(words)
        if ends and words:
            spaced.add(len(out) - 1)
    return out, False


def page_text(textpage: Any) -> tuple[str, int]:
    """The page's text, one character for each of PDFium's character indices, and how many
    of its glyphs have no character (read as spaces here).

    `FPDFText_GetText` leaves out the characters PDFium holds without a Unicode value and
    writes a character outside the BMP as two UTF-16 units, which PDFium may hold as one
    character or as two (a ToUnicode entry naming a surrogate pair: a bullet mapped to a
    private use character, as IBM's BookMaster fonts do). Where the page's text is not one
    unit a character, each character is read on its own: one left out, or half of a pair,
    reads as a space (its glyph is drawn, but no letter is known for it). Counting on the two
    to agree put every word after such a bullet on the wrong glyphs: a line's first word
    measured as the bullet and dropped, letters cut out of the next words."""
    count = pdfium_c.FPDFText_CountChars(textpage)
    if count <= 0:
        return "", 0
    units = (ctypes.c_ushort * (2 * count + 1))()
    written = pdfium_c.FPDFText_GetText(textpage, 0, count, units) - 1
    codes = ctypes.string_at(units, 2 * max(0, written)).decode("utf-16-le", "surrogatepass")
    if written == count == len(codes):
        return codes, 0
    get_text, text_index = pdfium_c.FPDFText_GetText, pdfium_c.FPDFText_GetTextIndexFromCharIndex
    out = []
    left_out = 0
    for k in range(count):
        if text_index(textpage, k) < 0:  # left out (its own text would be the next one's)
            out.append(" ")
            left_out += 1
            continue
        n = get_text(textpage, k, 1, units) - 1
        ch = ctypes.string_at(units, 2 * max(0, n)).decode("utf-16-le", "surrogatepass")
        known = len(ch) == 1 and not "\ud800" <= ch <= "\udfff"
        out.append(ch if known else " ")
        left_out += not known and not "\udc00" <= ch <= "\udfff"  # (a pair counts once)
    return "".join(out), left_out


def _close(
    runs: list[Run],
    texts: list[str],
    spans: list[Span],
    x0: float,
    x1: float,
    *,
    drawn: bool,
    spaced: bool,
) -> None:
    """Finish the last run of `runs` (opened by `read_runs`), dropped when it holds no text;
    `drawn`: its words are as drawn, left to right (a page holding right-to-left text);
    `spaced`: its last word ends its line with a space character after it."""
    run = runs[-1]
    run.x0, run.x1 = x0, x1
    if drawn:
        _read_drawn(run, texts, spans)
    else:
        run.text = " ".join(texts)
        run.spans = tuple(spans)
    run.space_after = spaced
    if not run.text.strip():
        runs.pop()


def _read_drawn(run: Run, texts: list[str], spans: list[Span]) -> None:
    """The run of the words `texts` as drawn: its visual text (its words left to right), its
    text in logical order (`visual.logical`) and its words' spans in that text."""
    order = sorted(range(len(texts)), key=lambda i: min(spans[i][1], spans[i][2]))
    run.visual = " ".join(texts[i] for i in order)
    rtl = is_rtl(run.visual)
    run.text = logical(run.visual, rtl)
    found: list[Span] = []
    at = 0
    for i in reversed(order) if rtl else order:
        word = logical(texts[i], rtl)
        offset = run.text.find(word, at)
        if offset < 0:
            found = []
            break
        found.append((offset, spans[i][1], spans[i][2]))
        at = offset + len(word)
    run.spans = tuple(found)


def read_runs(textpage: Any, max_chars: int) -> tuple[list[Run], bool, int]:
    """The page's runs, cut from its words as they are read (module doc), at most
    `max_chars` characters; whether that bound cut the text; and how many glyphs have no
    character (left out of PDFium's text, or read as a control code: a font whose ToUnicode
    is missing or unusable), which no reader of the text layer can give."""
    codes, unmapped = page_text(textpage)
    if not codes:
        return [], False, unmapped
    unmapped += sum(1 for _ in _UNMAPPED.finditer(codes))
    spaced: set[int] = set()
    plain_page = _NOT_PLAIN.search(codes) is None
    drawn = not plain_page and has_rtl(codes)
    words, cut = _words(
        _Reader(textpage), codes, max_chars, spaced, plain_page=plain_page, rtl_page=drawn
    )
    runs: list[Run] = []
    texts: list[str] = []
    spans: list[Span] = []
    current: _Style | None = None
    """The open run's style (None: no run open)."""
    length = 0
    x0 = x1 = a0 = a1 = last_y = limit = 0.0
    for i, (text, start, end, y, style) in enumerate(words):
        if start <= end:
            lo, hi = start, end
        else:
            lo, hi = end, start
        if current is not None and (style is not current or style.upright):
            # (rotated text: one run per text object, as drawn); `a0`..`a1` the last word's
            # extent, `limit` the open run's RUN_GAP in points
            gap = lo - a1 if lo - a1 > a0 - hi else a0 - hi
            if style is not current or abs(y - last_y) > 0.25 * current.size or gap > limit:
                _close(runs, texts, spans, x0, x1, drawn=drawn, spaced=i - 1 in spaced)
                current = None
        if current is None:
            current, x0, x1, length = style, lo, hi, len(text)
            limit = RUN_GAP * style.size
            texts = [text]
            spans = [(0, start, end)]
            runs.append(Run("", lo, hi, y, style.size, style.font, style.bold, style.mono))
        else:
            texts.append(text)
            spans.append((length + 1, start, end))
            length += len(text) + 1
            # (min and max as the builtins take them, without a call)
            if lo < x0:  # noqa: PLR1730
                x0 = lo
            if hi > x1:  # noqa: PLR1730
                x1 = hi
        a0, a1, last_y = lo, hi, y
    if current is not None:
        _close(runs, texts, spans, x0, x1, drawn=drawn, spaced=len(words) - 1 in spaced)
    return runs, cut, unmapped
