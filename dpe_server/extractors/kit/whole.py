"""The entry points of a format read whole (web pages, Markdown, text): any page asked is
read with all the others (`whole_extractor`), and the file read at most up to the part size
cap (`read_bounded`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import BinaryIO

from dpe_server.extractors.base import Extractor, Format, Limits
from dpe_server.model.errors import TooLargeError
from dpe_server.model.tree import Document, Page, Properties


def read_bounded(f: BinaryIO, limits: Limits) -> bytes:
    """The whole file, or `too_large` when it is over `limits.max_part_bytes` (told by its
    size before any byte is read; never read past the cap)."""
    if f.seekable():
        f.seek(0, 2)
        size = f.tell()
        f.seek(0)
        if size > limits.max_part_bytes:
            raise TooLargeError(
                f"The file is {size:,} bytes, over {limits.max_part_bytes:,}: text files over "
                "that size are not read."
            )
    data = f.read(limits.max_part_bytes + 1)
    if len(data) > limits.max_part_bytes:
        raise TooLargeError(
            f"The file is over {limits.max_part_bytes:,} bytes; text files over that size "
            "are not read."
        )
    return data


def whole_extractor(fmt: Format, read: Callable[[BinaryIO, Limits], Document]) -> Extractor:
    """The `Extractor` of `fmt`, whose every entry point is `read` (the whole file)."""

    def probe(f: BinaryIO, limits: Limits) -> Properties:
        return read(f, limits).properties

    def extract_pages(f: BinaryIO, indices: Sequence[int], limits: Limits) -> list[Page]:
        pages = read(f, limits).pages
        return [pages[i] for i in sorted(set(indices)) if 0 <= i < len(pages)]

    return Extractor(probe, read, extract_pages)
