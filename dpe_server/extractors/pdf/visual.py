"""Right-to-left text from visual order back to logical order.

Producers of right-to-left pdfs (LibreOffice, Word, and anything that shapes Arabic itself)
draw glyphs in visual order, left to right, and PDFium's own reordering of them is a rough
one (it reverses every right-to-left stretch character by character, the two letters of a
lam-alef ligature glyph too, puts a line's left-to-right stretches in reverse order, mirrors
brackets that were already the characters they stand for, and reverses digits drawn glyph
by glyph from the right). So a page holding right-to-left text is read from where its glyphs
are drawn (`glyphs`): each word's glyphs sorted by x into a visual string, the words of a
run and the runs of a line likewise, and `logical` turns a visual string back into the order
it is read in with the Unicode bidirectional algorithm (UAX #9, its rules for weak types,
neutrals and implicit levels; no explicit embeddings, which a page does not draw):

- the visual string of a right-to-left line reversed is its right-to-left text in logical
  order, and each stretch that resolves to a higher level (Latin words, European and
  Arabic-Indic numbers with their separators: `47,500`, `3.14`, `۳٫۵`) is turned back to
  its own left-to-right order; after Arabic letters a number is an Arabic number, so a
  percent sign drawn to its left reads after it (`50%`), as the algorithm places it;
- a left-to-right line keeps its order but for the right-to-left stretches in it;
- brackets: a producer writes either the character a bracket stands for or the one whose
  shape it shows, and PDFium mirrors some of them; the brackets of the right-to-left
  stretches are swapped for their mirrors when that pairs more of the line's brackets
  (`)2024 - 2026(` → `(2024 - 2026)`), never otherwise.
"""

from __future__ import annotations

import functools
import itertools
import math
import unicodedata
from collections.abc import Sequence
from typing import Any

from dpe_server.extractors.pdf.textnorm import clean

_STRONG_R = frozenset({"R", "AL"})
_MIRRORS = {"(": ")", ")": "(", "[": "]", "]": "[", "{": "}", "}": "{", "«": "»", "»": "«"}
_MIRRORS |= {"‹": "›", "›": "‹", "<": ">", ">": "<"}
_OPEN = {"(": ")", "[": "]", "{": "}", "«": "»", "‹": "›", "<": ">"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_NEUTRAL = frozenset({"B", "S", "WS", "ON", "BN", "LRE", "RLE", "LRO", "RLO", "PDF"})
_NEUTRAL |= {"LRI", "RLI", "FSI", "PDI"}


def bidi_class(ch: str) -> str:
    """The character's bidirectional class (`L` for one Unicode does not know)."""
    return unicodedata.bidirectional(ch) or "L"


def is_rtl_char(ch: str) -> bool:
    """A right-to-left letter (Hebrew, Arabic, Syriac, Thaana...)."""
    return bidi_class(ch) in _STRONG_R


def _weak(types: list[str], sos: str) -> None:
    """Rules W1–W7 of UAX #9 on one paragraph's types, in place."""
    prev = sos
    for i, t in enumerate(types):  # W1: a mark takes the type before it
        if t == "NSM":
            types[i] = prev
        else:
            prev = t
    strong = sos
    for i, t in enumerate(types):  # W2, W3
        if t in ("L", "R", "AL"):
            strong = t
        elif t == "EN" and strong == "AL":
            types[i] = "AN"
    types[:] = ["R" if t == "AL" else t for t in types]
    for i in range(1, len(types) - 1):  # W4: one separator between two numbers
        t, before, after = types[i], types[i - 1], types[i + 1]
        if t == "ES" and before == after == "EN":
            types[i] = "EN"
        elif t == "CS" and before == after and before in ("EN", "AN"):
            types[i] = before
    i = 0
    while i < len(types):  # W5: terminators next to European numbers
        if types[i] != "ET":
            i += 1
            continue
        j = i
        while j < len(types) and types[j] == "ET":
            j += 1
        if (i > 0 and types[i - 1] == "EN") or (j < len(types) and types[j] == "EN"):
            types[i:j] = ["EN"] * (j - i)
        i = j
    types[:] = ["ON" if t in ("ES", "ET", "CS") else t for t in types]  # W6
    strong = sos
    for i, t in enumerate(types):  # W7
        if t in ("L", "R"):
            strong = t
        elif t == "EN" and strong == "L":
            types[i] = "L"
    if sos == "R":
        # (a reversed visual string: a number drawn right of a Latin word reads after it,
        # `Python 3.12`, as W7 reads it in logical order)
        strong = sos
        for i in range(len(types) - 1, -1, -1):
            t = types[i]
            if t in ("L", "R"):
                strong = t
            elif t == "EN" and strong == "L":
                types[i] = "L"


def _neutrals(types: list[str], sos: str, base: str) -> None:
    """Rules N1–N2: a stretch of neutrals between two of one direction takes it (numbers
    count as right-to-left), any other the paragraph's."""
    i = 0
    n = len(types)
    while i < n:
        if types[i] not in _NEUTRAL:
            i += 1
            continue
        j = i
        while j < n and types[j] in _NEUTRAL:
            j += 1
        before = "R" if i == 0 and sos == "R" else ("L" if i == 0 else types[i - 1])
        after = sos if j == n else types[j]
        before = "R" if before in ("EN", "AN") else before
        after = "R" if after in ("EN", "AN") else after
        types[i:j] = [before if before == after else base] * (j - i)
        i = j


def _unit_class(unit: str) -> str:
    """A character's class; a number drawn as a piece of its own (`47,500`, `1.`) is one
    number."""
    if len(unit) == 1:
        return bidi_class(unit)
    classes = {bidi_class(ch) for ch in unit}
    return "AN" if "AN" in classes else "EN"


def _levels(text: Sequence[str], rtl: bool) -> list[int]:
    sos = "R" if rtl else "L"
    types = [_unit_class(unit) for unit in text]
    _weak(types, sos)
    _neutrals(types, sos, sos)
    if rtl:
        return [2 if t in ("L", "EN", "AN") else 1 for t in types]
    return [2 if t in ("EN", "AN") else (1 if t == "R" else 0) for t in types]


def _reverse_runs(chars: list[str], levels: list[int], at_least: int) -> None:
    """Reverse each maximal stretch of `chars` whose levels are at least `at_least`."""
    i = 0
    n = len(chars)
    while i < n:
        if levels[i] < at_least:
            i += 1
            continue
        j = i
        while j < n and levels[j] >= at_least:
            j += 1
        chars[i:j] = chars[i:j][::-1]
        levels[i:j] = levels[i:j][::-1]
        i = j


def logical(visual: str | Sequence[str], rtl: bool) -> str:
    """The visual string `visual` (left to right as drawn) in the order it is read, as a
    right-to-left paragraph when `rtl` (module doc). `visual` may be given in units, each a
    character or a number kept as drawn (`number_units`)."""
    if isinstance(visual, str) and visual.isascii() and not rtl:
        return visual
    chars = list(visual)
    if rtl:
        chars.reverse()
    levels = _levels(chars, rtl)
    for level in (2,) if rtl else (1, 2):
        _reverse_runs(chars, levels, level)
    return pair_brackets(chars, levels)


def number_units(visual: str) -> list[str]:
    """`visual`, a piece drawn on its own, as units for `logical`: the piece whole when it
    is a number (digits and their separators, no letter: `47,500`, `1.`), kept as drawn;
    else its characters."""
    if len(visual) > 1 and any(ch.isdigit() for ch in visual):
        classes = {bidi_class(ch) for ch in visual}
        if classes <= {"EN", "AN", "ES", "ET", "CS", "ON"}:
            return [visual]
    return list(visual)


def _unpaired(chars: Sequence[str]) -> int:
    stack: list[str] = []
    bad = 0
    for ch in chars:
        if ch in _OPEN:
            stack.append(ch)
        elif ch in _CLOSE:
            if stack and stack[-1] == _CLOSE[ch]:
                stack.pop()
            else:
                bad += 1
    return bad + len(stack)


def pair_brackets(chars: list[str], levels: Sequence[int]) -> str:
    """`chars` as a string, the brackets at right-to-left (odd) levels swapped for their
    mirrors when that leaves fewer brackets of the line unpaired."""
    odd = [i for i, ch in enumerate(chars) if ch in _MIRRORS and levels[i] % 2]
    if odd:
        swapped = list(chars)
        for i in odd:
            swapped[i] = _MIRRORS[chars[i]]
        if _unpaired(swapped) < _unpaired(chars):
            chars = swapped
    return "".join(chars)


SCRIPT_GAP = 0.08
"""A gap wider than this many ems between a right-to-left letter and a left-to-right letter
or digit is a space (`Python من`), where a gap inside one script must pass 0.15 em."""

Glyph = tuple[str, float, float]
"""A character as PDFium reads it, with the left and right x of its glyph's box."""


@functools.cache
def _form_letters() -> frozenset[str]:
    """The letters the Arabic presentation forms of more than one letter stand for (`ﻻ` →
    `لا`), in logical order: PDFium decomposes those forms itself, in that order."""
    forms = itertools.chain(range(0xFB50, 0xFE00), range(0xFE70, 0xFEFF))
    out = (unicodedata.normalize("NFKC", chr(cp)) for cp in forms)
    return frozenset(s for s in out if len(s) > 1)


def scripts_differ(left: str, right: str) -> bool:
    """One side a right-to-left letter, the other a left-to-right letter or a digit."""
    if not left or not right:
        return False
    a, b = bidi_class(left), bidi_class(right)
    if a in _STRONG_R:
        return b in ("L", "EN", "AN")
    return b in _STRONG_R and a in ("L", "EN", "AN")


def visual_word(glyphs: Sequence[Glyph], size: float) -> str:
    """A word's characters, in PDFium's order with their glyph boxes, as drawn left to
    right: the characters of one glyph (a ligature: PDFium gives them in the order it gave
    the whole right-to-left stretch, reversed unless it decomposed a presentation form
    itself) and the marks over a glyph kept with it, the glyphs sorted by x, a space where
    a gap parts two scripts (`SCRIPT_GAP`)."""
    units: list[list[Any]] = []
    for ch, left, right in glyphs:
        if units and (
            (abs(units[-1][1] - left) < 0.01 and abs(units[-1][2] - right) < 0.01)
            or unicodedata.category(ch) == "Mn"
        ):
            units[-1][0] += ch
            continue
        units.append([ch, left, right])
    parts: list[tuple[str, float, float]] = []
    for chars, left, right in units:
        letters = "".join(c for c in chars if unicodedata.category(c) != "Mn")
        reversed_by_pdfium = (
            len(letters) > 1 and all(map(is_rtl_char, letters)) and letters not in _form_letters()
        )
        text = clean(chars[::-1] if reversed_by_pdfium else chars)
        if text and is_rtl_char(text[0]):
            text = text[::-1]  # (drawn right to left: its visual order)
        parts.append((text, left, right))
    parts.sort(key=lambda p: p[1] + p[2])
    out = ""
    last = -math.inf
    for text, left, right in parts:
        if out and text and left - last > SCRIPT_GAP * size and scripts_differ(out[-1], text[0]):
            out += " "
        out += text
        last = max(last, right)
    return out
