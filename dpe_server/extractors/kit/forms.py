"""A form element from its fields (`form_item`), and how a checkbox shows in text."""

from __future__ import annotations

from dpe_server.extractors.kit.items import Item
from dpe_server.model import summaries
from dpe_server.model.content import FormContent, FormField
from dpe_server.model.tree import Category


def checkbox_glyph(field: FormField) -> str:
    return "☒" if field.get("checked") else "☐"


def form_item(fields: list[FormField], at: int, source: str) -> Item:
    return Item(
        Category.FORM,
        summaries.form(fields),
        FormContent(fields=list(fields)),
        {"source": source},
        at,
    )
