"""OpenDocument text (.odt, .ott, flat .fodt) → DPE tree, with the page rules of docx (SPEC §5).

content.xml's `office:text` is flattened into blocks (paragraphs, headings, lists, tables,
frames; sections and indexes read through) and cut into pages by `kit.pages.plan_pages`:
a page starts at each heading of the highest level the text uses, a page over 200 blocks or
60,000 characters continues as "{title} (cont. N)", a page's title is its first heading,
else "Section N". A paragraph or table whose style names a master page starts a section
(LibreOffice's form of a Word section break): a new page, and a `section_break` separator
ends the section before. Elements come from `odf.flow`; every page begins with the headers
and ends with the footers of its section's master page, the text's first master page when
none is named (`content.variant`: `default`, `even` for `style:header-left`, `first` for
`style:header-first`, or for a master page followed by another, `style:next-style-name`).
Metadata from meta.xml.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.pages import TITLE_LEVEL, Block, plan_pages
from dpe_server.extractors.odf.flow import THROUGH, FlowWriter, heading_level
from dpe_server.extractors.odf.inline import InlineReader, tracked_changes
from dpe_server.extractors.odf.package import (
    DRAW,
    OFFICE,
    STYLE,
    TABLE,
    TEXT,
    content_root,
    parts,
    plain_text,
)
from dpe_server.extractors.odf.reader import extractor
from dpe_server.extractors.odf.styles import Styles
from dpe_server.extractors.odt import FORMAT
from dpe_server.model import summaries
from dpe_server.model.tree import JSON, Category, Page, PageBuilder

_BLOCKS = frozenset(
    (TEXT + "p", TEXT + "h", TEXT + "list", TABLE + "table", DRAW + "frame", OFFICE + "forms")
)
_VARIANTS = {"header": "default", "header-left": "even", "header-first": "first"}
_VARIANTS |= {"footer": "default", "footer-left": "even", "footer-first": "first"}


def flatten(body: etree._Element, styles: Styles) -> tuple[list[Block], list[str]]:
    """The text's blocks in order, with heading levels (a paragraph whose style gives an
    outline level as a heading, `Title` paragraphs as docx's Title) and sections, and the
    master page each section starts with ("" for the text's default one): a paragraph or
    table whose style names a master page (`style:master-page-name`) starts a section, as
    LibreOffice writes a Word section break."""
    blocks: list[Block] = []
    masters: list[str] = [""]
    _visit(body, styles, blocks, masters)
    return blocks, masters


def _visit(
    container: etree._Element, styles: Styles, blocks: list[Block], masters: list[str]
) -> None:
    """`flatten` of one container, into `blocks` and `masters` (a function of its own, not a
    closure that calls itself: that would be a reference cycle keeping the blocks, and with
    them the whole parsed document, alive until the next full garbage collection)."""
    for child in container:
        tag = child.tag
        if tag in THROUGH:
            _visit(child, styles, blocks, masters)
        elif tag in _BLOCKS:
            text = plain_text(child) if tag != TEXT + "h" else plain_text(child).strip()
            level = heading_level(child) if tag == TEXT + "h" and text else None
            if tag == TEXT + "p" and text.strip():
                level = styles.heading_level(child.get(TEXT + "style-name")) or None
                if level is None and styles.is_title(child):
                    level = TITLE_LEVEL
            style = child.get(TEXT + "style-name") or child.get(TABLE + "style-name")
            master = styles.master_page(style)
            if master and any(b.el.tag != OFFICE + "forms" for b in blocks):
                blocks[-1].ends_section = True
                masters.append(master)
            elif master:
                masters[0] = master
            block = Block(child, level=level, text=text, size=len(text))
            block.section = len(masters) - 1
            blocks.append(block)


HeaderFooter = tuple[str, str, str, str]
"""(kind, variant, text, master page) of a header or footer."""


def _own(master: etree._Element) -> list[HeaderFooter]:
    name = master.get(STYLE + "name", "")
    out = []
    for child in master:
        local = etree.QName(child).localname if isinstance(child.tag, str) else ""
        if local in _VARIANTS and child.get(STYLE + "display", "true") != "false":
            text = plain_text(child)
            if text:
                out.append((local.split("-")[0], _VARIANTS[local], text, name))
    return out


def header_footers(styles_root: etree._Element | None, name: str = "") -> list[HeaderFooter]:
    """The headers and footers of master page `name` (the first master page when empty).
    A master page followed by another (`style:next-style-name`), as LibreOffice writes a Word
    section with a first-page header, gives the next one's, then its own as `first`."""
    if styles_root is None:
        return []
    pages = styles_root.findall(f"{OFFICE}master-styles/{STYLE}master-page")
    by_name = {m.get(STYLE + "name", ""): m for m in pages}
    master = by_name.get(name) if name else (pages[0] if pages else None)
    if master is None:
        return []
    then = by_name.get(master.get(STYLE + "next-style-name", ""))
    if then is None or then is master:
        return _own(master)
    first = [(kind, "first", text, m) for kind, variant, text, m in _own(master)]
    return _own(then) + first


class _Opened:
    def __init__(self, pkg: Package, limits: Limits) -> None:
        self.pkg = pkg
        self.body = content_root(pkg, "text")
        content, styles_root = parts(pkg)
        self.styles = Styles(styles_root, content)
        self.reader = InlineReader(pkg, tracked_changes(self.body))
        blocks, masters = flatten(self.body, self.styles)
        plans = plan_pages(blocks)
        self.truncated = len(plans) > limits.max_pages
        self.plans = plans[: limits.max_pages]
        self.titles = [p.title for p in self.plans]
        self.hf = [header_footers(styles_root, m) for m in masters]
        """Per section, its headers and footers."""
        self.limits = limits

    def page(self, index: int) -> Page:
        plan = self.plans[index]
        b = PageBuilder(plan.index, self.limits.max_elements_per_page)
        hf = self.hf[plan.section] if plan.section < len(self.hf) else []
        _header_footers(b, "header", hf)
        writer = FlowWriter(b, self.reader, self.styles, self.limits.max_chars_per_page)
        for block in plan.blocks:
            writer.block(block.el)
        writer.flush()
        if plan.section_break:
            kind = "section_break"
            meta0: dict[str, JSON] = {"section": plan.section + 1}
            b.add(Category.SEPARATOR, summaries.separator(kind), {"kind": kind}, meta0)
        _header_footers(b, "footer", hf)
        meta: dict[str, JSON] = {"section": plan.section + 1}
        if plan.continuation > 1:
            meta.update(continuation=plan.continuation, continued_from=plan.first_page)
        if writer.truncated:
            meta["truncated"] = True
        return b.build(plan.title, meta)


def _header_footers(b: PageBuilder, kind: str, hf: list[HeaderFooter]) -> None:
    for what, variant, text, master in hf:
        if what != kind:
            continue
        category = Category.HEADER if kind == "header" else Category.FOOTER
        summary = summaries.header(text) if kind == "header" else summaries.footer(text)
        content: dict[str, JSON] = {"text": text, "variant": variant}
        b.add(category, summary, content, {"master_page": master})


EXTRACTOR = extractor("odt", FORMAT.suffixes, "an OpenDocument text", _Opened)
