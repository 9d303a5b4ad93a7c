"""Folders of many small documents, fast: `gen.small`'s documents as templates, reworded.

    .venv/bin/python bench/many.py 10000 100000     # build (once) the folders of these sizes

`folder(out, documents)` is `out/many-N/`: N documents, a quarter of each format (xlsx, pdf,
pptx, docx), in nested folders (`xlsx/03/07/xlsx-03712.xlsx`: 100 documents a folder, 10
folders a level). Document `i` of a format is template `i % TEMPLATES` of that format (written
once by `gen.small`, so sizes vary as in `gen.folder`: 1-3 sheets, 1-4 pages, 1-5 slides,
1-4 sections, with or without tables and pictures) whose words are swapped, each for a word of
the same length drawn from `gen.WORDS` with a generator seeded by the format and `i`. Only text
is touched: the text nodes of the zip formats' XML parts (members rewritten into a new zip with
fixed times), the strings of the pdf's content streams (written uncompressed, so swapping
words of equal length keeps every byte offset valid). So every document is a valid file with its
own words, built in about a millisecond instead of python-docx/openpyxl/reportlab's ~0.1-0.3 s.
Deterministic: the same N gives the same bytes. A folder is built once (a `.complete` marker);
later calls reuse it.
"""

from __future__ import annotations

import random
import re
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen

KINDS = ("xlsx", "pdf", "pptx", "docx")
TEMPLATES = 60
"""Templates per format: every combination of `gen.small`'s size cycles (2, 3, 4, 5, 6)."""
ZIP_TIME = (2024, 1, 2, 3, 4, 6)
_BY_LENGTH: dict[int, list[str]] = {}
for _w in gen.WORDS:
    _BY_LENGTH.setdefault(len(_w), []).append(_w)
_LONGEST_FIRST = sorted(gen.WORDS, key=len, reverse=True)
_VOCABULARY = re.compile(r"\b(?:" + "|".join(_LONGEST_FIRST) + r")\b", re.IGNORECASE)
_XML_TEXT = re.compile(rb">([^<]+)<")
_PDF_STRING = re.compile(rb"\(((?:[^()\\]|\\.)*)\)")


def reword(text: str, rng: random.Random) -> str:
    """`text` with each vocabulary word swapped for one of the same length (capitals kept)."""

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        new = rng.choice(_BY_LENGTH[len(word)])
        if word.isupper() and len(word) > 1:
            return new.upper()
        return new.capitalize() if word[0].isupper() else new

    return _VOCABULARY.sub(swap, text)


def _reword_bytes(pattern: re.Pattern[bytes], data: bytes, rng: random.Random) -> bytes:
    def swap(m: re.Match[bytes]) -> bytes:
        inner = m.group(1).decode("latin-1")
        new = reword(inner, rng).encode("latin-1")
        return m.group(0)[: m.start(1) - m.start(0)] + new + m.group(0)[m.end(1) - m.start(0) :]

    return pattern.sub(swap, data)


def _deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


class _Member:
    """A member of a template zip: its text reworded per document when it has any, else its
    compressed bytes reused as they are."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name = name.encode()
        self.data = data
        xml = name.endswith(".xml") and not name.startswith("[")
        self.reworded = xml and any(
            _VOCABULARY.search(m.group(1).decode("utf-8", "replace"))
            for m in _XML_TEXT.finditer(data)
        )
        self.packed = (zlib.crc32(data), len(data), _deflate(data))

    def entry(self, rng: random.Random) -> tuple[int, int, bytes]:
        if not self.reworded:
            return self.packed
        data = _reword_bytes(_XML_TEXT, self.data, rng)
        return zlib.crc32(data), len(data), _deflate(data)


_DOS_TIME = (ZIP_TIME[3] << 11) | (ZIP_TIME[4] << 5) | (ZIP_TIME[5] // 2)
_DOS_DATE = ((ZIP_TIME[0] - 1980) << 9) | (ZIP_TIME[1] << 5) | ZIP_TIME[2]


def _zip_variant(template: list[_Member], rng: random.Random) -> bytes:
    """The template's members in a new zip (deflated, fixed times), written directly."""
    body, directory = bytearray(), bytearray()
    for member in template:
        crc, size, packed = member.entry(rng)
        head = struct.pack(
            "<HHHHHIIIHH",
            20,
            0,
            8,
            _DOS_TIME,
            _DOS_DATE,
            crc,
            len(packed),
            size,
            len(member.name),
            0,
        )
        directory += (
            b"PK\x01\x02"
            + struct.pack("<H", 20)
            + head
            + struct.pack("<HHHII", 0, 0, 0, 0o644 << 16, len(body))
            + member.name
        )
        body += b"PK\x03\x04" + head + member.name + packed
    end = struct.pack("<HHHHIIH", 0, 0, len(template), len(template), len(directory), len(body), 0)
    return bytes(body + directory + b"PK\x05\x06" + end)


def _pdf_variant(template: bytes, rng: random.Random) -> bytes:
    """Words of equal length swapped inside the strings of every uncompressed stream."""
    parts = re.split(rb"(stream\r?\n.*?endstream)", template, flags=re.S)
    return b"".join(
        _reword_bytes(_PDF_STRING, p, rng) if p.startswith(b"stream") else p for p in parts
    )


def templates(out: Path, kind: str) -> list[Path]:
    """The `TEMPLATES` template files of `kind` (built once under `out/templates/`)."""
    folder = out / "templates" / kind
    paths = [folder / f"{kind}-{i:02d}.{kind}" for i in range(TEMPLATES)]
    folder.mkdir(parents=True, exist_ok=True)
    for i, path in enumerate(paths):
        if not path.exists():
            tmp = path.with_name("tmp-" + path.name)
            gen.small(kind, tmp, i, compress=False)
            tmp.rename(path)
    return paths


def variants(out: Path, kind: str) -> Callable[[int], bytes]:
    """Document `i` of `kind`, as bytes."""
    sources = templates(out, kind)
    if kind == "pdf":
        pdfs = [p.read_bytes() for p in sources]
        assert all(b"/FlateDecode" not in p for p in pdfs), "pdf templates must be uncompressed"
        return lambda i: _pdf_variant(pdfs[i % TEMPLATES], random.Random(f"{kind}-{i}"))
    zips = []
    for p in sources:
        with zipfile.ZipFile(p) as z:
            zips.append([_Member(info.filename, z.read(info)) for info in z.infolist()])
    return lambda i: _zip_variant(zips[i % TEMPLATES], random.Random(f"{kind}-{i}"))


def relative(kind: str, i: int) -> str:
    """Where document `i` of `kind` lives in the folder."""
    return f"{kind}/{i // 1000:02d}/{i // 100 % 10:02d}/{kind}-{i:05d}.{kind}"


def folder(out: Path, documents: int) -> Path:
    """`documents` documents (a quarter of each format) under `out/many-N/`, built once."""

    def build(root: Path) -> None:
        for kind in KINDS:
            make = variants(out, kind)
            for i in range(documents // len(KINDS)):
                path = root / relative(kind, i)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(make(i))

    return gen.built_once(out / f"many-{documents}", build)


def checksum(root: Path) -> int:
    """A CRC of every file's path and bytes, in order (the same N gives the same value)."""
    crc = 0
    for path in sorted(root.rglob("*.*")):
        crc = zlib.crc32(path.relative_to(root).as_posix().encode() + path.read_bytes(), crc)
    return crc


if __name__ == "__main__":
    import time

    for size in (int(s) for s in sys.argv[1:] or ["1000"]):
        start = time.perf_counter()
        built = folder(Path(__file__).resolve().parent / "out", size)
        took = time.perf_counter() - start
        print(f"{built}: {took:.1f} s, checksum {checksum(built):08x}", flush=True)
