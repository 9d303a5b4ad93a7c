"""A chart's series as one data table, for the Markdown and text renderings (and the words
they must carry, `words`).

Series that share their categories make a wide table: one row per category, one column per
series (`| | Revenue | Costs |`). Series with categories of their own (a scatter chart, series
of different lengths) make a long table: one row per point (`| series | category | value |`).
At Level 2 the table stops after `CHART_PREVIEW_ROWS` rows and says how many points it left
out; Level 3 shows every row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from dpe_server.model.tree import JSON

CHART_PREVIEW_ROWS: Final = 20
"""Rows of a chart's data table that Level 2 shows (the rest: Level 3)."""

Row = list[JSON]


def chart_table(series: JSON) -> tuple[Row, list[Row]]:
    """The header and rows of the data table of a chart's `series`."""
    all_series = [s for s in series if isinstance(s, dict)] if isinstance(series, list) else []
    if not all_series:
        return [], []
    names: Row = [s.get("name") or "" for s in all_series]
    values = [_list(s.get("values")) for s in all_series]
    categories = [_list(s.get("categories")) for s in all_series]
    shared = categories[0]
    longest = max(len(v) for v in values)
    if all(c == shared for c in categories) and (not shared or longest <= len(shared)):
        labels: Row = list(shared) if shared else list(range(1, longest + 1))
        rows = [
            [label, *(v[i] if i < len(v) else None for v in values)]
            for i, label in enumerate(labels)
        ]
        return ["", *names], rows
    long_rows = [
        [name, cats[i] if i < len(cats) else None, value]
        for name, cats, vals in zip(names, categories, values, strict=True)
        for i, value in enumerate(vals)
    ]
    return ["series", "category", "value"], long_rows


def points(headers: Sequence[JSON], rows: Sequence[Sequence[JSON]]) -> int:
    """How many data points `rows` of a chart table hold (values that are not empty)."""
    wide = headers[:1] == [""]
    cells = [v for row in rows for v in (row[1:] if wide else row[2:])]
    return sum(v is not None and v != "" for v in cells)


def _list(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []
