"""What a sheet's drawing parts hold: charts, pictures, shapes with text, SmartArt; and the
form controls of its legacy VML drawing and `ctrlProps` parts.

A drawing (`xdr:wsDr`) is a list of anchors; each anchors one object to a cell (`xdr:from`).
Charts go through `drawingml.parse_chart` with a resolver that reads the referenced cells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lxml import etree

from dpe_server.extractors.kit.a1 import cell_ref
from dpe_server.extractors.kit.package import Package, Relationship
from dpe_server.extractors.kit.xml import local
from dpe_server.extractors.ooxml import drawingml
from dpe_server.extractors.ooxml.picture_text import recognise_picture
from dpe_server.extractors.xlsx.book import kid, rel_id, walk
from dpe_server.extractors.xlsx.cells import Item
from dpe_server.model import summaries
from dpe_server.model.content import ImageContent, WidgetContent
from dpe_server.model.errors import CorruptError
from dpe_server.model.tree import JSON, Category

Resolver = Callable[[str], list[str]]

_ANCHORS = ("twoCellAnchor", "oneCellAnchor", "absoluteAnchor")
_WIDGET_KINDS = {
    "checkbox": "check_box",
    "button": "button",
    "drop": "drop_down",
    "list": "list_box",
    "radio": "option_button",
    "spin": "spinner",
    "scroll": "scroll_bar",
    "gbox": "group_box",
    "label": "label",
    "edit": "edit_box",
    "dialog": "dialog",
}


def _paragraphs(el: etree._Element) -> list[str]:
    """Paragraph texts of a DrawingML text body, any namespace (Transitional or Strict)."""
    out = []
    for p in walk(el, "p"):
        parts = [
            "\n" if local(n) == "br" else (n.text or "")
            for n in p.iter()
            if local(n) in ("t", "br")
        ]
        text = "".join(parts).strip()
        if text:
            out.append(text)
    return out


def _anchor_cell(anchor: etree._Element) -> tuple[int, int]:
    start = kid(anchor, "from")
    if start is None:
        return (0, 0)
    try:
        col = int((kid(start, "col").text or "0") if kid(start, "col") is not None else 0)  # type: ignore[union-attr]
        row = int((kid(start, "row").text or "0") if kid(start, "row") is not None else 0)  # type: ignore[union-attr]
    except ValueError:
        return (0, 0)
    return (row, col)


def _objects(container: etree._Element) -> Iterator[etree._Element]:
    """The drawing objects directly in an anchor or group, AlternateContent resolved."""
    for child in container:
        name = local(child)
        if name == "AlternateContent":
            choice = kid(child, "Choice")
            branch = choice if choice is not None else kid(child, "Fallback")
            if branch is not None:
                yield from _objects(branch)
        elif name in ("pic", "graphicFrame", "sp", "grpSp", "cxnSp", "contentPart"):
            yield child


def drawing_items(pkg: Package, part: str, resolve: Resolver) -> list[Item]:
    """Charts, images and diagrams of one drawing part, in anchor order."""
    if not pkg.has(part):
        return []
    root = pkg.xml(part)
    rels = pkg.rels(part)
    items: list[Item] = []
    for anchor in root:
        if local(anchor) not in _ANCHORS:
            continue
        row, col = _anchor_cell(anchor)
        for obj in _objects(anchor):
            item = _object_item(pkg, obj, rels, resolve)
            if item is not None:
                item.order = (row, col)
                item.metadata.setdefault("anchor", cell_ref(row, col))
                items.append(item)
    return items


def _object_item(
    pkg: Package, obj: etree._Element, rels: dict[str, Relationship], resolve: Resolver
) -> Item | None:
    name = local(obj)
    if name == "pic":
        return _picture(pkg, obj, rels)
    if name == "graphicFrame":
        return _graphic(pkg, obj, rels, resolve)
    if name in ("sp", "grpSp"):
        return _shape(obj)
    return None


def _cnvpr(obj: etree._Element) -> etree._Element | None:
    return next(walk(obj, "cNvPr"), None)


def _picture(pkg: Package, obj: etree._Element, rels: dict[str, Relationship]) -> Item | None:
    props = _cnvpr(obj)
    description = ""
    shape_name = ""
    if props is not None:
        description = props.get("descr") or props.get("title") or ""
        shape_name = props.get("name", "")
    blip = next(walk(obj, "blip"), None)
    rid = rel_id(blip, "embed") if blip is not None else None
    rel = rels.get(rid or "")
    if rel is None or rel.external or not pkg.has(rel.target):
        return None
    data = pkg.head(rel.target)
    mime = drawingml.image_mime(rel.target, data[:64])
    size = drawingml.image_size(data)
    ext = next(walk(obj, "ext"), None)
    content: ImageContent = {"description": description, "mime_type": mime}
    width = height = None
    if size is not None:
        width, height = size
    elif ext is not None:
        width, height = drawingml.emu_to_px(ext.get("cx")), drawingml.emu_to_px(ext.get("cy"))
    if width and height:
        content["width"], content["height"] = width, height
    meta: dict[str, JSON] = {"part": rel.target, "name": shape_name, "bytes": pkg.size(rel.target)}
    recognise_picture(pkg, rel.target, content, meta)
    return Item(Category.IMAGE, summaries.image(description, mime, width, height), content, meta)


def _graphic(
    pkg: Package, obj: etree._Element, rels: dict[str, Relationship], resolve: Resolver
) -> Item | None:
    data = next(walk(obj, "graphicData"), None)
    if data is None:
        return None
    props = _cnvpr(obj)
    shape_name = props.get("name", "") if props is not None else ""
    for child in data:
        kind = local(child)
        if kind == "chart":
            rel = rels.get(rel_id(child) or "")
            if rel is None or not pkg.has(rel.target):
                return None
            return chart_item(pkg, rel.target, resolve, shape_name)
        if kind == "relIds":
            rel = rels.get(rel_id(child, "dm") or "")
            if rel is None or not pkg.has(rel.target):
                return None
            nodes = drawingml.smartart_nodes(pkg.xml(rel.target))
            content = drawingml.diagram_content(nodes, "smartart")
            return Item(
                Category.DIAGRAM,
                summaries.diagram("smartart", nodes),
                content,
                {"part": rel.target, "name": shape_name},
            )
    return None


def chart_item(pkg: Package, part: str, resolve: Resolver, name: str = "") -> Item:
    content = drawingml.parse_chart(pkg.xml(part), resolve)
    summary = summaries.chart(content["chart_type"], content["title"], content["series"])
    return Item(Category.CHART, summary, content, {"part": part, "name": name})


def _shape(obj: etree._Element) -> Item | None:
    if any(local(d) == "compatExt" for d in obj.iter()):
        return None  # the drawing-layer shadow of a form control (reported as a widget)
    nodes = _paragraphs(obj)
    if not nodes:
        return None
    props = _cnvpr(obj)
    shape_name = props.get("name", "") if props is not None else ""
    geom = next(walk(obj, "prstGeom"), None)
    kind = "group" if local(obj) == "grpSp" else "shape"
    content = drawingml.diagram_content(nodes, kind)
    if geom is not None and (preset := geom.get("prst")):
        content["shape"] = preset
    return Item(Category.DIAGRAM, summaries.diagram(kind, nodes), content, {"name": shape_name})


def chartsheet_items(pkg: Package, part: str, resolve: Resolver) -> list[Item]:
    """The charts of a chartsheet (through its drawing)."""
    root = pkg.xml(part)
    rels = pkg.rels(part)
    items: list[Item] = []
    for d in walk(root, "drawing"):
        rel = rels.get(rel_id(d) or "")
        if rel is not None:
            items.extend(drawing_items(pkg, rel.target, resolve))
    return items


# --- form controls -----------------------------------------------------------------------------


def _vml(pkg: Package, part: str) -> etree._Element | None:
    """VML as Excel writes it (often not well-formed: `<br>`), parsed leniently and safely."""
    data = pkg.read(part)
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data[:4096]:
        raise CorruptError(f"The {part} part declares a DOCTYPE, which OOXML never needs.")
    parser = etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None


def _client_text(data: etree._Element, name: str) -> str:
    el = kid(data, name)
    return (el.text or "").strip() if el is not None else ""


def widget_items(pkg: Package, tail: etree._Element, rels: dict[str, Relationship]) -> list[Item]:
    """Form controls: VML ClientData shapes, completed by `ctrlProps` parts where present."""
    vml_shapes: dict[str, WidgetContent] = {}
    order: list[str] = []
    for rel in rels.values():
        if rel.type_name != "vmlDrawing" or not pkg.has(rel.target):
            continue
        root = _vml(pkg, rel.target)
        if root is None:
            continue
        for shape in walk(root, "shape"):
            data = kid(shape, "ClientData")
            if data is None:
                continue
            kind = _WIDGET_KINDS.get(data.get("ObjectType", "").lower())
            if kind is None:
                continue
            text = " ".join(
                w for t in walk(shape, "textbox") for w in "".join(map(str, t.itertext())).split()
            )
            w: WidgetContent = {"kind": kind, "name": shape.get("id", ""), "text": text}
            checked = _client_text(data, "Checked")
            if kind in ("check_box", "option_button"):
                w["checked"] = checked not in ("", "0")
            _cells(w, *(_client_text(data, k) for k in ("FmlaLink", "FmlaRange", "FmlaMacro")))
            sid = shape.get("id", "")
            vml_shapes[sid] = w
            order.append(sid)
    for control in walk(tail, "control"):
        sid = f"_x0000_s{control.get('shapeId', '')}"
        w = vml_shapes.get(sid) or WidgetContent(kind="control", name="", text="")
        if sid not in vml_shapes:
            vml_shapes[sid] = w
            order.append(sid)
        w["name"] = control.get("name") or w.get("name", "")
        ctrl = rels.get(rel_id(control) or "")
        if ctrl is not None and pkg.has(ctrl.target):
            _merge_ctrl_props(pkg.xml(ctrl.target), w)
    items = []
    for sid in order:
        w = vml_shapes[sid]
        items.append(
            Item(
                Category.WIDGET,
                summaries.widget(w["kind"], w["name"], w.get("text") or None),
                w,
                {"shape_id": sid},
            )
        )
    return items


def _merge_ctrl_props(root: etree._Element, w: WidgetContent) -> None:
    kind = _WIDGET_KINDS.get(root.get("objectType", "").lower())
    if kind:
        w["kind"] = kind
    if root.get("checked") is not None or kind == "check_box":
        w["checked"] = root.get("checked", "").lower() in ("checked", "1", "true")
    _cells(w, *(root.get(k) for k in ("fmlaLink", "fmlaRange", "fmlaMacro")))


def _cells(w: WidgetContent, linked: str | None, source: str | None, macro: str | None) -> None:
    """A control's linked cell, source range and macro, those it has."""
    if linked:
        w["linked_cell"] = linked
    if source:
        w["source"] = source
    if macro:
        w["macro"] = macro


def ole_items(tail: etree._Element, rels: dict[str, Relationship]) -> list[Item]:
    """Embedded OLE objects (a PDF, a Word document...) as widgets naming what they hold."""
    items: list[Item] = []
    seen: set[str] = set()
    for ole in walk(tail, "oleObject"):
        sid = ole.get("shapeId", "")
        if sid in seen:
            continue  # the same object in mc:Choice and mc:Fallback
        seen.add(sid)
        prog = ole.get("progId", "")
        rel = rels.get(rel_id(ole) or "")
        target = rel.target if rel is not None else ""
        name = target.rsplit("/", 1)[-1] if target else f"object {sid}"
        content: WidgetContent = {"kind": "embedded_object", "name": name, "text": prog}
        if link := ole.get("link"):
            content["link"] = link
        meta: dict[str, JSON] = {"shape_id": sid, "part": target}
        anchor = next(walk(ole, "anchor"), None)
        if anchor is not None:
            meta["anchor"] = cell_ref(*_anchor_cell(anchor))
        items.append(
            Item(
                Category.WIDGET,
                summaries.widget("embedded_object", name, prog or None),
                content,
                meta,
            )
        )
    return items
