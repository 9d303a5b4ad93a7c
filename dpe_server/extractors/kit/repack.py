"""A zip written from members copied as they were compressed (`Package.raw`): a clean package
for a library that opens the zip itself, without inflating the parts into memory again.

Only what readers look at is written: a local header and the bytes of each member, the
central directory, its end record (no zip64: a member of 4 GiB or more is never copied, the
caps stop it far below)."""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable

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
        fields = (_UTF8, m.method, _TIME, _DATE, m.crc, len(m.data), m.size, len(name))
        out.write(_LOCAL.pack(b"PK\x03\x04", 20, *fields, 0) + name)
        out.write(m.data)
        central.append(_CENTRAL.pack(b"PK\x01\x02", 20, 20, *fields, 0, 0, 0, 0, 0, offset) + name)
    start = out.tell()
    directory = b"".join(central)
    out.write(directory)
    out.write(_END.pack(b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), start, 0))
    out.seek(0)
    return out
