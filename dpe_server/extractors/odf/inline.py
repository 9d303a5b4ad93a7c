"""An OpenDocument paragraph (`text:p`, `text:h`) as its text and the items inside it.

- `text:s`, `text:tab`, `text:line-break` become spaces, a tab, a line break; spans, fields
  and other inline wrappers are read through;
- `text:a` → link (`metadata.bookmark` for a `#name` inside the document);
- `text:note` → annotation `footnote`/`endnote` (its body's text; `anchor` the text before it);
- `office:annotation` (`officeooo:annotation` too) → annotation `comment` with `dc:creator`
  and `dc:date` (`resolved` when `loext:resolved`); its `anchor` is the text up to the
  matching `office:annotation-end`, when there is one; a reply (`loext:parent-name`) goes
  under the root of its thread as `replies`, as the docx reader nests Word's;
- tracked changes: `text:change` (a deletion) → annotation `deletion` with the deleted text
  (a deletion written as a range, `text:change-start`…`text:change-end` around the deleted
  text, as LibreOffice does, likewise, its text taken out of the paragraph),
  `text:change-start`…`text:change-end` of an insertion → annotation `insertion` with the
  text between (author and date from the change's `office:change-info`);
- form fields (legacy fieldmarks, content controls, input fields) → form items (`fields`);
- `draw:frame` → its picture, text box or object (`frames`); `draw:a` around one → a link too;
  a drawing shape anchored in the paragraph (`draw:custom-shape`...) → a text item of its
  own paragraphs (`metadata.source: frame`), not part of the paragraph's text; a full-width
  thin rectangle or a horizontal line without text → a `rule` separator.

Items keep the text offset where they were found (`Item.at`), like the docx reader's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from dpe_server.extractors.kit.forms import form_item
from dpe_server.extractors.kit.items import Item, Para
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.kit.threads import as_reply, roots
from dpe_server.extractors.odf.fields import (
    FIELD,
    control_field,
    input_field,
    is_form,
    legacy_field,
)
from dpe_server.extractors.odf.package import (
    COMMENTS,
    DC,
    DRAW,
    LOEXT,
    OFFICE,
    SHAPES,
    STYLE,
    SVG,
    TEXT,
    XLINK,
    length_px,
    plain_text,
    spaces,
)
from dpe_server.model import summaries
from dpe_server.model.content import Reply
from dpe_server.model.tree import JSON, Category

_ANCHOR_TAIL = 80
_SKIPPED = frozenset(
    TEXT + t
    for t in (
        "note-citation",
        "bookmark",
        "bookmark-start",
        "bookmark-end",
        "reference-mark",
        "reference-mark-start",
        "reference-mark-end",
        "soft-page-break",
        "alphabetical-index-mark",
        "toc-mark",
    )
)


_FIELDS = frozenset(
    (
        FIELD + "fieldmark",
        FIELD + "fieldmark-start",
        FIELD + "fieldmark-end",
        LOEXT + "content-control",
        TEXT + "text-input",
    )
)


@dataclass(frozen=True, slots=True)
class Change:
    """A tracked change of `text:tracked-changes`."""

    kind: str
    """`insertion`, `deletion` or `format-change`."""
    author: str
    date: str
    text: str


def tracked_changes(body: etree._Element) -> dict[str, Change]:
    """The tracked changes a text's `text:tracked-changes` declares, by `text:id`."""
    out: dict[str, Change] = {}
    for region in body.iter(TEXT + "changed-region"):
        rid = region.get(TEXT + "id") or region.get("{http://www.w3.org/XML/1998/namespace}id")
        for change in region:
            if not isinstance(change.tag, str) or rid is None:
                continue
            info = change.find(OFFICE + "change-info")
            author = (info.findtext(DC + "creator") or "").strip() if info is not None else ""
            date = (info.findtext(DC + "date") or "").strip() if info is not None else ""
            kind = etree.QName(change).localname
            text = ""
            if kind == "deletion":
                kept = [c for c in change if c is not info and isinstance(c.tag, str)]
                text = "\n".join(plain_text(c) for c in kept).strip()
            out[rid] = Change(kind, author, date, text)
    return out


@dataclass
class _State:
    parts: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    length: int = 0
    comments: dict[str, tuple[int, Item]] = field(default_factory=dict)
    insertions: dict[str, int] = field(default_factory=dict)
    marks: list[tuple[int, etree._Element]] = field(default_factory=list)
    """Open `field:fieldmark-start`s: where each started."""

    def add(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.length += len(text)

    def text_from(self, start: int, cut: bool = False) -> str:
        """The text from `start` on; `cut`: taken out of the paragraph's text too."""
        text = "".join(self.parts)
        if cut:
            self.parts, self.length = [text[:start]], start
        return text[start:]


class InlineReader:
    """Reads paragraphs of one package; `changes` are the text's tracked changes."""

    def __init__(self, pkg: Package, changes: dict[str, Change] | None = None) -> None:
        self.pkg = pkg
        self.changes = changes or {}
        self.slides: dict[str, int] = {}
        """A presentation's slides by `draw:name`: a link to `#name` goes to that slide."""

    def paragraph(self, p: etree._Element) -> Para:
        st = _State()
        self._walk(p, st)
        text = "".join(st.parts)
        return Para(text, threads(st.items), bool(text.strip()))

    def items_of(self, el: etree._Element) -> list[Item]:
        """The items of an inline element standing on its own (a frame anchored to the page)."""
        st = _State()
        self._child(el, st)
        return st.items

    def _walk(self, el: etree._Element, st: _State) -> None:
        st.add(el.text or "")
        for child in el:
            self._child(child, st)
            st.add(child.tail or "")

    def _child(self, child: etree._Element, st: _State) -> None:
        tag = child.tag
        if not isinstance(tag, str) or tag in _SKIPPED:
            pass
        elif tag == TEXT + "s":
            st.add(" " * spaces(child))
        elif tag == TEXT + "tab":
            st.add("\t")
        elif tag == TEXT + "line-break":
            st.add("\n")
        elif tag == TEXT + "a":
            self._link(child, st)
        elif tag == TEXT + "note":
            self._note(child, st)
        elif tag in COMMENTS:
            self._comment(child, st)
        elif tag == OFFICE + "annotation-end":
            self._comment_end(child, st)
        elif tag in (TEXT + "change", TEXT + "change-start", TEXT + "change-end"):
            self._change(child, st)
        elif tag == DRAW + "frame":
            self._frame(child, st)
        elif tag == DRAW + "a":
            self._draw_link(child, st)
        elif tag in SHAPES:
            self._frame(child, st)
        elif tag in _FIELDS:
            self._field(child, st)
        elif tag == TEXT + "ruby":
            base = child.find(TEXT + "ruby-base")
            if base is not None:
                self._walk(base, st)
        else:
            self._walk(child, st)

    def _link(self, a: etree._Element, st: _State) -> None:
        start = st.length
        self._walk(a, st)
        url = a.get(XLINK + "href", "")
        if url:
            self.link(st.text_from(start), url, st.items, st.length)

    def _draw_link(self, a: etree._Element, st: _State) -> None:
        before = len(st.items)
        self._walk(a, st)
        url = a.get(XLINK + "href", "")
        if not url:
            return
        images = [i for i in st.items[before:] if i.category is Category.IMAGE]
        text = str(images[0].content.get("description", "")) if images else ""
        self.link(text, url, st.items, st.length)

    def link(self, text: str, url: str, items: list[Item], at: int, kind: str = "") -> None:
        """A link item; `#name` of a slide goes to it as `#slide=N` (`target_page`), as the
        pptx reader writes an internal slide link; `kind` (`click_action`) in metadata."""
        slide = self.slides.get(url[1:]) if url.startswith("#") else None
        content: dict[str, JSON] = {"text": text, "url": url}
        meta: dict[str, JSON] = {"bookmark": url[1:]} if url.startswith("#") else {}
        if slide is not None:
            content = {"text": text, "url": f"#slide={slide + 1}", "target_page": slide}
            meta = {}
        if kind:
            meta["kind"] = kind
        summary = summaries.link(text, str(content["url"]))
        items.append(Item(Category.LINK, summary, content, meta, at))

    def _note(self, note: etree._Element, st: _State) -> None:
        kind = "endnote" if note.get(TEXT + "note-class") == "endnote" else "footnote"
        body = note.find(TEXT + "note-body")
        text = plain_text(body) if body is not None else ""
        content: dict[str, JSON] = {"text": text, "kind": kind}
        anchor = "".join(st.parts)[-_ANCHOR_TAIL:].strip()
        if anchor:
            content["anchor"] = anchor
        meta: dict[str, JSON] = {}
        citation = note.findtext(TEXT + "note-citation")
        if citation:
            meta["citation"] = citation
        summary = summaries.annotation(text, kind)
        st.items.append(Item(Category.ANNOTATION, summary, content, meta, st.length))

    def _comment(self, ann: etree._Element, st: _State) -> None:
        st.items.append(comment_item(ann, st.length))
        name = ann.get(OFFICE + "name")
        if name:
            st.comments[name] = (st.length, st.items[-1])

    def _comment_end(self, end: etree._Element, st: _State) -> None:
        opened = st.comments.pop(end.get(OFFICE + "name", ""), None)
        if opened is not None:
            anchor = st.text_from(opened[0]).strip()
            if anchor:
                opened[1].content = {**opened[1].content, "anchor": anchor}

    def _change(self, mark: etree._Element, st: _State) -> None:
        cid = mark.get(TEXT + "change-id", "")
        change = self.changes.get(cid)
        if change is None:
            return
        if mark.tag == TEXT + "change-start":
            st.insertions[cid] = st.length
            return
        if mark.tag == TEXT + "change-end":
            # A range: inserted text, or deleted text kept in place (as LibreOffice writes a
            # deletion), which the paragraph as it reads now does not hold.
            start = st.insertions.pop(cid, None)
            cut = change.kind == "deletion"
            text = st.text_from(start, cut).strip() if start is not None else ""
        else:
            text = change.text
        if change.kind in ("insertion", "deletion") and text:
            st.items.append(change_item(change, text, st.length))

    def _field(self, el: etree._Element, st: _State) -> None:
        """A form field inside the paragraph (`fields`): its text stays in the paragraph."""
        tag, start = el.tag, st.length
        if tag == FIELD + "fieldmark":
            found, shown = legacy_field(el)
            st.add(shown)
            if is_form(el):
                st.items.append(form_item([found], st.length, "legacy_form_field"))
            return
        if tag == FIELD + "fieldmark-start":
            st.marks.append((start, el))
            return
        if tag == FIELD + "fieldmark-end":
            if st.marks:
                begun, mark = st.marks.pop()
                if is_form(mark):
                    found = legacy_field(mark, st.text_from(begun).strip())[0]
                    st.items.append(form_item([found], st.length, "legacy_form_field"))
            return
        self._walk(el, st)
        text = st.text_from(start).strip()
        made = control_field(el, text) if tag == LOEXT + "content-control" else None
        made = made or input_field(el, text)
        st.items.append(form_item([made], st.length, "content_control"))

    def _frame(self, frame: etree._Element, st: _State) -> None:
        from dpe_server.extractors.odf.frames import frame_items, text_box_items

        if frame.tag in SHAPES and is_rule(frame):
            kind = "rule"
            st.items.append(Item(Category.SEPARATOR, summaries.separator(kind), {"kind": kind}))
        elif frame.tag in SHAPES:  # a drawing shape anchored in the paragraph: its own text
            st.items.extend(text_box_items(frame, self, {}, st.length))
        else:
            st.items.extend(frame_items(frame, self, st.length))


def comment_item(ann: etree._Element, at: int) -> Item:
    """An `office:annotation` as a `comment` annotation."""
    author = (ann.findtext(DC + "creator") or "").strip()
    date = (ann.findtext(DC + "date") or "").strip()
    text = plain_text(ann)
    content: dict[str, JSON] = {"text": text, "kind": "comment"}
    if author:
        content["author"] = author
    if date:
        content["date"] = date
    if ann.get(LOEXT + "resolved") == "true":
        content["resolved"] = True
    meta: dict[str, JSON] = {}
    if ann.get(OFFICE + "name"):
        meta["name"] = ann.get(OFFICE + "name")
    if ann.get(LOEXT + "parent-name"):
        meta["reply_to"] = ann.get(LOEXT + "parent-name")
    summary = summaries.annotation(text, "comment", author or None)
    return Item(Category.ANNOTATION, summary, content, meta, at)


_RULE_HEIGHT = 6
"""At most this many pixels high, a full-width shape is a horizontal rule."""


def is_rule(shape: etree._Element) -> bool:
    """A horizontal rule: a shape without text, a horizontal `draw:line` or a full-width
    (`style:rel-width="100%"`) thin rectangle, as LibreOffice writes Word's horizontal line."""
    if plain_text(shape).strip():
        return False
    if shape.tag == DRAW + "line":
        return shape.get(SVG + "y1") == shape.get(SVG + "y2")
    height = length_px(shape.get(SVG + "height"))
    full = shape.get(STYLE + "rel-width") == "100%"
    return shape.tag == DRAW + "rect" and full and height is not None and height <= _RULE_HEIGHT


def threads(items: list[Item]) -> list[Item]:
    """Comments answering another (`loext:parent-name` naming its `office:name`, as
    LibreOffice writes a reply) nested under the root of their thread as `replies`, by date
    when each has one (LibreOffice writes the newest first), else in the paragraph's order;
    an answer to a comment the paragraph does not hold stands alone."""
    named = {
        str(it.metadata["name"]): i
        for i, it in enumerate(items)
        if it.category is Category.ANNOTATION and it.metadata.get("name")
    }
    answers = {
        i: named[str(it.metadata["reply_to"])]
        for i, it in enumerate(items)
        if str(it.metadata.get("reply_to", "")) in named
    }
    if not answers:
        return items
    found = roots(answers, set(named.values()) - answers.keys())
    replies: dict[int, list[Reply]] = {}
    for i, root in found.items():
        replies.setdefault(root, []).append(as_reply(items[i].content))
    for root, thread in replies.items():
        if all("date" in r for r in thread):
            thread.sort(key=lambda r: r.get("date", ""))
        items[root].content = {**items[root].content, "replies": list(thread)}
    return [it for i, it in enumerate(items) if i not in found]


def change_item(change: Change, text: str, at: int) -> Item:
    content: dict[str, JSON] = {"text": text, "kind": change.kind}
    if change.author:
        content["author"] = change.author
    if change.date:
        content["date"] = change.date
    summary = summaries.annotation(text, change.kind, change.author or None)
    return Item(Category.ANNOTATION, summary, content, {}, at)
