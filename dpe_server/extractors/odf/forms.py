"""OpenDocument form controls (`office:forms` / `form:form`) as form elements: one element per
form, its controls as fields (docs/content.md, form).

The control's element names its type (`type`: `text`, `checkbox`, `listbox`...) and gives the
shared `kind`; `value` is its current value (else its default), a checkbox's `checked` its
current state, a list's `options` the labels of its `form:option`s and its value the selected
ones. Hidden controls and nested sub-forms' own fields are read; buttons are `button` fields.
"""

from __future__ import annotations

from lxml import etree

from dpe_server.extractors.kit.forms import form_item
from dpe_server.extractors.kit.items import Item
from dpe_server.model.content import FieldKind, FormField

FORM = "{urn:oasis:names:tc:opendocument:xmlns:form:1.0}"
_KINDS: dict[str, FieldKind] = {
    "text": "text",
    "textarea": "text",
    "formatted-text": "text",
    "password": "text",
    "checkbox": "checkbox",
    "radio": "radio",
    "listbox": "dropdown",
    "combobox": "dropdown",
    "date": "date",
    "time": "text",
    "number": "number",
    "button": "button",
    "image": "button",
}
_ON = ("checked", "true")


def _value(control: etree._Element) -> str:
    return control.get(FORM + "current-value") or control.get(FORM + "value") or ""


def _field(control: etree._Element, local: str) -> FormField:
    name = control.get(FORM + "name") or control.get(FORM + "id") or local
    label = control.get(FORM + "label") or name
    kind = _KINDS[local]
    field: FormField = {
        "name": name,
        "type": local,
        "value": _value(control),
        "label": label,
        "kind": kind,
    }
    if kind in ("checkbox", "radio"):
        state = control.get(FORM + "current-state") or control.get(FORM + "state") or ""
        selected = control.get(FORM + "current-selected") or control.get(FORM + "selected")
        field["checked"] = state in _ON or selected in _ON
        field["value"] = (field["value"] or "checked") if field["checked"] else ""
    options = [o for o in control if o.tag == FORM + "option"]
    if options:
        labels = [o.get(FORM + "label") or o.get(FORM + "value") or "" for o in options]
        field["options"] = labels
        chosen = [
            lab
            for o, lab in zip(options, labels, strict=True)
            if (o.get(FORM + "current-selected") or o.get(FORM + "selected")) in _ON
        ]
        if chosen and not field["value"]:
            field["value"] = ", ".join(chosen)
        if local == "listbox" and control.get(FORM + "multiple") == "true":
            field["kind"] = "list"
    return field


def form_items(forms: etree._Element) -> list[Item]:
    """One form item per `form:form` of `office:forms` that has fields."""
    out: list[Item] = []
    for form in forms.iter(FORM + "form"):
        fields = [
            _field(control, etree.QName(control).localname)
            for control in form
            if isinstance(control.tag, str)
            and control.tag.startswith(FORM)
            and etree.QName(control).localname in _KINDS
        ]
        if fields:
            item = form_item(fields, 0, "form")
            name = form.get(FORM + "name")
            if name:
                item.metadata["form"] = name
            out.append(item)
    return out
