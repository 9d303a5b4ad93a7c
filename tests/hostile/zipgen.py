"""A tiny zip writer for hostile packages: members built from repeated chunks, sizes that lie.

`repeat_deflate(prefix, chunk, count, suffix)` deflates `prefix + chunk * count + suffix`
without compressing `count` chunks: with a full flush after each piece the deflater keeps no
history, so every chunk compresses to the same bytes, written `count` times. A gigabyte of
whitespace costs a few milliseconds to write (plus one CRC pass over it).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

FIXED_TIME = (2024 - 1980) << 9 | 1 << 5 | 1, 0  # 2024-01-01 00:00 (dos date, time)


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    data: bytes
    """What is stored: raw deflate bytes (method 8) or the content itself (method 0)."""
    crc: int
    size: int
    method: int = 8
    declared_size: int | None = None
    """The uncompressed size the headers claim (None: the truth)."""
    flags: int = 0
    """The general purpose bit flag (bit 0: encrypted)."""


def _gf2_times(mat: list[int], vec: int) -> int:
    out, i = 0, 0
    while vec:
        if vec & 1:
            out ^= mat[i]
        vec >>= 1
        i += 1
    return out


def _gf2_square(mat: list[int]) -> list[int]:
    return [_gf2_times(mat, mat[n]) for n in range(32)]


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """zlib's crc32_combine: the CRC of A + B from CRC(A), CRC(B) and len(B)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]
    even = _gf2_square(odd)
    odd = _gf2_square(even)
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def adler32_combine(adler1: int, adler2: int, len2: int) -> int:
    """zlib's adler32_combine."""
    base = 65521
    rem = len2 % base
    sum1 = adler1 & 0xFFFF
    sum2 = (rem * sum1) % base
    sum1 += (adler2 & 0xFFFF) + base - 1
    sum2 += ((adler1 >> 16) & 0xFFFF) + ((adler2 >> 16) & 0xFFFF) + base - rem
    sum1 %= base
    sum2 %= base
    return sum1 | (sum2 << 16)


def repeated_check(chunk: bytes, count: int, start: int, fn: str = "crc32") -> int:
    """crc32 (or adler32) of `chunk * count` continuing from `start`, in O(log count)."""
    one = getattr(zlib, fn)(chunk, 0 if fn == "crc32" else 1)
    combine = crc32_combine if fn == "crc32" else adler32_combine
    result, length = start, len(chunk)
    power, power_len = one, length
    while count:
        if count & 1:
            result = combine(result, power, power_len)
        power = combine(power, power, power_len)
        power_len *= 2
        count >>= 1
    return result


def _piece(data: bytes, mode: int) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(mode)


def repeat_deflate(  # noqa: PLR0917 (reads as the bytes it builds)
    name: str, prefix: bytes, chunk: bytes, count: int, suffix: bytes, declared: int | None = None
) -> Member:
    """A deflated member holding `prefix + chunk * count + suffix`."""
    block = _piece(chunk, zlib.Z_FULL_FLUSH)
    data = b"".join(
        [_piece(prefix, zlib.Z_FULL_FLUSH), block * count, _piece(suffix, zlib.Z_FINISH)]
    )
    crc = repeated_check(chunk, count, zlib.crc32(prefix))
    crc = zlib.crc32(suffix, crc)
    size = len(prefix) + len(chunk) * count + len(suffix)
    return Member(name, data, crc, size, 8, declared)


def plain(name: str, content: bytes | str, deflate: bool = True) -> Member:
    raw = content.encode() if isinstance(content, str) else content
    if not deflate:
        return Member(name, raw, zlib.crc32(raw), len(raw), 0)
    return Member(name, _piece(raw, zlib.Z_FINISH), zlib.crc32(raw), len(raw), 8)


def write_zip(path: Path, members: list[Member]) -> Path:
    """Write `members` as a zip (no zip64: every size must fit in 32 bits)."""
    date, time = FIXED_TIME[0], FIXED_TIME[1]
    central: list[bytes] = []
    with path.open("wb") as out:
        for m in members:
            offset = out.tell()
            name = m.name.encode()
            size = m.size if m.declared_size is None else m.declared_size
            head = struct.pack(
                "<IHHHHHIIIHH",
                0x04034B50,
                20,
                m.flags,
                m.method,
                time,
                date,
                m.crc,
                len(m.data),
                size,
                len(name),
                0,
            )
            out.write(head + name)
            out.write(m.data)
            central.append(
                struct.pack(
                    "<IHHHHHHIIIHHHHHII",
                    0x02014B50,
                    20,
                    20,
                    m.flags,
                    m.method,
                    time,
                    date,
                    m.crc,
                    len(m.data),
                    size,
                    len(name),
                    0,
                    0,
                    0,
                    0,
                    0,
                    offset,
                )
                + name
            )
        start = out.tell()
        directory = b"".join(central)
        out.write(directory)
        out.write(
            struct.pack(
                "<IHHHHIIH",
                0x06054B50,
                0,
                0,
                len(members),
                len(members),
                len(directory),
                start,
                0,
            )
        )
    return path


def members_of(path: Path) -> list[Member]:
    """The members of an existing zip, re-deflated, to be rewritten with some replaced."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        return [plain(i.filename, z.read(i)) for i in z.infolist()]


def _crc_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def zipcrypto(name: str, content: bytes, password: bytes) -> Member:
    """A stored member encrypted with the traditional PKWARE cipher (ZipCrypto), which
    Python's zipfile reads but cannot write."""
    keys = [0x12345678, 0x23456789, 0x34567890]

    def crc(k: int, b: int) -> int:
        return (k >> 8) ^ _TABLE[(k ^ b) & 0xFF]

    def update(b: int) -> None:
        keys[0] = crc(keys[0], b)
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = crc(keys[2], keys[1] >> 24)

    for b in password:
        update(b)
    check = zlib.crc32(content)
    plain_bytes = bytes(range(11)) + bytes([check >> 24]) + content
    out = bytearray()
    for b in plain_bytes:
        t = (keys[2] | 2) & 0xFFFF
        out.append(b ^ (((t * (t ^ 1)) >> 8) & 0xFF))
        update(b)
    return Member(name, bytes(out), check, len(content), 0, flags=1)
