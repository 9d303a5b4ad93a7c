"""Where a docx's pages begin and end (SPEC §5), decided from the body alone: the body
flattened into the blocks `kit.pages` plans pages from.

The body is flattened into blocks (paragraphs, tables, altChunks; content controls and
custom XML unwrapped) in document order. A new page starts:

- at each top-level heading: the highest heading level the body uses (`Heading 1` if used,
  else `Heading 2`...); the Title style counts as a heading above Heading 1 but starts pages
  only when the body has no other heading;
- after each section break (a paragraph carrying `w:sectPr` ends its section).

Content before the first page start is page 0 (only when there is some). A page larger than
`MAX_BLOCKS` blocks or `MAX_CHARS` characters of text is cut into continuation pages titled
"{title} (cont. 2)", "(cont. 3)"... at block boundaries.

A page's title is the text of the heading that starts it, else the first heading on it,
else "Section {S}" (S the 1-based number of the document section the page belongs to: only
the first page of a section can lack a heading, so these titles do not repeat). The probe
and the extractor run this same plan, so the page count the probe reports is exact.
"""

from __future__ import annotations

import io

from lxml import etree

from dpe_server.extractors.docx.styles import Styles
from dpe_server.extractors.docx.xml import W, int_or, val
from dpe_server.extractors.kit.pages import TITLE_LEVEL, Block
from dpe_server.model.errors import CorruptError

_P, _TBL, _SDT, _ALTCHUNK = W + "p", W + "tbl", W + "sdt", W + "altChunk"
_T, _PPR, _SECTPR = W + "t", W + "pPr", W + "sectPr"
_WRAPPERS = (W + "customXml", W + "ins", W + "moveTo")
_BODY = W + "body"
_UNWRAPPED = frozenset((W + "sdt", W + "sdtContent", *_WRAPPERS))


def plain_text(el: etree._Element) -> str:
    return "".join([t for t in el.itertext(_T) if isinstance(t, str)])


def block_text(el: etree._Element) -> str:
    """Plain text of a block container, one line per paragraph."""
    return "\n".join(plain_text(p) for p in el.iter(_P))


def paragraph_level(p: etree._Element, styles: Styles) -> int | None:
    """The heading level of a paragraph: its style's, or its own outline level."""
    ppr = p.find(_PPR)
    style = val(ppr, "pStyle") if ppr is not None else None
    level = styles.info(style).heading_level
    outline = val(ppr, "outlineLvl") if ppr is not None else None
    if outline is not None and level != TITLE_LEVEL:
        value = int_or(outline, 9)
        level = value + 1 if 0 <= value <= 8 else None
    return level


def _block(
    el: etree._Element, styles: Styles, section: int, sdts: tuple[etree._Element, ...]
) -> Block:
    """The planning facts of one body-level paragraph, table or altChunk."""
    if el.tag != _P:
        size = len(plain_text(el)) if el.tag == _TBL else 0
        return Block(el, sdts, section, size=size)
    ppr = el.find(_PPR)
    ends = ppr is not None and ppr.find(_SECTPR) is not None
    level = paragraph_level(el, styles)
    text = plain_text(el)
    if not text.strip():
        level = None
    return Block(el, sdts, section, ends, level, text if level is not None else "", len(text))


def flatten(body: etree._Element, styles: Styles) -> list[Block]:
    """The body's blocks in document order, each with its section and heading level."""
    blocks: list[Block] = []
    _visit(body, styles, blocks, [])
    return blocks


def _visit(
    container: etree._Element,
    styles: Styles,
    blocks: list[Block],
    pending: list[etree._Element],
) -> None:
    """`flatten` of one container, into `blocks` (a function of its own, not a closure that
    calls itself: that would be a reference cycle keeping the blocks, and with them the whole
    parsed document, alive after the extraction until the next full garbage collection)."""
    for child in container:
        tag = child.tag
        if tag in (_P, _TBL, _ALTCHUNK):
            section = blocks[-1].section + blocks[-1].ends_section if blocks else 0
            blocks.append(_block(child, styles, section, tuple(pending)))
            pending.clear()
        elif tag == _SDT:
            content = child.find(W + "sdtContent")
            pending.append(child)
            if content is not None:
                _visit(content, styles, blocks, pending)
        elif tag in _WRAPPERS:
            _visit(child, styles, blocks, pending)


def _body_level(el: etree._Element) -> bool:
    """Whether a paragraph or table sits in the body itself (through content controls)."""
    parent = el.getparent()
    while parent is not None:
        tag = parent.tag
        if tag == _BODY:
            return True
        if tag not in _UNWRAPPED:
            return False
        parent = parent.getparent()
    return False


def stream_blocks(data: bytes, styles: Styles) -> tuple[list[Block], etree._Element]:
    """`flatten` over document.xml bytes without keeping the tree: each body-level block is
    read when it ends, then dropped (the probe's way: the same plan in a fraction of the
    memory). The blocks' `el` is a placeholder; the root comes back emptied of its blocks."""
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data[:4096]:
        raise CorruptError("The document part declares a DOCTYPE, which OOXML never needs.")
    blocks: list[Block] = []
    events = etree.iterparse(
        io.BytesIO(data),
        events=("end",),
        tag=(_P, _TBL, _ALTCHUNK),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
    )
    placeholder = etree.Element("block")
    try:
        for _, el in events:
            if not _body_level(el):
                continue
            section = blocks[-1].section + blocks[-1].ends_section if blocks else 0
            block = _block(el, styles, section, ())
            block.el = placeholder
            blocks.append(block)
            el.clear(keep_tail=True)
            parent = el.getparent()
            if parent is not None:
                while el.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as exc:
        raise CorruptError(f"The document part is not well-formed XML ({exc.msg}).") from None
    return blocks, events.root


def section_properties(body: etree._Element, blocks: list[Block]) -> list[etree._Element | None]:
    """The `w:sectPr` of each section, in order (the body's own is the last)."""
    out: list[etree._Element | None] = [
        b.el.find(f"{_PPR}/{_SECTPR}") for b in blocks if b.ends_section
    ]
    out.append(body.find(_SECTPR))
    return out
