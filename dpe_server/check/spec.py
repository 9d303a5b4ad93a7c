"""The facts of the DPE contract (docs/spec.md) the checker holds servers to, written out
independently of the server's own code (so a mistake in the server's model is caught, not
copied)."""

from __future__ import annotations

import re
from typing import Final

ABBR: Final[dict[str, str]] = {
    "text": "txt",
    "heading": "h",
    "list": "lst",
    "code": "code",
    "table": "tbl",
    "pivot_table": "pvt",
    "chart": "chart",
    "diagram": "dgm",
    "image": "img",
    "formula": "fx",
    "link": "lnk",
    "annotation": "ann",
    "header": "hdr",
    "footer": "ftr",
    "separator": "sep",
    "audio": "aud",
    "video": "vid",
    "form": "form",
    "widget": "wgt",
}
"""The 19 categories and their element id abbreviations (SPEC §2)."""

CATEGORIES: Final = tuple(ABBR)

ERROR_KINDS: Final = frozenset({"encrypted", "corrupt", "unsupported", "too_large", "timeout"})
SEPARATOR_KINDS: Final = frozenset({"page_break", "section_break", "column_break", "rule"})
IMAGE_MIME_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

DOC_REF_RE: Final = re.compile(r"[a-z0-9-]+")
ELEMENT_ID_RE: Final = re.compile(r"p(0|[1-9][0-9]*)-([a-z]+?)([1-9][0-9]*)")
ISO_Z_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")

SUMMARY_MAX: Final = 120
MAX_LIMIT: Final = 100
DEFAULT_LIMIT: Final = 20
MAX_COMPLETION_VALUES: Final = 100

INVALID_PARAMS: Final = -32602
NOT_FOUND_HANDSHAKE: Final = -32002
NOT_FOUND_MODERN: Final = -32602

DPE_INVALID_URI: Final = 4204
DPE_UNKNOWN_DOC: Final = 4201
DPE_PAGE_RANGE: Final = 4202
DPE_UNKNOWN_ELEMENT: Final = 4203

MIME: Final[dict[str, str]] = {
    "json": "application/json",
    "markdown": "text/markdown",
    "text": "text/plain",
}
