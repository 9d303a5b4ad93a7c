"""Renderers: a Level 0–3 JSON payload as `format=markdown` or `format=text` (SPEC §6).

Markdown follows the seed's table: heading `#`×level, text as is, table as a pipe table,
list `1.`/`-` indented by level (an item's number label when it has one: `3.` as the marker,
`- a)` when not decimal), code fenced, chart `[图表: {title}] {data_summary}`, image
`![{description}]({element uri})`, link `[{text}]({url})`, formula `$ {expression} $` then its
result and cells, every other category `[{category}: {summary}]`. Level 2 opens with the page
title as a heading: the page's own heading that says it, at its level, moved to the top (so
no heading is said twice), else `# {title}`; a page titled `Page {N+1}` (a pdf page with no
heading nor outline entry) opens with its first element.
Text is the same content with no markup (tables tab-separated). Pure functions of the
payload: the checker and the goldens use them too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import assert_never

from dpe_server.model.tree import JSON, Category
from dpe_server.model.uri import Output
from dpe_server.views import jsontext
from dpe_server.views import render_details as details
from dpe_server.views.element_cap import cap_element
from dpe_server.views.render_details import pipe_table, tab_table

MIME_TYPES: dict[Output, str] = {
    "json": "application/json",
    "markdown": "text/markdown",
    "text": "text/plain",
}


@dataclass(frozen=True, slots=True)
class Body:
    """One content item of a read: text, or a picture's bytes (base64)."""

    uri: str
    mime_type: str
    text: str | None = None
    blob: str | None = None


def render_capped(
    level: int, payload: dict[str, JSON], fmt: Output, cap: int, size: int | None = None
) -> str:
    """`render`, the payload (a Level 3 element) cut first when its JSON passes `cap` bytes
    (`element_cap`; 0: never); `size`: the payload's `json_size`, if known."""
    return render(level, cap_element(payload, cap, size) if cap > 0 else payload, fmt)


def render(level: int, payload: Mapping[str, JSON], fmt: Output) -> str:
    """The body of a `resources/read` at `level` in `fmt`."""
    if fmt == "json":
        return jsontext.dumps(payload)  # json.dumps(payload, ensure_ascii=False, indent=2)
    markdown = fmt == "markdown"
    if level == 0:
        return _catalog(payload, markdown)
    if level == 1:
        return _document(payload, markdown)
    if level == 2:
        return _page(payload, markdown)
    return render_element(payload, markdown=markdown, full=True)


# ---- Level 0 and 1 ---------------------------------------------------------------------------


def _doc_line(doc: Mapping[str, JSON], markdown: bool) -> str:
    pages = doc.get("page_count", 0)
    facts = f"{doc.get('file_type', '')}, {pages} page{'' if pages == 1 else 's'}"
    facts += f", modified {doc.get('last_modified', '')}"
    error = doc.get("error")
    tail = f" — error ({error['kind']}): {error['message']}" if error else ""
    summary = f": {doc['summary']}" if doc.get("summary") and not error else ""
    if markdown:
        return f"- [{_md_inline(str(doc['title']))}]({doc['uri']}) ({facts}){summary}{tail}"
    return f"{doc['title']}  {doc['uri']}  ({facts}){summary}{tail}"


def _catalog(payload: Mapping[str, JSON], markdown: bool) -> str:
    docs: Sequence[Mapping[str, JSON]] = payload.get("documents") or []
    total = payload.get("total_count", len(docs))
    head = f"Documents ({len(docs)} of {total})" if len(docs) != total else f"Documents ({total})"
    lines = [f"# {head}" if markdown else head, ""]
    lines += [_doc_line(doc, markdown) for doc in docs]
    return "\n".join(lines).rstrip() + "\n"


def _document(payload: Mapping[str, JSON], markdown: bool) -> str:
    title = str(payload.get("title", ""))
    lines = [f"# {_md_inline(title)}" if markdown else title, ""]
    facts = [
        ("doc_ref", payload.get("doc_ref")),
        ("uri", payload.get("uri")),
        ("file", payload.get("file_uri")),
        ("type", payload.get("file_type")),
        ("pages", payload.get("page_count")),
        ("keywords", ", ".join(payload.get("keywords") or [])),
        ("modified", payload.get("last_modified")),
        ("summary", payload.get("summary")),
    ]
    error = payload.get("error")
    if error:
        facts.append(("error", f"{error['kind']}: {error['message']}"))
    for name, value in facts:
        if value in (None, ""):
            continue
        lines.append(f"- **{name}**: {value}" if markdown else f"{name}: {value}")
    pages: Sequence[Mapping[str, JSON]] | None = payload.get("pages")
    if pages is not None:
        first = int(payload.get("page_offset", 0))
        total = payload.get("page_total", len(pages))
        span = f"{first + 1}–{first + len(pages)} of {total}" if pages else f"none of {total}"
        lines += ["", f"## Pages ({span})" if markdown else f"Pages ({span})", ""]
        for page in pages:
            count = page.get("element_count", 0)
            hidden = ", hidden" if page.get("hidden") else ""
            facts_ = f"{count} element{'' if count == 1 else 's'}{hidden}"
            if markdown:
                lines.append(
                    f"{page['page_index']}. [{_md_inline(str(page['title']))}]({page['uri']})"
                    f" ({facts_})"
                )
            else:
                lines.append(f"{page['page_index']}. {page['title']} ({facts_})  {page['uri']}")
    return "\n".join(lines).rstrip() + "\n"


def _page(payload: Mapping[str, JSON], markdown: bool) -> str:
    title = str(payload.get("title", ""))
    elements: Sequence[Mapping[str, JSON]] = payload.get("elements") or []
    doc_uri = str(payload.get("uri", "")).split("/pages/")[0]
    said = _title_heading(title, elements)
    lines: list[str] = []
    if said is not None:  # the page's own heading that is its title, moved to the top
        lines.append(render_element(elements[said], markdown=markdown, full=False).rstrip("\n"))
    elif not untitled(title, payload.get("page_index")):
        lines.append(f"# {_md_inline(title)}" if markdown else title)
    for k, element in enumerate(elements):
        if k == said:
            continue
        # its URI (where the entry names none), without a copy of the entry to say it
        if "uri" in element:
            uri = str(element["uri"])
        else:
            uri = f"{doc_uri}/elements/{element['element_id']}"
        if lines:
            lines.append("")
        lines.append(_element(element, uri, markdown, False).rstrip("\n"))
    return "\n".join(lines).rstrip() + "\n"


def untitled(title: str, page_index: JSON) -> bool:
    """Whether `title` is `Page {N+1}`, the title of a page with no heading nor outline entry
    (pdf): no heading of the page, so Level 2 does not open with it."""
    return isinstance(page_index, int) and title == f"Page {page_index + 1}"


def _title_heading(title: str, elements: Sequence[Mapping[str, JSON]]) -> int | None:
    """The index of the page's first heading that says its title (a slide's title, a
    section's heading, a pdf page's first heading after a chapter number or a running
    header), or None."""
    said = " ".join(title.split())
    heading = Category.HEADING._value_
    for k, el in enumerate(elements):
        if el.get("category") == heading and said == " ".join(
            str((el.get("content") or {}).get("text", "")).split()
        ):
            return k
    return None


# ---- elements --------------------------------------------------------------------------------


_CATEGORIES: dict[object, Category] = {c._value_: c for c in Category}
"""`Category(value)` for a known value, without the enum's call (once per element rendered)."""


def render_element(element: Mapping[str, JSON], *, markdown: bool, full: bool) -> str:
    """One element (a Level 2 entry or a Level 3 payload) as Markdown or text."""
    return _element(element, str(element.get("uri", "")), markdown, full) + "\n"


def _element(element: Mapping[str, JSON], uri: str, markdown: bool, full: bool) -> str:
    """`render_element` of `element` at `uri`, without its last line's end."""
    category = _CATEGORIES.get(element["category"]) or Category(element["category"])
    content: Mapping[str, JSON] = element.get("content") or {}
    summary = str(element.get("summary", ""))
    body = (
        _markdown(category, content, summary, uri)
        if markdown
        else _text(category, content, summary)
    )
    body = _with_details(category, content, body, markdown=markdown, uri=uri, full=full)
    notes = []
    if content.get("rows_truncated"):
        shown = len(content.get("rows") or [])
        total = content.get("total_rows", shown)
        whole = "" if full else f"; the whole table: {uri}"  # Level 3 is cut (below)
        notes.append(f"Showing {shown} of {total} rows{whole}")
    cut: Mapping[str, JSON] | None = element.get("cut")
    if full and cut:
        notes.append(_cut_note(cut))
    for note in notes:
        body += f"\n\n*{note}*" if markdown else f"\n({note})"
    return body


def _cut_note(cut: Mapping[str, JSON]) -> str:
    """What a Level 3 element cut to the size cap says of it (`element_cap`)."""
    note = (
        f"Cut to fit {cut['max_bytes']:,} bytes (the element is {cut['bytes']:,} bytes as JSON): "
        f"{cut['strings_cut']:,} long texts keep their first {cut['kept_chars']:,} characters"
    )
    dropped = sum((cut.get("dropped") or {}).values())
    return note + (f" and {dropped:,} list entries are left out" if dropped else "")


def _markdown(category: Category, c: Mapping[str, JSON], summary: str, uri: str) -> str:
    match category:
        case Category.HEADING:
            level = min(max(int(c.get("level") or 1), 1), 6)
            return "#" * level + " " + _md_inline(str(c.get("text", "")))
        case Category.TEXT:
            return str(c.get("text", ""))
        case Category.LINK:  # (the cases are tried in turn: a web page's most common first)
            return f"[{_md_inline(str(c.get('text') or c.get('url', '')))}]({c.get('url', '')})"
        case Category.TABLE | Category.PIVOT_TABLE:
            headers, rows = c.get("headers") or [], c.get("rows") or []
            if not any(str(v or "").strip() for v in [*headers, *(v for r in rows for v in r)]):
                return f"[{category.value}: {summary}]"  # nothing to tabulate
            return pipe_table(headers, rows)
        case Category.LIST:
            return _list(c)
        case Category.CODE:
            text = str(c.get("text", ""))
            fence = "`" * max(3, _longest_backtick_run(text) + 1)
            return f"{fence}{c.get('language') or ''}\n{text}\n{fence}"
        case Category.CHART:
            return f"[图表: {c.get('title', '')}] {c.get('data_summary', '')}".rstrip()
        case Category.IMAGE:
            description = _md_inline(str(c.get("description", "")))
            shown = f"![{description}]({uri})" if uri else f"[图片: {description}]"
            table, seen = c.get("table"), str(c.get("text") or "")
            if isinstance(table, dict):
                return f"{shown}\n\n" + pipe_table(
                    table.get("headers") or [], table.get("rows") or []
                )
            return f"{shown}\n\n" + "  \n".join(seen.splitlines()) if seen else shown
        case Category.FORMULA:
            return f"$ {c.get('expression', '')} $" + _formula_facts(c)
        case Category.ANNOTATION:
            return details.annotation(c, markdown=True)
        case Category.FORM:
            return details.form(c, markdown=True) or f"[{category.value}: {summary}]"
        case (
            Category.DIAGRAM
            | Category.HEADER
            | Category.FOOTER
            | Category.SEPARATOR
            | Category.AUDIO
            | Category.VIDEO
            | Category.WIDGET
        ):
            return f"[{category.value}: {summary}]"
        case _:
            assert_never(category)


def _text(category: Category, c: Mapping[str, JSON], summary: str) -> str:
    match category:
        case Category.HEADING | Category.TEXT | Category.CODE:
            return str(c.get("text", ""))
        case Category.TABLE | Category.PIVOT_TABLE:
            body = tab_table(c.get("headers") or [], c.get("rows") or [])
            return body if body.strip() else f"{category.value}: {summary}"
        case Category.LIST:
            return _list(c)
        case Category.CHART:
            return f"图表: {c.get('title', '')}\n{c.get('data_summary', '')}".rstrip()
        case Category.IMAGE:
            table = c.get("table")
            if isinstance(table, dict):
                seen = tab_table(table.get("headers") or [], table.get("rows") or [])
            else:
                seen = str(c.get("text") or "")
            return f"图片: {c.get('description', '')}\n{seen}".strip()
        case Category.LINK:
            text, url = c.get("text") or "", c.get("url", "")
            return f"{text} ({url})" if text and text != url else str(url)
        case Category.FORMULA:
            return str(c.get("expression", "")) + _formula_facts(c)
        case Category.ANNOTATION:
            return details.annotation(c, markdown=False)
        case Category.FORM:
            return details.form(c, markdown=False) or f"{category.value}: {summary}"
        case (
            Category.DIAGRAM
            | Category.HEADER
            | Category.FOOTER
            | Category.SEPARATOR
            | Category.AUDIO
            | Category.VIDEO
            | Category.WIDGET
        ):
            return f"{category.value}: {summary}"
        case _:
            assert_never(category)


def _formula_facts(c: Mapping[str, JSON]) -> str:
    """What follows a formula's expression: ` → 150 · D4:D8 (5 cells)` (the first cell's
    result, then the cells the formula covers)."""
    out = f" → {c['result']}" if c.get("result") not in (None, "") else ""
    count = c.get("cell_count")
    if c.get("cells"):
        many = f" ({count} cells)" if isinstance(count, int) and count > 1 else ""
        out += f" · {c['cells']}{many}"
    return out


def _with_details(
    category: Category, c: Mapping[str, JSON], body: str, *, markdown: bool, uri: str, full: bool
) -> str:
    """`body` followed by what it leaves out of the element's text content (`words`): a
    chart's data table, then any phrase not yet said."""
    if category is Category.CHART:
        parts = [body, details.chart_data(c, markdown, uri, full)]
        parts.append(details.extras(category._value_, c, "\n".join(parts), markdown))
        return "\n\n".join(part for part in parts if part)
    if category is Category.TABLE or category is Category.PIVOT_TABLE:
        return body
    if category is Category.TEXT and len(c) == 1 and isinstance(c.get("text"), str):
        return body  # its body is its text, which says each of its lines: nothing is left out
    extra = details.extras(category._value_, c, body, markdown)
    return f"{body}\n\n{extra}" if body and extra else body or extra


def _list(c: Mapping[str, JSON]) -> str:
    """One line per item; a deeper item is indented to where the text of the item above it
    at a shallower level begins (3 spaces under `1. `, 2 under `- `), so CommonMark nests it;
    2 more spaces per level skipped."""
    ordered = bool(c.get("ordered"))
    counters: dict[int, int] = {}
    columns: dict[int, int] = {}  # level → where the text of its last item begins
    lines = []
    for item in c.get("items") or []:
        level = max(int(item.get("level") or 0), 0)
        counters = {lvl: n for lvl, n in counters.items() if lvl <= level}
        counters[level] = counters.get(level, 0) + 1
        columns = {lvl: col for lvl, col in columns.items() if lvl < level}
        parent = max(columns, default=-1)
        indent = columns.get(parent, 0) + 2 * (level - parent - 1)
        marker = _list_marker(item.get("label"), counters[level] if ordered else None)
        columns[level] = indent + len(marker.split(" ", 1)[0]) + 1
        lines.append(f"{' ' * indent}{marker} {item.get('text', '')}")
    return "\n".join(lines)


def _list_marker(label: JSON, counter: int | None) -> str:
    """`1.` / `-` (SPEC §6); an item's number label when it has one: a decimal label (`3.`,
    `3)`) is the Markdown marker itself, any other (`a)`, `iv.`, `1.2.`, `一、`) follows a `-`
    so the line stays a list item."""
    if isinstance(label, str) and label:
        return label if _DECIMAL_MARKER.fullmatch(label) else f"- {label}"
    return "-" if counter is None else f"{counter}."


_BACKTICKS = re.compile(r"`+")
_DECIMAL_MARKER = re.compile(r"[0-9]{1,9}[.)]")


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def _md_inline(text: str) -> str:
    """Text safe inside link brackets and headings: brackets escaped, one line."""
    return " ".join(text.split()).replace("[", "\\[").replace("]", "\\]")
