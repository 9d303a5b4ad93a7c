"""A web page's inline elements as items: links, pictures (a `data:` URI or a web archive's
part is served at Level 3; a remote one is named, never fetched), audio and video, MathML
formulas and forms."""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.html.source import data_uri
from dpe_server.extractors.html.visible import hidden, tag, text_of
from dpe_server.extractors.kit.forms import form_item
from dpe_server.extractors.kit.items import Item
from dpe_server.extractors.kit.media import MEDIA_MIME, image_mime
from dpe_server.model import summaries
from dpe_server.model.content import (
    FieldKind,
    FormField,
    FormulaContent,
    ImageContent,
    LinkContent,
    MediaContent,
)
from dpe_server.model.tree import JSON, Category

PLAYERS = frozenset({"audio", "video"})
_INPUT_KINDS: dict[str, FieldKind] = {
    "checkbox": "checkbox",
    "radio": "radio",
    "date": "date",
    "datetime-local": "date",
    "month": "date",
    "week": "date",
    "time": "date",
    "number": "number",
    "range": "number",
    "submit": "button",
    "button": "button",
    "reset": "button",
    "image": "button",
    "file": "picture",
}


def link(text: str, href: str, at: int) -> Item:
    content: LinkContent = {"text": text or href, "url": href}
    if href.startswith("#"):
        content["internal"] = True
    return Item(Category.LINK, summaries.link(text, href), content, {}, at)


def _int(value: str | None) -> int | None:
    value = (value or "").strip().removesuffix("px")
    return int(value) if value.isdigit() and 0 < int(value) < 1_000_000 else None


def image(el: etree._Element, index: int, parts: dict[str, str]) -> Item:
    """An `<img>`: its `alt` (else `title`) as description; where its bytes are."""
    src = (el.get("src") or el.get("href") or el.get("xlink:href") or "").strip()
    description = " ".join((el.get("alt") or el.get("title") or "").split())
    meta: dict[str, JSON] = {}
    mime = ""
    if src.lower().startswith("data:"):
        found = data_uri(src[:4096] if len(src) > 4096 else src)
        declared = src[5:].split(",", 1)[0].split(";", 1)[0].strip().lower()
        mime = image_mime("", found[1][:64]) if found else ""
        if mime == "application/octet-stream":
            mime = declared or mime
        meta["image_index"] = index
    elif src in parts:
        meta["part"] = parts[src]
        mime = image_mime(src)
    elif src:
        meta["url"] = src
        mime = image_mime(src.split("?", 1)[0].split("#", 1)[0])
    content: ImageContent = {"description": description, "mime_type": mime or "image/*"}
    width, height = _int(el.get("width")), _int(el.get("height"))
    if width and height:
        content["width"], content["height"] = width, height
    summary = summaries.image(description, content["mime_type"], width, height)
    return Item(Category.IMAGE, summary, content, meta)


def player(el: etree._Element, name: str) -> Item:
    """An `<audio>` or `<video>`: its source (never fetched) and its type."""
    src = (el.get("src") or "").strip()
    kind = (el.get("type") or "").strip()
    for source in el.iter("source"):
        src = src or (source.get("src") or "").strip()
        kind = kind or (source.get("type") or "").strip()
    file = src.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    mime = kind or MEDIA_MIME.get(file.rsplit(".", 1)[-1].lower(), f"{name}/*")
    content: MediaContent = {"name": file or name, "mime_type": mime}
    if src and not src.lower().startswith("data:"):
        content["url"] = src
    title = " ".join((el.get("title") or el.get("aria-label") or "").split())
    if title:
        content["description"] = title
    category = Category.VIDEO if name == "video" else Category.AUDIO
    return Item(category, summaries.media(content["name"], mime), content)


def formula(el: etree._Element) -> Item:
    """MathML: its `alttext` (often the TeX), else its text."""
    expression = el.get("alttext") or text_of(el)
    content: FormulaContent = {"expression": expression}
    return Item(Category.FORMULA, summaries.formula(expression), content, {"source": "mathml"})


def _label(el: etree._Element, labels: dict[str, str]) -> str:
    own = labels.get(el.get("id") or "\0")
    if own:
        return own
    for parent in el.iterancestors():
        if tag(parent) == "label":
            return text_of(parent)
        if tag(parent) == "form":
            break
    return " ".join((el.get("aria-label") or el.get("title") or "").split())


def _field(el: etree._Element, name: str, labels: dict[str, str]) -> FormField | None:
    kind_attr = (el.get("type") or "text").strip().lower()
    if name == "input" and kind_attr == "hidden":
        return None
    label = _label(el, labels)
    field: FormField = {
        "name": el.get("name") or el.get("id") or "",
        "type": kind_attr if name == "input" else name,
        "value": el.get("value") or "",
        "label": label,
        "kind": "text",
    }
    if name == "input":
        field["kind"] = _INPUT_KINDS.get(kind_attr, "text")
        if kind_attr in ("checkbox", "radio"):  # its value is its on state ("on" unless named)
            checked = el.get("checked") is not None
            field["checked"] = checked
            field["value"] = (el.get("value") or "on") if checked else ""
    elif name == "textarea":
        field["value"] = text_of(el)
    elif name == "button":
        field["kind"] = "button"
        field["value"] = text_of(el)
    elif name == "select":
        options = [text_of(o) for o in el.iter("option")]
        chosen = [o for o in el.iter("option") if o.get("selected") is not None]
        field["kind"] = "list" if el.get("multiple") is not None else "dropdown"
        field["options"] = options
        field["value"] = text_of(chosen[0]) if chosen else ""
    placeholder = el.get("placeholder")
    if placeholder:
        field["placeholder"] = placeholder
    return field


def form(el: etree._Element) -> Item | None:
    """A `<form>`'s fields as one form element (None when it has none shown)."""
    labels = {str(lab.get("for")): text_of(lab) for lab in el.iter("label") if lab.get("for")}
    fields: list[FormField] = []
    for child in el.iter("input", "select", "textarea", "button"):
        if hidden(child) or any(hidden(a) for a in child.iterancestors()):
            continue
        found = _field(child, tag(child), labels)
        if found is not None:
            fields.append(found)
    if not fields:
        return None
    item = form_item(fields, 0, "html_form")
    action = el.get("action")
    if action:
        item.metadata["action"] = action
    return item
