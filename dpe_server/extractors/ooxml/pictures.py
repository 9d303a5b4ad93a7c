"""Pictures: the mime type from magic bytes, the pixel size from header bytes, EMU → px.

No Pillow (only pdf pictures need it, through pypdf): the size is read from the header of
png, gif, bmp, webp (VP8, VP8L, VP8X), jpeg (the first SOF marker) and tiff (the first IFD);
emf, wmf and svg have no pixel size here (None). Re-exported by
`dpe_server.extractors.ooxml.drawingml`.
"""

from __future__ import annotations

import math
import struct

from dpe_server.extractors.kit.media import magic_mime

EMU_PER_PX = 9525

# --- pictures ----------------------------------------------------------------------------


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) in pixels from the header of png, gif, bmp, webp, jpeg or tiff."""
    try:
        size = _size(data)
    except (struct.error, IndexError, ValueError):
        return None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _size(data: bytes) -> tuple[int, int] | None:
    mime = magic_mime(data[:64])
    if mime == "image/png" and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if mime == "image/gif":
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    if mime == "image/bmp":
        if struct.unpack("<I", data[14:18])[0] == 12:
            w, h = struct.unpack("<HH", data[18:22])
            return int(w), int(h)
        w, h = struct.unpack("<ii", data[18:26])
        return abs(int(w)), abs(int(h))
    if mime == "image/webp":
        return _webp_size(data)
    if mime == "image/jpeg":
        return _jpeg_size(data)
    if mime == "image/tiff":
        return _tiff_size(data)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    return None


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker in _SOF:
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        if marker in (0xD9, 0xDA):  # end of image / start of scan before any frame
            return None
        i += 2 + struct.unpack(">H", data[i + 2 : i + 4])[0]
    return None


def _tiff_size(data: bytes) -> tuple[int, int] | None:
    endian = "<" if data[:2] == b"II" else ">"
    offset = struct.unpack(endian + "I", data[4:8])[0]
    count = struct.unpack(endian + "H", data[offset : offset + 2])[0]
    found: dict[int, int] = {}
    for k in range(min(count, 512)):
        entry = data[offset + 2 + 12 * k : offset + 14 + 12 * k]
        tag, kind = struct.unpack(endian + "HH", entry[:4])
        if tag in (256, 257):
            fmt = "H" if kind == 3 else "I"
            found[tag] = struct.unpack(endian + fmt, entry[8 : 10 if kind == 3 else 12])[0]
    if 256 in found and 257 in found:
        return found[256], found[257]
    return None


def emu_to_px(emu: int | str | None) -> int | None:
    """English Metric Units (914400 per inch) as pixels at 96 dpi, rounded; None if unknown."""
    if emu is None:
        return None
    try:
        value = float(emu)
    except ValueError:
        return None
    return round(value / EMU_PER_PX) if math.isfinite(value) else None
