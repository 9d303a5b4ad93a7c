"""List markers at the start of a line: bullets and numbers, and the value a number stands for.

A line is a list item when its text starts with a marker followed by white space, or when its
first run is nothing but a marker and more text follows in later runs (office suites and LaTeX
set the marker as a run of its own at the list indent, the text at a tab stop; its gap to the
text can be any width). Markers:

- bullets: • ◦ ▪ ● ■ □ ‣ ⁃ ∙ · ➢ ► ✓ ✔ - * – —, reportlab's 0x7F, a character of the private
  use area (where symbol fonts put their glyphs), a one-character run of a dingbat font
  (Wingdings, ZapfDingbats: its letters are pictures), and one of a Symbol font (Symbol,
  OpenSymbol) that is a symbol, a dot or a dash (not a letter, digit, bracket or math sign:
  `α`, `≥`, `{`);
- numbers (ordered): `1.` `1)` `(1)` `a.` `a)` `(a)` `iv.` `(iv)` `IV.` `1.2.`, full-width and
  CJK forms `1、` `一、` `（一）` `第一、`, circled and parenthesised digits `①` `⑴` `⒈`.

`value` turns a label into the number it counts (`c.` → 3, `iv)` → 4, `三、` → 3, `③` → 3), so
a list starting at another number than 1 keeps its start.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from dpe_server.extractors.pdf.lines import Line

_BULLETS = (
    "\u2022\u25e6\u25aa\u25ab\u25cf\u25cb\u25a0\u25a1\u2023\u2043\u2219\u00b7\x7f\x95"
    "\u27a2\u25ba\u25b8\u2713\u2714\u2756\u2666\u25c6\u2013\u2014*\\-"
)
_BULLET = f"[{_BULLETS}]|[\ue000-\uf8ff]"
_CJK_DIGITS = "〇零一二三四五六七八九十百"
_CIRCLED = "[\u2460-\u2473\u2474-\u2487\u2488-\u249b\u24f5-\u24fe\u2776-\u2793]"
_NUMBER = (
    r"\d{1,3}(?:\.\d{1,3}){0,3}[.)]"  # 1.  1)  1.2.
    r"|\(\d{1,2}\)|（\d{1,2}）"  # (1); not (605), an area code
    r"|[a-zA-Z][.)]|\([a-zA-Z]\)"  # a.  a)  (a)
    r"|\(?(?:[ivxlc]{1,6}|[IVXLC]{1,6})[.)]|\((?:[ivxlc]{1,6}|[IVXLC]{1,6})\)"  # iv.  (iv)
    rf"|\d{{1,3}}[、．]|第?[{_CJK_DIGITS}]{{1,3}}[、．.]|[（(][{_CJK_DIGITS}]{{1,3}}[）)]"  # 一、
    rf"|{_CIRCLED}"  # ①
)
_SPACED = re.compile(rf"^({_BULLET}|{_NUMBER})\s+(\S.*)$")
_CJK_TIGHT = re.compile(
    rf"^(\d{{1,3}}[、．]|第?[{_CJK_DIGITS}]{{1,3}}[、．]|[（(][{_CJK_DIGITS}]{{1,3}}[）)]|{_CIRCLED})(\S.*)$"
)
_ALONE = re.compile(rf"^(?:{_BULLET}|{_NUMBER})$")
_ORDERED = re.compile(rf"^(?:{_NUMBER})$")
_DINGBAT_FONTS = ("wingding", "dingbat", "webding")
_SYMBOL_BULLET = frozenset({"So", "Co", "Po", "Pd"})
"""Unicode categories of a Symbol font's character taken for a bullet (symbols, private use,
dots, dashes); not letters, digits, brackets or math signs (`α`, `≥`, `{` set in Symbol)."""


@dataclass(frozen=True, slots=True)
class Marker:
    """A list item's marker: numbered or not, the label as shown, and the item's own text."""

    ordered: bool
    label: str
    text: str


def list_marker(line: Line) -> Marker | None:
    """The list marker starting `line`, or None when the line is no list item."""
    text = line.text
    first = line.runs[0].text.strip() if line.runs else ""
    if len(line.runs) > 1 and first and text.startswith(first):
        rest = text[len(first) :].strip()
        symbol = len(first) == 1 and _bullet_font(line.runs[0].font, first)
        if rest and (symbol or _ALONE.match(first)):
            return Marker(not symbol and bool(_ORDERED.match(first)), first, rest)
    m = _SPACED.match(text) or _CJK_TIGHT.match(text)
    if m is None:
        return None
    label = m.group(1)
    return Marker(bool(_ORDERED.match(label)), label, m.group(2))


_LABEL_PUNCT = re.compile(r"^[(（第\s]+|[)）.、．\s]+$")


def _bullet_font(font: str, ch: str) -> bool:
    """A one-character run that is a bullet by its font: any character of a dingbat font
    (Wingdings `l` is a disc), a symbol, dot or dash of a Symbol font."""
    low = font.lower()
    if any(s in low for s in _DINGBAT_FONTS):
        return True
    return "symbol" in low and unicodedata.category(ch) in _SYMBOL_BULLET


_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_CJK_VALUE = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"〇": 0}


def value(label: str) -> int | None:
    """The number a list label counts (`3.` → 3, `c)` → 3, `iv.` → 4, `三、` → 3, `③` → 3)."""
    core = _LABEL_PUNCT.sub("", label)
    if not core:
        return None
    if len(core) == 1 and (circled := _circled(core)) is not None:
        return circled
    if core[0].isdecimal():
        head = core.split(".")[0]
        return int(head) if head.isdecimal() else None
    if all(ch in _CJK_VALUE or ch in "十百" for ch in core):
        return _cjk(core)
    low = core.lower()
    if all(ch in _ROMAN for ch in low) and (len(low) > 1 or low in "ivx"):
        return _roman(low)
    if len(low) == 1 and low.isalpha():
        return ord(low) - ord("a") + 1
    return None


_CIRCLED_RUNS = ((0x2460, 20), (0x2474, 20), (0x2488, 20), (0x24F5, 10), (0x2776, 30))


def _circled(ch: str) -> int | None:
    code = ord(ch)
    for start, count in _CIRCLED_RUNS:
        if start <= code < start + count:
            return (code - start) % 10 + 1 if start == 0x2776 else code - start + 1
    return None


def _cjk(text: str) -> int:
    total, digit = 0, 0
    for ch in text:
        if ch == "百":
            total += (digit or 1) * 100
            digit = 0
        elif ch == "十":
            total += (digit or 1) * 10
            digit = 0
        else:
            digit = _CJK_VALUE[ch]
    return total + digit


def _roman(text: str) -> int:
    total = 0
    for i, ch in enumerate(text):
        v = _ROMAN[ch]
        total += -v if i + 1 < len(text) and _ROMAN[text[i + 1]] > v else v
    return total
