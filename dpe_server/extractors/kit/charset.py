"""The text of a file of unknown encoding (`decode`): its byte-order mark, else the encoding
it declares, else UTF-8 when it is UTF-8, else what charset-normalizer finds (the legacy
single-byte and CJK code pages, UTF-16 without a mark), else cp1252. Web pages, Markdown
and plain text are read through it."""

from __future__ import annotations

import codecs
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.model.errors import UnsupportedError

DETECT_BYTES = 64 * 1024
"""Bytes charset-normalizer looks at, at most: the file's start (its time grows with them:
1 MiB of binary takes it seconds)."""

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


_NOT_TEXT = {"zip": "a zip archive", "pdf": "a PDF", "cfb": "an OLE2 compound file"}


def not_text(f: BinaryIO, fmt: str, kind: str, limits: Limits) -> None:
    """`Format.check` of a text format: a zip, PDF or OLE2 file under its suffix is
    `unsupported`, named as what it is."""
    if kind in _NOT_TEXT:
        raise UnsupportedError(f"This file is {_NOT_TEXT[kind]} renamed to .{fmt}, not text.")


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte-order mark at the start of `data` says, or None."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def known(name: str | None) -> str | None:
    """The Python codec of an encoding's name (`Shift_JIS`, `windows-1252`), or None when
    Python has none; `iso-8859-1` and `us-ascii` are read as cp1252, as browsers do."""
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("\"'")).name
    except (LookupError, ValueError):
        return None
    if codec in ("latin-1", "iso8859-1", "ascii"):
        return "cp1252"
    return None if codec.startswith(("utf-7", "rot")) else codec


def _lenient(data: bytes, codec: str) -> str:
    """`data` in `codec`; a byte it leaves undefined (cp1252's five) read as Latin-1."""
    return data.decode(codec, "replace") if codec != "cp1252" else _cp1252(data)


def _cp1252(data: bytes) -> str:
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return "".join(
            data[i : i + 1].decode("cp1252", "ignore") or chr(b) for i, b in enumerate(data)
        )


def decode(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """The text of `data` and the name of the encoding it was read in (see the module doc);
    `declared` is what the file says of itself (a `<meta charset>`), trusted after a mark."""
    bom = bom_encoding(data)
    if bom is not None:
        return data.decode(bom, "replace"), bom.removesuffix("-sig")
    codec = known(declared)
    if codec is not None and codec not in ("utf-16", "utf-32"):
        return _lenient(data, codec), codec
    wide = _utf16_unmarked(data[:4096])
    if wide is not None:
        return data.decode(wide, "replace"), wide
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    detected = _detect(data)
    if detected is not None:
        return data.decode(detected, "replace"), detected
    return _cp1252(data), "cp1252"


def _utf16_unmarked(head: bytes) -> str | None:
    """UTF-16 without a mark, told by its zero bytes: most Latin text in UTF-16 has a zero
    byte in every other place (the odd ones in little-endian), which no 8-bit text has."""
    if len(head) < 4 or head.count(0) < len(head) // 4:
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if odd > 3 * even:
        return "utf-16-le"
    if even > 3 * odd:
        return "utf-16-be"
    return None


_CONTROL = frozenset([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
"""C0 control bytes no text holds (tab, line ends, form feed and escape are text)."""


def looks_binary(data: bytes) -> bool:
    """Whether the start of `data` is more than 1% control bytes no text holds, when no
    byte-order mark nor UTF-16's zero bytes say it is wide text."""
    head = data[:DETECT_BYTES]
    if bom_encoding(head) is not None or _utf16_unmarked(head[:4096]) is not None:
        return False
    return sum(map(head.count, _CONTROL)) > len(head) // 100


def _detect(data: bytes) -> str | None:
    from charset_normalizer import from_bytes

    best = from_bytes(data[:DETECT_BYTES]).best()
    return None if best is None else known(best.encoding)
