"""A web page's `<body>` walked into blocks, in reading order: each block is one element to be
(a heading, a paragraph, a list, a table, code...) with the elements found inside it (links,
pictures) as items, and the facts the page plan needs (a heading's level, the text size).

Inline content runs into paragraphs; a block tag ends one. Site furniture (navigation, the
page's banner and footer, cookie banners) becomes a `header` or `footer` element with its
links; scripts, styles and hidden elements are left out (`visible`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lxml import etree

from dpe_server.extractors.html import media, tables, word
from dpe_server.extractors.html.visible import (
    BLOCKS,
    HIDDEN,
    SKIPPED,
    WORD_LIST,
    hidden,
    marks,
    tag,
)
from dpe_server.extractors.kit.forms import checkbox_glyph
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.tables import NESTED_MARK, TableData
from dpe_server.model import summaries
from dpe_server.model.content import (
    CodeContent,
    HeaderFooterContent,
    HeadingContent,
    ListContent,
    ListItem,
    SeparatorContent,
    TextContent,
)
from dpe_server.model.tree import JSON, Category, one_line

_SPACE = re.compile(r"[ \t\n\r\f\u00a0]+")
_NOT_SPLIT = re.compile("[\x0b\x1c-\x1f\x85\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
"""The white space `str.split` cuts at that a browser does not collapse (`_SPACE`): where a
text holds none, `str.split` collapses it as `_SPACE` does, faster."""
_AROUND_BREAK = re.compile(r" *\n *")
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:?)-?\s*([\w+#.-]+)", re.I)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LISTS = frozenset({"ul", "ol", "menu", "dir"})
_CODE_BLOCKS = frozenset({"pre", "xmp", "listing", "plaintext"})
_MAX_DEPTH = 200
"""Below this depth, an element's text is taken whole (as one paragraph): the walk recurses."""


@dataclass(slots=True)
class Out:
    """One block: its element (None for a run of inline content read as a paragraph) and
    the items found inside it, emitted after it."""

    category: Category | None
    summary: str = ""
    """One line already (`one_line`'s result): `PageBuilder.put` keeps it as it is."""
    content: Mapping[str, JSON] = field(default_factory=dict)
    """Made for this block alone, with `metadata`: the element keeps both."""
    metadata: dict[str, JSON] = field(default_factory=dict)
    items: list[Item] = field(default_factory=list)
    table: TableData | None = None
    level: int | None = None
    text: str = ""
    section: int = 0


def collapse(text: str) -> str:
    """Inline white space as a browser shows it: runs of spaces one space, `\\n` (a `<br>`)
    kept."""
    if _plain(text):
        return " ".join(text.split())
    return _spaced(text)


def _plain(text: str) -> bool:
    """Whether `text` holds no white space `str.split` cuts at that a browser keeps
    (`_NOT_SPLIT`): `str.split` collapses it as a browser does, and the result is one line."""
    if text.isascii():  # (a flag of the string) of `_NOT_SPLIT`, only \x0b and \x1c-\x1f can
        # be there: five searches for one character are 2-20 times faster than its class
        return not (
            "\x0b" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text
        )
    return _NOT_SPLIT.search(text) is None


def _spaced(text: str) -> str:
    """`collapse` of a text that is not `_plain`."""
    text = _SPACE.sub(" ", text)
    if "\x0b" in text:
        text = _AROUND_BREAK.sub("\n", text.replace("\x0b", "\n"))
    return text.strip()


class Walker:
    """Walks a page's body into `blocks`. `images` numbers every `<img>` of the page in
    document order (how a picture is found again for a Level 3 read: `numbered`); `marks`
    are the page's hidden elements, its site furniture and Word's list paragraphs
    (`classify`), asked of a dictionary rather than of each element's attributes."""

    def __init__(
        self,
        images: dict[etree._Element, int],
        parts: dict[str, str],
        marks: dict[etree._Element, str],
    ) -> None:
        self.blocks: list[Out] = []
        self.parts = parts
        self.images = images
        self.marks = marks
        self._text: list[str] = []
        self._items: list[Item] = []
        self._section = 0
        self._word_items: list[ListItem] = []
        self._word_found: list[Item] = []

    # ---- inline runs -------------------------------------------------------------------

    def _inline_text(self, piece: str | None) -> None:
        if piece:
            self._text.append(piece)

    def flush(self) -> None:
        """Ends the paragraph being gathered: a text element (when it has text), its items."""
        pieces, items = self._text, self._items
        if not pieces and not items:
            return
        text = collapse("".join(pieces)) if pieces else ""
        summary = one_line(text)  # (its own text when one short line: `one_line`'s shortcut)
        self._text, self._items = [], []
        if (text or items) and self._word_items:
            self._close_word_list()
        if text:
            out = Out(Category.TEXT, summary, {"text": text}, items=items, text=text)
        elif items:
            out = Out(None, items=items)
        else:
            return
        out.section = self._section
        self.blocks.append(out)

    def finish(self) -> None:
        """Ends the walk: the paragraph and the Word list being gathered."""
        self.flush()
        self._close_word_list()

    def _add(self, out: Out) -> None:
        self._close_word_list()
        out.section = self._section
        self.blocks.append(out)

    # ---- the walk ------------------------------------------------------------------------

    def walk(self, el: etree._Element, depth: int = 0) -> None:
        """Every child of `el`, with the text between them."""
        text = el.text
        if text:
            self._text.append(text)
        depth += 1
        node = self.node
        for child in el:
            node(child, depth)
            tail = child.tail
            if tail:
                self._text.append(tail)

    def node(self, el: etree._Element, depth: int) -> None:
        name = _NAMES.get(el.tag) or name_of(el)  # (`name_of`, its call saved once known)
        mark = self.marks.get(el)
        if name == "svg" and mark is not HIDDEN:  # an e-book's cover: a picture in an SVG
            self._items.extend(self.image(i) for i in el.iter("image"))
            return
        if not name or name in SKIPPED or mark is HIDDEN:
            return
        if depth > _MAX_DEPTH:
            self._inline_text(" " + " ".join(visible_text(el)) + " ")
            return
        if mark is not None:
            self.flush()
            if mark is WORD_LIST:
                self._word_item(el)
            else:
                self._furniture(el, mark)
            return
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, el, name, depth)
        elif name in BLOCKS:
            self.flush()
            self.walk(el, depth)
            self.flush()
        else:
            self.walk(el, depth)

    def _block(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        self.walk(el, depth)
        self.flush()

    def _sectioning(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        if depth <= 4:
            self._section += 1
        self.walk(el, depth)
        self.flush()

    def _rule(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        rule: SeparatorContent = {"kind": "rule"}
        self._add(Out(Category.SEPARATOR, summaries.separator("rule"), rule))

    def _break(self, el: etree._Element, name: str, depth: int) -> None:
        self._text.append("\x0b")

    def _image(self, el: etree._Element, name: str, depth: int) -> None:
        self._items.append(self.image(el))

    def _player(self, el: etree._Element, name: str, depth: int) -> None:
        self._items.append(media.player(el, name))

    def _formula(self, el: etree._Element, name: str, depth: int) -> None:
        self._items.append(media.formula(el))

    def _form(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        self.walk(el, depth)
        self.flush()
        form = media.form(el)
        if form is not None:
            self._add(Out(None, items=[form]))

    def _field(self, el: etree._Element, name: str, depth: int) -> None:
        return  # a form's field: its form element says it

    # ---- blocks --------------------------------------------------------------------------

    def _heading(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        level = _HEADINGS[name]
        text, items = self._inline_of(el)
        text = " ".join(text.split("\n"))
        if not text:
            if items:
                self._add(Out(None, items=items))
            return
        content: HeadingContent = {"level": level, "text": text}
        self._add(
            Out(
                Category.HEADING,
                summaries.heading(text, level),
                content,
                items=items,
                level=level,
                text=text,
            )
        )

    def _word_item(self, el: etree._Element) -> None:
        """A list paragraph as Word saves one (`mso-list`, its number or bullet in a span
        Word marks `mso-list:Ignore`): an item of the list being gathered."""
        level, label, rest = word.list_paragraph(el)
        self.marks.update(classify(rest))  # `rest` is a copy: its own elements
        text, found = self._inline_of(rest)
        item: ListItem = {"text": text, "level": level}
        if label:
            item["label"] = label
        self._word_items.append(item)
        self._word_found.extend(found)

    def _close_word_list(self) -> None:
        items, found = self._word_items, self._word_found
        if not items:
            return
        self._word_items, self._word_found = [], []
        ordered = any("label" in i for i in items)
        content: ListContent = {"ordered": ordered, "items": items}
        text = "\n".join(i["text"] for i in items)
        out = Out(Category.LIST, summaries.list_(list(items), ordered), content, text=text)
        out.items, out.section = found, self._section
        self.blocks.append(out)

    def _code(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        text = "".join(visible_text(el, keep_space=True)).strip("\n")
        if not text.strip():
            return
        language = _language(el)
        content: CodeContent = {"text": text}
        if language:
            content["language"] = language
        self._add(Out(Category.CODE, summaries.code(text, language), content, text=text))

    def _list(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        items: list[ListItem] = []
        found: list[Item] = []
        if name == "dl":
            self._terms(el, items, found)
        else:
            self._items_of(el, 0, items, found)
        if not items:
            if found:
                self._add(Out(None, items=found))
            return
        ordered = name == "ol"
        content: ListContent = {"ordered": ordered, "items": items}
        start = el.get("start")
        if ordered and start and start.strip().lstrip("-").isdigit() and int(start) != 1:
            content["start"] = int(start)
        text = "\n".join(i["text"] for i in items)
        self._add(
            Out(
                Category.LIST,
                summaries.list_(list(items), ordered),
                content,
                items=found,
                text=text,
            )
        )

    def _items_of(
        self, el: etree._Element, level: int, items: list[ListItem], found: list[Item]
    ) -> None:
        marks = self.marks
        for li in el:
            name = name_of(li)
            if not name or name in SKIPPED or marks.get(li) is HIDDEN:
                continue
            if name in _LISTS:
                self._items_of(li, level + 1, items, found)
                continue
            if not len(li):  # text alone: no nested list, no check box, no items
                text = li.text  # (read once: lxml makes a string of it at each read)
                text = collapse(text) if text else ""
                if text:
                    items.append({"text": text, "level": level})
                continue
            nested = [c for c in li if name_of(c) in _LISTS and marks.get(c) is not HIDDEN]
            text, inner = self._inline_of(li, skip=nested)
            box = next((c for c in li.iter("input") if (c.get("type") or "") == "checkbox"), None)
            if box is not None:
                checked = box.get("checked") is not None
                glyph = checkbox_glyph({"checked": checked})  # type: ignore[typeddict-item]
                text = f"{glyph} {text}".strip()
            if text:
                items.append({"text": text, "level": level})
            found.extend(inner)
            for sub in nested:
                self._items_of(sub, level + 1 if text else level, items, found)

    def _terms(self, el: etree._Element, items: list[ListItem], found: list[Item]) -> None:
        for child in el:
            name = name_of(child)
            if name == "div":  # a term and its definitions grouped
                self._terms(child, items, found)
            elif name in ("dt", "dd") and self.marks.get(child) is not HIDDEN:
                text, inner = self._inline_of(child)
                if text:
                    items.append({"text": text, "level": 0 if name == "dt" else 1})
                found.extend(inner)

    def _inline_of(
        self,
        el: etree._Element,
        skip: list[etree._Element] | None = None,
        nested: list[TableData] | None = None,
    ) -> tuple[str, list[Item]]:
        """The text of `el` read as one paragraph (its blocks' texts on lines of their own),
        and the items inside it; `skip` are children left out. With `nested` (a table cell's),
        a table inside it is added there and named in the text by its place (`NESTED_MARK`),
        to be its own element; without, its text is the paragraph's."""
        if not len(el):  # text alone (most table cells)
            text = el.text  # (read once: lxml makes a string of it at each read)
            return (collapse(text) if text else ""), []
        inner = Walker(self.images, self.parts, self.marks)
        inner._inline_text(el.text)
        for child in el:
            if skip is None or child not in skip:
                inner.node(child, 1)
            inner._inline_text(child.tail)
        inner.flush()
        texts: list[str] = []
        for b in inner.blocks:
            if nested is not None and b.table is not None:
                nested.append(b.table)
                texts.append(f"{NESTED_MARK}{len(nested) - 1}{NESTED_MARK}")
            elif b.text:
                texts.append(b.text)
        items = [i for b in inner.blocks for i in b.items]
        return "\n".join(texts), items

    def _table(self, el: etree._Element, name: str, depth: int) -> None:
        self.flush()
        read = tables.read_table(
            el, lambda cell, nested: self._inline_of(cell, nested=nested), self.marks
        )
        if read is None:
            return
        table, caption = read
        if caption:
            content: TextContent = {"text": caption}
            self._add(
                Out(
                    Category.TEXT,
                    summaries.text(caption),
                    content,
                    {"source": "caption"},
                    text=caption,
                )
            )
        text = "\n".join(" ".join(c for c in row if c) for row in table.grid)
        self._add(Out(Category.TABLE, table=table, text=text))

    def _furniture(self, el: etree._Element, kind: str) -> None:
        text, items = self._inline_of(el)
        links = [i for i in items if i.category is Category.LINK]
        if not text and not links:
            return
        category = Category.FOOTER if kind == "site_footer" else Category.HEADER
        content: HeaderFooterContent = {"text": text, "kind": kind}
        summary = summaries.footer(text) if category is Category.FOOTER else summaries.header(text)
        self._add(Out(category, summary, content, items=links, text=text))

    # ---- inline elements -----------------------------------------------------------------

    def _link(self, el: etree._Element, name: str, depth: int) -> None:
        start = len(self._text)
        self.walk(el, depth)
        href = el.get("href")
        href = href.strip() if href else ""
        if not href or href[:11].lower().startswith(("javascript:", "data:")):
            return
        text = collapse("".join(self._text[start:]))
        if not text:  # the link's title, else the alt text of a picture it holds
            pictured = el.get("title") or next(
                (i.get("alt") for i in el.iter("img") if i.get("alt")), ""
            )
            text = (pictured or "").strip()
        self._items.append(media.link(text, href, at=start + 1))

    def image(self, el: etree._Element) -> Item:
        return media.image(el, self.images.get(el, -1), self.parts)


_Handler = Callable[[Walker, etree._Element, str, int], None]
_HANDLERS: dict[str, _Handler] = {
    **dict.fromkeys(_HEADINGS, Walker._heading),
    **dict.fromkeys((*_LISTS, "dl"), Walker._list),
    "table": Walker._table,
    **dict.fromkeys(_CODE_BLOCKS, Walker._code),
    "hr": Walker._rule,
    "br": Walker._break,
    "img": Walker._image,
    "a": Walker._link,
    **dict.fromkeys(media.PLAYERS, Walker._player),
    "math": Walker._formula,
    "form": Walker._form,
    **dict.fromkeys(("input", "select", "textarea"), Walker._field),
    "section": Walker._sectioning,
    "article": Walker._sectioning,
}
"""What each tag that is not plain text or a plain block makes (`Walker.node`)."""
_NAMES: dict[object, str] = {}


def name_of(el: etree._Element) -> str:
    """`visible.tag(el)`, remembered by the raw tag (a page uses few names)."""
    raw = el.tag
    name = _NAMES.get(raw)
    if name is None:
        name = tag(el)
        if len(_NAMES) < 4096:
            _NAMES[raw] = name
    return name


def classify(root: etree._Element) -> dict[etree._Element, str]:
    """The marks of `root`'s tree: its hidden elements, its furniture and Word's list
    paragraphs (`visible.marks`)."""
    return marks(root, word.is_list_paragraph)


def numbered(root: etree._Element) -> dict[etree._Element, int]:
    """Every `<img>` of the page by its place among them, in document order."""
    return {img: n for n, img in enumerate(root.iter("img"))}


def _language(el: etree._Element) -> str:
    for candidate in (el, *el.iter("code")):
        found = _LANGUAGE.search(candidate.get("class") or "")
        if found:
            return found[1].lower()
        lang = candidate.get("data-lang") or candidate.get("data-language")
        if lang:
            return lang.strip().lower()
    return ""


def visible_text(el: etree._Element, keep_space: bool = False) -> list[str]:
    """The text of `el` a browser shows, its pieces in order (iteratively: any depth)."""
    out: list[str] = []
    stack: list[tuple[etree._Element, bool]] = [(el, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            if node is not el and node.tail:
                out.append(node.tail)
            continue
        name = tag(node)
        shown = bool(name) and name not in SKIPPED and not hidden(node)
        stack.append((node, True))
        if not shown:
            continue
        if name == "br":
            out.append("\n")
        if node.text:
            out.append(node.text)
        stack.extend((child, False) for child in reversed(node))
    if not keep_space:
        return [collapse("".join(out))]
    return out
