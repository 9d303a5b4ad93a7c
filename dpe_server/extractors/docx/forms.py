"""Form fields of a docx: content controls (`w:sdt`) and legacy form fields (`w:ffData`).

A content control is a form field when it is typed (plain text, rich text, drop-down, combo
box, date, checkbox, picture) rather than structural (cover-page and gallery parts,
bibliography, citation, equation, group): structural ones only contribute their content.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.docx.xml import W14, W, int_or, on, val
from dpe_server.model.content import FieldKind, FormField

_W15 = "{http://schemas.microsoft.com/office/word/2012/wordml}"
_STRUCTURAL = (
    *(
        W + t
        for t in ("docPartObj", "docPartList", "bibliography", "citation", "equation", "group")
    ),
    _W15 + "repeatingSection",
    _W15 + "repeatingSectionItem",
)
_TYPES: dict[str, tuple[str, FieldKind]] = {
    W + "text": ("plain_text", "text"),
    W + "richText": ("rich_text", "text"),
    W + "dropDownList": ("dropdown", "dropdown"),
    W + "comboBox": ("combo_box", "dropdown"),
    W + "date": ("date", "date"),
    W14 + "checkbox": ("checkbox", "checkbox"),
    W + "picture": ("picture", "picture"),
}
_LEGACY: dict[str, FieldKind] = {
    "FORMTEXT": "text",
    "FORMCHECKBOX": "checkbox",
    "FORMDROPDOWN": "dropdown",
}


def _options(control: etree._Element) -> list[str]:
    return [
        item.get(W + "displayText") or item.get(W + "value") or ""
        for item in control.iterfind(W + "listItem")
    ]


def _checkbox(field: FormField, checked: bool) -> None:
    """A Word box has no export value: `value` is `checked` when ticked, empty when not."""
    field["checked"] = checked
    field["value"] = "checked" if checked else ""


def sdt_field(sdtpr: etree._Element | None, text: str) -> FormField | None:
    """A content control's field (docs/content.md, form); None if structural."""
    if sdtpr is None:
        name = "content control"
        return {"name": name, "type": "rich_text", "value": text, "label": name, "kind": "text"}
    kind = "rich_text"
    shape: FieldKind = "text"
    control: etree._Element | None = None
    for child in sdtpr:
        if child.tag in _STRUCTURAL:
            return None
        if child.tag in _TYPES:
            (kind, shape), control = _TYPES[child.tag], child
    title = val(sdtpr, "alias")
    tag = val(sdtpr, "tag")
    sid = val(sdtpr, "id")
    name = title or tag or (f"content control {sid}" if sid else "content control")
    placeholder = sdtpr.find(W + "showingPlcHdr") is not None
    field: FormField = {
        "name": name,
        "type": kind,
        "value": "" if placeholder else text,
        "label": name,
        "kind": shape,
    }
    if placeholder and text:
        field["placeholder"] = text
    if title:
        field["title"] = title
    if tag:
        field["tag"] = tag
    if control is not None:
        if kind in ("dropdown", "combo_box"):
            field["options"] = _options(control)
        elif kind == "date":
            if full_date := control.get(W + "fullDate"):
                field["date"] = full_date
            fmt = val(control, "dateFormat")
            if fmt:
                field["format"] = fmt
        elif kind == "checkbox":
            checked = control.find(W14 + "checked")
            _checkbox(field, checked is not None and checked.get(W14 + "val", "1") in ("1", "true"))
    return field


def legacy_field(code: str, ffdata: etree._Element | None, result: str) -> FormField:
    """A legacy FORMTEXT / FORMCHECKBOX / FORMDROPDOWN field from its `w:ffData`."""
    kind = _LEGACY.get(code, "text")
    name = (val(ffdata, "name") if ffdata is not None else None) or kind
    field: FormField = {"name": name, "type": kind, "value": result, "label": name, "kind": kind}
    if ffdata is None:
        return field
    if kind == "checkbox":
        box = ffdata.find(W + "checkBox")
        checked = box.find(W + "checked") if box is not None else None
        if checked is None and box is not None:
            checked = box.find(W + "default")
        _checkbox(field, checked is not None and on(checked))
    elif kind == "dropdown":
        dd = ffdata.find(W + "ddList")
        options = [val(e) or "" for e in dd.iterfind(W + "listEntry")] if dd is not None else []
        index = int_or(val(dd, "result") or val(dd, "default"), 0) if dd is not None else 0
        field["options"] = options
        field["value"] = options[index] if 0 <= index < len(options) else result
    else:
        text_input = ffdata.find(W + "textInput")
        default = val(text_input, "default") if text_input is not None else None
        if not result and default:
            field["value"] = default
    return field
