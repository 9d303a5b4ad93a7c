"""The shape tree of one slide, walked in reading order (top-to-bottom, left-to-right, group
shapes entered), each shape turned into its elements. Shapes whose tops are within a quarter
inch form one row, read left to right, so that side-by-side columns that start almost level
are read left column first.

`mc:AlternateContent` resolves to its first `mc:Choice` (what current PowerPoint shows: an
equation, a modern chart) and never to the fallback picture of the same thing. Shapes joined
by connectors become one `diagram` element (kind `connector`, nodes and edges), emitted where
the first connector sits.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.kit.diagrams import diagram_content
from dpe_server.extractors.pptx.context import (
    FOOTER_TYPES,
    TITLE_TYPES,
    Point,
    SlideContext,
    add_link,
    click_action,
    emit_links,
    placeholder,
    position,
    shape_ids,
    shape_meta,
)
from dpe_server.extractors.pptx.objects import graphic_frame, picture
from dpe_server.extractors.pptx.text import MC, Block, P, R, blocks, plain_text, read_paragraphs
from dpe_server.model import summaries
from dpe_server.model.content import (
    CodeContent,
    DiagramContent,
    FormulaContent,
    HeaderFooterContent,
    HeadingContent,
    ListContent,
    ListItem,
    TextContent,
)
from dpe_server.model.tree import Category

_SHAPES = frozenset(P + t for t in ("sp", "grpSp", "graphicFrame", "pic", "cxnSp"))


def _choice(alt: etree._Element) -> list[etree._Element]:
    choice = alt.find(f"{MC}Choice")
    if choice is None:
        choice = alt.find(f"{MC}Fallback")
    return [] if choice is None else [c for c in choice if isinstance(c.tag, str)]


def ordered_shapes(tree: etree._Element, ctx: SlideContext) -> list[etree._Element]:
    """The shapes directly in `tree`, in reading order (`reading_order`)."""
    found: list[etree._Element] = []
    for child in tree:
        if child.tag == MC + "AlternateContent":
            found.extend(c for c in _choice(child) if c.tag in _SHAPES)
        elif child.tag in _SHAPES:
            found.append(child)
    keyed: list[tuple[Point, int]] = []
    for i, sp in enumerate(found):
        pos = position(sp)
        if pos is None:
            ph = placeholder(sp)
            if ph is not None:
                pos = ctx.layout.inherit(ph)[1]
        keyed.append((pos or (0, 0), i))
    return [found[i] for i in reading_order(keyed)]


ROW_TOLERANCE = 228_600
"""Tops closer than this (a quarter inch, in EMU) count as one row, read left to right."""


def reading_order(positions: list[tuple[Point, int]]) -> list[int]:
    """Indices of ((top, left), index) pairs in reading order: by top, in rows of shapes whose
    tops lie within `ROW_TOLERANCE` of the row's first, each row from left to right."""
    by_top = sorted(positions)
    out: list[int] = []
    row: list[tuple[Point, int]] = []
    for item in by_top:
        if row and item[0][0] - row[0][0][0] > ROW_TOLERANCE:
            out.extend(i for _, i in sorted(row, key=lambda r: (r[0][1], r[0][0], r[1])))
            row = []
        row.append(item)
    out.extend(i for _, i in sorted(row, key=lambda r: (r[0][1], r[0][0], r[1])))
    return out


def walk(tree: etree._Element, ctx: SlideContext) -> None:
    """Emit the elements of every shape in `tree` (a `p:spTree` or `p:grpSp`) in order."""
    for sp in ordered_shapes(tree, ctx):
        tag = sp.tag
        if tag == P + "sp":
            text_shape(sp, ctx)
        elif tag == P + "grpSp":
            walk(sp, ctx)
        elif tag == P + "graphicFrame":
            graphic_frame(sp, ctx)
        elif tag == P + "pic":
            picture(sp, ctx)
        elif tag == P + "cxnSp":
            connectors(sp, ctx)
        shape_link(sp, ctx)


def _heading(sp: etree._Element, kind: str, ctx: SlideContext) -> None:
    text = " ".join(plain_text(sp.find(f"{P}txBody"), " ").split())
    if not text:
        return
    level = 1 if kind in TITLE_TYPES else 2
    meta = shape_meta(sp, placeholder=kind)
    ctx.sink.add(
        Category.HEADING,
        summaries.heading(text, level),
        HeadingContent(level=level, text=text),
        meta,
        len(text),
    )


def _footer(sp: etree._Element, kind: str, ctx: SlideContext) -> None:
    text = plain_text(sp.find(f"{P}txBody"), " ")
    if not text:
        return
    what = FOOTER_TYPES[kind]
    category = Category.HEADER if what == "header" else Category.FOOTER
    summary = summaries.header(text) if what == "header" else summaries.footer(text)
    content = HeaderFooterContent(text=text, kind=what)
    ctx.sink.add(category, summary, content, shape_meta(sp), len(text))


def _emit_block(block: Block, sp: etree._Element, ctx: SlideContext) -> None:
    meta = shape_meta(sp)
    text = block.text
    if block.kind == "list":
        items = [ListItem(text=p.text.strip(), level=p.level) for p in block.paragraphs]
        ordered = block.ordered
        ctx.sink.add(
            Category.LIST,
            summaries.list_(items, ordered),
            ListContent(ordered=ordered, items=items),
            meta,
            len(text),
        )
    elif block.kind == "code":
        ctx.sink.add(Category.CODE, summaries.code(text), CodeContent(text=text), meta, len(text))
    elif block.kind == "formula":
        ctx.sink.add(
            Category.FORMULA,
            summaries.formula(text),
            FormulaContent(expression=text),
            meta,
            len(text),
        )
    else:
        content: TextContent = {"text": text}
        if any(p.rtl for p in block.paragraphs):
            content["direction"] = "rtl"
        ctx.sink.add(Category.TEXT, summaries.text(text), content, meta, len(text))


def text_shape(sp: etree._Element, ctx: SlideContext) -> None:
    """A `p:sp`: heading (title / subtitle placeholders), footer placeholders, or text blocks."""
    ph = placeholder(sp)
    chain = ctx.text_chain()
    if ph is not None:
        kind, _, chain = ctx.layout.inherit(ph)
        if kind in TITLE_TYPES or kind == "subTitle":
            _heading(sp, kind, ctx)
            paragraphs = read_paragraphs(sp.find(f"{P}txBody"), chain)
            emit_links([x for p in paragraphs for x in p.links], sp, ctx)
            return
        if kind in FOOTER_TYPES:
            _footer(sp, kind, ctx)
            return
    paragraphs = read_paragraphs(sp.find(f"{P}txBody"), chain)
    for block in blocks(paragraphs):
        _emit_block(block, sp, ctx)
    emit_links([x for p in paragraphs for x in p.links], sp, ctx)


def shape_link(sp: etree._Element, ctx: SlideContext) -> None:
    """A click action on the shape itself (`p:cNvPr/a:hlinkClick`) as a link element."""
    click = click_action(sp)
    if click is None:
        return
    target = ctx.link(click.get(f"{R}id", ""), click.get("action", ""))
    if target is None:
        return
    text = plain_text(sp.find(f"{P}txBody"), " ") or shape_ids(sp)[1]
    add_link(ctx, sp, text, target, "click_action")


# --- connector diagrams --------------------------------------------------------------------


def _connection(cxn: etree._Element, end: str) -> str | None:
    el = cxn.find(f"{P}nvCxnSpPr/{P}cNvCxnSpPr/{{*}}{end}")
    return None if el is None else el.get("id")


def connector_diagram(root: etree._Element) -> DiagramContent | None:
    """Shapes linked by connectors on a slide: `{kind: connector, nodes, edges}`."""
    edges_by_id: list[tuple[str, str]] = []
    for cxn in root.iter(f"{P}cxnSp"):
        start, end = _connection(cxn, "stCxn"), _connection(cxn, "endCxn")
        if start and end:
            edges_by_id.append((start, end))
    if not edges_by_id:
        return None
    texts: dict[str, str] = {}
    for sp in root.iter(f"{P}sp", f"{P}pic", f"{P}graphicFrame", f"{P}grpSp"):
        sid, name = shape_ids(sp)
        texts[sid] = plain_text(sp.find(f"{P}txBody"), " ") or name
    order: list[str] = []
    for a, b in edges_by_id:
        for sid in (a, b):
            if sid not in order:
                order.append(sid)
    content = diagram_content([texts.get(s, s) for s in order], kind="connector")
    content["edges"] = [[order.index(a), order.index(b)] for a, b in edges_by_id]
    return content


def connectors(cxn: etree._Element, ctx: SlideContext) -> None:
    """At the first connector of the slide, the slide's connector diagram."""
    if ctx.connectors_done:
        return
    ctx.connectors_done = True
    root = cxn.getroottree().getroot()
    content = connector_diagram(root)
    if content is None:
        return
    nodes = content["nodes"]
    ctx.sink.add(
        Category.DIAGRAM,
        summaries.diagram("connector", nodes),
        content,
        shape_meta(cxn),
        sum(map(len, nodes)),
    )
