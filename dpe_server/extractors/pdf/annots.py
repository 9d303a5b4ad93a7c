"""A page's annotations: links, markup annotations, form fields, widgets, audio and video.

Everything is read from the page's /Annots array (pypdf objects, no text extraction):

- Link → link: `/A /URI` gives the url; `/Dest` or a GoTo action gives the target page, as
  url `#page={N+1}` plus `target_page` (the DPE page index); the text is the page text under
  the link's rectangle.
- Text, FreeText, Highlight, Underline, StrikeOut, Squiggly, Stamp, Ink, Caret, Square,
  Circle, Line, Polygon, PolyLine, FileAttachment → annotation (kind = subtype in lower case,
  text = /Contents, author = /T, date = /M as ISO 8601, anchor = the page text under the
  rectangle). Popup is left out: it only shows its parent. An annotation that answers another
  (`/IRT`, reply type `/R`) is a reply nested under the root of its thread as
  `replies: [{text, author?, date?}]`, never an element of its own; one whose `/IRT` leads
  nowhere on the page, or round in a loop, stays an annotation.
- Widget → the AcroForm field it belongs to (inherited /FT, /V, /Ff, /Opt through /Parent):
  text, checkbox, radio, choice and signature fields go into one form element per page;
  push buttons and signature fields are also widget elements.
- Sound → audio; Movie, Screen, RichMedia → video (audio when a Screen's rendition says
  `audio/...`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

from pypdf import PageObject, PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NameObject

from dpe_server.extractors.kit.threads import as_reply, roots
from dpe_server.extractors.pdf.items import TextAt, plain
from dpe_server.model.content import (
    AnnotationContent,
    FieldKind,
    FormField,
    LinkContent,
    MediaContent,
    WidgetContent,
)
from dpe_server.model.tree import JSON

MAX_ANNOTS = 2_000

MARKUP = frozenset(
    {
        "/Text",
        "/FreeText",
        "/Highlight",
        "/Underline",
        "/StrikeOut",
        "/Squiggly",
        "/Stamp",
        "/Ink",
        "/Caret",
        "/Square",
        "/Circle",
        "/Line",
        "/Polygon",
        "/PolyLine",
        "/FileAttachment",
    }
)
_VIDEO = frozenset({"/Movie", "/Screen", "/RichMedia"})
_FF_RADIO = 1 << 15
_FF_PUSH = 1 << 16
_FF_COMBO = 1 << 17


@dataclass(slots=True)
class AnnotItem:
    """One element-to-be from the annotation layer."""

    kind: str
    content: dict[str, JSON]
    meta: dict[str, JSON] = field(default_factory=dict)


@dataclass(slots=True)
class PageAnnots:
    items: list[AnnotItem] = field(default_factory=list)
    fields: list[FormField] = field(default_factory=list)
    truncated: bool = False


Key = tuple[int, int]
"""An indirect object's number and generation: how `/IRT` names the annotation it answers."""

_PDF_DATE = re.compile(
    r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz])|([+-])(\d{2})'?(\d{2})?'?)?"
)


def _s(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, IndirectObject):
        value = value.get_object()
    if isinstance(value, NameObject):
        return str(value)[1:]
    if isinstance(value, (str, int, float)):
        return " ".join(plain(str(value)).split())
    return ""


def _rect(annot: DictionaryObject) -> tuple[float, float, float, float] | None:
    try:
        r = [float(v) for v in annot.get("/Rect", [])[:4]]
    except (TypeError, ValueError):
        return None
    if len(r) != 4:
        return None
    return min(r[0], r[2]), min(r[1], r[3]), max(r[0], r[2]), max(r[1], r[3])


def _inherited(annot: DictionaryObject, key: str) -> Any:
    node: Any = annot
    for _ in range(32):
        if node is None:
            return None
        value = node.get(key)
        if value is not None:
            return value.get_object() if isinstance(value, IndirectObject) else value
        parent = node.get("/Parent")
        node = parent.get_object() if parent is not None else None
    return None


def _field_name(annot: DictionaryObject) -> str:
    parts: list[str] = []
    node: Any = annot
    for _ in range(32):
        if node is None:
            break
        t = node.get("/T")
        if t is not None:
            parts.append(_s(t))
        parent = node.get("/Parent")
        node = parent.get_object() if parent is not None else None
    return ".".join(reversed([p for p in parts if p]))


class _Targets:
    """Destination → page index, resolving named destinations only when one is met."""

    def __init__(self, reader: PdfReader) -> None:
        self.reader = reader
        self._named: dict[str, Any] | None = None

    def page_of(self, dest: Any) -> int | None:
        dest = dest.get_object() if isinstance(dest, IndirectObject) else dest
        if isinstance(dest, DictionaryObject) and "/D" in dest:
            dest = dest["/D"]
        if isinstance(dest, ArrayObject) and dest:
            first = dest[0]
            if isinstance(first, IndirectObject):
                number = self.reader._get_page_number_by_indirect(first)
                return number if isinstance(number, int) and number >= 0 else None
            if isinstance(first, int):
                return int(first)
            return None
        if isinstance(dest, str):
            if self._named is None:
                self._named = dict(self.reader.named_destinations)
            name = str(dest)
            target = self._named.get(name) or self._named.get(name.lstrip("/"))
            if target is None:
                return None
            number = self.reader.get_destination_page_number(target)
            return number if number is not None and number >= 0 else None
        return None


def _key(ref: Any) -> Key | None:
    return (ref.idnum, ref.generation) if isinstance(ref, IndirectObject) else None


def _date(value: Any) -> str:
    """A pdf date (`D:20240102030407+01'00'`) as ISO 8601; `""` when it is not one."""
    found = _PDF_DATE.match(_s(value))
    if found is None:
        return ""
    year, month, day, hour, minute, second, zulu, sign, tz_hour, tz_minute = found.groups()
    out = f"{year}-{month or '01'}-{day or '01'}T{hour or '00'}:{minute or '00'}:{second or '00'}"
    if zulu:
        return out + "Z"
    return out + (f"{sign}{tz_hour}:{tz_minute or '00'}" if sign else "")


def _markup(annot: DictionaryObject, subtype: str, under: str) -> AnnotationContent:
    content: AnnotationContent = {
        "text": _s(annot.get("/Contents")) or _s(annot.get("/RC")),
        "kind": subtype[1:].lower(),
    }
    if author := _s(annot.get("/T")):
        content["author"] = author
    if date := _date(annot.get("/M")):
        content["date"] = date
    if under and subtype not in ("/Text", "/FreeText", "/Stamp", "/Ink"):
        content["anchor"] = under
    return content


def _thread(items: list[AnnotItem], notes: dict[Key, AnnotItem], answers: dict[Key, Key]) -> None:
    """Move each answer (`answers`: its key → the key it answers) under the root of its
    thread, in page order."""
    moved: set[int] = set()
    for key, root in roots(answers, notes).items():
        item = notes[key]
        replies = notes[root].content.setdefault("replies", [])
        assert isinstance(replies, list)
        replies.append(dict(as_reply(item.content)))
        moved.add(id(item))
    items[:] = [item for item in items if id(item) not in moved]


def _link(annot: DictionaryObject, targets: _Targets, text: str) -> AnnotItem | None:
    action = annot.get("/A")
    action = action.get_object() if action is not None else None
    url = ""
    page: int | None = None
    if isinstance(action, DictionaryObject):
        kind = action.get("/S")
        if kind == "/URI":
            url = _s(action.get("/URI"))
        elif kind == "/GoTo":
            page = targets.page_of(action.get("/D"))
        elif kind == "/Launch":
            url = _s(action.get("/F"))
    elif annot.get("/Dest") is not None:
        page = targets.page_of(annot.get("/Dest"))
    content: LinkContent = {"text": text or url, "url": url}
    if page is not None:
        content["url"], content["target_page"] = f"#page={page + 1}", page
    if not content["url"]:
        return None
    return AnnotItem("link", dict(content))


def _media(annot: DictionaryObject, subtype: str) -> AnnotItem:
    name = _s(annot.get("/T")) or _s(annot.get("/Contents"))
    mime = ""
    action = annot.get("/A")
    action = action.get_object() if action is not None else None
    if isinstance(action, DictionaryObject):
        rendition = action.get("/R")
        rendition = rendition.get_object() if rendition is not None else None
        if isinstance(rendition, DictionaryObject):
            clip = rendition.get("/C")
            clip = clip.get_object() if clip is not None else None
            if isinstance(clip, DictionaryObject):
                mime = _s(clip.get("/CT"))
                name = name or _s(clip.get("/N"))
    if subtype == "/Sound":
        kind = "audio"
        mime = mime or "audio/basic"
    else:
        kind = "audio" if mime.startswith("audio/") else "video"
        mime = mime or "video/unknown"
    content: MediaContent = {"name": name, "mime_type": mime}
    description = _s(annot.get("/Contents"))
    if description and description != name:
        content["description"] = description
    return AnnotItem(kind, dict(content), {"subtype": subtype[1:]})


def _field(annot: DictionaryObject) -> FormField | None:
    ft = _inherited(annot, "/FT")
    if ft is None:
        return None
    try:
        flags = int(_inherited(annot, "/Ff") or 0)
    except (TypeError, ValueError):
        flags = 0
    value = _inherited(annot, "/V")
    field_type = {"/Tx": "text", "/Ch": "choice", "/Sig": "signature"}.get(str(ft))
    if str(ft) == "/Btn":
        field_type = "button" if flags & _FF_PUSH else "radio" if flags & _FF_RADIO else "checkbox"
    if field_type is None:
        return None
    name = _field_name(annot)
    kind: FieldKind = "text"
    if field_type == "choice":
        kind = "dropdown" if flags & _FF_COMBO else "list"
    elif field_type != "text":
        kind = cast(FieldKind, field_type)
    if field_type == "signature":
        shown = "signed" if value is not None else ""
    elif isinstance(value, ArrayObject):
        shown = ", ".join(_s(v) for v in value)
    else:
        shown = _s(value)
    out: FormField = {
        "name": name,
        "type": field_type,
        "value": shown,
        "label": _s(_inherited(annot, "/TU")) or name,
        "kind": kind,
    }
    if field_type in ("checkbox", "radio"):
        # The value of a box is its on state's export name, `Off` (here empty) when off.
        out["checked"] = shown not in ("", "Off")
        out["value"] = shown if out["checked"] else ""
        states = _on_states(annot)
        if states:
            out["options"] = states
    if field_type == "choice":
        out["options"] = _choice_options(_inherited(annot, "/Opt"))
        out["combo"] = bool(flags & _FF_COMBO)
    return out


def _on_states(annot: DictionaryObject) -> list[str]:
    ap = annot.get("/AP")
    ap = ap.get_object() if ap is not None else None
    normal = ap.get("/N") if isinstance(ap, DictionaryObject) else None
    normal = normal.get_object() if normal is not None else None
    if not isinstance(normal, DictionaryObject):
        return []
    return [str(k)[1:] for k in normal if k != "/Off"]


def _choice_options(opt: Any) -> list[str]:
    if not isinstance(opt, ArrayObject):
        return []
    out: list[str] = []
    for raw in opt[:500]:
        item = raw.get_object() if isinstance(raw, IndirectObject) else raw
        if isinstance(item, ArrayObject) and len(item) >= 2:
            out.append(_s(item[1]))
        else:
            out.append(_s(item))
    return out


def _merge_fields(fields: list[FormField]) -> list[FormField]:
    """Radio buttons are one widget per option: fold them into one field (checked when any
    of them is on)."""
    merged: dict[str, FormField] = {}
    order: list[str] = []
    for f in fields:
        key = f"{f['type']}:{f['name']}"
        if key not in merged:
            merged[key] = f.copy()
            order.append(key)
            continue
        if f.get("checked"):
            merged[key]["checked"] = True
            merged[key]["value"] = f["value"]
        options = merged[key].get("options")
        if isinstance(options, list):
            for opt in f.get("options") or []:
                if opt not in options:
                    options.append(opt)
    return [merged[k] for k in order]


def read_annots(page: PageObject, reader: PdfReader, text_at: TextAt) -> PageAnnots:
    """Everything the page's /Annots array holds that becomes an element."""
    out = PageAnnots()
    annots = page.get("/Annots")
    annots = annots.get_object() if annots is not None else None
    if not isinstance(annots, ArrayObject):
        return out
    targets = _Targets(reader)
    if len(annots) > MAX_ANNOTS:
        out.truncated = True
    notes: dict[Key, AnnotItem] = {}
    answers: dict[Key, Key] = {}
    for ref in annots[:MAX_ANNOTS]:
        annot = ref.get_object() if isinstance(ref, IndirectObject) else ref
        if not isinstance(annot, DictionaryObject):
            continue
        subtype = str(annot.get("/Subtype", ""))
        rect = _rect(annot)
        meta: dict[str, JSON] = {"bbox": [round(v, 1) for v in rect]} if rect else {}
        under = text_at(rect) if rect else ""
        if subtype == "/Link":
            item = _link(annot, targets, under)
            if item is not None:
                item.meta.update(meta)
                out.items.append(item)
        elif subtype in MARKUP:
            note = AnnotItem("annotation", dict(_markup(annot, subtype, under)), meta)
            out.items.append(note)
            if (key := _key(ref)) is not None:
                notes[key] = note
                irt = _key(annot.raw_get("/IRT")) if "/IRT" in annot else None
                if irt is not None and annot.get("/RT", "/R") == "/R":
                    answers[key] = irt
        elif subtype == "/Sound" or subtype in _VIDEO:
            item = _media(annot, subtype)
            item.meta.update(meta)
            out.items.append(item)
        elif subtype == "/Widget":
            found = _field(annot)
            if found is None:
                continue
            if found["type"] in ("button", "signature"):
                caption = _caption(annot)
                kind = "push_button" if found["type"] == "button" else "signature"
                w: WidgetContent = {"kind": kind, "name": found["name"]}
                if caption:
                    w["text"] = caption
                out.items.append(AnnotItem("widget", dict(w), meta))
            if found["type"] != "button":
                out.fields.append(found)
    _thread(out.items, notes, answers)
    out.fields = _merge_fields(out.fields)
    return out


def _caption(annot: DictionaryObject) -> str:
    mk = annot.get("/MK")
    mk = mk.get_object() if mk is not None else None
    if isinstance(mk, DictionaryObject):
        return _s(mk.get("/CA"))
    return ""
