"""Pictures, charts, SmartArt, text boxes, embedded objects and ActiveX controls in a docx.

Three containers hold them inside a run: `w:drawing` (DrawingML, inline `wp:inline` or
floating `wp:anchor`), `w:pict` (legacy VML) and `w:object` (OLE objects and ActiveX
controls, with a VML preview). Each becomes one or more `Item`s; a text box's paragraphs are
read through the callback the paragraph reader passes in.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator

from lxml import etree

from dpe_server.extractors.docx.items import PartCtx
from dpe_server.extractors.docx.xml import MC, PIC, VO, WP, WP15, A, R, V, W, load
from dpe_server.extractors.kit.diagrams import diagram_content
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.package import NS
from dpe_server.extractors.ooxml.drawingml import emu_to_px, image_mime, parse_chart, smartart_nodes
from dpe_server.extractors.ooxml.picture_text import recognise_picture
from dpe_server.model import summaries
from dpe_server.model.content import (
    ChartContent,
    EmbeddedObject,
    ImageContent,
    MediaContent,
    SeparatorContent,
    TextContent,
    WidgetContent,
)
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import JSON, Category

TextBoxReader = Callable[[etree._Element], tuple[str, list[Item]]]

_C = f"{{{NS['c']}}}"
_DGM = f"{{{NS['dgm']}}}"
_CX = "{http://schemas.microsoft.com/office/drawing/2014/chartex}"
_TXBX = W + "txbxContent"
_ALT, _CHOICE = MC + "AlternateContent", MC + "Choice"
_AUDIO_EXT = {"mp3", "wav", "wma", "m4a", "aac", "ogg", "oga", "flac", "mid", "midi", "aif"}
_VIDEO_EXT = {"mp4", "m4v", "avi", "wmv", "mov", "mpg", "mpeg", "mkv", "webm", "asf", "swf"}
_MEDIA_MIME = {
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "wma": "audio/x-ms-wma",
    "m4a": "audio/mp4",
    "aac": "audio/aac",
    "ogg": "audio/ogg",
    "flac": "audio/flac",
    "mid": "audio/midi",
    "mp4": "video/mp4",
    "m4v": "video/mp4",
    "avi": "video/x-msvideo",
    "wmv": "video/x-ms-wmv",
    "mov": "video/quicktime",
    "mpg": "video/mpeg",
    "mpeg": "video/mpeg",
    "webm": "video/webm",
    "swf": "application/x-shockwave-flash",
}
_MEDIA_PROGID = re.compile(r"mediaplayer|wmplayer|quicktime|realplayer|shockwave|flash", re.I)
_PT = re.compile(r"(width|height)\s*:\s*([0-9.]+)\s*(pt|px|in|cm|mm)?", re.I)
_PX_PER = {"pt": 4 / 3, "px": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "": 4 / 3}
_SRC = re.compile(r"""src\s*=\s*["']([^"']+)["']""", re.I)


def _image(
    ctx: PartCtx,
    rid: str | None,
    description: str,
    size: tuple[int | None, int | None],
    meta: dict[str, JSON],
    *,
    at: int,
) -> Item:
    rel = ctx.target(rid)
    part = "" if rel is None else rel.target
    mime = image_mime(part) if part else "application/octet-stream"
    width, height = size
    content: ImageContent = {"description": description, "mime_type": mime}
    if width:
        content["width"] = width
    if height:
        content["height"] = height
    if rel is not None:
        meta["external" if rel.external else "part"] = part
        if not rel.external and ctx.pkg.has(part):
            recognise_picture(ctx.pkg, part, content, meta)
    return Item(
        Category.IMAGE, summaries.image(description, mime, width, height), content, meta, at
    )


def _chart(ctx: PartCtx, rid: str | None, name: str, at: int) -> Item:
    rel = ctx.target(rid)
    meta: dict[str, JSON] = {"name": name}
    content: ChartContent = {"chart_type": "unknown", "title": "", "series": [], "data_summary": ""}
    if rel is not None and not rel.external and ctx.pkg.has(rel.target):
        meta["part"] = rel.target
        try:
            content = parse_chart(load(ctx.pkg, rel.target))
        except CorruptError as exc:
            meta["error"] = exc.message
    series = content.get("series") or []
    summary = summaries.chart(str(content["chart_type"]), str(content["title"]), series)
    return Item(Category.CHART, summary, content, meta, at)


def _diagram(ctx: PartCtx, rel_ids: etree._Element, name: str, at: int) -> Item:
    rel = ctx.target(rel_ids.get(R + "dm"))
    nodes: list[str] = []
    meta: dict[str, JSON] = {"name": name}
    if rel is not None and not rel.external and ctx.pkg.has(rel.target):
        meta["part"] = rel.target
        try:
            nodes = smartart_nodes(load(ctx.pkg, rel.target))
        except CorruptError as exc:
            meta["error"] = exc.message
    content = diagram_content(nodes)
    summary = summaries.diagram(str(content.get("kind", "smartart")), nodes)
    return Item(Category.DIAGRAM, summary, content, meta, at)


def _web_video(blip: etree._Element, name: str, description: str, at: int) -> Item | None:
    video = blip.find(f"{A}extLst/{A}ext/{WP15}webVideoPr")
    if video is None:
        return None
    html = video.get("embeddedHtml", "")
    m = _SRC.search(html)
    content: MediaContent = {"name": name, "mime_type": "text/html"}
    if description:
        content["description"] = description
    if m:
        content["url"] = m[1]
    summary = summaries.media(name or description, "online video")
    return Item(Category.VIDEO, summary, content, {"source": "online_video"}, at)


def _targets(el: etree._Element) -> Iterator[etree._Element]:
    """Pictures, charts, diagrams and text boxes under `el`, not inside a text box."""
    for child in el:
        tag = child.tag
        if tag in (PIC + "pic", _C + "chart", _CX + "chart", _DGM + "relIds", _TXBX):
            yield child
        elif tag == _ALT:
            choice = child.find(_CHOICE)
            if choice is not None:
                yield from _targets(choice)
        elif isinstance(tag, str):
            yield from _targets(child)


def drawing_items(
    drawing: etree._Element, ctx: PartCtx, text_box: TextBoxReader, at: int
) -> list[Item]:
    """The items of a `w:drawing` (one `wp:inline` or `wp:anchor`)."""
    out: list[Item] = []
    for frame in drawing:
        if frame.tag not in (WP + "inline", WP + "anchor"):
            continue
        doc_pr = frame.find(WP + "docPr")
        name = "" if doc_pr is None else doc_pr.get("name", "")
        description = "" if doc_pr is None else (doc_pr.get("descr") or doc_pr.get("title") or "")
        extent = frame.find(WP + "extent")
        size = (
            (emu_to_px(extent.get("cx")), emu_to_px(extent.get("cy")))
            if extent is not None
            else (None, None)
        )
        anchored = frame.tag == WP + "anchor"
        for target in _targets(frame):
            tag = target.tag
            if tag == PIC + "pic":
                blip = target.find(f"{PIC}blipFill/{A}blip")
                if blip is not None:
                    video = _web_video(blip, name, description, at)
                    if video is not None:
                        out.append(video)
                        continue
                rid = None if blip is None else (blip.get(R + "embed") or blip.get(R + "link"))
                meta: dict[str, JSON] = {"name": name, "anchored": anchored}
                out.append(_image(ctx, rid, description, size, meta, at=at))
            elif tag in (_C + "chart", _CX + "chart"):
                out.append(_chart(ctx, target.get(R + "id"), name, at))
            elif tag == _DGM + "relIds":
                out.append(_diagram(ctx, target, name, at))
            else:
                out.extend(_text_box(target, text_box, at))
    return out


def _text_box(content: etree._Element, text_box: TextBoxReader, at: int) -> list[Item]:
    text, items = text_box(content)
    text = "\n".join(line.rstrip() for line in text.splitlines()).strip()
    out: list[Item] = []
    if text.strip():
        out.append(
            Item(
                Category.TEXT,
                summaries.text(text),
                TextContent(text=text),
                {"source": "text_box"},
                at,
            )
        )
    for item in items:
        item.at = at
    out.extend(items)
    return out


def _vml_size(shape: etree._Element) -> tuple[int | None, int | None]:
    sizes: dict[str, int] = {}
    for m in _PT.finditer(shape.get("style", "")):
        sizes[m[1].lower()] = round(float(m[2]) * _PX_PER[(m[3] or "").lower()])
    return sizes.get("width"), sizes.get("height")


def pict_items(pict: etree._Element, ctx: PartCtx, text_box: TextBoxReader, at: int) -> list[Item]:
    """The items of a VML container (`w:pict`, or the preview inside `w:object`)."""
    out: list[Item] = []
    for shape in pict:
        tag = shape.tag
        if not isinstance(tag, str):
            continue
        if tag == W + "control":
            out.append(_control(ctx, shape, at))
            continue
        if not tag.startswith(V):
            continue
        if shape.get(VO + "hr") in ("t", "true"):
            out.append(
                Item(
                    Category.SEPARATOR,
                    summaries.separator("rule"),
                    SeparatorContent(kind="rule"),
                    {},
                    at,
                )
            )
            continue
        for sub in shape.iter(V + "imagedata", _TXBX):
            if sub.tag == _TXBX:
                out.extend(_text_box(sub, text_box, at))
            else:
                alt = sub.get(VO + "title") or shape.get("alt") or ""
                meta: dict[str, JSON] = {"name": shape.get("id", ""), "source": "vml"}
                out.append(_image(ctx, sub.get(R + "id"), alt, _vml_size(shape), meta, at=at))
    return out


def _control(ctx: PartCtx, control: etree._Element, at: int) -> Item:
    name = control.get(W + "name") or ""
    content: WidgetContent = {"kind": "activex", "name": name}
    rel = ctx.target(control.get(R + "id"))
    meta: dict[str, JSON] = {}
    if rel is not None and not rel.external and ctx.pkg.has(rel.target):
        meta["part"] = rel.target
        try:
            root = load(ctx.pkg, rel.target)
            class_id = root.get("{http://schemas.microsoft.com/office/2006/activeX}classid")
            if class_id:
                content["class_id"] = class_id
        except CorruptError as exc:
            meta["error"] = exc.message
    return Item(Category.WIDGET, summaries.widget("activex", name), content, meta, at)


def _media_kind(prog_id: str, part: str) -> Category | None:
    ext = posixpath.splitext(part)[1].lstrip(".").lower()
    if ext in _AUDIO_EXT:
        return Category.AUDIO
    if ext in _VIDEO_EXT or _MEDIA_PROGID.search(prog_id):
        return Category.VIDEO
    return None


def object_items(obj: etree._Element, ctx: PartCtx, text_box: TextBoxReader, at: int) -> list[Item]:
    """The items of a `w:object`: an ActiveX control, a media object, or an OLE object."""
    controls = [c for c in obj.iter(W + "control")]
    if controls:
        return [_control(ctx, c, at) for c in controls]
    ole = obj.find(VO + "OLEObject")
    if ole is None:
        return pict_items(obj, ctx, text_box, at)
    prog_id = ole.get("ProgID") or ""
    rel = ctx.target(ole.get(R + "id"))
    part = "" if rel is None else rel.target
    kind = _media_kind(prog_id, part)
    if kind is not None:
        name = posixpath.basename(part) or prog_id
        ext = posixpath.splitext(part)[1].lstrip(".").lower()
        mime = _MEDIA_MIME.get(ext, "application/octet-stream")
        content: MediaContent = {"name": name, "mime_type": mime, "description": prog_id}
        meta: dict[str, JSON] = {"part": part, "prog_id": prog_id}
        return [Item(kind, summaries.media(name, mime), content, meta, at)]
    previews = pict_items(obj, ctx, text_box, at)
    for drawing in obj.iterchildren(W + "drawing"):
        previews.extend(drawing_items(drawing, ctx, text_box, at))
    label = f"Embedded {prog_id} object" if prog_id else "Embedded object"
    if not any(item.category is Category.IMAGE for item in previews):
        stub: ImageContent = {"description": label, "mime_type": "application/octet-stream"}
        summary = summaries.image(label, "application/octet-stream", None, None)
        previews.append(Item(Category.IMAGE, summary, stub, {"source": "ole"}, at))
    for item in previews:
        if item.category is Category.IMAGE:
            desc = str(item.content.get("description") or "") or label
            embedded = EmbeddedObject(prog_id=prog_id, part=part)
            item.content = {**item.content, "description": desc, "embedded": embedded}
            item.summary = summaries.image(
                desc,
                str(item.content["mime_type"]),
                _int(item.content.get("width")),
                _int(item.content.get("height")),
            )
    return previews


def _int(value: JSON) -> int | None:
    return value if isinstance(value, int) else None
