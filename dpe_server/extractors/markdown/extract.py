"""The Markdown extractor: the text decoded (`kit.charset`), its front matter taken off and
read (`front`), the rest rendered by markdown-it-py to HTML (CommonMark, GFM tables and
strikethrough, raw HTML kept, a task list's `[ ]`/`[x]` a check box) and read by the web page
reader; a picture given by a path relative to the text names it in `metadata.file`
(`kit.beside`), which a Level 3 read serves (`isolation.pictures`, confined to the folder). The
front matter's title, description (else summary) and tags (else keywords) are the
document's; every scalar field of it is in Level 1 `front_matter`."""

from __future__ import annotations

import dataclasses
import re
from html import escape
from typing import BinaryIO

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from dpe_server.extractors.base import Limits
from dpe_server.extractors.kit.beside import with_files
from dpe_server.extractors.kit.charset import decode
from dpe_server.extractors.kit.whole import read_bounded, whole_extractor
from dpe_server.extractors.markdown import FORMAT, html_reader
from dpe_server.extractors.markdown.front import split_front_matter
from dpe_server.model.errors import TooLargeError
from dpe_server.model.tree import JSON, Document, Properties, one_line

_TASK = re.compile(r"^\[([ xX])\][ \t]")
MAX_NESTING = 100
"""markdown-it's own bound on nesting (its `maxNesting`: quotes and lists inside each other,
links inside links), past which it skips the rest of the text without a word."""
MAX_DEPTH = 90
"""Blocks nested deeper than this are refused (`too_large`) before markdown-it would skip
them: no word is dropped silently."""


def _tasks(tokens: list[Token]) -> None:
    """A list item starting `[ ] ` or `[x] ` starts with a check box (GitHub's task list)."""
    for i, token in enumerate(tokens):
        if token.type != "inline" or i < 2 or tokens[i - 2].type != "list_item_open":
            continue
        first = token.children[0] if token.children else None
        found = _TASK.match(first.content) if first is not None and first.type == "text" else None
        if first is None or found is None:
            continue
        checked = " checked" if found[1] != " " else ""
        box = Token("html_inline", "", 0)
        box.content = f'<input type="checkbox" disabled{checked}> '
        first.content = first.content[found.end() :]
        token.children = [box, *(token.children or [])]


def _too_deep(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """The first block rule: refuses a block nested past `MAX_DEPTH` (a quote's level and a
    list's two count as markdown-it counts them); passes every other block on."""
    if state.level >= MAX_DEPTH:
        raise TooLargeError(
            f"The Markdown text nests its quotes and lists more than {MAX_DEPTH} levels deep "
            f"(line {start + 1}); no reader shows such a text, and it is not read."
        )
    return False


def render(text: str, title: str = "") -> str:
    """The HTML of a Markdown text (`title`, the front matter's, as its `<title>`)."""
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    md.block.ruler.before("table", "too_deep", _too_deep)
    tokens = md.parse(text)
    _tasks(tokens)
    html: str = md.renderer.render(tokens, md.options, {})
    head = f"<head><title>{escape(title)}</title></head>" if title else ""
    return f"<html>{head}<body>{html}</body></html>"


def _strings(value: JSON) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, (str, int, float)))
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return ()


def _properties(props: Properties, front: dict[str, JSON]) -> Properties:
    title = front.get("title")
    summary = front.get("description") or front.get("summary")
    keywords = _strings(front.get("tags") or front.get("keywords"))
    extra = dict(props.extra)
    if front:
        extra["front_matter"] = front
    return dataclasses.replace(
        props,
        title=one_line(str(title)) if isinstance(title, (str, int, float)) else props.title,
        summary=one_line(str(summary)) if isinstance(summary, str) else props.summary,
        keywords=keywords or props.keywords,
        extra=extra,
    )


def _read(f: BinaryIO, limits: Limits) -> Document:
    text, encoding = decode(read_bounded(f, limits))
    front, body = split_front_matter(text)
    title = front.get("title")
    html = render(body, str(title) if isinstance(title, (str, int, float)) else "")
    doc = html_reader()(html, encoding, limits)
    doc = with_files(doc)
    return dataclasses.replace(doc, properties=_properties(doc.properties, front))


EXTRACTOR = whole_extractor(FORMAT, _read)
