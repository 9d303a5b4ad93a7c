"""A zip written from members copied as they were compressed (`Package.raw`): a clean package
for a library that opens the zip itself, without inflating the parts into memory again.

Only what readers look at is written: a local header and the bytes of each member, the
central directory, its end record (no zip64: a member of 4 GiB or more is never copied, the
caps stop it far below).

`prefixed` makes a member read as some bytes first and then as its own, without inflating or
copying it: what the library meets before the part's own first byte."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import replace

from dpe_server.extractors.kit.package import RawMember

_TIME, _DATE = 0, (1 << 5) | 1  # 1980-01-01 00:00
_UTF8 = 0x800
"""The general-purpose flag saying names are UTF-8."""
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_END = struct.Struct("<4sHHHHIIH")


def repack(members: Iterable[RawMember]) -> io.BytesIO:
    """The members as one zip in memory, in the order given, names as they are."""
    out = io.BytesIO()
    central: list[bytes] = []
    for m in members:
        name = m.name.encode()
        offset = out.tell()
        packed = len(m.head) + len(m.data)
        fields = (_UTF8, m.method, _TIME, _DATE, m.crc, packed, m.size, len(name))
        out.write(_LOCAL.pack(b"PK\x03\x04", 20, *fields, 0) + name)
        out.write(m.head)
        out.write(m.data)
        central.append(_CENTRAL.pack(b"PK\x01\x02", 20, 20, *fields, 0, 0, 0, 0, 0, offset) + name)
    start = out.tell()
    directory = b"".join(central)
    out.write(directory)
    out.write(_END.pack(b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), start, 0))
    out.seek(0)
    return out


def prefixed(member: RawMember, prefix: bytes) -> RawMember:
    """`member` made to read as `prefix` followed by what it held. A stored member's bytes
    are not copied (the prefix goes to its `head`, written before them); a deflated member's
    are put after a stored deflate block holding the prefix: a deflate stream is a series of
    blocks, and a stored one ends on a byte boundary, where the member's own first block
    starts (its back references stay within its own output). The CRC is combined from the
    two (`crc32_combine`)."""
    if not 0 < len(prefix) <= 0xFFFF:
        raise ValueError("a prefix of 1 to 65,535 bytes")
    crc = crc32_combine(zlib.crc32(prefix), member.crc, member.size)
    size = len(prefix) + member.size
    if member.method == zipfile.ZIP_STORED:
        return replace(member, crc=crc, size=size, head=prefix + member.head)
    if member.method != zipfile.ZIP_DEFLATED:
        raise ValueError("a stored or deflated member")
    # A deflated part's bytes are few (a few MB for a sheet of 21): the block is joined to
    # them, which measured 1.3 MB less at the peak of a 500,000-cell read than a head
    # written before them (the allocator's pattern, not the copy, decides).
    block = struct.pack("<BHH", 0, len(prefix), len(prefix) ^ 0xFFFF) + prefix  # BFINAL 0
    return replace(member, crc=crc, size=size, data=block + member.head + member.data, head=b"")


_POLY = 0xEDB88320
"""CRC-32's polynomial, reflected (zlib's)."""


def _multmodp(a: int, b: int) -> int:
    """a(x) * b(x) modulo the polynomial (reflected bit order, as zlib's `multmodp`)."""
    m = 1 << 31
    p = 0
    while True:
        if a & m:
            p ^= b
            if not a & (m - 1):
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of A + B from A's CRC, B's CRC and B's length (zlib's `crc32_combine`,
    which Python's zlib does not offer): crc1 times x^(8 * len2), plus crc2."""
    p = 1 << 31  # x^0
    square = 1 << 30  # x^1, squared below to x^2, x^4, x^8...
    n, k = len2, 0
    while n or k < 3:
        if k >= 3 and n & 1:
            p = _multmodp(square, p)
        if k >= 3:
            n >>= 1
        square = _multmodp(square, square)
        k += 1
    return _multmodp(p, crc1) ^ crc2
