"""Which way a text runs: the one rule every format uses for an element's `direction`.

A text is right-to-left when most of its words are: a word is right-to-left when it holds a
right-to-left letter (Hebrew, Arabic, Syriac, Thaana, NKo... and their presentation forms),
left-to-right when it holds another letter of an alphabet or syllabary before U+0590 (Latin,
Greek, Cyrillic...); numbers, punctuation and CJK count for neither. On a tie the first of
those words decides (the Unicode rule for a paragraph's direction). So a Hebrew sentence
naming `Python` is right-to-left, and an English sentence quoting one Hebrew word is not.
"""

from __future__ import annotations

import functools
import re

_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")


@functools.cache
def _ltr() -> re.Pattern[str]:
    """Left-to-right letters (compiled when first needed: the wide class takes ~7 ms)."""
    return re.compile("[^\\W\\d_\u0590-\U0010ffff]")


def has_rtl(text: str) -> bool:
    """Whether `text` holds a right-to-left letter."""
    return _RTL.search(text) is not None


def is_rtl(text: str) -> bool:
    """Whether `text` is predominantly right-to-left (see the module doc)."""
    if text.isascii() or _RTL.search(text) is None:
        return False
    ltr_letter = _ltr()
    rtl = ltr = 0
    first_rtl: bool | None = None
    for word in text.split():
        if _RTL.search(word):
            rtl += 1
        elif ltr_letter.search(word):
            ltr += 1
        else:
            continue
        if first_rtl is None:
            first_rtl = rtl > 0
    return rtl > ltr or (rtl == ltr and bool(first_rtl))
