"""Turning a planned docx page (its blocks) into elements, in document order.

- headers of the page's section first, footers last (`content.variant` default/first/even;
  `metadata.shown` says whether Word displays that variant given `w:titlePg` and
  `w:evenAndOddHeaders`);
- headings; consecutive list paragraphs of one `numId` grouped into one list element (a
  different numId starts a new list unless it is deeper than the item before it, a nested
  list); items carry the 0-based `ilvl` as `level` and, when ordered, the number `label`
  Word shows (numbering.py), the list its first item's `ordered` and `start` when not 1;
  consecutive code paragraphs grouped into one code element;
  other paragraphs as text;
- tables (nested ones as their own elements), altChunk content, block-level content
  controls as form elements placed before their content;
- elements found inside a paragraph follow its text (those found before any text precede it);
- `w:pageBreakBefore` and `w:br w:type="page"` give page_break separators, an empty
  paragraph with a border a rule, the end of a section a section_break.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.docx.forms import sdt_field
from dpe_server.extractors.docx.items import PartCtx
from dpe_server.extractors.docx.numbering import Counters, Numbering
from dpe_server.extractors.docx.pages import block_text
from dpe_server.extractors.docx.parts import HeaderFooter, alt_chunk_blocks, header_text
from dpe_server.extractors.docx.runs import InlineReader
from dpe_server.extractors.docx.styles import Styles
from dpe_server.extractors.docx.tables import read_table
from dpe_server.extractors.docx.xml import W, int_or, on, val
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.pages import Block, PagePlan
from dpe_server.extractors.kit.tables import emit_table
from dpe_server.model import summaries
from dpe_server.model.content import (
    CodeContent,
    FormContent,
    HeaderFooterContent,
    HeadingContent,
    ListContent,
    ListItem,
    SeparatorContent,
    SeparatorKind,
    TableContent,
    TextContent,
)
from dpe_server.model.direction import is_rtl
from dpe_server.model.tree import JSON, Category, Page, PageBuilder

_P, _TBL, _PPR, _NUMPR = W + "p", W + "tbl", W + "pPr", W + "numPr"
_FORM_VALUE_MAX = 2_000


@dataclass
class Env:
    """Everything a page needs from the document, built once per extraction."""

    ctx: PartCtx
    styles: Styles
    numbering: Numbering
    reader: InlineReader
    header_footers: list[list[HeaderFooter]]
    limits: Limits
    plans: list[PagePlan] = field(default_factory=list)
    _texts: dict[str, str] = field(default_factory=dict)
    _starts: list[Counters] = field(default_factory=list)
    """The list counters as each page begins, counted so far (index = page index)."""

    def header_text(self, part: str) -> str:
        if part not in self._texts:
            self._texts[part] = header_text(self.ctx.pkg, part, self.styles)
        return self._texts[part]

    def counters_at(self, index: int) -> Counters:
        """The list counters as page `index` begins: every numbered paragraph of the pages
        before it counted, the same whichever pages are extracted and in whatever order."""
        if not self._starts:
            self._starts.append(Counters(self.numbering))
        while len(self._starts) <= index and len(self._starts) <= len(self.plans):
            counters = self._starts[-1].copy()
            for block in self.plans[len(self._starts) - 1].blocks:
                if (num := self.list_num(block)) is not None:
                    counters.advance(*num)
            self._starts.append(counters)
        return self._starts[min(index, len(self._starts) - 1)].copy()

    def list_num(self, block: Block) -> tuple[str, int] | None:
        """The (numId, ilvl) a block counts in, read from its paragraph properties alone: a
        numbered paragraph that is not a heading with text."""
        p = block.el
        if p.tag != _P or (block.level is not None and block.text.strip()):
            return None
        ppr = p.find(_PPR)
        info = self.styles.info(val(ppr, "pStyle") if ppr is not None else None)
        num = _numbering(ppr, info.num)
        return num if num is not None and self.numbering.is_list(*num) else None


@dataclass
class _Group:
    """Consecutive paragraphs becoming one element: a list's items or a code block's lines."""

    kind: str = ""
    lines: list[str] = field(default_factory=list)
    list_items: list[ListItem] = field(default_factory=list)
    num_ids: set[str] = field(default_factory=set)
    ordered: bool = False
    start: int = 1
    last_level: int = 0
    items: list[Item] = field(default_factory=list)

    def continues(self, num_id: str, level: int) -> bool:
        """Whether a list paragraph belongs here: a numId already in this list, or a deeper
        level (a nested list written with its own numId)."""
        return self.kind == "list" and (num_id in self.num_ids or level > self.last_level)


class _PageWriter:
    def __init__(self, plan: PagePlan, env: Env) -> None:
        self.plan = plan
        self.env = env
        self.b = PageBuilder(plan.index, env.limits.max_elements_per_page)
        self.group = _Group()
        self.counters = env.counters_at(plan.index)
        self.truncated = False

    def add_items(self, items: list[Item]) -> None:
        for it in items:
            self.b.add(it.category, it.summary, it.content, it.metadata)

    def text(
        self,
        category: Category,
        text: str,
        summary: str,
        meta: dict[str, JSON],
        rtl: bool = False,
    ) -> None:
        """`rtl`: the paragraph is set right to left (`w:bidi`), whatever its words."""
        cap = self.env.limits.max_chars_per_page
        if len(text) > cap:
            text = text[:cap]
            self.truncated = True
        content = TextContent(text=text)
        if rtl or is_rtl(text):
            content["direction"] = "rtl"
        self.b.add(category, summary, content, meta)

    def heading(self, level: int, text: str, meta: dict[str, JSON], rtl: bool = False) -> None:
        content = HeadingContent(level=level, text=text)
        if rtl or is_rtl(text):
            content["direction"] = "rtl"
        self.b.add(Category.HEADING, summaries.heading(text, level), content, meta)

    def flush(self) -> None:
        g = self.group
        if g.kind == "list":
            content: ListContent = {"ordered": g.ordered, "items": g.list_items}
            if g.ordered and g.start != 1:
                content["start"] = g.start
            self.b.add(Category.LIST, summaries.list_(g.list_items, g.ordered), content)
        elif g.kind == "code":
            text = "\n".join(g.lines)
            self.b.add(Category.CODE, summaries.code(text), CodeContent(text=text))
        self.add_items(g.items)
        self.group = _Group()

    def code_line(self, line: str, items: list[Item]) -> None:
        if self.group.kind != "code":
            self.flush()
            self.group.kind = "code"
        self.group.lines.append(line)
        self.group.items.extend(items)

    def list_item(
        self,
        text: str,
        num: tuple[str, int],
        counters: list[int],
        items: list[Item],
        rtl: bool = False,
    ) -> None:
        """A numbered paragraph: joins the current list or starts a new one (a change of
        numId at the same or a shallower level), with the label Word shows on it."""
        numbering = self.env.numbering
        num_id, level = num
        ordered = numbering.ordered(num_id, level)
        g = self.group
        if not g.continues(num_id, level):
            self.flush()
            g = self.group
            g.kind, g.ordered, g.start = "list", ordered, counters[-1]
        g.num_ids.add(num_id)
        g.last_level = level
        item: ListItem = {"text": text, "level": level}
        label = numbering.label(num_id, level, counters) if ordered else ""
        if label:
            item["label"] = label
        if rtl or is_rtl(text):
            item["direction"] = "rtl"
        g.list_items.append(item)
        g.items.extend(items)

    def separator(self, kind: SeparatorKind, meta: dict[str, JSON] | None = None) -> None:
        self.b.add(Category.SEPARATOR, summaries.separator(kind), SeparatorContent(kind=kind), meta)

    # --- blocks ----------------------------------------------------------------------------

    def block(self, block: Block) -> None:
        for sdt in block.sdts:
            content = sdt.find(W + "sdtContent")
            value = block_text(content)[:_FORM_VALUE_MAX] if content is not None else ""
            fld = sdt_field(sdt.find(W + "sdtPr"), value.strip())
            if fld is not None:
                self.flush()
                self.b.add(
                    Category.FORM,
                    summaries.form([fld]),
                    FormContent(fields=[fld]),
                    {"source": "content_control"},
                )
        tag = block.el.tag
        if tag == _P:
            self.paragraph(block)
        elif tag == _TBL:
            self.flush()
            self.add_items(emit_table(self.b, read_table(block.el, self.env.reader), {}))
        else:
            self.flush()
            self.alt_chunk(block.el)

    def paragraph(self, block: Block) -> None:
        env = self.env
        p = block.el
        ppr = p.find(_PPR)
        info = env.styles.info(val(ppr, "pStyle") if ppr is not None else None)
        if ppr is not None and on(ppr.find(W + "pageBreakBefore")):
            self.flush()
            self.separator("page_break", {"source": "pageBreakBefore"})
        para = env.reader.paragraph(p)
        text = para.text.strip()
        rtl = ppr is not None and on(ppr.find(W + "bidi"))
        meta: dict[str, JSON] = {"style": info.name} if info.name else {}
        num = env.list_num(block)
        counters = self.counters.advance(*num) if num is not None else []
        if block.level is not None and text:
            self.flush()
            before = [i for i in para.items if i.at == 0]
            self.add_items(before)
            self.heading(max(block.level, 1), text, meta, rtl)
            self.add_items([i for i in para.items if i.at != 0])
            return
        if num is not None and para.has_text:
            self.list_item(text, num, counters, para.items, rtl)
            return
        if para.has_text and (info.code or env.reader.is_mono(p)):
            self.code_line(para.text.rstrip(), para.items)
            return
        self.flush()
        self.add_items([i for i in para.items if i.at == 0])
        if para.has_text:
            self.text(Category.TEXT, text, summaries.text(text), meta, rtl)
        elif ppr is not None and _has_border(ppr):
            self.separator("rule", {"source": "paragraph_border"})
        self.add_items([i for i in para.items if i.at != 0])

    def alt_chunk(self, chunk: etree._Element) -> None:
        part, blocks = alt_chunk_blocks(self.env.ctx, chunk)
        meta: dict[str, JSON] = {"source": "altChunk", "part": part}
        for kind, value in blocks:
            if kind == "heading" and isinstance(value, tuple):
                level, text = value
                self.heading(level, text, meta)
            elif kind == "text" and isinstance(value, str):
                self.text(Category.TEXT, value, summaries.text(value), meta)
            elif kind == "table" and isinstance(value, list):
                self.html_table(value, meta)

    def html_table(self, rows: list[list[str]], meta: dict[str, JSON]) -> None:
        width = max((len(r) for r in rows), default=0)
        grid = [r + [""] * (width - len(r)) for r in rows]
        headers, body = (grid[0], grid[1:]) if len(grid) >= 2 else ([], grid)
        content: TableContent = {
            "headers": headers,
            "rows": body,
            "total_rows": len(body),
            "total_columns": width,
        }
        self.b.add(Category.TABLE, summaries.table(headers, len(body), width), content, meta)

    # --- the page ----------------------------------------------------------------------------

    def header_footers(self, kind: str) -> None:
        env = self.env
        sections = env.header_footers
        if not sections:
            return
        for hf in sections[min(self.plan.section, len(sections) - 1)]:
            if hf.kind != kind:
                continue
            text = env.header_text(hf.part)
            if not text:
                continue
            category = Category.HEADER if kind == "header" else Category.FOOTER
            summary = summaries.header(text) if kind == "header" else summaries.footer(text)
            meta: dict[str, JSON] = {"part": hf.part, "variant": hf.variant, "shown": hf.shown}
            content = HeaderFooterContent(text=text, variant=hf.variant)
            self.b.add(category, summary, content, meta)

    def build(self) -> Page:
        plan = self.plan
        self.header_footers("header")
        for block in plan.blocks:
            if self.b.truncated:
                break  # the page is full: the rest of the section is not read
            self.block(block)
        self.flush()
        if plan.section_break:
            self.separator("section_break", {"section": plan.section + 1})
        self.header_footers("footer")
        meta: dict[str, JSON] = {"section": plan.section + 1}
        if plan.continuation > 1:
            meta.update(continuation=plan.continuation, continued_from=plan.first_page)
        if self.truncated:
            meta["truncated"] = True
        return self.b.build(plan.title, meta)


def _numbering(
    ppr: etree._Element | None, inherited: tuple[str, int] | None
) -> tuple[str, int] | None:
    numpr = ppr.find(_NUMPR) if ppr is not None else None
    if numpr is None:
        return inherited
    num_id = val(numpr, "numId") or (inherited[0] if inherited else None)
    if num_id is None or num_id == "0":
        return None
    return num_id, int_or(val(numpr, "ilvl"), inherited[1] if inherited else 0)


def _has_border(ppr: etree._Element) -> bool:
    borders = ppr.find(W + "pBdr")
    if borders is None:
        return False
    return any(
        (b.get(W + "val") or "none") not in ("none", "nil")
        for b in borders
        if b.tag in (W + "top", W + "bottom")
    )


def build_page(plan: PagePlan, env: Env) -> Page:
    return _PageWriter(plan, env).build()
