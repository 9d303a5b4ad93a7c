"""Graphic frames (tables, charts, SmartArt) and pictures (images, audio, video) of a slide.

A part that a shape points to but the package lacks, or that is not well-formed, costs that
one element (the page says `broken_parts`), never the slide.
"""

from __future__ import annotations

import posixpath

from lxml import etree

from dpe_server.extractors.kit.a1 import range_ref
from dpe_server.extractors.kit.diagrams import diagram_content
from dpe_server.extractors.kit.media import MEDIA_MIME
from dpe_server.extractors.kit.row_blocks import split_rows
from dpe_server.extractors.ooxml.drawingml import (
    emu_to_px,
    image_mime,
    image_size,
    parse_chart,
    smartart_drawing_texts,
    smartart_nodes,
)
from dpe_server.extractors.ooxml.picture_text import recognise_picture
from dpe_server.extractors.pptx.context import SlideContext, emit_links, shape_meta
from dpe_server.extractors.pptx.text import A, P, R, cell_links, plain_text
from dpe_server.model import summaries
from dpe_server.model.content import ImageContent, MediaContent, TableContent
from dpe_server.model.errors import CorruptError, TooLargeError
from dpe_server.model.tree import JSON, Category

URI_TABLE = "http://schemas.openxmlformats.org/drawingml/2006/table"
URI_CHART = "http://schemas.openxmlformats.org/drawingml/2006/chart"
URI_CHARTEX = "http://schemas.microsoft.com/office/drawing/2014/chartex"
URI_DIAGRAM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
URI_OLE = "http://schemas.openxmlformats.org/presentationml/2006/ole"
NS_DSP = "http://schemas.microsoft.com/office/drawing/2008/diagram"
NS_P14 = "http://schemas.microsoft.com/office/powerpoint/2010/main"

MAX_IMAGE_READ = 32 * 1024 * 1024
"""Pictures larger than this are not inflated for their pixel size (the extent is used)."""

SIZED_FORMATS = frozenset(
    {"png", "jpg", "jpeg", "jpe", "jfif", "gif", "bmp", "dib", "webp", "tif", "tiff"}
)


def _int(value: str | None, default: int = 1) -> int:
    try:
        return max(int(value), 1) if value is not None else default
    except ValueError:
        return default


def _xml_part(ctx: SlideContext, rid: str | None) -> tuple[str, etree._Element] | None:
    rel = ctx.rels.get(rid or "")
    if rel is None or rel.external:
        return None
    try:
        return rel.target, ctx.pkg.xml(rel.target)
    except (KeyError, CorruptError):
        ctx.broken_parts += 1
        return None


def read_table(tbl: etree._Element) -> tuple[list[list[str]], list[str], int]:
    """Rows of display strings (covered cells of a merge are ""), merged ranges, columns."""
    grid = tbl.find(f"{A}tblGrid")
    columns = 0 if grid is None else len(grid.findall(f"{A}gridCol"))
    rows: list[list[str]] = []
    merged: list[str] = []
    for r, tr in enumerate(tbl.iterfind(f"{A}tr")):
        row: list[str] = []
        for c, tc in enumerate(tr.iterfind(f"{A}tc")):
            covered = tc.get("hMerge") in ("1", "true") or tc.get("vMerge") in ("1", "true")
            row.append("" if covered else plain_text(tc.find(f"{A}txBody")))
            span, down = _int(tc.get("gridSpan")), _int(tc.get("rowSpan"))
            if not covered and (span > 1 or down > 1):
                merged.append(range_ref(r, c, r + down - 1, c + span - 1))
        rows.append(row)
        columns = max(columns, len(row))
    return rows, merged, columns


def table(frame: etree._Element, tbl: etree._Element, ctx: SlideContext) -> None:
    rows, merged, columns = read_table(tbl)
    if not rows:
        return
    headers, body = rows[0], rows[1:]
    for block in split_rows(body, 1):
        chunk = list(block.rows)
        meta = shape_meta(frame)
        if merged:
            meta["merged_cells"] = list(merged)
        block.place(meta)
        content: TableContent = {
            "headers": headers,
            "rows": chunk,
            "total_rows": len(chunk),
            "total_columns": columns,
        }
        chars = sum(len(cell) for row in chunk for cell in row)
        summary = summaries.table(headers, len(chunk), columns)
        ctx.sink.add(Category.TABLE, summary, content, meta, chars)
    emit_links(cell_links(tbl), frame, ctx)


def chart(frame: etree._Element, rid: str | None, ctx: SlideContext) -> None:
    found = _xml_part(ctx, rid)
    if found is None:
        return
    part, root = found
    content = parse_chart(root)
    summary = summaries.chart(content["chart_type"], content["title"], content["series"])
    ctx.sink.add(Category.CHART, summary, content, shape_meta(frame, part=part))


def _drawing_texts(data_root: etree._Element, ctx: SlideContext) -> list[str]:
    """The texts of the diagram's drawing part (PowerPoint's rendering of it), named by the
    data model's `dsp:dataModelExt relId` among the slide's relationships."""
    ext = next(data_root.iter(f"{{{NS_DSP}}}dataModelExt"), None)
    found = None if ext is None else _xml_part(ctx, ext.get("relId"))
    return [] if found is None else smartart_drawing_texts(found[1])


def diagram(frame: etree._Element, rel_ids: etree._Element, ctx: SlideContext) -> None:
    found = _xml_part(ctx, rel_ids.get(f"{R}dm"))
    if found is None:
        return
    part, root = found
    nodes = smartart_nodes(root)
    if not nodes:
        nodes = _drawing_texts(root, ctx)
    content = diagram_content(nodes)
    ctx.sink.add(
        Category.DIAGRAM,
        summaries.diagram("smartart", nodes),
        content,
        shape_meta(frame, part=part),
        sum(map(len, nodes)),
    )


def graphic_frame(frame: etree._Element, ctx: SlideContext) -> None:
    data = frame.find(f"{A}graphic/{A}graphicData")
    if data is None:
        return
    uri = data.get("uri", "")
    if uri == URI_TABLE:
        tbl = data.find(f"{A}tbl")
        if tbl is not None:
            table(frame, tbl, ctx)
    elif uri in (URI_CHART, URI_CHARTEX):
        ref = next((c for c in data if isinstance(c.tag, str)), None)
        if ref is not None:
            chart(frame, ref.get(f"{R}id"), ctx)
    elif uri == URI_OLE:
        ole_object(frame, data, ctx)
    elif uri == URI_DIAGRAM:
        rel_ids = data.find(f"{{{URI_DIAGRAM}}}relIds")
        if rel_ids is not None:
            diagram(frame, rel_ids, ctx)


def ole_object(frame: etree._Element, data: etree._Element, ctx: SlideContext) -> None:
    """An embedded (OLE) object: the picture it shows, described by what it embeds."""
    obj = next(data.iter(f"{P}oleObj"), None)
    if obj is None:
        return
    prog_id, name = obj.get("progId", ""), obj.get("name", "")
    c = frame.find(f"{P}nvGraphicFramePr/{P}cNvPr")
    alt = "" if c is None else (c.get("descr") or c.get("title") or "").strip()
    what = " ".join(x for x in (name, f"({prog_id})" if prog_id else "") if x)
    description = alt or f"Embedded object {what}".strip()
    rel = ctx.rels.get(obj.get(f"{R}id", ""))
    embedded = None if rel is None else rel.target
    preview = next(data.iter(f"{P}pic"), None)
    if preview is None:  # no preview picture of its own (older files draw it in VML)
        preview = etree.Element(f"{P}pic")
    image(preview, ctx, frame, description, ole_prog_id=prog_id or None, ole_part=embedded)


# --- pictures and media --------------------------------------------------------------------


def _extent(pic: etree._Element) -> tuple[int | None, int | None]:
    """The displayed size in px: a picture's `p:spPr` extent, or a frame's `p:xfrm`."""
    ext = pic.find(f"{P}spPr/{A}xfrm/{A}ext")
    if ext is None:
        ext = pic.find(f"{P}xfrm/{A}ext")
    if ext is None:
        return None, None
    return emu_to_px(ext.get("cx")), emu_to_px(ext.get("cy"))


def _alt(pic: etree._Element) -> tuple[str, str]:
    c = pic.find(f"{P}nvPicPr/{P}cNvPr")
    if c is None:
        return "", ""
    return (c.get("descr") or c.get("title") or "").strip(), c.get("name", "")


def _pixel_size(ctx: SlideContext, part: str) -> tuple[str, tuple[int, int]] | None:
    """(mime, pixel size) from the picture's header, for raster formats not too large to read;
    a picture that trips an inflation cap keeps its extent rather than costing the slide."""
    ext = part.rsplit(".", 1)[-1].lower()
    if ext not in SIZED_FORMATS or ctx.pkg.size(part) > MAX_IMAGE_READ:
        return None
    try:
        data = ctx.pkg.head(part)
    except TooLargeError:
        return None
    size = image_size(data)
    return None if size is None else (image_mime(part, data[:64]), size)


def image(
    pic: etree._Element,
    ctx: SlideContext,
    shape: etree._Element | None = None,
    description: str | None = None,
    **extra: JSON,
) -> None:
    """A picture (or the preview picture of an embedded object, `shape` being its frame)."""
    blip = pic.find(f"{P}blipFill/{A}blip")
    rid = None if blip is None else (blip.get(f"{R}embed") or blip.get(f"{R}link"))
    rel = ctx.rels.get(rid or "")
    if description is None:
        description = _alt(pic)[0]
    width, height = _extent(pic)
    if width is None and shape is not None:
        width, height = _extent(shape)
    meta = shape_meta(pic if shape is None else shape, **extra)
    mime = "application/octet-stream"
    if rel is not None and rel.external:
        mime = image_mime(rel.target)
        meta["url"] = rel.target
    elif rel is not None and ctx.pkg.has(rel.target):
        meta["part"] = rel.target
        mime = image_mime(rel.target)
        size = _pixel_size(ctx, rel.target)
        if size is not None:
            mime, (pw, ph) = size
            meta["display_size"] = [width, height]
            width, height = pw, ph
    elif shape is None or rid:
        meta["broken"] = True
        ctx.broken_parts += 1
    content: ImageContent = {"description": description, "mime_type": mime}
    if width and height:
        content["width"], content["height"] = width, height
    if "part" in meta:
        recognise_picture(ctx.pkg, rel.target if rel is not None else "", content, meta)
    summary = summaries.image(description, mime, width, height)
    ctx.sink.add(Category.IMAGE, summary, content, meta, len(description))


def _media_ref(pic: etree._Element) -> tuple[str, str | None, str | None]:
    """(audio|video, linked rId, embedded rId) of a picture that plays media."""
    nvpr = pic.find(f"{P}nvPicPr/{P}nvPr")
    if nvpr is None:
        return "", None, None
    kind, link = "", None
    for tag, what in (("videoFile", "video"), ("quickTimeFile", "video"), ("audioFile", "audio")):
        el = nvpr.find(f"{A}{tag}")
        if el is not None:
            kind, link = what, el.get(f"{R}link")
            break
    media = nvpr.find(f"{P}extLst/{P}ext/{{{NS_P14}}}media")
    embed = None if media is None else media.get(f"{R}embed")
    wav = nvpr.find(f"{A}wavAudioFile")
    if wav is not None and not kind:
        kind, embed = "audio", wav.get(f"{R}embed")
    if media is not None and not kind:
        kind = "video"
    return kind, link, embed


def media(
    pic: etree._Element, kind: str, link: str | None, embed: str | None, ctx: SlideContext
) -> None:
    rel = ctx.rels.get(embed or "") or ctx.rels.get(link or "")
    target = rel.target if rel is not None else ""
    description, name = _alt(pic)
    ext = target.rsplit(".", 1)[-1].lower() if "." in target else ""
    mime = MEDIA_MIME.get(ext, f"{kind}/unknown")
    if mime.startswith("audio/") and kind == "video":
        kind = "audio"
    content: MediaContent = {
        "name": name or posixpath.basename(target),
        "mime_type": mime,
        "embedded": rel is not None and not rel.external,
    }
    if description:
        content["description"] = description
    meta = shape_meta(pic)
    if rel is not None and rel.external:
        content["url"] = target
    elif target:
        meta["part"] = target
    category = Category.AUDIO if kind == "audio" else Category.VIDEO
    ctx.sink.add(category, summaries.media(content["name"], mime), content, meta)


def picture(pic: etree._Element, ctx: SlideContext) -> None:
    """A `p:pic`: audio or video when it plays media, else an image."""
    kind, link, embed = _media_ref(pic)
    if kind:
        media(pic, kind, link, embed, ctx)
    else:
        image(pic, ctx)
