"""Checks of a .xls, .xlsb, .ods or .fods file before calamine reads it: a .xls is an OLE2
compound file, a .xlsb or .ods a zip (whose member count is capped as an OOXML package's is),
a .fods a flat XML OpenDocument spreadsheet (`odf.checks.check_flat`); a file of another kind
is named in the error."""

from __future__ import annotations

from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.media import PACKAGE_KINDS
from dpe_server.extractors.kit.zips import declared_members, zip_kind
from dpe_server.model.errors import CorruptError, TooLargeError, UnsupportedError

_CONTAINER = {"xls": "cfb", "xlsb": "zip", "ods": "zip", "fods": "other"}
SPREADSHEET = "application/vnd.oasis.opendocument.spreadsheet"
_KINDS = {"cfb": "an OLE2 compound file", "pdf": "a PDF", "other": "not a spreadsheet"}


def check_sheets(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    expected = _CONTAINER.get(fmt, "zip")
    if kind == expected:
        if kind == "other":
            from dpe_server.extractors.odf.checks import check_flat

            check_flat(f, fmt, (SPREADSHEET,))
        if kind == "zip":
            what = zip_kind(f)
            if what != "a zip archive" and not (fmt == "xlsb" and what == PACKAGE_KINDS.get("xl/")):
                raise UnsupportedError(
                    f"This file is {what} renamed to .{fmt}; give it its own suffix."
                )
            count = declared_members(f)
            if count is None:
                raise CorruptError(
                    f"The .{fmt} file is incomplete (no zip directory at its end); it may be "
                    "truncated or still being written.",
                    transient=True,
                )
            if count > limits.max_members:
                raise TooLargeError(
                    f"The file holds {count} parts, over the limit of {limits.max_members}."
                )
        return
    what = zip_kind(f) if kind == "zip" else _KINDS.get(kind, "not a spreadsheet")
    if kind == "other":
        raise CorruptError(f"The file is not a .{fmt} spreadsheet ({what}).")
    raise UnsupportedError(f"This file is {what} renamed to .{fmt}; give it its own suffix.")
