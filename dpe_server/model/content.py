"""The content shape of each element category (docs/content.md), typed, and a runtime check.

One TypedDict per category: `Required[...]` marks the fields always present, the others
appear only when the document says something. `SHAPES` maps a category to its TypedDict and
`problems(category, content)` lists where a content object departs from it (a missing
required key, a key the shape does not declare, a value of the wrong JSON type).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any, Literal, Required, TypedDict, Union, get_args, get_origin, get_type_hints

from dpe_server.model.tree import Category

Number = int | float


class TextContent(TypedDict, total=False):
    text: Required[str]
    direction: Literal["rtl", "ltr"]


class HeadingContent(TypedDict, total=False):
    level: Required[int]
    text: Required[str]
    direction: Literal["rtl", "ltr"]


class ListItem(TypedDict, total=False):
    text: Required[str]
    level: Required[int]
    label: str
    direction: Literal["rtl", "ltr"]


class ListContent(TypedDict, total=False):
    ordered: Required[bool]
    items: Required[list[ListItem]]
    start: int


class CodeContent(TypedDict, total=False):
    text: Required[str]
    language: str


class _Rows(TypedDict, total=False):
    headers: Required[list[str]]
    rows: Required[list[list[str]]]
    total_rows: Required[int]
    rows_truncated: bool


class TableContent(_Rows, total=False):
    total_columns: Required[int]
    direction: Literal["rtl", "ltr"]
    name: str
    nested_tables: list[str]
    total_row_index: int


class DataField(TypedDict):
    name: str
    field: str
    function: str


class PivotTableContent(_Rows, total=False):
    name: Required[str]
    location: str
    source: str
    fields: list[str]
    row_fields: list[str]
    column_fields: list[str]
    page_fields: list[str]
    data_fields: list[DataField]


class Series(TypedDict, total=False):
    name: Required[str]
    categories: Required[list[str]]
    values: Required[list[Number | None]]
    sizes: list[Number | None]


class AxisTitles(TypedDict, total=False):
    x: str
    y: str
    x2: str
    y2: str


class ChartContent(TypedDict, total=False):
    chart_type: Required[str]
    title: Required[str]
    series: Required[list[Series]]
    data_summary: Required[str]
    bar_direction: str
    grouping: str
    title_auto: bool
    axis_titles: AxisTitles
    chart_types: list[str]


class DiagramContent(TypedDict, total=False):
    kind: Required[str]
    nodes: Required[list[str]]
    data_summary: Required[str]
    shape: str
    edges: list[list[int]]


class EmbeddedObject(TypedDict, total=False):
    prog_id: str
    part: str


class ImageContent(TypedDict, total=False):
    description: Required[str]
    mime_type: Required[str]
    width: int
    height: int
    text: str
    """The picture's recognised text (OCR), when it has any."""
    table: TableContent
    """The table the recognised text stands in, when it is a picture of a table."""
    embedded: EmbeddedObject


class FormulaContent(TypedDict, total=False):
    expression: Required[str]
    result: str
    cells: str
    cell_count: int


class LinkContent(TypedDict, total=False):
    text: Required[str]
    url: Required[str]
    cell: str
    internal: bool
    tooltip: str
    target_page: int
    kind: Literal["attachment", "member", "embedded"]
    """A document inside this one (docs/children.md): `url` is then the child's `dpe://` URI
    when it is served as a document, else its container's `file_uri` with its path."""
    name: str
    mime_type: str
    size: int
    encrypted: bool


class Reply(TypedDict, total=False):
    text: Required[str]
    author: str
    date: str


class AnnotationContent(Reply, total=False):
    kind: Required[str]
    anchor: str
    replies: list[Reply]
    resolved: bool


class HeaderFooterContent(TypedDict, total=False):
    text: Required[str]
    variant: str
    pages: str
    code: str
    kind: str


SeparatorKind = Literal["page_break", "section_break", "column_break", "rule"]


class SeparatorContent(TypedDict):
    kind: SeparatorKind


class MediaContent(TypedDict, total=False):
    name: Required[str]
    mime_type: Required[str]
    description: str
    url: str
    embedded: bool


FieldKind = Literal[
    "text",
    "checkbox",
    "radio",
    "dropdown",
    "list",
    "date",
    "number",
    "picture",
    "signature",
    "button",
    "validation",
]
"""What a form field is, the same in every format (docs/content.md, form)."""


class FormField(TypedDict, total=False):
    name: Required[str]
    type: Required[str]
    value: Required[str]
    label: Required[str]
    kind: Required[FieldKind]
    checked: bool
    options: list[str]
    title: str
    tag: str
    placeholder: str
    date: str
    format: str
    source: str
    rule: str
    prompt: str
    promptTitle: str
    error: str
    errorTitle: str
    combo: bool


class FormContent(TypedDict, total=False):
    fields: Required[list[FormField]]
    kind: str


class WidgetContent(TypedDict, total=False):
    kind: Required[str]
    name: Required[str]
    text: str
    checked: bool
    linked_cell: str
    source: str
    macro: str
    class_id: str
    link: str


SHAPES: dict[Category, type] = {
    Category.TEXT: TextContent,
    Category.HEADING: HeadingContent,
    Category.LIST: ListContent,
    Category.CODE: CodeContent,
    Category.TABLE: TableContent,
    Category.PIVOT_TABLE: PivotTableContent,
    Category.CHART: ChartContent,
    Category.DIAGRAM: DiagramContent,
    Category.IMAGE: ImageContent,
    Category.FORMULA: FormulaContent,
    Category.LINK: LinkContent,
    Category.ANNOTATION: AnnotationContent,
    Category.HEADER: HeaderFooterContent,
    Category.FOOTER: HeaderFooterContent,
    Category.SEPARATOR: SeparatorContent,
    Category.AUDIO: MediaContent,
    Category.VIDEO: MediaContent,
    Category.FORM: FormContent,
    Category.WIDGET: WidgetContent,
}
"""The content TypedDict of every category."""


def problems(category: Category, content: Mapping[str, Any]) -> list[str]:
    """Where `content` departs from its category's shape; empty when it fits."""
    return _typed_dict(SHAPES[category], content, "content")


def _typed_dict(shape: Any, value: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path} is not an object"]
    hints = get_type_hints(shape, include_extras=True)
    # Read from the hints: under postponed annotations `__required_keys__` misses `Required`.
    required = [k for k, h in hints.items() if get_origin(h) is Required or shape.__total__]
    out = [f"{path}.{k} is missing" for k in required if k not in value]
    for key, item in value.items():
        if key not in hints:
            out.append(f"{path}.{key} is not a field of {shape.__name__}")
        else:
            out.extend(_check(hints[key], item, f"{path}.{key}"))
    return out


def _check(hint: Any, value: Any, path: str) -> list[str]:
    origin = get_origin(hint)
    if origin is Required:
        return _check(get_args(hint)[0], value, path)
    if origin in (Union, types.UnionType):
        tries = [_check(option, value, path) for option in get_args(hint)]
        return [] if any(not t for t in tries) else tries[0]
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{path} is {value!r}, not one of the kinds"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path} is not a list"]
        return [
            p for i, v in enumerate(value) for p in _check(get_args(hint)[0], v, f"{path}[{i}]")
        ]
    if isinstance(hint, type) and hasattr(hint, "__required_keys__"):
        return _typed_dict(hint, value, path)
    if hint is type(None):
        return [] if value is None else [f"{path} is not null"]
    ok = isinstance(value, hint) and not (hint in (int, float) and isinstance(value, bool))
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    return [] if ok else [f"{path} is {type(value).__name__}, not {hint.__name__}"]
