"""Lines → blocks: headings, paragraphs, lists, code and column-aligned tables.

In order of precedence, for the line at hand:
- code: runs of lines set entirely in a monospace font, indentation kept from x offsets;
- heading larger than the body or named by the outline (`headings`); lines in the same
  style that follow it closely continue it, up to 200 characters (more lines in that style
  are a paragraph set larger than the small print that carries most of the page);
- borderless table (`aligned`): three or more lines whose runs stand in the same columns,
  a cell's wrapped lines in its row (rows starting with a list marker only when each fills
  three cells or more: a marker and its text are a list item, not two cells);
- list item (`markers`): a line starting with a bullet or a number, letter, roman or CJK
  marker; level by indent rank; lines indented under an item continue it; ordered items keep
  their label, a list not starting at 1 its start; an item numbered 1 at the list's own indent
  after one numbered higher starts a new list;
- heading in bold at body size (after tables, so a bold header row or a bold key/value row of
  a form stays in its table);
- paragraph: the remaining lines, joined while the line pitch stays under 1.75 × the size, the
  size and the direction do not change and no first-line indent starts a new one, a heading or
  a list (a bullet, or a number that starts a list, `1.` `a)`, or follows the page's last
  numbered item; a wrapped line that happens to start "941." continues the paragraph); a
  hyphen at a line end before a lower-case letter is removed.

Right to left: a line whose text is predominantly right-to-left (`model.direction`) starts at
its right edge, so indents (a paragraph's first line, a list's levels, an item's continuation
lines) are measured from the right margin; a text, heading, list item or table whose text is
predominantly right-to-left carries `direction: "rtl"`, and such a table's columns are given
from the rightmost, as it is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from dpe_server.extractors.pdf.aligned import table_rows
from dpe_server.extractors.pdf.collect import Run
from dpe_server.extractors.pdf.headings import Styles, body_size, heading_level, outline_level
from dpe_server.extractors.pdf.lines import Cut, Line, make_lines, reading_groups
from dpe_server.extractors.pdf.markers import Marker, list_marker, value
from dpe_server.extractors.pdf.runin import run_in_head
from dpe_server.model.content import (
    CodeContent,
    HeadingContent,
    ListContent,
    ListItem,
    TableContent,
    TextContent,
)
from dpe_server.model.direction import is_rtl
from dpe_server.model.tree import JSON


@dataclass(slots=True)
class Block:
    """One future element: kind (a category value), its content and where it sits."""

    kind: str
    content: Mapping[str, JSON]
    top: float
    x0: float
    x1: float
    meta: dict[str, JSON] = field(default_factory=dict)


_HEADING_CHARS = 200
_BOLD_AT_BODY_LEVEL = 5
"""A bold heading at body size where the document has no heading styles (`headings`)."""
"""The longest heading: more lines in a heading's style make a paragraph set larger than the
page's body (where small print, a table's, carries most of the characters)."""

_LEADER = re.compile(r"(?:^|[ \t]+)\.(?:[ \t]*\.){3,}[ \t]*(?=\s|$)")
"""A dot leader: four or more dots, spaced or not, after white space and up to white space or
the end (`etc....` is a word and a leader glued: left alone)."""


def _unleadered(cell: str) -> str:
    """A cell without its dot leaders (`Theophed ........` → `Theophed`), unless it is
    nothing else (a leader across an empty cell)."""
    if ". . . ." not in cell and "...." not in cell:
        return cell
    return " ".join(_LEADER.sub(" ", cell).split()) or cell


def table_content(rows: list[list[str]]) -> TableContent:
    """A table's content from its rows as they stand on the page (the first one its header),
    dot leaders left out of its cells, the columns from the rightmost when the cells are
    mostly right-to-left text."""
    rows = [[_unleadered(c) for c in row] for row in rows]
    rtl = is_rtl(" ".join(c for row in rows for c in row))
    if rtl:
        rows = [row[::-1] for row in rows]
    content: TableContent = {
        "headers": rows[0],
        "rows": rows[1:],
        "total_rows": len(rows) - 1,
        "total_columns": len(rows[0]),
    }
    if rtl:
        content["direction"] = "rtl"
    return content


def _join_lines(text: str, nxt: str, spaced: bool = False) -> str:
    """`nxt`, the next line of a paragraph, list item or heading, joined to `text`: a word
    hyphenated at the line's end is one word; lines of scripts written without spaces join
    without one, unless the line ended with a space character (`spaced`: Korean lines that
    break between words)."""
    if not text:
        return nxt
    if len(text) > 1 and text[-1] == "-" and text[-2].isalpha() and nxt[:1].isalpha():
        # a word hyphenated at the line's end: joined (`inde-`, `pendently`; `MASTER-`,
        # `FILE`), but for a capital after a small letter, which keeps its hyphen (`non-`,
        # `Hispanic`)
        if nxt[0].islower() or text[-2].isupper():
            return text[:-1] + nxt
        return text + nxt
    if not spaced and ord(text[-1]) >= 0x2E80 and nxt and ord(nxt[0]) >= 0x2E80:
        return text + nxt
    return f"{text} {nxt}"


def _joined(group: Sequence[Line]) -> str:
    """The text of a paragraph's or a heading's lines, joined as `_join_lines` says."""
    text = ""
    for i, line in enumerate(group):
        text = _join_lines(text, line.text, i > 0 and group[i - 1].space_after)
    return text


def _restarts(marker: Marker, last: str) -> bool:
    """A numbered item counting 1 again after `last` counted more (`(a)` after `ii.`): a new
    list begins."""
    before = value(last) if last else None
    return marker.ordered and value(marker.label) == 1 and before is not None and before > 1


class _Builder:
    def __init__(self, body: float, outline: dict[str, int], styles: Callable[[], Styles]) -> None:
        self.body = body
        self.outline = outline
        self.styles = styles
        self.blocks: list[Block] = []
        self.numbered = 0
        """The number of the page's last ordered list item at its list's own indent (0: none
        yet)."""

    def _interrupts(self, marker: Marker | None) -> bool:
        """Whether a line starting with `marker` ends the paragraph it would continue: a bullet
        does; a number only when it starts a list (`1.`, `a)`, `i.`, as in CommonMark) or
        follows the page's last numbered item (an item whose wrapped lines return to the
        margin, then the next one): a line wrapped before "941. You must…" or "7) if the…"
        is the paragraph's, not a list starting at 941 or 7."""
        if marker is None:
            return False
        number = value(marker.label) if marker.ordered else None
        return number is None or number == 1 or number == self.numbered + 1

    def _level(self, line: Line) -> int | None:
        return heading_level(line, self.body, self.outline, self.styles)

    def _bold_level(self, line: Line) -> int:
        """The level of a run-in heading whose text is no heading by its style alone (a
        section number reads as a list marker): its bold style's rank."""
        ranked = self.styles()
        return ranked.level(line) if ranked.ranked else _BOLD_AT_BODY_LEVEL

    def run(self, lines: Sequence[Line]) -> None:
        lines = list(lines)
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.bold and (split := run_in_head(line)) and not table_rows(lines, i)[0]:
                head, rest = split
                lines[i : i + 1] = [head, rest]
                i = self._heading(lines, i, self._level(head) or self._bold_level(head))
                continue
            level = self._level(line)
            if line.mono:
                i = self._code(lines, i)
            elif level is not None and (
                line.size >= self.body * 1.12 or outline_level(line.text, self.outline)
            ):
                i = self._heading(lines, i, level)
            elif (found := table_rows(lines, i))[0] and (
                list_marker(line) is None or all(sum(1 for c in r if c) > 2 for r in found[0])
            ):
                self._table(lines[i : i + found[1]], found[0])
                i += found[1]
            elif list_marker(line) is not None:
                i = self._list(lines, i)
            elif level is not None:
                i = self._heading(lines, i, level)
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
                or outline_level(nxt.text, self.outline) is not None
            ):
                break
            if self._level(nxt) is None:
                break
            group.append(nxt)
            j += 1
        text = _joined(group)
        if len(text) > _HEADING_CHARS and outline_level(text, self.outline) is None:
            self._text(group)
            return j
        heading = HeadingContent(level=level, text=text)
        if is_rtl(text):
            heading["direction"] = "rtl"
        self._add("heading", heading, group)
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
        first = list_marker(lines[i])
        assert first is not None
        ordered = first.ordered
        items: list[tuple[float, str, str]] = []
        group: list[Line] = []
        j = i
        base_x = lines[i].start
        last = ""
        while j < len(lines):
            line = lines[j]
            marker = list_marker(line)
            if group and (group[-1].y - line.y > 2.2 * line.size or line.rtl != group[-1].rtl):
                break
            if marker is not None:
                at_base = abs(line.start - base_x) < 3
                if at_base and (marker.ordered != ordered or _restarts(marker, last)):
                    break
                if at_base:
                    last = marker.label
                items.append((line.start, marker.label if marker.ordered else "", marker.text))
            elif items and line.start > items[-1][0] + 2 and not line.mono:
                x, label, text = items[-1]
                items[-1] = (x, label, _join_lines(text, line.text, group[-1].space_after))
            else:
                break
            group.append(line)
            j += 1
        indents = sorted({round(x / 4) for x, _, _ in items})
        content_items: list[ListItem] = []
        for x, label, text in items:
            item = ListItem(text=text, level=indents.index(round(x / 4)))
            if label:
                item["label"] = label
            if is_rtl(text):
                item["direction"] = "rtl"
            content_items.append(item)
        content = ListContent(ordered=ordered, items=content_items)
        if ordered:
            self.numbered = value(last) or 0  # the last at the list's own indent
        start = value(items[0][1]) if ordered else None
        if start is not None and start != 1:
            content["start"] = start
        self._add("list", content, group)
        return j

    def _table(self, group: Sequence[Line], rows: list[list[str]]) -> None:
        self._add("table", table_content(rows), group)
        self.blocks[-1].meta["ruled"] = False

    def _paragraph(self, lines: Sequence[Line], i: int) -> int:
        group = [lines[i]]
        j = i + 1
        while j < len(lines):
            nxt, prev = lines[j], group[-1]
            pitch = prev.y - nxt.y
            if (
                pitch <= 0
                or pitch > 1.75 * max(prev.size, nxt.size)
                or abs(nxt.size - prev.size) >= 0.5
                or nxt.mono
                or nxt.rtl != prev.rtl
                or nxt.start > prev.start + max(nxt.size, 6.0)
                or self._level(nxt) is not None
                or self._interrupts(list_marker(nxt))
            ):
                break
            group.append(nxt)
            j += 1
        self._text(group)
        return j

    def _text(self, group: Sequence[Line]) -> None:
        text = _joined(group)
        content = TextContent(text=text)
        if is_rtl(text):
            content["direction"] = "rtl"
        self._add("text", content, group)


def build_blocks(
    groups: Sequence[Sequence[Line]],
    body: float,
    outline: dict[str, int],
    styles: Callable[[], Styles] = Styles,
) -> list[Block]:
    """Blocks in reading order from the line groups of `pdf_lines.reading_groups`;
    heading levels from the document's heading styles `styles()` (see `headings`)."""
    builder = _Builder(body, outline, styles)
    for lines in groups:
        builder.run(lines)
    return builder.blocks


def lay_out(
    runs: Sequence[Run],
    outline: dict[str, int],
    styles: Callable[[], Styles] = Styles,
    cuts: Sequence[Cut] = (),
) -> list[Block]:
    """Blocks in reading order from runs that flow (columns, lines, then `build_blocks`);
    `cuts`, the tables out of the flow (`pdf_lines.reading_groups`)."""
    groups = [make_lines(g) for g in reading_groups(list(runs), cuts=cuts)]
    lines = [ln for g in groups for ln in g]
    return build_blocks(groups, body_size(lines), outline, styles)
