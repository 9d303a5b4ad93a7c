"""Plain text (.txt, .log): the encodings (Shift_JIS without a mark, UTF-16 with one, UTF-16
without one, cp1252), pages at form feeds and every 2,000 lines, paragraphs from blank
lines, binary files and the size cap (shown with a small cap: the bound is the same)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from dpe_server.extractors import DEFAULT_LIMITS, for_path
from dpe_server.extractors.base import Limits
from dpe_server.model.errors import CorruptError, TooLargeError
from dpe_server.model.tree import Document
from fixtures.builders import text


def _read(data: bytes, name: str = "notes.txt", limits: Limits = DEFAULT_LIMITS) -> Document:
    extractor = for_path(name)
    assert extractor is not None
    return extractor.extract(io.BytesIO(data), limits)


def _paragraphs(doc: Document) -> list[list[str]]:
    return [[str(e.content["text"]) for e in p.elements] for p in doc.pages]


def test_shift_jis_without_a_mark(fixture_dir: Path) -> None:
    doc = _read((fixture_dir / text.SHIFT_JIS).read_bytes())
    assert doc.properties.extra["encoding"] == "cp932"  # Windows' Shift_JIS
    assert _paragraphs(doc) == [
        ["TX-SJIS 議事録\n日時：二〇二六年一月一日", text.JAPANESE.split("\n\n")[1]],
        ["次回の予定\nTX-SJIS2 次回は二月に東京で開催します。"],
    ]
    assert [p.title for p in doc.pages] == ["Page 1", "Page 2"]
    assert doc.pages[1].metadata == {"first_line": 7, "last_line": 8}


def test_notepad_utf16(fixture_dir: Path) -> None:
    doc = _read((fixture_dir / text.UTF16).read_bytes())
    assert doc.properties.extra["encoding"] == "utf-16"
    assert _paragraphs(doc) == [
        [
            "TX-UTF16 Packing list",
            "Tent, stove, 2 × fuel canisters\nCafé au lait sachets — Ünïcödé ok",
            "Ελληνικά και русский текст: TX-UTF16-end",
        ]
    ]


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        ("plain words and more words\n".encode("utf-16-le"), "utf-16-le"),
        ("plain words and more words\n".encode("utf-16-be"), "utf-16-be"),
        ("Ärger über Öl\n".encode(), "utf-8"),
    ],
)
def test_encodings(data: bytes, encoding: str) -> None:
    doc = _read(data, "server.log")
    assert doc.properties.extra["encoding"] == encoding
    assert _paragraphs(doc)[0][0] == data.decode(encoding).strip()


def test_pages_every_2000_lines_at_a_blank_line_near_the_bound() -> None:
    lines = [f"line {i}" for i in range(1, 4001)]
    lines[1800] = ""  # line 1801 blank: the first page ends there
    doc = _read("\n".join(lines).encode(), "big.log")
    assert [(p.metadata["first_line"], p.metadata["last_line"]) for p in doc.pages] == [
        (1, 1801),
        (1802, 3801),
        (3802, 4000),
    ]
    assert doc.properties.extra["line_count"] == 4000


def test_binary_is_corrupt_and_a_file_over_the_cap_too_large() -> None:
    with pytest.raises(CorruptError, match="binary"):
        _read(b"\x00\x01\x02\x03" * 100, "blob.txt")
    small = dataclasses.replace(DEFAULT_LIMITS, max_part_bytes=1024)
    with pytest.raises(TooLargeError, match="2,048 bytes, over 1,024"):
        _read(b"x" * 2048, "huge.txt", small)
