"""Text as a reader means it: presentation forms to letters, invisible marks out.

`clean` maps ligatures and other presentation forms (U+FB00–U+FB4F: `ﬁ` → `fi`; the Arabic
presentation forms U+FB50–U+FDFF and U+FE70–U+FEFF: a shaped letter → its letter) through
NFKC, and nothing else (NFKC on everything would change full-width forms, superscripts,
`™`...). Soft hyphens, the byte order mark, zero-width spaces and control characters are
dropped. PDFium already decomposes most ligatures; this catches what it leaves.

`rtl_majority` tells whether a line is mostly right-to-left letters (its runs are then read
from right to left).
"""

from __future__ import annotations

import functools
import re
import unicodedata

_DROP = re.compile("[\u0000-\u001f\u007f\u00ad\u200b\u2060\ufeff\ufffe\ufffd]")
_FORMS = re.compile("[\ufb00-\ufdff\ufe70-\ufefe]+")
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")


@functools.cache
def _ltr() -> re.Pattern[str]:
    """Left-to-right letters (compiled when first needed: the wide class takes ~7 ms)."""
    return re.compile("[^\\W\\d_\u0590-\U0010ffff]")


def clean(text: str) -> str:
    """`text` with presentation forms as letters and invisible marks removed."""
    text = _DROP.sub("", text)
    return _FORMS.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def rtl_majority(text: str) -> bool:
    """Whether `text` has more right-to-left letters (Hebrew, Arabic, Syriac, Thaana, NKo...)
    than left-to-right ones (Latin, Greek, Cyrillic and the other alphabets and syllabaries
    before U+0590)."""
    if not text or max(text) < "\u0590":
        return False
    return len(_RTL.findall(text)) > len(_ltr().findall(text))
