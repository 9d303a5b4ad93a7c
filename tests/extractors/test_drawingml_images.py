"""Pictures: mime type from magic bytes or extension, pixel size from headers, EMU → px."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpe_server.extractors.kit.media import image_mime
from dpe_server.extractors.ooxml.pictures import EMU_PER_PX, emu_to_px, image_size


def png(w: int, h: int) -> bytes:
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + b"IHDR"
        + struct.pack(">II", w, h)
        + b"\x08\x02\0\0\0"
    )


def gif(w: int, h: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", w, h) + b"\0" * 8


def bmp(w: int, h: int) -> bytes:
    return b"BM" + b"\0" * 12 + struct.pack("<Iii", 40, w, h) + b"\0" * 28


def jpeg(w: int, h: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, h, w) + b"\x03" + b"\0" * 9
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp(chunk: bytes, body: bytes) -> bytes:
    payload = b"WEBP" + chunk + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", len(payload)) + payload


def tiff(w: int, h: int) -> bytes:
    entries = struct.pack("<HHII", 256, 3, 1, w) + struct.pack("<HHII", 257, 4, 1, h)
    return b"II*\0" + struct.pack("<I", 8) + struct.pack("<H", 2) + entries + b"\0\0\0\0"


EMF = b"\x01\0\0\0" + b"\0" * 36 + b" EMF" + b"\0" * 20
WMF = b"\xd7\xcd\xc6\x9a" + b"\0" * 20
SVG = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        pytest.param(png(1, 1), "image/png", id="png"),
        pytest.param(jpeg(1, 1), "image/jpeg", id="jpeg"),
        pytest.param(gif(1, 1), "image/gif", id="gif"),
        pytest.param(webp(b"VP8X", b"\0" * 10), "image/webp", id="webp"),
        pytest.param(bmp(1, 1), "image/bmp", id="bmp"),
        pytest.param(tiff(1, 1), "image/tiff", id="tiff"),
        pytest.param(EMF, "image/emf", id="emf"),
        pytest.param(WMF, "image/wmf", id="wmf"),
        pytest.param(SVG, "image/svg+xml", id="svg"),
    ],
)
def test_image_mime_from_magic_bytes(head: bytes, mime: str) -> None:
    assert image_mime("media/image1.bin", head) == mime


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        pytest.param("xl/media/image1.JPG", "image/jpeg", id="upper-jpg"),
        pytest.param("word/media/image2.emf", "image/emf", id="emf"),
        pytest.param("ppt/media/image3", "application/octet-stream", id="no-extension"),
    ],
)
def test_image_mime_from_extension(name: str, mime: str) -> None:
    assert image_mime(name) == mime


def test_image_mime_magic_wins_over_extension() -> None:
    assert image_mime("ppt/media/image1.jpeg", png(1, 1)) == "image/png"


@pytest.mark.parametrize(
    ("data", "size"),
    [
        pytest.param(png(640, 480), (640, 480), id="png"),
        pytest.param(gif(32, 16), (32, 16), id="gif"),
        pytest.param(bmp(100, -50), (100, 50), id="bmp-top-down"),
        pytest.param(jpeg(1024, 768), (1024, 768), id="jpeg"),
        pytest.param(
            webp(b"VP8 ", b"\0\0\0\x9d\x01\x2a" + struct.pack("<HH", 300, 200)),
            (300, 200),
            id="webp-vp8",
        ),
        pytest.param(
            webp(b"VP8L", b"\x2f" + ((99) | (49 << 14)).to_bytes(4, "little")),
            (100, 50),
            id="webp-vp8l",
        ),
        pytest.param(
            webp(b"VP8X", b"\0" * 4 + (799).to_bytes(3, "little") + (599).to_bytes(3, "little")),
            (800, 600),
            id="webp-vp8x",
        ),
        pytest.param(tiff(123, 45), (123, 45), id="tiff"),
        pytest.param(png(640, 480)[:20], None, id="truncated"),
        pytest.param(EMF, None, id="emf-unknown"),
        pytest.param(b"", None, id="empty"),
    ],
)
def test_image_size(data: bytes, size: tuple[int, int] | None) -> None:
    assert image_size(data) == size


@pytest.mark.parametrize(
    ("emu", "px"),
    [
        pytest.param(EMU_PER_PX * 100, 100, id="int"),
        pytest.param("914400", 96, id="inch-str"),
        pytest.param(None, None, id="none"),
        pytest.param("abc", None, id="garbage"),
        pytest.param("9525.0", 1, id="float-str"),
        pytest.param(-EMU_PER_PX * 2, -2, id="negative"),
    ],
)
def test_emu_to_px(emu: int | str | None, px: int | None) -> None:
    assert emu_to_px(emu) == px


MAGIC_PREFIXES = [
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF89a",
    b"RIFF\0\0\0\0WEBPVP8 ",
    b"RIFF\0\0\0\0WEBPVP8L",
    b"RIFF\0\0\0\0WEBPVP8X",
    b"BM",
    b"II*\0",
    b"MM\0*",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(MAGIC_PREFIXES), st.binary(max_size=96))
def test_image_size_never_raises_on_damaged_headers(prefix: bytes, rest: bytes) -> None:
    size = image_size(prefix + rest)
    assert size is None or (size[0] > 0 and size[1] > 0)
