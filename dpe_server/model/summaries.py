"""One-line element summaries, the same wording for every format (SPEC §4).

A summary says what the element is plus its size, in at most 120 characters, so a model can
decide from Level 2 whether to read the element in full ("Table: Quarter, Revenue, Growth
(4 rows × 3 columns)"). Extractors call these rather than inventing their own phrasing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dpe_server.model.tree import JSON, one_line


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def text(value: str) -> str:
    return one_line(value)


def heading(value: str, level: int) -> str:
    return one_line(value)


def table(headers: Sequence[str], total_rows: int, total_columns: int, name: str = "") -> str:
    size = f"({_plural(total_rows, 'row')} × {_plural(total_columns, 'column')})"
    label = name or ", ".join(h for h in headers if h)
    head = f"Table: {label}" if label else "Table"
    return one_line(f"{one_line(head, 120 - len(size) - 1)} {size}")


def list_(items: Sequence[Mapping[str, JSON]], ordered: bool) -> str:
    kind = "Numbered list" if ordered else "List"
    first = str(items[0].get("text", "")) if items else ""
    size = f"({_plural(len(items), 'item')})"
    return one_line(f"{kind} {size}: {first}")


def code(value: str, language: str | None = None) -> str:
    lines = value.count("\n") + 1 if value else 0
    first = value.strip().splitlines()[0] if value.strip() else ""
    lang = f"{language} code" if language else "Code"
    return one_line(f"{lang} ({_plural(lines, 'line')}): {first}")


def chart(chart_type: str, title: str, series: Sequence[Mapping[str, JSON]]) -> str:
    points = max((len(s.get("values") or []) for s in series), default=0)
    size = f"({len(series)} series, {_plural(points, 'point')})"
    label = f"{chart_type.capitalize()} chart"
    return one_line(f"{label}: {title} {size}" if title else f"{label} {size}")


def pivot_table(name: str, total_rows: int, total_columns: int) -> str:
    return one_line(
        f"Pivot table {name} ({_plural(total_rows, 'row')} × {_plural(total_columns, 'column')})"
    )


def diagram(kind: str, nodes: Sequence[str]) -> str:
    first = ", ".join(n for n in nodes[:4] if n)
    return one_line(f"Diagram ({kind}, {_plural(len(nodes), 'node')}): {first}")


def image(description: str, mime_type: str, width: int | None, height: int | None) -> str:
    kind = mime_type.rsplit("/", maxsplit=1)[-1] if mime_type else "image"
    size = f", {width}×{height}" if width and height else ""
    label = f"Image: {description}" if description else "Image"
    return one_line(f"{label} ({kind}{size})")


def formula(expression: str, cells: str | None = None) -> str:
    where = f" over {cells}" if cells else ""
    return one_line(f"Formula{where}: {expression}")


def link(text_: str, url: str) -> str:
    return one_line(f"Link: {text_} → {url}" if text_ and text_ != url else f"Link: {url}")


def annotation(text_: str, kind: str, author: str | None = None) -> str:
    label = kind.replace("_", " ").capitalize()
    by = f" by {author}" if author else ""
    return one_line(f"{label}{by}: {text_}")


def header(text_: str) -> str:
    """A header's text alone: its category says it is a header (Markdown renders
    `[header: {summary}]`, so a `Header:` label here would say it twice)."""
    return one_line(text_)


def footer(text_: str) -> str:
    """A footer's text alone (see `header`)."""
    return one_line(text_)


def separator(kind: str) -> str:
    return kind.replace("_", " ").capitalize()


def media(name: str, mime_type: str) -> str:
    """`name (mime type)`: the category (audio, video) is said by the element itself."""
    return one_line(f"{name} ({mime_type})" if name else mime_type)


def form(fields: Sequence[Mapping[str, JSON]]) -> str:
    names = ", ".join(str(f.get("name", "")) for f in fields[:5])
    return one_line(f"Form ({_plural(len(fields), 'field')}): {names}")


def widget(kind: str, name: str, text_: str | None = None) -> str:
    label = f"{kind.replace('_', ' ').capitalize()} {name}".strip()
    return one_line(f"{label}: {text_}" if text_ else label)
