"""What sits beside a slide's shapes: ActiveX controls, speaker notes and comments.

- Controls (`p:cSld/p:controls/p:control`, possibly inside `mc:AlternateContent`) → widget,
  its kind from the ActiveX part's class id, its caption or value as text.
- The notes slide's body placeholder → annotation, kind `speaker_notes`.
- Legacy comments (`ppt/comments/commentN.xml`, authors in `ppt/commentAuthors.xml`) and
  modern threaded comments (`ppt/comments/modernComment_*.xml`, authors in `ppt/authors.xml`)
  → annotation, kind `comment`, with its author and date; the replies of a thread are nested
  under it as `replies: [{text, author?, date?}]`; a resolved modern thread says `resolved`.
"""

from __future__ import annotations

from collections.abc import Mapping

from lxml import etree

from dpe_server.extractors.pptx.context import SlideContext, placeholder
from dpe_server.extractors.pptx.text import MC, P, R, plain_text
from dpe_server.model import summaries
from dpe_server.model.content import AnnotationContent, Reply, WidgetContent
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import JSON, Category

NS_AX = "http://schemas.microsoft.com/office/2006/activeX"
AX = f"{{{NS_AX}}}"
NS_P188 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
P188 = f"{{{NS_P188}}}"
NS_P15 = "http://schemas.microsoft.com/office/powerpoint/2012/main"

RT_NOTES = "notesSlide"
RT_COMMENTS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments"
RT_MODERN_COMMENTS = "http://schemas.microsoft.com/office/2018/10/relationships/comments"

ACTIVEX_KINDS = {
    "{D7053240-CE69-11CD-A777-00DD01143C57}": "command_button",
    "{8BD21D10-EC42-11CE-9E0D-00AA006002F3}": "text_box",
    "{8BD21D20-EC42-11CE-9E0D-00AA006002F3}": "list_box",
    "{8BD21D30-EC42-11CE-9E0D-00AA006002F3}": "combo_box",
    "{8BD21D40-EC42-11CE-9E0D-00AA006002F3}": "check_box",
    "{8BD21D50-EC42-11CE-9E0D-00AA006002F3}": "option_button",
    "{8BD21D60-EC42-11CE-9E0D-00AA006002F3}": "toggle_button",
    "{978C9E23-D4B0-11CE-BF2D-00AA003F40D0}": "label",
    "{DFD181E0-5E2F-11CE-A449-00AA004A803D}": "scroll_bar",
    "{79176FB0-B7F2-11CE-97EF-00AA006D2776}": "spin_button",
    "{4C599241-6926-101B-9992-00000B65C6F9}": "image",
}


def _part(ctx: SlideContext, rid: str | None) -> etree._Element | None:
    rel = ctx.rels.get(rid or "")
    if rel is None or rel.external or not ctx.pkg.has(rel.target):
        return None
    try:
        return ctx.pkg.xml(rel.target)
    except CorruptError:
        ctx.broken_parts += 1
        return None


def _rel_part(ctx: SlideContext, type_suffix: str) -> str | None:
    for rel in ctx.rels.values():
        if not rel.external and type_suffix in (rel.type, rel.type_name):
            return rel.target
    return None


# --- controls ----------------------------------------------------------------------------


def _control_elements(controls: etree._Element) -> list[etree._Element]:
    out = []
    for child in controls:
        if child.tag == P + "control":
            out.append(child)
        elif child.tag == MC + "AlternateContent":
            for branch in (f"{MC}Choice", f"{MC}Fallback"):
                found = child.find(f"{branch}/{P}control")
                if found is not None:
                    out.append(found)
                    break
    return out


def controls(slide: etree._Element, ctx: SlideContext) -> None:
    box = slide.find(f"{P}cSld/{P}controls")
    if box is None:
        return
    for control in _control_elements(box):
        name = control.get("name", "")
        kind, text = "activex", None
        ocx = _part(ctx, control.get(f"{R}id"))
        if ocx is not None:
            kind = ACTIVEX_KINDS.get((ocx.get(f"{AX}classid") or "").upper(), "activex")
            props = {
                p.get(f"{AX}name", ""): p.get(f"{AX}value", "") for p in ocx.iter(f"{AX}ocxPr")
            }
            text = props.get("Caption") or props.get("Value") or props.get("Text") or None
        content: WidgetContent = {"kind": kind, "name": name}
        if text:
            content["text"] = text
        meta: dict[str, JSON] = {}
        if control.get("spid"):
            meta["shape_id"] = control.get("spid")
        ctx.sink.add(Category.WIDGET, summaries.widget(kind, name, text), content, meta)


# --- notes -------------------------------------------------------------------------------


def notes_text(root: etree._Element) -> str:
    """The text of a notes slide's body placeholder (not the slide image or number)."""
    tree = root.find(f"{P}cSld/{P}spTree")
    if tree is None:
        return ""
    parts = []
    for sp in tree.iter(f"{P}sp"):
        ph = placeholder(sp)
        if ph is not None and ph.get("type") == "body":
            text = plain_text(sp.find(f"{P}txBody"))
            if text:
                parts.append(text)
    return "\n".join(parts)


def notes(ctx: SlideContext) -> str:
    part = _rel_part(ctx, RT_NOTES)
    if part is None or not ctx.pkg.has(part):
        return ""
    try:
        text = notes_text(ctx.pkg.xml(part))
    except CorruptError:
        ctx.broken_parts += 1
        return ""
    if text:
        ctx.sink.add(
            Category.ANNOTATION,
            summaries.annotation(text, "speaker_notes"),
            AnnotationContent(text=text, kind="speaker_notes"),
            {"part": part},
            len(text),
        )
    return text


# --- comments ----------------------------------------------------------------------------


def _by(note: Reply, author: str | None, date: str | None) -> None:
    if author:
        note["author"] = author
    if date:
        note["date"] = date


def _reply(text: str, author: str | None, date: str | None) -> Reply:
    reply: Reply = {"text": text}
    _by(reply, author, date)
    return reply


def _comment(text: str, author: str | None, date: str | None) -> AnnotationContent:
    content: AnnotationContent = {"text": text, "kind": "comment"}
    _by(content, author, date)
    return content


def _add_comments(ctx: SlideContext, threads: list[AnnotationContent], part: str) -> None:
    """One annotation per thread, its replies nested under it in order."""
    for content in threads:
        author = content.get("author")
        ctx.sink.add(
            Category.ANNOTATION,
            summaries.annotation(content["text"], "comment", author),
            content,
            {"part": part},
            len(content["text"]),
        )


def legacy_comments(ctx: SlideContext, authors: Mapping[str, str]) -> None:
    part = _rel_part(ctx, RT_COMMENTS)
    root = None if part is None or not ctx.pkg.has(part) else ctx.pkg.xml(part)
    if part is None or root is None:
        return
    threads: dict[tuple[str, str], AnnotationContent] = {}
    roots: list[AnnotationContent] = []
    for cm in root.iter(f"{P}cm"):
        text = (cm.findtext(f"{P}text") or "").strip()
        if not text:
            continue
        author_id, idx = cm.get("authorId", ""), cm.get("idx", "")
        parent = cm.find(f".//{{{NS_P15}}}parentCm")
        thread = None
        if parent is not None:
            thread = threads.get((parent.get("authorId", ""), parent.get("idx", "")))
        if thread is not None:
            reply = _reply(text, authors.get(author_id), cm.get("dt"))
            thread.setdefault("replies", []).append(reply)
        else:
            thread = _comment(text, authors.get(author_id), cm.get("dt"))
            roots.append(thread)
        threads[(author_id, idx)] = thread
    _add_comments(ctx, roots, part)


def modern_comments(ctx: SlideContext, authors: Mapping[str, str]) -> None:
    part = _rel_part(ctx, RT_MODERN_COMMENTS)
    root = None if part is None or not ctx.pkg.has(part) else ctx.pkg.xml(part)
    if part is None or root is None:
        return
    threads: list[AnnotationContent] = []
    for cm in root.iterfind(f"{P188}cm"):
        text = plain_text(cm.find(f"{P188}txBody"))
        thread = _comment(text, authors.get(cm.get("authorId", "")), cm.get("created"))
        for reply in cm.iterfind(f"{P188}replyLst/{P188}reply"):
            body = plain_text(reply.find(f"{P188}txBody"))
            if body:
                who, date = authors.get(reply.get("authorId", "")), reply.get("created")
                thread.setdefault("replies", []).append(_reply(body, who, date))
        if cm.get("status") == "resolved":
            thread["resolved"] = True
        if text or "replies" in thread:
            threads.append(thread)
    _add_comments(ctx, threads, part)


def legacy_authors(root: etree._Element | None) -> dict[str, str]:
    if root is None:
        return {}
    return {a.get("id", ""): a.get("name", "") for a in root.iter(f"{P}cmAuthor")}


def modern_authors(root: etree._Element | None) -> dict[str, str]:
    if root is None:
        return {}
    return {a.get("id", ""): a.get("name", "") for a in root.iter(f"{P188}author")}
