"""Text as a reader means it: presentation forms to letters, invisible marks out.

`clean` maps ligatures and other presentation forms (U+FB00–U+FB4F: `ﬁ` → `fi`; the Arabic
presentation forms U+FB50–U+FDFF and U+FE70–U+FEFF: a shaped letter → its letter) through
NFKC, and nothing else (NFKC on everything would change full-width forms, superscripts,
`™`...). Soft hyphens, the byte order mark, zero-width spaces and control characters are
dropped. PDFium already decomposes most ligatures; this catches what it leaves.
"""

from __future__ import annotations

import re
import unicodedata

_DROP = re.compile("[\u0000-\u001f\u007f\u00ad\u200b\u2060\ufeff\ufffe\ufffd]")
_FORMS = re.compile("[\ufb00-\ufdff\ufe70-\ufefe]+")


def clean(text: str) -> str:
    """`text` with presentation forms as letters and invisible marks removed."""
    text = _DROP.sub("", text)
    return _FORMS.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
