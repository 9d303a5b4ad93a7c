"""Checks made on every file before its extractor runs, in one place for all formats.

`precheck(f, suffix, limits)` refuses an empty file (`corrupt`, transient: it may be being
written), then asks the file's format (`Format.check`) whether its first bytes and container
are what its suffix says: an OOXML package (`extractors.ooxml.checks`), a pdf
(`extractors.pdf.checks`). What no single extractor can see is checked here.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import BinaryIO

from dpe_server.extractors import Limits, file_type, format_of
from dpe_server.extractors.magic import sniff
from dpe_server.model.errors import CorruptError


def precheck(f: BinaryIO, suffix: str, limits: Limits) -> None:
    """Raise the project's error when `f` is not a plausible file of `suffix`. Rewinds `f`."""
    fmt = format_of(PurePath("x" + suffix))
    kind = sniff(f)
    if kind == "empty":
        raise CorruptError(
            "The file is empty (0 bytes); it may still be being written.", transient=True
        )
    try:
        if fmt is not None and fmt.check is not None:
            fmt.check(f, file_type("x" + suffix), kind, limits)
    finally:
        f.seek(0)
