"""The blocks of an OpenDocument text (`office:text`, a text box, a header) as elements.

- `text:h` → heading (`text:outline-level`, 1 when absent), a paragraph whose style gives an
  outline level (`style:default-outline-level`, or a `Heading N` name) a heading of that
  level, and a `Title` paragraph a level 1 heading (as in docx, it starts pages only when
  the text has no other heading); `text:p` → text, or code when its paragraph style is a
  code style (`Preformatted Text`, `Source Text`) or all its text is set in a monospace font
  (its style's or its spans'; consecutive code paragraphs make one element); a paragraph
  style breaking the page (column) before it → a `page_break` (`column_break`) separator
  first; an empty paragraph whose style draws a top or bottom border → a `rule` separator
  (`metadata.source: paragraph_border`), as docx;
- `text:list` → one list element: its items (nested lists one level deeper, `text:list-header`
  unnumbered) with `level` from 0; `ordered` and each ordered item's `label` from the list
  style of the item's level (`styles.ListLevel`), `start` when not 1; `text:continue-numbering`
  or `text:continue-list` carries the counters of the list before on; a list whose first
  item holds only a nested list goes on with the list just before it (one element);
- `table:table` → table elements (`tables`); `text:section`, indexes (`text:index-body`) and
  other containers are read through;
- `office:forms` → one form element per form (`odf.forms`);
- what a paragraph holds (links, notes, comments, changes, frames) follows its element.

A paragraph's or heading's text longer than `Limits.max_chars_per_page` is cut to it and the
writer says `truncated`, as a docx paragraph is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.tables import emit_table
from dpe_server.extractors.odf.forms import form_items
from dpe_server.extractors.odf.inline import InlineReader
from dpe_server.extractors.odf.package import COMMENTS, DRAW, OFFICE, SHAPES, TABLE, TEXT
from dpe_server.extractors.odf.styles import ListLevel, Styles
from dpe_server.extractors.odf.tables import read_table
from dpe_server.model import summaries
from dpe_server.model.direction import is_rtl
from dpe_server.model.tree import JSON, Category, PageBuilder

_MAX_LIST_DEPTH = 10
_NOT_TEXT = COMMENTS | SHAPES | {TEXT + "note", DRAW + "frame", TEXT + "change"}
"""What a paragraph holds that is not its own text (for telling code by its font)."""
THROUGH = frozenset(
    (
        TEXT + "section",
        TEXT + "index-body",
        TEXT + "table-of-content",
        TEXT + "illustration-index",
        TEXT + "table-index",
        TEXT + "object-index",
        TEXT + "user-index",
        TEXT + "alphabetical-index",
        TEXT + "bibliography",
        TEXT + "index-title",
    )
)


def heading_level(h: etree._Element) -> int:
    try:
        return max(1, min(int(h.get(TEXT + "outline-level", "1")), 10))
    except ValueError:
        return 1


@dataclass
class _List:
    items: list[JSON] = field(default_factory=list)
    inner: list[Item] = field(default_factory=list)
    ordered: bool | None = None
    start: int = 1


class FlowWriter:
    """Writes blocks onto one page's `PageBuilder`."""

    def __init__(
        self, builder: PageBuilder, reader: InlineReader, styles: Styles, max_chars: int
    ) -> None:
        self.b = builder
        self.reader = reader
        self.styles = styles
        self.max_chars = max_chars
        self.truncated = False
        """A text was cut to `max_chars`."""
        self.code: list[str] = []
        self.code_items: list[Item] = []
        self.counters: dict[str, list[int]] = {}
        """The last counters of each list style (for lists that continue numbering)."""

    def add_items(self, items: list[Item]) -> None:
        for it in items:
            self.b.add(it.category, it.summary, it.content, it.metadata)

    def flush(self) -> None:
        if self.code:
            text = "\n".join(self.code)
            self.b.add(Category.CODE, summaries.code(text), {"text": text})
            self.add_items(self.code_items)
            self.code, self.code_items = [], []

    def blocks(self, container: etree._Element) -> None:
        self._run(container)
        self.flush()

    def _run(self, container: etree._Element) -> None:
        """The blocks of `container`; a list whose first item holds only a nested list (as
        LibreOffice writes a list going on one level deeper) goes on with the list before."""
        lists: list[etree._Element] = []
        for child in container:
            if child.tag == TEXT + "list" and lists and _continues(child):
                lists.append(child)
                continue
            if lists:
                self.flush()
                self.list_(*lists)
                lists = []
            if child.tag == TEXT + "list":
                lists.append(child)
            else:
                self.block(child)
        if lists:
            self.flush()
            self.list_(*lists)

    def block(self, el: etree._Element) -> None:
        tag = el.tag
        if self.b.truncated:
            return
        if tag in (TEXT + "p", TEXT + "h"):
            self.paragraph(el)
        elif tag == TEXT + "list":
            self.flush()
            self.list_(el)
        elif tag == TABLE + "table":
            self.flush()
            self.add_items(emit_table(self.b, read_table(el, self.reader), {}))
        elif tag == DRAW + "frame" or tag == DRAW + "a":
            self.flush()
            self.add_items(self.reader.items_of(el))
        elif tag == OFFICE + "forms":
            self.flush()
            self.add_items(form_items(el))
        elif tag in THROUGH:
            self._run(el)

    def paragraph(self, p: etree._Element) -> None:
        style = p.get(TEXT + "style-name")
        brk = self.styles.break_before(style)
        if brk:
            self.flush()
            kind = f"{brk}_break"
            self.b.add(Category.SEPARATOR, summaries.separator(kind), {"kind": kind})
        para = self.reader.paragraph(p)
        text = para.text.strip()
        if len(text) > self.max_chars:
            text = text[: self.max_chars]
            self.truncated = True
        if p.tag == TEXT + "p" and para.has_text and self._is_code(p, style):
            self.code.append(para.text.rstrip()[: self.max_chars])
            self.code_items.extend(para.items)
            return
        self.flush()
        before = [i for i in para.items if i.at == 0]
        after = [i for i in para.items if i.at != 0]
        self.add_items(before)
        name = self.styles.display_name(style)
        meta: dict[str, JSON] = {"style": name} if name else {}
        level = heading_level(p) if p.tag == TEXT + "h" else self.styles.heading_level(style)
        if text and not level and self.styles.is_title(p):
            level = 1
        if text and level:
            content: dict[str, JSON] = {"level": level, "text": text}
            if is_rtl(text):
                content["direction"] = "rtl"
            self.b.add(Category.HEADING, summaries.heading(text, level), content, meta)
        elif para.has_text:
            body: dict[str, JSON] = {"text": text}
            if is_rtl(text):
                body["direction"] = "rtl"
            self.b.add(Category.TEXT, summaries.text(text), body, meta)
        elif p.tag == TEXT + "p" and self.styles.has_border(style):
            kind, source = "rule", {"source": "paragraph_border"}
            self.b.add(Category.SEPARATOR, summaries.separator(kind), {"kind": kind}, source)
        self.add_items(after)

    def _is_code(self, p: etree._Element, style: str | None) -> bool:
        """A code paragraph: a code style, or all its text set in a monospace font (the
        paragraph style's, or its spans')."""
        if self.styles.is_code(style):
            return True
        seen: list[bool] = []
        return self._mono(p, bool(self.styles.monospace(style)), seen) and bool(seen)

    def _mono(self, el: etree._Element, mono: bool, seen: list[bool]) -> bool:
        """Whether the text of `el` (in a `mono` font unless a style of its own says) is all
        monospace; `seen` gets an entry once some text was."""
        if el.tag in _NOT_TEXT:
            return True
        if el.tag not in (TEXT + "p", TEXT + "h"):
            own = self.styles.monospace(el.get(TEXT + "style-name"))
            mono = mono if own is None else own
        pieces = [(el.text, mono)]
        for child in el:
            if not self._mono(child, mono, seen):
                return False
            pieces.append((child.tail, mono))
        for text, font in pieces:
            if text and text.strip():
                if not font:
                    return False
                seen.append(True)
        return True

    # --- lists ---------------------------------------------------------------------------

    def list_(self, lst: etree._Element, *more: etree._Element) -> None:
        """One list element of `lst` and the lists in `more` that go on with it."""
        style = lst.get(TEXT + "style-name")
        continues = lst.get(TEXT + "continue-numbering") == "true" or bool(
            lst.get(TEXT + "continue-list")
        )
        counters = list(self.counters.get(style or "", [])) if continues else []
        acc = _List()
        for part in (lst, *more):
            self._items(part, part.get(TEXT + "style-name") or style, 0, counters, acc)
        self.counters[style or ""] = counters
        if not acc.items:
            self.add_items(acc.inner)
            return
        ordered = bool(acc.ordered)
        content: dict[str, JSON] = {"ordered": ordered, "items": acc.items}
        if ordered and acc.start != 1:
            content["start"] = acc.start
        self.b.add(Category.LIST, summaries.list_(acc.items, ordered), content)
        self.add_items(acc.inner)

    def _items(
        self, lst: etree._Element, style: str | None, depth: int, counters: list[int], acc: _List
    ) -> None:
        style = lst.get(TEXT + "style-name") or style
        for item in lst:
            if item.tag not in (TEXT + "list-item", TEXT + "list-header"):
                continue
            level = self.styles.list_level(style, depth + 1)
            numbered = item.tag == TEXT + "list-item"
            lines: list[str] = []
            label, number = "", 0
            if numbered:
                label = _advance(counters, depth, level, item)
                number = counters[depth]
            for child in item:
                if child.tag == TEXT + "list" and depth + 1 < _MAX_LIST_DEPTH:
                    self._flush_item(acc, lines, depth, (label, number), level)
                    label = ""
                    self._items(child, style, depth + 1, counters, acc)
                elif child.tag in (TEXT + "p", TEXT + "h"):
                    para = self.reader.paragraph(child)
                    if para.text.strip():
                        lines.append(para.text.strip())
                    acc.inner.extend(para.items)
            self._flush_item(acc, lines, depth, (label, number), level)

    def _flush_item(
        self,
        acc: _List,
        lines: list[str],
        depth: int,
        number: tuple[str, int],
        level: ListLevel,
    ) -> None:
        if not lines:
            return
        label, count = number
        entry: dict[str, JSON] = {"text": "\n".join(lines), "level": depth}
        if label:
            entry["label"] = label
        if is_rtl(str(entry["text"])):
            entry["direction"] = "rtl"
        if acc.ordered is None:
            acc.ordered = level.ordered
            if level.ordered and count > 0:
                acc.start = count
        acc.items.append(entry)
        lines.clear()


def _continues(lst: etree._Element) -> bool:
    """Whether the first item of `lst` holds a nested list and no paragraph of its own."""
    first = next((c for c in lst if c.tag in (TEXT + "list-item", TEXT + "list-header")), None)
    if first is None or first.find(TEXT + "list") is None:
        return False
    return first.find(TEXT + "p") is None and first.find(TEXT + "h") is None


def _advance(counters: list[int], depth: int, level: ListLevel, item: etree._Element) -> str:
    """Count one item at `depth` and return its label."""
    del counters[depth + 1 :]
    while len(counters) <= depth:
        counters.append(level.start - 1 if len(counters) == depth else 1)
    override = item.get(TEXT + "start-value")
    if override is not None and override.isdigit():
        counters[depth] = int(override)
    else:
        counters[depth] += 1
    return level.label(counters[: depth + 1])
