"""Form fields written inside a paragraph, as LibreOffice writes a Word document's, as form
fields of the same shape the docx reader gives (`docx.forms`):

- legacy form fields, `field:fieldmark` (a check box, a drop-down: `field:param`s) and
  `field:fieldmark-start`…`field:fieldmark-end` around a text field's value
  (`field:type` `vnd.oasis.opendocument.field.FORMTEXT` / `FORMCHECKBOX` / `FORMDROPDOWN`,
  `text:name` the field's name): `metadata.source: legacy_form_field`;
- content controls, `loext:content-control`: a check box (`loext:checkbox`,
  `loext:checked`), a date (`loext:date`, `loext:current-date`, `loext:date-format`), a
  drop-down (its `loext:list-item`s), else rich text; named by `loext:alias`, else
  `loext:tag`: `metadata.source: content_control`;
- input fields, `text:text-input` (what a Word plain-text content control becomes), a text
  field named by its `text:description`: `metadata.source: content_control`.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.kit.forms import checkbox_glyph
from dpe_server.extractors.odf.package import LOEXT, TEXT
from dpe_server.model.content import FieldKind, FormField

FIELD = "{urn:openoffice:names:experimental:ooo-ms-interop:xmlns:field:1.0}"
_LEGACY: dict[str, FieldKind] = {
    "FORMTEXT": "text",
    "FORMCHECKBOX": "checkbox",
    "FORMDROPDOWN": "dropdown",
}
_ON = ("true", "1")


def _checkbox(field: FormField, checked: bool) -> None:
    field["checked"] = checked
    field["value"] = "checked" if checked else ""


def is_form(mark: etree._Element) -> bool:
    """Whether a fieldmark is a legacy form field (not another Word field kept as one)."""
    return mark.get(FIELD + "type", "").rsplit(".", 1)[-1] in _LEGACY


def legacy_kind(mark: etree._Element) -> FieldKind:
    return _LEGACY.get(mark.get(FIELD + "type", "").rsplit(".", 1)[-1], "text")


def legacy_field(mark: etree._Element, value: str = "") -> tuple[FormField, str]:
    """A `field:fieldmark` (or the start of a ranged one, `value` its text) as a field, and
    the text it shows in the paragraph (a check box's glyph, a drop-down's choice)."""
    kind = legacy_kind(mark)
    name = mark.get(TEXT + "name", "")
    if not name or name.startswith("__Fieldmark__"):
        name = kind
    field: FormField = {"name": name, "type": kind, "value": value, "label": name, "kind": kind}
    params: list[tuple[str, str]] = [
        (p.get(FIELD + "name", ""), p.get(FIELD + "value", "")) for p in mark.iter(FIELD + "param")
    ]
    if kind == "checkbox":
        _checkbox(field, any(k == "Checkbox_Checked" and v in _ON for k, v in params))
        return field, checkbox_glyph(field)
    if kind == "dropdown":
        options = [v for k, v in params if k == "Dropdown_ListEntry"]
        chosen = next((v for k, v in params if k == "Dropdown_Selected"), "")
        index = int(chosen) if chosen.isdigit() else -1
        field["options"] = options
        field["value"] = options[index] if 0 <= index < len(options) else ""
        return field, field["value"]
    return field, ""


def control_field(control: etree._Element, text: str) -> FormField:
    """A `loext:content-control` showing `text`, as a field."""
    title = control.get(LOEXT + "alias", "")
    tag = control.get(LOEXT + "tag", "")
    name = title or tag or "content control"
    kind = "rich_text"
    shape: FieldKind = "text"
    options = [
        item.get(LOEXT + "display-text") or item.get(LOEXT + "value") or ""
        for item in control.iter(LOEXT + "list-item")
    ]
    if control.get(LOEXT + "checkbox") in _ON:
        kind, shape = "checkbox", "checkbox"
    elif control.get(LOEXT + "date") in _ON:
        kind, shape = "date", "date"
    elif options or control.get(LOEXT + "dropdown") in _ON:
        kind, shape = "dropdown", "dropdown"
    elif control.get(LOEXT + "picture") in _ON:
        kind, shape = "picture", "picture"
    field: FormField = {"name": name, "type": kind, "value": text, "label": name, "kind": shape}
    if title:
        field["title"] = title
    if tag:
        field["tag"] = tag
    if shape == "checkbox":
        _checkbox(field, control.get(LOEXT + "checked") in _ON)
    elif shape == "date":
        if full := control.get(LOEXT + "current-date"):
            field["date"] = full
        if fmt := control.get(LOEXT + "date-format"):
            field["format"] = fmt
    elif shape == "dropdown":
        field["options"] = options
    return field


def input_field(el: etree._Element, text: str) -> FormField:
    """A `text:text-input` showing `text`, as a text field."""
    name = el.get(TEXT + "description") or "input field"
    return {"name": name, "type": "plain_text", "value": text, "label": name, "kind": "text"}
