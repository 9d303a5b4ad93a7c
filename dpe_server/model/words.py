"""The words of an element's text content, and whether a Markdown body carries them.

An element's *text content* is every string and every number (not booleans) found by walking
its `content` JSON, except under the keys of `NOT_WORDS` (binary data, identifiers, layout and
closed vocabularies that the Markdown shows as markup or leaves to JSON: `mime_type`, `kind`,
`level`, a header's raw `code`, a control's `tag`...). Each string counts line by
line (a non-blank line is a *phrase*); a number counts as its `str()` (a chart's values are
the point of the chart). A checkbox field's `value` is shown by its `[x]`/`[ ]` mark (its
`checked`) instead.
A table's and a pivot table's own structure (its `name`, its source's `fields`,
`row_fields`...) is left to JSON. A picture of a table says its words twice, as its recognised
`text` (line by line) and as its `table`: they count once, as the table's cells.

What a Level 2 page does not hold is not asked for: a table's rows past the preview (Level 2
content has only the preview; the Markdown links to Level 3) and a chart's data rows past
`CHART_PREVIEW_ROWS` (`chart_data`; the Markdown says how many are left out and where to read them).

The search index (`catalog/fulltext.py`) holds the same text of each element (`element_text`),
of its whole content (every row of a table, not only the preview).

Containment is checked on normalised text: Markdown's backslash escapes undone, `<br>` read
as a line break, whitespace collapsed to one space.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from dpe_server.model.chart_data import CHART_PREVIEW_ROWS, chart_table
from dpe_server.model.tree import JSON

NOT_WORDS: Final = frozenset(
    {
        # binary data and identifiers
        "mime_type",
        "class_id",
        "nested_tables",
        "tag",
        "linked_cell",
        "location",
        "source",
        "cell",
        "code",
        # layout, structure and closed vocabularies shown as markup or left to JSON
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
        # a sentence made of the other fields (a chart's points, a diagram's nodes)
        "data_summary",
    }
)
"""Keys whose values are not words a reader needs in the Markdown (see the module doc)."""

_TABLE_STRUCTURE: Final = frozenset(
    {"name", "fields", "data_fields", "row_fields", "column_fields", "page_fields"}
)
_ESCAPE = re.compile(r"\\([\\\[\]|`*_])")


def normalise(text: str) -> str:
    """`text` as compared: escapes undone, `<br>` a space, whitespace collapsed."""
    if "\\" not in text and "<br>" not in text:  # nothing to undo (most texts)
        return " ".join(text.split())
    return " ".join(_ESCAPE.sub(r"\1", text.replace("<br>", "\n")).split())


def phrases(category: str, content: Mapping[str, JSON]) -> list[str]:
    """The phrases of an element's text content at Level 2 (see the module doc), in order."""
    return [p for key in content for p in key_phrases(category, content, key)]


def _no_words(category: str, content: Mapping[str, JSON], key: str) -> bool:
    """`content[key]` says no words a reader needs (see the module doc)."""
    if key in NOT_WORDS or (category in ("table", "pivot_table") and key in _TABLE_STRUCTURE):
        return True
    return category == "image" and key == "text" and "table" in content  # the cells' words


def key_phrases(category: str, content: Mapping[str, JSON], key: str) -> list[str]:
    """The phrases of `content[key]` (see the module doc)."""
    value = content[key]
    if _no_words(category, content, key):
        return []
    if category == "chart" and key == "series":
        return list(_chart_phrases(value))
    if category == "form" and key == "fields" and isinstance(value, list):
        return [p for field in value for p in _field_phrases(field)]
    if isinstance(value, str):  # what `walk` yields of it, without a generator
        return [line.strip() for line in value.splitlines() if line.strip()]
    return list(walk(value))


def missing(category: str, content: Mapping[str, JSON], markdown: str) -> list[str]:
    """The phrases of `content` that the (normalised) `markdown` does not contain."""
    body = normalise(markdown)
    return [p for p in phrases(category, content) if normalise(p) not in body]


def walk(value: JSON) -> Iterator[str]:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, str):
        yield from (line.strip() for line in value.splitlines() if line.strip())
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in NOT_WORDS:
                yield from walk(item)


def _field_phrases(field: JSON) -> Iterator[str]:
    if not isinstance(field, dict):
        yield from walk(field)
        return
    checkbox = field.get("kind") == "checkbox"
    yield from walk({k: v for k, v in field.items() if not (checkbox and k == "value")})


def _chart_phrases(series: JSON) -> Iterator[str]:
    """A chart's data table as Level 2 shows it: its header and first `CHART_PREVIEW_ROWS` rows."""
    headers, rows = chart_table(series)
    yield from walk(headers)
    yield from walk(rows[:CHART_PREVIEW_ROWS])


def element_text(category: str, content: Mapping[str, JSON]) -> str:
    """The text the search index holds of an element: its phrases, whitespace collapsed, one
    a line (no Markdown escapes to undo: they come from the content, not from a body)."""
    parts: list[str] = []
    for key in content:
        if key == "rows" and category in ("table", "pivot_table"):
            cells = _cells_text(content[key])
            if cells is not None:
                parts.extend([cells] if cells else [])
                continue
        value = content[key]
        if isinstance(value, str) and _plain(value):  # its lines, stripped and collapsed already
            parts.extend(
                () if _no_words(category, content, key) else filter(None, value.split("\n"))
            )
        else:
            parts.extend(" ".join(p.split()) for p in key_phrases(category, content, key))
    return "\n".join(parts)


_ODD_SPACE = re.compile(r"[^\S \n]")
"""Whitespace other than a space or a newline (a tab, a line separator...)."""
_ODD_ASCII = ("\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def _plain(text: str) -> bool:
    """No whitespace a phrase would collapse or cut: newlines and single spaces inside lines
    only (C-level searches; the one regular expression only for text beyond ASCII)."""
    if "  " in text or " \n" in text or "\n " in text or text[:1] == " " or text[-1:] == " ":
        return False
    if text.isascii():
        return not any(c in text for c in _ODD_ASCII)
    return _ODD_SPACE.search(text) is None


def _cells_text(rows: JSON) -> str | None:
    """A table's rows (lists of strings) as `element_text` gives them, in a few C-level calls
    rather than a generator per cell (a 50,000 x 10 sheet is 500,000 cells): cells joined a
    line each, empty lines left out; where whitespace needs collapsing, phrase by phrase.
    None for rows of another shape (`walk` reads them)."""
    if not isinstance(rows, list) or (rows and set(map(type, rows)) != {list}):
        return None
    try:
        text = "\n".join(map("\n".join, rows))
    except TypeError:  # a cell that is not a string
        return None
    if _plain(text):
        return "\n".join(filter(None, text.split("\n")))
    return "\n".join(" ".join(p.split()) for p in walk(rows))
