"""What an OpenDocument `draw:frame` holds, as items:

- `draw:image` → image (`metadata.part` the picture in the package, or `external` its URL);
  description from `svg:desc`, else `svg:title`, else the frame's name; size from the
  frame's `svg:width`/`svg:height`;
- `draw:text-box` → a text item (`metadata.source: frame`) with the box's paragraphs, then
  what they hold;
- `draw:object` → a formula (a Math object: its StarMath annotation, else its MathML text)
  or a chart (a Chart object: its type, title and the series of its own data table);
- `draw:plugin` → audio or video by its mime type (LibreOffice writes its own
  `application/vnd.sun.star.media` and a preview `draw:image` beside it: the kind and mime
  type then come from the file's extension, and the preview is not an image of its own);
- a frame holding a table (`table:table`, presentations) → its text as a table is read by the
  caller; here it gives nothing.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from lxml import etree

from dpe_server.extractors.kit.charts import data_summary
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.media import MEDIA_MIME, image_mime
from dpe_server.extractors.kit.package import Package
from dpe_server.extractors.odf.package import (
    CHART,
    DRAW,
    MATH,
    OFFICE,
    SVG,
    TABLE,
    TEXT,
    XLINK,
    all_text,
    length_px,
    part_name,
)
from dpe_server.model import summaries
from dpe_server.model.direction import is_rtl
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import JSON, Category

if TYPE_CHECKING:
    from dpe_server.extractors.odf.inline import InlineReader

_CHART_TYPES = {
    "bar": "column",
    "line": "line",
    "area": "area",
    "circle": "pie",
    "ring": "doughnut",
    "scatter": "scatter",
    "bubble": "bubble",
    "radar": "radar",
    "filled-radar": "radar",
    "stock": "stock",
}


def description(frame: etree._Element) -> str:
    for tag in (SVG + "desc", SVG + "title"):
        text = (frame.findtext(tag) or "").strip()
        if text:
            return text
    return frame.get(DRAW + "name", "")


def frame_items(frame: etree._Element, reader: InlineReader, at: int) -> list[Item]:
    meta: dict[str, JSON] = {}
    if frame.get(DRAW + "name"):
        meta["name"] = frame.get(DRAW + "name")
    size = (length_px(frame.get(SVG + "width")), length_px(frame.get(SVG + "height")))
    obj = frame.find(DRAW + "object")
    if obj is not None:
        found = object_item(reader.pkg, obj, description(frame), dict(meta), at)
        if found is not None:
            return [found]
    plugin = frame.find(DRAW + "plugin")
    if plugin is not None:
        return [media_item(plugin, description(frame), meta, at)]
    image = frame.find(DRAW + "image")
    if image is not None:
        return [image_item(reader.pkg, image, description(frame), size, meta, at=at)]
    box = frame.find(DRAW + "text-box")
    if box is not None:
        return text_box_items(box, reader, meta, at)
    return []


def image_item(
    pkg: Package,
    image: etree._Element,
    desc: str,
    size: tuple[int | None, int | None],
    meta: dict[str, JSON],
    *,
    at: int,
) -> Item:
    href = image.get(XLINK + "href", "")
    part = part_name(href)
    mime = "application/octet-stream"
    if part is not None and pkg.has(part):
        mime = image_mime(part, pkg.head(part, 64))
        meta["part"] = part
    elif href:
        mime = image_mime(href)
        meta["external"] = href
    content: dict[str, JSON] = {"description": desc, "mime_type": mime}
    width, height = size
    if width:
        content["width"] = width
    if height:
        content["height"] = height
    summary = summaries.image(desc, mime, width, height)
    return Item(Category.IMAGE, summary, content, meta, at)


def text_box_items(
    box: etree._Element, reader: InlineReader, meta: dict[str, JSON], at: int
) -> list[Item]:
    lines: list[str] = []
    inner: list[Item] = []
    for p in box.iter(TEXT + "p", TEXT + "h"):
        para = reader.paragraph(p)
        lines.append(para.text.strip())
        inner.extend(para.items)
    text = "\n".join(line for line in lines if line)
    out: list[Item] = []
    if text:
        meta = {**meta, "source": "frame"}
        content: dict[str, JSON] = {"text": text}
        if is_rtl(text):
            content["direction"] = "rtl"
        out.append(Item(Category.TEXT, summaries.text(text), content, meta, at))
    for item in inner:
        item.at = at
    return out + inner


def media_item(plugin: etree._Element, desc: str, meta: dict[str, JSON], at: int) -> Item:
    href = plugin.get(XLINK + "href", "")
    mime = plugin.get(DRAW + "mime-type") or ""
    if not mime.startswith(("audio/", "video/")):
        ext = posixpath.splitext(href.split("?")[0])[1].lstrip(".").lower()
        mime = MEDIA_MIME.get(ext) or mime or "application/octet-stream"
    category = Category.AUDIO if mime.startswith("audio/") else Category.VIDEO
    name = posixpath.basename(href) or desc
    content: dict[str, JSON] = {"name": name, "mime_type": mime}
    part = part_name(href)
    if part is not None:
        content["embedded"] = True
        meta["part"] = part
    elif href:
        content["url"] = href
    if desc:
        content["description"] = desc
    return Item(category, summaries.media(name, mime), content, meta, at)


def object_item(
    pkg: Package, obj: etree._Element, desc: str, meta: dict[str, JSON], at: int
) -> Item | None:
    """A Math object as a formula, a Chart object as a chart; None for other objects."""
    folder = part_name(obj.get(XLINK + "href"))
    if folder is None:
        return None
    part = posixpath.join(folder.rstrip("/"), "content.xml")
    if not pkg.has(part):
        return None
    try:
        root = pkg.xml(part)
    except CorruptError:
        return None
    meta["part"] = part
    math = root if root.tag == MATH + "math" else root.find(f".//{MATH}math")
    if math is not None:
        note = math.find(f".//{MATH}annotation")
        expr = (note.text or "").strip() if note is not None else ""
        if not expr:
            expr = all_text(math)
        meta["source"] = "math_object"
        return Item(Category.FORMULA, summaries.formula(expr), {"expression": expr}, meta, at)
    chart = root.find(f".//{CHART}chart")
    if chart is not None:
        content = chart_content(chart)
        series = content["series"]
        summary = summaries.chart(str(content["chart_type"]), str(content["title"]), series)
        return Item(Category.CHART, summary, content, meta, at)
    return None


def _number(text: str) -> float | int | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _rows(table: etree._Element) -> list[list[tuple[str, str | None]]]:
    """The chart's own data table: rows of (text, office:value) cells."""
    rows: list[list[tuple[str, str | None]]] = []
    for row in table.iter(TABLE + "table-row"):
        cells: list[tuple[str, str | None]] = []
        for cell in row:
            if cell.tag in (TABLE + "table-cell", TABLE + "covered-table-cell"):
                text = all_text(cell)
                cells.append((text, cell.get(OFFICE + "value")))
        rows.append(cells)
    return rows


def chart_content(chart: etree._Element) -> dict[str, JSON]:
    kind = (chart.get(CHART + "class") or "").split(":")[-1]
    title_el = chart.find(CHART + "title")
    title = all_text(title_el) if title_el is not None else ""
    table = chart.find(f".//{TABLE}table")
    rows = _rows(table) if table is not None else []
    series: list[dict[str, JSON]] = []
    if rows:
        head, body = rows[0], rows[1:]
        categories = [r[0][0] if r else "" for r in body]
        for col in range(1, len(head)):
            values: list[JSON] = []
            for r in body:
                raw = r[col][1] if col < len(r) else None
                values.append(_number(raw) if raw is not None else None)
            series.append({"name": head[col][0], "categories": categories, "values": values})
    chart_type = _CHART_TYPES.get(kind, kind or "unknown")
    return {
        "chart_type": chart_type,
        "title": title,
        "series": series,
        "data_summary": data_summary(chart_type, series),
    }
