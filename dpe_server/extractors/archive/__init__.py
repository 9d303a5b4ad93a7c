"""Zip archives (.zip): the archive is a document whose one page (`extract`) lists its
members, each a link; a member of a kind the server reads is a child, a document of its own
the catalog serves (`Format.member` reads it; docs/children.md). 7z and tar are not read
(docs/formats.md says why)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Format, Limits
from dpe_server.model.errors import CorruptError, UnsupportedError


def _check(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    """A zip archive, with its directory at its end (the members are listed from it)."""
    if kind == "cfb":
        raise UnsupportedError(f"This file is an OLE2 compound file renamed to .{fmt}.")
    if kind == "pdf":
        raise UnsupportedError(f"This file is a PDF renamed to .{fmt}; rename it to .pdf.")
    if kind != "zip":
        raise CorruptError(f"The file is not a .{fmt} archive (it is not a zip archive).")


def _member(f: BinaryIO, path: str, limits: Limits) -> bytes:
    from dpe_server.extractors.archive.extract import member

    return member(f, path, limits)


def _members(
    f: BinaryIO, paths: Sequence[str], limits: Limits
) -> Iterator[tuple[str, Callable[[], bytes]]]:
    from dpe_server.extractors.archive.extract import members

    return members(f, paths, limits)


FORMAT = Format(
    name="zip",
    suffixes=(".zip",),
    kind_name="a zip archive",
    page_unit="listing",
    paged=False,
    extractor="dpe_server.extractors.archive.extract:ZIP",
    check=_check,
    member=_member,
    members=_members,
    recognises_pictures=False,
)
