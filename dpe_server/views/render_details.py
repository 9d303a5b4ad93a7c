"""What the Markdown and text renderings say beyond an element's first line, so that every
word of its text content (`words`) reaches the reader: a chart's data table, an annotation's
author, text and replies, a form's fields, and any other phrase the first line leaves out
(a long header's text, a diagram's nodes, a medium's URL) as a short list under it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dpe_server.model.chart_data import CHART_PREVIEW_ROWS, chart_table, points
from dpe_server.model.tree import JSON
from dpe_server.model.words import NOT_WORDS, key_phrases, normalise, walk

_FIELD_SHOWN = frozenset({"name", "label", "title", "value", "options", "type", "checked"})
_LINES = frozenset({"text", "nodes"})  # shown as lines of their own, with no `key:` label


def chart_data(content: Mapping[str, JSON], markdown: bool, uri: str, full: bool) -> str:
    """A chart's data table under its first line; at Level 2 capped, saying what it left out."""
    headers, rows = chart_table(content.get("series"))
    if not rows:
        return ""
    shown = rows if full else rows[:CHART_PREVIEW_ROWS]
    table = pipe_table(headers, shown) if markdown else tab_table(headers, shown)
    left = points(headers, rows) - points(headers, shown)
    if not left:
        return table
    note = f"{left} more data point{'' if left == 1 else 's'} left out; all of them: {uri}"
    return table + (f"\n\n*{note}*" if markdown else f"\n({note})")


def annotation(content: Mapping[str, JSON], markdown: bool) -> str:
    """`Comment by Author (resolved) (on “anchor”): text`, then each reply; an absent author
    is omitted, `(resolved)` only for a resolved thread."""
    lines = [_note_line(content, str(content.get("kind") or "annotation"))]
    replies = content.get("replies")
    for reply in replies if isinstance(replies, list) else []:
        if isinstance(reply, dict):
            reply_lines = _note_line(reply, "reply").splitlines()
            lines.append(("- " if markdown else "  ") + " ".join(reply_lines))
    text = "\n".join(lines)
    return "\n".join(f"> {line}" for line in text.splitlines()) if markdown else text


def _note_line(note: Mapping[str, JSON], kind: str) -> str:
    head = kind.replace("_", " ").capitalize()
    author = _one_line(note.get("author"))
    head += f" by {author}" if author else ""
    head += " (resolved)" if note.get("resolved") is True else ""
    anchor = note.get("anchor")
    if isinstance(anchor, str | int | float) and not isinstance(anchor, bool) and str(anchor):
        head += f" (on “{_one_line(anchor)}”)"
    lines = list(walk(note.get("text")))
    return "\n".join([f"{head}: {lines[0]}" if lines else f"{head}:", *lines[1:]])


def form(content: Mapping[str, JSON], markdown: bool) -> str:
    """One line per field: `[x] label` for a checkbox, `label: value (options: ...)` else,
    `label (name)` when the field's name differs from its label."""
    fields = content.get("fields")
    lines = [
        ("- " if markdown else "") + _field(f)
        for f in (fields if isinstance(fields, list) else [])
        if isinstance(f, dict)
    ]
    return "\n".join(lines)


def _field(field: Mapping[str, JSON]) -> str:
    name, label = _one_line(field.get("name")), _one_line(field.get("label"))
    label = f"{label} ({name})" if label and name and label != name else label or name
    if field.get("kind") == "checkbox":
        line = f"[{'x' if field.get('checked') is True else ' '}] {label}".rstrip()
    else:
        value = " ".join(walk(field.get("value")))
        line = f"{label}: {value}" if value else label
    facts = [
        f"{key}: {' '.join(walk(value))}"
        for key, value in field.items()
        if key not in _FIELD_SHOWN and key not in NOT_WORDS and any(walk(value))
    ]
    options = ", ".join(walk(field.get("options")))
    facts = [f"options: {options}"] * bool(options) + facts
    return f"{line} ({'; '.join(facts)})" if facts else line


def extras(category: str, content: Mapping[str, JSON], shown: str, markdown: bool) -> str:
    """The phrases of `content` that `shown` (the rendering so far) leaves out, as lines:
    a `text` or a diagram's `nodes` line by line, any other field as `key: value`."""
    if "\\" not in shown and "<br>" not in shown and _all_said(category, content, shown):
        return ""
    body = normalise(shown)
    lines: list[str] = []
    for key in content:
        left = [p for p in key_phrases(category, content, key) if normalise(p) not in body]
        if not left:
            continue
        lines += left if key in _LINES else [f"{key}: {' '.join(left)}"]
    return "\n".join(("- " if markdown else "") + line for line in lines)


def _all_said(category: str, content: Mapping[str, JSON], shown: str) -> bool:
    """Whether `shown` holds, as they are, every string (and number) of `content` that holds
    words (a link's text and URL, a heading's text, a list's items): then it holds each of
    their phrases (what `walk` yields: a stripped line of one of them, a number) as they are,
    and, with no escape nor `<br>` in `shown` to undo, whitespace collapsed (`normalise`) in
    both, so `extras` has nothing to add. Not for a chart's series nor a form's fields, whose
    phrases are made of several fields (`key_phrases`). Saves the phrase-by-phrase comparison
    of most elements (a web page's thousands of links)."""
    if category in ("chart", "form"):
        return False
    for key, value in content.items():  # a loop, not `all` of a generator (every element)
        if key in NOT_WORDS:
            continue
        if type(value) is str:  # (most values: the check `_said` makes first)
            if value not in shown:
                return False
        elif not _said(value, shown):
            return False
    return True


def _said(value: JSON, shown: str) -> bool:
    if isinstance(value, str):
        return value in shown
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return str(value) in shown
    if isinstance(value, list):
        return all(_said(item, shown) for item in value)
    if isinstance(value, dict):
        return all(_said(item, shown) for key, item in value.items() if key not in NOT_WORDS)
    return False  # (not JSON: compared phrase by phrase, as `walk` reads it)


def pipe_table(headers: Sequence[JSON], rows: Sequence[Sequence[JSON]]) -> str:
    width = max([len(headers), *(len(r) for r in rows)], default=0)
    if width == 0:
        return "| |\n|---|"

    def line(cells: Sequence[JSON]) -> str:
        padded = [*cells, *[""] * (width - len(cells))]
        return "| " + " | ".join(_md_cell(v) for v in padded) + " |"

    out = [line(headers), "|" + "---|" * width]
    out += [line(row) for row in rows]
    return "\n".join(out)


def tab_table(headers: Sequence[JSON], rows: Sequence[Sequence[JSON]]) -> str:
    lines = ["\t".join(_cell(h) for h in headers)] if headers else []
    lines += ["\t".join(_cell(v) for v in row) for row in rows]
    return "\n".join(lines)


def _cell(value: JSON) -> str:
    return "" if value is None else str(value).replace("\t", " ").replace("\n", " ")


def _md_cell(value: JSON) -> str:
    text = "" if value is None else str(value)
    return (
        text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")
    )


def _one_line(value: JSON) -> str:
    return " ".join(walk(value))
