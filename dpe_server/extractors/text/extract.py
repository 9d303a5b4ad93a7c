"""The plain text extractor: the text decoded (`kit.charset`: a byte-order mark, UTF-8,
UTF-16 without a mark, else charset-normalizer's legacy and CJK code pages), cut into pages
at form feeds, a page of more than `PAGE_LINES` lines cut again (at its last blank line in
the last quarter, else at the bound), each page's paragraphs (runs of lines between blank
lines) its text elements. A file whose text is more than 1% control characters (NUL and
the others no text holds: tab, line ends, form feed and escape are text) is binary:
`corrupt`."""

from __future__ import annotations

import re
from typing import BinaryIO

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.charset import DETECT_BYTES, decode, looks_binary
from dpe_server.extractors.kit.whole import read_bounded, whole_extractor
from dpe_server.extractors.text import FORMAT
from dpe_server.model import summaries
from dpe_server.model.content import TextContent
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import JSON, Category, Document, Page, PageBuilder, Properties

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_BINARY = (
    "The file is more than 1% control characters (NUL and others no text holds): it is "
    "binary, not text."
)
PAGE_LINES = 2_000
"""Lines of one page at most (a page between form feeds longer than this is cut)."""


def _cuts(lines: list[str]) -> list[tuple[int, int]]:
    """Where the pages of `lines` begin and end: at most `PAGE_LINES` lines each, cut at the
    last blank line of the last quarter when there is one."""
    out = []
    start = 0
    while len(lines) - start > PAGE_LINES:
        end = start + PAGE_LINES
        blank = next(
            (i + 1 for i in range(end - 1, end - PAGE_LINES // 4, -1) if not lines[i].strip()),
            end,
        )
        out.append((start, blank))
        start = blank
    out.append((start, len(lines)))
    return out


def _paragraphs(lines: list[str]) -> list[str]:
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            run.append(line.rstrip())
        elif run:
            out.append("\n".join(run))
            run = []
    return out


def _page(index: int, lines: list[str], first: int, limits: Limits) -> Page:
    builder = PageBuilder(index, limits.max_elements_per_page)
    chars = 0
    cut = False
    for text in _paragraphs(lines):
        if chars + len(text) > limits.max_chars_per_page:
            cut = True
            break
        chars += len(text)
        content: TextContent = {"text": text}
        builder.add(Category.TEXT, summaries.text(text), dict(content))
    meta: dict[str, JSON] = {"first_line": first + 1, "last_line": first + len(lines)}
    if cut:
        meta["truncated"] = True
    return builder.build(f"Page {index + 1}", meta)


def _read(f: BinaryIO, limits: Limits) -> Document:
    data = read_bounded(f, limits)
    if looks_binary(data):  # told before the slower detection of an encoding
        raise CorruptError(_BINARY)
    text, encoding = decode(data)
    sample = text[:DETECT_BYTES]
    if len(_CONTROL.findall(sample)) > len(sample) // 100:
        raise CorruptError(_BINARY)
    text = text.replace("\0", "").replace("\r\n", "\n").replace("\r", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    pages: list[Page] = []
    dropped = False
    line = 0
    sheets = text.split("\f")
    if len(sheets) > 1 and not sheets[-1].strip():
        sheets.pop()  # a form feed ending the file starts no page
    for sheet in sheets:
        lines = sheet.split("\n")
        for start, end in _cuts(lines):
            if len(pages) >= limits.max_pages:
                dropped = True
                break
            pages.append(_page(len(pages), lines[start:end], line + start, limits))
        line += len(lines) - 1
    cut = dropped or any(p.metadata.get("truncated") for p in pages)
    props = Properties(
        page_count=len(pages),
        page_titles=tuple(p.title for p in pages),
        extra={"encoding": encoding, "line_count": text.count("\n") + 1 if text else 0},
    )
    return Document(props, tuple(pages), {"truncated": True} if cut else {})


EXTRACTOR = whole_extractor(FORMAT, _read)
