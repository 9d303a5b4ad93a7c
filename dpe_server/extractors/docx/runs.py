"""Reading one paragraph: its visible text and the elements inside it.

Text is what Word shows: runs joined, `w:tab` as a tab, `w:br` as a new line, field results
(not their codes), inserted text kept and deleted text left out. What sits inside the
paragraph becomes `Item`s: hyperlinks (`w:hyperlink`, HYPERLINK fields), pictures, charts,
SmartArt, text boxes, equations (OMML), comments (with the text their range anchors),
footnote and endnote references, tracked insertions and deletions, content controls and
legacy form fields, ActiveX controls, page and column breaks.

Complex fields (`w:fldChar` begin/separate/end) may span paragraphs, so their state lives on
the reader, not on one paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from dpe_server.extractors.docx.drawing import drawing_items, object_items, pict_items
from dpe_server.extractors.docx.forms import legacy_field, sdt_field
from dpe_server.extractors.docx.items import PartCtx
from dpe_server.extractors.docx.styles import Styles, run_font
from dpe_server.extractors.docx.xml import MC, M, R, W
from dpe_server.extractors.kit.fonts import is_monospace
from dpe_server.extractors.kit.forms import checkbox_glyph, form_item
from dpe_server.extractors.kit.items import Item, Para
from dpe_server.extractors.ooxml.drawingml import omml_to_linear
from dpe_server.model import summaries
from dpe_server.model.content import (
    AnnotationContent,
    FormulaContent,
    LinkContent,
    SeparatorContent,
    SeparatorKind,
)
from dpe_server.model.tree import JSON, Category

_P, _R, _T, _TAB, _PTAB, _BR, _CR = (
    W + "p",
    W + "r",
    W + "t",
    W + "tab",
    W + "ptab",
    W + "br",
    W + "cr",
)
_DELTEXT, _FLDCHAR, _INSTR = W + "delText", W + "fldChar", W + "instrText"
_DRAWING, _PICT, _OBJECT = W + "drawing", W + "pict", W + "object"
_FNREF, _ENREF, _CMREF = W + "footnoteReference", W + "endnoteReference", W + "commentReference"
_HYPERLINK, _INS, _DEL = W + "hyperlink", W + "ins", W + "del"
_MOVETO, _MOVEFROM, _SDT = W + "moveTo", W + "moveFrom", W + "sdt"
_FLDSIMPLE, _CMSTART, _CMEND = W + "fldSimple", W + "commentRangeStart", W + "commentRangeEnd"
_NBH, _RPR, _RUBY = W + "noBreakHyphen", W + "rPr", W + "ruby"
_RSTYLE, _VAL = W + "rStyle", W + "val"
_PASS = frozenset(W + t for t in ("smartTag", "customXml", "dir", "bdo", "sdtContent"))
_SKIP = frozenset(
    W + t for t in ("pPr", "bookmarkStart", "bookmarkEnd", "proofErr", "permStart", "permEnd")
)
_RUN_PLAIN = frozenset(
    W + t for t in ("rPr", "lastRenderedPageBreak", "softHyphen", "annotationRef")
)
_OMATH, _OMATHPARA = M + "oMath", M + "oMathPara"
_ALT, _CHOICE = MC + "AlternateContent", MC + "Choice"
_QUOTED = re.compile(r'"([^"]*)"|(\S+)')
_ANCHOR_TAIL = 120
_SINK_MAX = 400
"""Pieces of text kept at most for one comment anchor or field result."""


@dataclass(slots=True)
class Notes:
    """Comments (replies nested, docx/comments.py), footnotes and endnotes by id; the ids
    of the comments that are replies, which give no element of their own."""

    comments: dict[str, AnnotationContent] = field(default_factory=dict)
    replies: set[str] = field(default_factory=set)
    footnotes: dict[str, str] = field(default_factory=dict)
    endnotes: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _State:
    parts: list[str] = field(default_factory=list)
    length: int = 0
    items: list[Item] = field(default_factory=list)
    has_text: bool = False
    deleting: int = 0
    deleted: list[str] = field(default_factory=list)

    def text_from(self, start: int) -> str:
        return "".join(self.parts)[start:]


@dataclass(slots=True)
class _Field:
    instr: list[str] = field(default_factory=list)
    result: list[str] = field(default_factory=list)
    ffdata: etree._Element | None = None
    in_result: bool = False


def _plain_text(p: etree._Element) -> str | None:
    """The text of a paragraph made only of plain runs (most paragraphs, nearly every table
    cell), read in one tight loop; None when anything else is inside (the full walk then)."""
    parts: list[str] = []
    for child in p:
        tag = child.tag
        if tag == _R:
            for rc in child:
                rtag = rc.tag
                if rtag == _T:
                    if rc.text:
                        parts.append(rc.text)
                elif rtag not in _RUN_PLAIN:
                    return None
        elif tag not in _SKIP:
            return None
    return "".join(parts)


def _instr_words(instr: str) -> list[str]:
    return [m[1] if m[1] is not None else m[2] for m in _QUOTED.finditer(instr)]


class InlineReader:
    """Reads paragraphs of one part (body, header, notes) in document order."""

    def __init__(self, ctx: PartCtx, styles: Styles, notes: Notes) -> None:
        self.ctx = ctx
        self.styles = styles
        self.notes = notes
        self._fields: list[_Field] = []
        self._sinks: list[list[str]] = []
        self._open_comments: dict[str, list[str]] = {}
        self._anchors: dict[str, str] = {}

    # --- entry points ------------------------------------------------------------------

    def paragraph(self, p: etree._Element) -> Para:
        if not self._sinks and not self._fields:
            plain = _plain_text(p)
            if plain is not None:
                return Para(plain, [], bool(plain) and not plain.isspace())
        st = _State()
        self._walk(p, st)
        # A field still reading its instruction when the paragraph ends is malformed (results
        # may span paragraphs, instructions do not): drop it rather than hide all that follows.
        while self._fields and not self._fields[-1].in_result:
            self._fields.pop()
        return Para("".join(st.parts), st.items, st.has_text)

    def is_mono(self, p: etree._Element) -> bool:
        """Every run with text is in a monospace font or a code character style."""
        seen = False
        for r in p.iter(_R):
            if r.find(_T) is None:
                continue
            if not self._is_mono(r):
                return False
            seen = True
        return seen

    def text_box(self, content: etree._Element) -> tuple[str, list[Item]]:
        """The text of a block container (text box, cell) and the items inside it."""
        lines: list[str] = []
        items: list[Item] = []
        for block in _blocks(content):
            if block.tag == W + "p":
                para = self.paragraph(block)
                lines.append(para.text)
                items.extend(para.items)
            else:
                for row in block.iter(W + "tr"):
                    cells = []
                    for cell in row.iter(W + "tc"):
                        text, sub = self.text_box(cell)
                        cells.append(text.replace("\n", " "))
                        items.extend(sub)
                    lines.append("\t".join(cells))
        return "\n".join(lines), items

    # --- text ----------------------------------------------------------------------------

    def _add(self, st: _State, s: str) -> None:
        st.parts.append(s)
        st.length += len(s)
        if self._sinks:
            for sink in self._sinks:
                if len(sink) < _SINK_MAX:
                    sink.append(s)

    def _walk(self, el: etree._Element, st: _State) -> None:
        for child in el:
            tag = child.tag
            if tag == _R:
                self._run(child, st)
            elif tag in _SKIP:
                continue
            elif tag == _HYPERLINK:
                self._hyperlink(child, st)
            elif tag in (_INS, _MOVETO):
                self._insertion(child, st)
            elif tag in (_DEL, _MOVEFROM):
                self._deletion(child, st)
            elif tag == _SDT:
                self._inline_sdt(child, st)
            elif tag in _PASS:
                self._walk(child, st)
            elif tag == _FLDSIMPLE:
                start = st.length
                self._walk(child, st)
                self._field_done(child.get(W + "instr", ""), None, st.text_from(start), st)
            elif tag == _OMATH:
                expr = omml_to_linear(child)
                self._add(st, expr)
                st.items.append(_formula(expr, st.length, display=False))
            elif tag == _OMATHPARA:
                for math in child.iter(_OMATH):
                    st.items.append(_formula(omml_to_linear(math), st.length, display=True))
            elif tag == _CMSTART:
                buf: list[str] = []
                self._open_comments[child.get(W + "id", "")] = buf
                self._sinks.append(buf)
            elif tag == _CMEND:
                self._close_comment(child.get(W + "id", ""))
            elif tag == _ALT:
                choice = child.find(_CHOICE)
                if choice is not None:
                    self._walk(choice, st)

    def _drop_sink(self, buf: list[str]) -> None:
        """Stop feeding `buf` (found by identity: two empty buffers are equal lists)."""
        for i, sink in enumerate(self._sinks):
            if sink is buf:
                del self._sinks[i]
                return

    def _close_comment(self, cid: str) -> None:
        buf = self._open_comments.pop(cid, None)
        if buf is not None:
            self._anchors[cid] = "".join(buf)
            self._drop_sink(buf)

    def _run(self, r: etree._Element, st: _State) -> None:
        for child in r:
            tag = child.tag
            if tag == _T:
                s = child.text
                if not s:
                    continue
                if self._fields and not self._fields[-1].in_result:
                    continue
                if st.deleting:
                    st.deleted.append(s)
                    continue
                self._add(st, s)
                if not st.has_text and not s.isspace():
                    st.has_text = True
            elif tag == _RPR:
                continue
            elif tag == _DELTEXT:
                if child.text:
                    st.deleted.append(child.text)
            elif tag in (_TAB, _PTAB):
                self._add(st, "\t")
            elif tag == _BR:
                kind = child.get(W + "type")
                if kind in ("page", "column"):
                    sep: SeparatorKind = "page_break" if kind == "page" else "column_break"
                    if st.length:
                        self._add(st, "\n")
                    st.items.append(
                        Item(
                            Category.SEPARATOR,
                            summaries.separator(sep),
                            SeparatorContent(kind=sep),
                            {},
                            st.length,
                        )
                    )
                else:
                    self._add(st, "\n")
            elif tag == _CR:
                self._add(st, "\n")
            elif tag == _NBH:
                self._add(st, "-")
            elif tag == _FLDCHAR:
                self._fld_char(child, st)
            elif tag == _INSTR:
                if self._fields and child.text:
                    self._fields[-1].instr.append(child.text)
            elif tag == _DRAWING:
                st.items.extend(drawing_items(child, self.ctx, self.text_box, st.length))
            elif tag == _PICT:
                st.items.extend(pict_items(child, self.ctx, self.text_box, st.length))
            elif tag == _OBJECT:
                st.items.extend(object_items(child, self.ctx, self.text_box, st.length))
            elif tag in (_FNREF, _ENREF):
                self._note_ref(child, st, "footnote" if tag == _FNREF else "endnote")
            elif tag == _CMREF:
                self._comment_ref(child.get(W + "id", ""), st)
            elif tag == _ALT:
                choice = child.find(_CHOICE)
                if choice is not None:
                    self._run(choice, st)
            elif tag == _RUBY:
                base = child.find(W + "rubyBase")
                if base is not None:
                    self._walk(base, st)

    def _is_mono(self, r: etree._Element) -> bool:
        rpr = r.find(_RPR)
        if rpr is None:
            return False
        if is_monospace(run_font(rpr)):
            return True
        style = rpr.find(_RSTYLE)
        return style is not None and self.styles.char_is_code(style.get(_VAL))

    # --- containers ------------------------------------------------------------------------

    def _hyperlink(self, link: etree._Element, st: _State) -> None:
        start = st.length
        self._walk(link, st)
        text = st.text_from(start)
        rel = self.ctx.target(link.get(R + "id"))
        anchor = link.get(W + "anchor")
        meta: dict[str, JSON] = {}
        if rel is not None:
            url = rel.target + (f"#{anchor}" if anchor else "")
            meta["external"] = rel.external
        elif anchor:
            url = f"#{anchor}"
            meta["bookmark"] = anchor
        else:
            return
        self._link(text, url, meta, st)

    def _link(self, text: str, url: str, meta: dict[str, JSON], st: _State) -> None:
        content: LinkContent = {"text": text, "url": url}
        st.items.append(Item(Category.LINK, summaries.link(text, url), content, meta, st.length))

    def _insertion(self, ins: etree._Element, st: _State) -> None:
        start = st.length
        self._walk(ins, st)
        text = st.text_from(start)
        if text:
            st.items.append(_change(ins, "insertion", text, st.length))

    def _deletion(self, deletion: etree._Element, st: _State) -> None:
        mark = len(st.deleted)
        st.deleting += 1
        self._walk(deletion, st)
        st.deleting -= 1
        text = "".join(st.deleted[mark:])
        if text:
            st.items.append(_change(deletion, "deletion", text, st.length))

    def _inline_sdt(self, sdt: etree._Element, st: _State) -> None:
        start = st.length
        content = sdt.find(W + "sdtContent")
        if content is not None:
            self._walk(content, st)
        fld = sdt_field(sdt.find(W + "sdtPr"), st.text_from(start))
        if fld is not None:
            st.items.append(form_item([fld], st.length, "content_control"))

    # --- fields, notes, comments -------------------------------------------------------------

    def _fld_char(self, char: etree._Element, st: _State) -> None:
        kind = char.get(W + "fldCharType")
        if kind == "begin":
            self._fields.append(_Field(ffdata=char.find(W + "ffData")))
        elif kind == "separate" and self._fields:
            top = self._fields[-1]
            if not top.in_result:
                top.in_result = True
                self._sinks.append(top.result)
        elif kind == "end" and self._fields:
            top = self._fields.pop()
            if top.in_result:
                self._drop_sink(top.result)
            self._field_done("".join(top.instr), top.ffdata, "".join(top.result), st)

    def _field_done(
        self, instr: str, ffdata: etree._Element | None, result: str, st: _State
    ) -> None:
        words = _instr_words(instr)
        if not words:
            return
        code = words[0].upper()
        if code == "HYPERLINK":
            url, anchor = "", ""
            rest = iter(words[1:])
            for word in rest:
                if word == "\\l":
                    anchor = next(rest, "")
                elif not word.startswith("\\") and not url:
                    url = word
            target = url + (f"#{anchor}" if anchor else "")
            if target:
                self._link(result, target, {"field": "HYPERLINK"}, st)
        elif code in ("FORMTEXT", "FORMCHECKBOX", "FORMDROPDOWN"):
            fld = legacy_field(code, ffdata, result)
            if code == "FORMCHECKBOX":
                self._add(st, checkbox_glyph(fld))
            elif code == "FORMDROPDOWN" and not result and fld["value"]:
                self._add(st, str(fld["value"]))
            st.items.append(form_item([fld], st.length, "legacy_form_field"))

    def _note_ref(self, ref: etree._Element, st: _State, kind: str) -> None:
        nid = ref.get(W + "id", "")
        notes = self.notes.footnotes if kind == "footnote" else self.notes.endnotes
        text = notes.get(nid, "")
        anchor = "".join(st.parts)[-_ANCHOR_TAIL:].strip()
        content: AnnotationContent = {"text": text, "kind": kind}
        if anchor:
            content["anchor"] = anchor
        meta: dict[str, JSON] = {"note_id": nid}
        item = Item(Category.ANNOTATION, summaries.annotation(text, kind), content, meta, st.length)
        st.items.append(item)

    def _comment_ref(self, cid: str, st: _State) -> None:
        if cid in self._open_comments:
            self._close_comment(cid)
        anchor = self._anchors.pop(cid, "")
        if cid in self.notes.replies:
            return
        comment = self.notes.comments.get(cid) or {"text": "", "kind": "comment"}
        content: AnnotationContent = {"text": comment["text"], "kind": "comment"}
        if author := comment.get("author"):
            content["author"] = author
        if anchor:
            content["anchor"] = anchor
        if "date" in comment:
            content["date"] = comment["date"]
        if "replies" in comment:
            content["replies"] = comment["replies"]
        if comment.get("resolved"):
            content["resolved"] = True
        meta: dict[str, JSON] = {"comment_id": cid}
        summary = summaries.annotation(comment["text"], "comment", author)
        st.items.append(Item(Category.ANNOTATION, summary, content, meta, st.length))


def _formula(expr: str, at: int, display: bool) -> Item:
    return Item(
        Category.FORMULA,
        summaries.formula(expr),
        FormulaContent(expression=expr),
        {"display": display, "source": "omml"},
        at,
    )


def _change(el: etree._Element, kind: str, text: str, at: int) -> Item:
    author = el.get(W + "author") or ""
    content: AnnotationContent = {"text": text, "kind": kind}
    if author:
        content["author"] = author
    if date := el.get(W + "date"):
        content["date"] = date
    meta: dict[str, JSON] = {}
    summary = summaries.annotation(text, kind, author or None)
    return Item(Category.ANNOTATION, summary, content, meta, at)


def _blocks(container: etree._Element) -> list[etree._Element]:
    """The paragraphs and tables of a block container, content controls unwrapped."""
    out: list[etree._Element] = []
    for child in container:
        tag = child.tag
        if tag in (W + "p", W + "tbl"):
            out.append(child)
        elif tag == W + "sdt":
            content = child.find(W + "sdtContent")
            if content is not None:
                out.extend(_blocks(content))
        elif tag in (W + "customXml", W + "ins", W + "moveTo"):
            out.extend(_blocks(child))
    return out
