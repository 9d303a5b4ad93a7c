"""Lines → blocks: headings, paragraphs, lists, code and column-aligned tables.

- body size: the size carrying most characters on the page;
- heading: a line at least 12 % larger than the body, or a short all-bold line, or a line whose
  text is the page's outline entry; level by size ratio to the body (≥ 1.9 → 1, ≥ 1.5 → 2,
  ≥ 1.25 → 3, larger → 4, bold at body size → 5), so levels agree across pages; an outline
  entry's own depth wins (a leading section number is ignored when matching it);
- list item: a line starting with a bullet (• ◦ ▪ - * – and reportlab's 0x7F) or a number /
  letter / roman marker (`1.` `a)` `(iv)`), level by indent rank; lines indented under an
  item continue it;
- code: runs of lines set entirely in a monospace font, indentation kept from x offsets;
- aligned table: three or more consecutive lines cut into the same number (≥ 2) of cells at
  wide gaps, whose cells start or end at the same x as the first line's;
- paragraph: the remaining lines, joined while the line pitch stays under 1.75 × the size, the
  size does not change and no first-line indent starts a new one; a hyphen at a line end
  before a lower-case letter is removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dpe_server.extractors.pdf.lines import Line
from dpe_server.model.content import (
    CodeContent,
    HeadingContent,
    ListContent,
    ListItem,
    TableContent,
    TextContent,
)
from dpe_server.model.tree import JSON

_BULLET_RE = re.compile(
    r"^([\u2022\u25e6\u25aa\u25cf\u2023\u2043\u2219\u00b7\x7f\x95*\-\u2013\u25a0\uf0b7])\s+(\S.*)$"
)
_NUMBER_RE = re.compile(
    r"^(\d{1,3}[.)]|[a-zA-Z][.)]|\(\d{1,3}\)|\([a-z]\)|\(?[ivxlc]{1,6}[.)])\s+(\S.*)$"
)


@dataclass(slots=True)
class Block:
    """One future element: kind (a category value), its content and where it sits."""

    kind: str
    content: Mapping[str, JSON]
    top: float
    x0: float
    x1: float
    meta: dict[str, JSON] = field(default_factory=dict)


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def body_size(lines: Sequence[Line]) -> float:
    weight: dict[float, int] = {}
    for line in lines:
        weight[line.size] = weight.get(line.size, 0) + len(line.text)
    if not weight:
        return 10.0
    return max(weight, key=lambda k: (weight[k], -k))


def _level(size: float, body: float) -> int:
    ratio = size / body if body > 0 else 1.0
    for threshold, level in ((1.9, 1), (1.5, 2), (1.25, 3), (1.12, 4)):
        if ratio >= threshold:
            return level
    return 5


_SECTION_NUMBER = re.compile(r"^(?:[0-9]+(?:\.[0-9]+)*\.?|[A-Z]\.|[IVX]+\.)\s+")


def _outline_level(text: str, outline: dict[str, int]) -> int | None:
    """The outline depth of an entry naming this line ("2.1 Scope" matches "Scope")."""
    if not outline:
        return None
    key = norm(text)
    level = outline.get(key)
    if level is None:
        level = outline.get(_SECTION_NUMBER.sub("", key))
    return level


def _heading_level(line: Line, body: float, outline: dict[str, int]) -> int | None:
    level = _outline_level(line.text, outline)
    if level is not None:
        return level
    if len(line.text) > 200 or not any(ch.isalpha() for ch in line.text):
        return None
    if line.size >= body * 1.12:
        return _level(line.size, body)
    if (
        line.bold
        and len(line.text) <= 80
        and line.text[-1] not in ".,;:"
        and line.size >= body - 0.5
    ):
        return 5
    return None


def _list_marker(text: str) -> tuple[bool, str] | None:
    m = _BULLET_RE.match(text)
    if m:
        return False, m.group(2)
    m = _NUMBER_RE.match(text)
    if m:
        return True, m.group(2)
    return None


def _join_lines(text: str, nxt: str) -> str:
    if not text:
        return nxt
    if len(text) > 1 and text[-1] == "-" and text[-2].isalpha() and nxt[:1].islower():
        return text[:-1] + nxt
    if ord(text[-1]) >= 0x2E80 and nxt and ord(nxt[0]) >= 0x2E80:
        return text + nxt
    return f"{text} {nxt}"


def _aligned_rows(lines: Sequence[Line], start: int) -> int:
    """How many lines from `start` form a column-aligned table (0 when fewer than three)."""
    first = lines[start].cells()
    if len(first) < 2:
        return 0
    n = 1
    prev = lines[start]
    while start + n < len(lines):
        line = lines[start + n]
        cells = line.cells()
        if len(cells) != len(first) or prev.y - line.y > 3 * line.size or line.mono:
            break
        tol = max(4.0, 0.5 * line.size)
        if not all(
            abs(a[0] - b[0]) <= tol or abs(a[1] - b[1]) <= tol
            for a, b in zip(first, cells, strict=True)
        ):
            break
        prev = line
        n += 1
    return n if n >= 3 else 0


class _Builder:
    def __init__(self, body: float, outline: dict[str, int]) -> None:
        self.body = body
        self.outline = outline
        self.blocks: list[Block] = []

    def run(self, lines: Sequence[Line]) -> None:
        i = 0
        while i < len(lines):
            line = lines[i]
            level = _heading_level(line, self.body, self.outline)
            if line.mono:
                i = self._code(lines, i)
            elif level is not None:
                i = self._heading(lines, i, level)
            elif _list_marker(line.text) is not None:
                i = self._list(lines, i)
            elif (n := _aligned_rows(lines, i)) > 0:
                self._table(lines[i : i + n])
                i += n
            else:
                i = self._paragraph(lines, i)

    def _add(self, kind: str, content: Mapping[str, JSON], group: Sequence[Line]) -> None:
        top = max(ln.y + ln.size for ln in group)
        x0 = min(ln.x0 for ln in group)
        x1 = max(ln.x1 for ln in group)
        bottom = min(ln.y for ln in group)
        bbox = [round(x0, 1), round(bottom, 1), round(x1, 1), round(top, 1)]
        self.blocks.append(Block(kind, content, top, x0, x1, {"bbox": bbox}))

    def _heading(self, lines: Sequence[Line], i: int, level: int) -> int:
        group = [lines[i]]
        j = i + 1
        while j < len(lines):
            nxt, prev = lines[j], group[-1]
            same = abs(nxt.size - prev.size) < 0.5 and nxt.bold == prev.bold
            if (
                not same
                or prev.y - nxt.y > 1.5 * prev.size
                or _outline_level(nxt.text, self.outline) is not None
            ):
                break
            if _heading_level(nxt, self.body, self.outline) is None:
                break
            group.append(nxt)
            j += 1
        text = " ".join(ln.text for ln in group)
        self._add("heading", HeadingContent(level=level, text=text), group)
        return j

    def _code(self, lines: Sequence[Line], i: int) -> int:
        group = [lines[i]]
        j = i + 1
        while j < len(lines) and lines[j].mono and group[-1].y - lines[j].y <= 2.2 * lines[j].size:
            group.append(lines[j])
            j += 1
        left = min(ln.x0 for ln in group)
        out = []
        for ln in group:
            indent = round((ln.x0 - left) / (0.6 * ln.size)) if ln.size > 0 else 0
            out.append(" " * max(0, indent) + ln.text.rstrip())
        self._add("code", CodeContent(text="\n".join(out)), group)
        return j

    def _list(self, lines: Sequence[Line], i: int) -> int:
        first = _list_marker(lines[i].text)
        assert first is not None
        ordered = first[0]
        items: list[tuple[float, str]] = []
        group: list[Line] = []
        j = i
        base_x = lines[i].x0
        while j < len(lines):
            line = lines[j]
            marker = _list_marker(line.text)
            if group and group[-1].y - line.y > 2.2 * line.size:
                break
            if marker is not None:
                if abs(line.x0 - base_x) < 3 and marker[0] != ordered:
                    break
                items.append((line.x0, marker[1]))
            elif items and line.x0 > items[-1][0] + 2 and not line.mono:
                x, text = items[-1]
                items[-1] = (x, _join_lines(text, line.text))
            else:
                break
            group.append(line)
            j += 1
        indents = sorted({round(x / 4) for x, _ in items})
        content_items = [
            ListItem(text=text, level=indents.index(round(x / 4))) for x, text in items
        ]
        self._add("list", ListContent(ordered=ordered, items=content_items), group)
        return j

    def _table(self, group: Sequence[Line]) -> None:
        rows = [[c[2] for c in ln.cells()] for ln in group]
        content: TableContent = {
            "headers": rows[0],
            "rows": rows[1:],
            "total_rows": len(rows) - 1,
            "total_columns": len(rows[0]),
        }
        self._add("table", content, group)
        self.blocks[-1].meta["ruled"] = False

    def _paragraph(self, lines: Sequence[Line], i: int) -> int:
        group = [lines[i]]
        text = lines[i].text
        j = i + 1
        while j < len(lines):
            nxt, prev = lines[j], group[-1]
            pitch = prev.y - nxt.y
            if (
                pitch <= 0
                or pitch > 1.75 * max(prev.size, nxt.size)
                or abs(nxt.size - prev.size) >= 0.5
                or nxt.mono
                or nxt.x0 > prev.x0 + max(nxt.size, 6.0)
                or _heading_level(nxt, self.body, self.outline) is not None
                or _list_marker(nxt.text) is not None
            ):
                break
            text = _join_lines(text, nxt.text)
            group.append(nxt)
            j += 1
        self._add("text", TextContent(text=text), group)
        return j


def build_blocks(
    groups: Sequence[Sequence[Line]], body: float, outline: dict[str, int]
) -> list[Block]:
    """Blocks in reading order from the line groups of `pdf_lines.reading_groups`."""
    builder = _Builder(body, outline)
    for lines in groups:
        builder.run(lines)
    return builder.blocks
