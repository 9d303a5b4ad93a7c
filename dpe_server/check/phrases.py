"""What the check judges a served page by, written here from docs/spec.md's account, never
imported from the server: the phrases of an element's text content that its Level 2 Markdown
must carry (`lost`), and the part a cut string kept (`kept`).

The server has its own (`model/words.py`, `views/element_cap.py`); were the check to import
them, a mistake in them would be copied into the judge and never caught. The two are kept in
agreement by the contract, and `tests/test_check_phrases.py` compares them on every fixture.

A phrase is a non-blank line of a string, or a number as Python writes it, found anywhere in an
element's `content` except under the keys of `UNSPOKEN` (identifiers, binary data, layout and
closed vocabularies the Markdown shows as markup or leaves to JSON). Three categories say
their words in their own way: a chart's series count as the data table Level 2 draws (its
header, then its first `CHART_ROWS` rows); a form's checkbox says its value by its mark; a
picture of a table says its words once, as the table. A table's and a pivot table's own
structure (name, fields) is left to JSON. Markdown is compared with its escapes undone,
`<br>` as a break, and runs of white space as one space.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

UNSPOKEN: Final = frozenset(
    [
        "mime_type",
        "class_id",
        "nested_tables",
        "tag",
        "linked_cell",
        "location",
        "source",
        "cell",
        "code",
        "kind",
        "type",
        "chart_type",
        "bar_direction",
        "grouping",
        "shape",
        "edges",
        "variant",
        "pages",
        "level",
        "ordered",
        "start",
        "direction",
        "width",
        "height",
        "target_page",
        "total_rows",
        "total_columns",
        "rows_truncated",
        "format",
        "date",
        "language",
        "data_summary",
    ]
)
TABLE_STRUCTURE: Final = frozenset(
    ["name", "fields", "data_fields", "row_fields", "column_fields", "page_fields"]
)
CHART_ROWS: Final = 20
"""The rows of a chart's data table Level 2 shows (docs/spec.md)."""
CUT: Final = re.compile(r"(?s)(.*)…\[cut: [\d,]+ characters in all\]\Z")
"""A cut string: what it kept, then the cut's marker with the original length."""
_ESCAPED: Final = re.compile(r"\\([\\\[\]|`*_])")


def flat(markdown: str) -> str:
    """Markdown as compared: escapes undone, `<br>` a break, white space one space."""
    return " ".join(_ESCAPED.sub(r"\1", markdown.replace("<br>", "\n")).split())


def lost(category: str, content: Mapping[str, Any], body: str) -> list[str]:
    """The phrases of an element's `content` that `body` (a page's Markdown, `flat`) does not
    carry. The page is flattened once by the caller, not once for each of its elements (a sheet
    of thousands of cells made that quadratic)."""
    return [p for p in said(category, content) if flat(p) not in body]


def said(category: str, content: Mapping[str, Any]) -> Iterator[str]:
    """The phrases of an element's `content`, in order."""
    tabular = category in ("table", "pivot_table")
    for key, value in content.items():
        if key in UNSPOKEN or (tabular and key in TABLE_STRUCTURE):
            continue
        if category == "image" and key == "text" and "table" in content:
            continue
        if category == "chart" and key == "series":
            header, rows = _chart(value)
            yield from _words([header, rows[:CHART_ROWS]])
        elif category == "form" and key == "fields" and isinstance(value, list):
            for field in value:
                boxed = isinstance(field, dict) and field.get("kind") == "checkbox"
                yield from _words(
                    {k: v for k, v in field.items() if k != "value"} if boxed else field
                )
        else:
            yield from _words(value)


def kept(text: str) -> str | None:
    """What a cut string kept of its original (None: it is not cut)."""
    cut = CUT.match(text)
    return cut.group(1) if cut else None


def _words(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from (line.strip() for line in value.splitlines() if line.strip())
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, list):
        for item in value:
            yield from _words(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in UNSPOKEN:
                yield from _words(item)


def _chart(series: Any) -> tuple[list[Any], list[list[Any]]]:
    """A chart's data table: one row per category with a column per series when every series
    has the same categories (and no more values than them), else one row per point."""
    every = [s for s in series if isinstance(s, dict)] if isinstance(series, list) else []
    if not every:
        return [], []
    names = [s.get("name") or "" for s in every]
    values = [_seq(s.get("values")) for s in every]
    cats = [_seq(s.get("categories")) for s in every]
    longest = max(len(v) for v in values)
    if all(c == cats[0] for c in cats) and (not cats[0] or longest <= len(cats[0])):
        labels = list(cats[0]) or list(range(1, longest + 1))
        wide = [
            [label, *(v[i] if i < len(v) else None for v in values)]
            for i, label in enumerate(labels)
        ]
        return ["", *names], wide
    long = [
        [name, c[i] if i < len(c) else None, value]
        for name, c, v in zip(names, cats, values, strict=True)
        for i, value in enumerate(v)
    ]
    return ["series", "category", "value"], long


def _seq(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []
