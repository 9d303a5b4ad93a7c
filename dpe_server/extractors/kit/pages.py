"""Where a flowing text's pages begin and end (SPEC §5), from its blocks in reading order.

A new page starts at each top-level heading (the highest heading level the text uses; the
title level starts pages only when there is no other heading) and after each section break.
A page larger than `MAX_BLOCKS` blocks or `MAX_CHARS` characters is cut into continuation
pages titled "{title} (cont. 2)", "(cont. 3)"... at block boundaries. A page's title is the
text of its first heading, else "Section {S}". docx and odt plan their pages here, so a
probe and an extraction that flatten the same blocks agree on the page count."""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from dpe_server.model.tree import one_line

MAX_BLOCKS = 200
"""Blocks (paragraphs, tables) on one page at most before a continuation page."""


MAX_CHARS = 60_000
"""Characters of text on one page at most before a continuation page."""


TITLE_MAX = 120


@dataclass(slots=True)
class Block:
    el: etree._Element
    sdts: tuple[etree._Element, ...] = ()
    """Block-level content controls that begin at this block."""
    section: int = 0
    ends_section: bool = False
    level: int | None = None
    """Heading level of a paragraph (None for body text and tables)."""
    text: str = ""
    """Plain text of a heading paragraph (for page titles)."""
    size: int = 0


@dataclass(slots=True)
class PagePlan:
    index: int
    title: str
    blocks: list[Block]
    section: int
    continuation: int = 1
    first_page: int = 0
    """The page index of the first part of this page's section chunk (itself if not cont.)."""
    section_break: bool = False
    """The page ends at a section break (a separator element closes it)."""
    metadata: dict[str, object] = field(default_factory=dict)


def _top_level(blocks: list[Block]) -> int | None:
    levels = {b.level for b in blocks if b.level is not None}
    real = [lv for lv in levels if lv != TITLE_LEVEL]
    if real:
        return min(real)
    return TITLE_LEVEL if levels else None


def plan_pages(blocks: list[Block]) -> list[PagePlan]:
    """Cut the blocks into pages (and continuation pages); always at least one page."""
    top = _top_level(blocks)
    groups: list[list[Block]] = []
    breaks: list[bool] = []
    current: list[Block] = []
    for block in blocks:
        starts = top is not None and block.level == top
        if starts and current:
            groups.append(current)
            breaks.append(False)
            current = []
        current.append(block)
        if block.ends_section:
            groups.append(current)
            breaks.append(True)
            current = []
    if current or not groups:
        groups.append(current)
        breaks.append(False)
    pages: list[PagePlan] = []
    for blocks_of_page, ends_at_break in zip(groups, breaks, strict=True):
        chunks = _chunks(blocks_of_page)
        first = len(pages)
        section = blocks_of_page[0].section if blocks_of_page else 0
        title = _title(blocks_of_page, section)
        for k, chunk in enumerate(chunks, start=1):
            pages.append(
                PagePlan(
                    index=len(pages),
                    title=title if k == 1 else f"{title} (cont. {k})",
                    blocks=chunk,
                    section=section,
                    continuation=k,
                    first_page=first,
                    section_break=ends_at_break and k == len(chunks),
                )
            )
    return pages


def _chunks(blocks: list[Block]) -> list[list[Block]]:
    chunks: list[list[Block]] = [[]]
    chars = 0
    for block in blocks:
        chunk = chunks[-1]
        if chunk and (len(chunk) >= MAX_BLOCKS or chars + block.size > MAX_CHARS):
            chunks.append([])
            chunk = chunks[-1]
            chars = 0
        chunk.append(block)
        chars += block.size
    return chunks


def _title(blocks: list[Block], section: int) -> str:
    for block in blocks:
        if block.level is not None and block.text.strip():
            return one_line(block.text, TITLE_MAX)
    return f"Section {section + 1}"


TITLE_LEVEL = 0
"""The heading level given to the Title style (above Heading 1)."""
