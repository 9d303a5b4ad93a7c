"""The small parts of a worksheet: merges, links, notes and comments, validations, print
header and footer, Excel tables and pivot tables. Each reader takes parsed XML (the sheet's
tail from `scan`, or a part from `Package.xml`) and returns plain data or `Item`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml import etree

from dpe_server.extractors.kit.a1 import parse_range
from dpe_server.extractors.kit.package import Package, Relationship
from dpe_server.extractors.kit.threads import as_reply
from dpe_server.extractors.kit.xml import local
from dpe_server.extractors.xlsx.book import kid, kids, rel_id, string_item, walk
from dpe_server.extractors.xlsx.cells import Item, Rect, SheetCells
from dpe_server.model import summaries
from dpe_server.model.content import (
    AnnotationContent,
    FieldKind,
    FormContent,
    FormField,
    HeaderFooterContent,
    LinkContent,
)
from dpe_server.model.tree import Category

MAX_OPTIONS = 200
"""Allowed values listed for one validation at most."""


def merges(tail: etree._Element) -> list[Rect]:
    out: list[Rect] = []
    for m in walk(tail, "mergeCell"):
        rect = parse_range(m.get("ref", ""))
        if rect is not None:
            out.append(rect)
    return out


def hyperlink_items(
    tail: etree._Element, rels: dict[str, Relationship], cells: SheetCells
) -> list[Item]:
    items: list[Item] = []
    for h in walk(tail, "hyperlink"):
        ref = h.get("ref", "")
        rect = parse_range(ref)
        rid = rel_id(h)
        rel = rels.get(rid) if rid else None
        url = rel.target if rel is not None else ""
        location = h.get("location", "")
        if location:
            url = f"{url}#{location}" if url else f"#{location}"
        if not url:
            continue
        shown = cells.get(rect[0], rect[1]) if rect else ""
        text = h.get("display") or shown or url
        content: LinkContent = {"text": text, "url": url, "cell": ref, "internal": rel is None}
        if tooltip := h.get("tooltip"):
            content["tooltip"] = tooltip
        order = (rect[0], rect[1]) if rect else (0, 0)
        items.append(
            Item(Category.LINK, summaries.link(text, url), content, {"source_range": ref}, order)
        )
    return items


def comment_items(
    pkg: Package,
    rels: dict[str, Relationship],
    people: dict[str, str],
) -> list[Item]:
    """Threaded comments (with replies) first, then legacy notes on other cells."""
    items: list[Item] = []
    threaded_cells: set[str] = set()
    for rel in rels.values():
        if rel.type_name == "threadedComment" and pkg.has(rel.target):
            for item in _threaded(pkg.xml(rel.target), people):
                threaded_cells.add(str(item.content["anchor"]))
                items.append(item)
    for rel in rels.values():
        if rel.type_name == "comments" and pkg.has(rel.target):
            items.extend(_notes(pkg.xml(rel.target), threaded_cells))
    items.sort(key=lambda it: it.order)
    return items


def _notes(root: etree._Element, skip: set[str]) -> list[Item]:
    authors = [(a.text or "").strip() for a in kids(kid(root, "authors"), "author")]
    out: list[Item] = []
    for c in walk(root, "comment"):
        ref = c.get("ref", "")
        if ref in skip:
            continue
        body = kid(c, "text")
        text = string_item(body) if body is not None else ""
        idx = c.get("authorId", "")
        author = authors[int(idx)] if idx.isdigit() and int(idx) < len(authors) else ""
        if author and text.startswith(author + ":"):
            text = text[len(author) + 1 :].lstrip()
        content: AnnotationContent = {"text": text.strip(), "kind": "note", "anchor": ref}
        if author:
            content["author"] = author
        rect = parse_range(ref)
        out.append(
            Item(
                Category.ANNOTATION,
                summaries.annotation(text, "note", author or None),
                content,
                {"source_range": ref},
                (rect[0], rect[1]) if rect else (0, 0),
            )
        )
    return out


def _threaded(root: etree._Element, people: dict[str, str]) -> list[Item]:
    threads: dict[str, AnnotationContent] = {}
    order: list[str] = []
    for c in walk(root, "threadedComment"):
        text = "".join(t.text or "" for t in walk(c, "text"))
        author = people.get(c.get("personId", ""), "").strip()
        parent = c.get("parentId")
        if parent and parent in threads:
            reply = as_reply({"author": author, "text": text, "date": c.get("dT")})
            threads[parent].setdefault("replies", []).append(reply)
            continue
        cid = c.get("id", str(len(order)))
        content: AnnotationContent = {"text": text, "kind": "comment", "anchor": c.get("ref", "")}
        if author:
            content["author"] = author
        if date := c.get("dT"):
            content["date"] = date
        if c.get("done") in ("1", "true"):
            content["resolved"] = True
        threads[cid] = content
        order.append(cid)
    out: list[Item] = []
    for cid in order:
        content = threads[cid]
        ref = content.get("anchor", "")
        rect = parse_range(ref)
        out.append(
            Item(
                Category.ANNOTATION,
                summaries.annotation(content["text"], "comment", content.get("author")),
                content,
                {"source_range": ref},
                (rect[0], rect[1]) if rect else (0, 0),
            )
        )
    return out


# --- data validation -----------------------------------------------------------------------------


def _formula_text(el: etree._Element | None) -> str:
    if el is None:
        return ""
    inner = kid(el, "f")
    return ((inner.text if inner is not None else el.text) or "").strip()


def _options(formula: str, resolve: Callable[[str], list[str]]) -> list[str] | None:
    if formula.startswith('"') and formula.endswith('"'):
        return [v.strip() for v in formula[1:-1].split(",")][:MAX_OPTIONS]
    values = resolve(formula)
    return [v for v in values if v][:MAX_OPTIONS] if values else None


_KINDS: dict[str, FieldKind] = {
    "list": "dropdown",
    "whole": "number",
    "decimal": "number",
    "date": "date",
}
"""Validation types that say what the cells hold; the others (`textLength`, `time`, `custom`,
`any`) are kind `validation`."""


def validation_items(tail: etree._Element, resolve: Callable[[str], list[str]]) -> list[Item]:
    """One form element per data validation: the cells it governs and what they allow."""
    items: list[Item] = []
    for dv in walk(tail, "dataValidation"):
        sqref = dv.get("sqref") or ""
        if not sqref:
            node = kid(dv, "sqref")
            sqref = (node.text or "") if node is not None else ""
        kind = dv.get("type", "any")
        f1 = _formula_text(kid(dv, "formula1"))
        f2 = _formula_text(kid(dv, "formula2"))
        field: FormField = {
            "name": sqref,
            "type": kind,
            "value": "",
            "label": sqref,
            "kind": _KINDS.get(kind, "validation"),
        }
        if kind == "list":
            options = _options(f1, resolve)
            if options is not None:
                field["options"] = options
            if not f1.startswith('"'):
                field["source"] = f1
        elif kind != "any":
            op = dv.get("operator", "between")
            field["rule"] = f"{op} {f1} and {f2}" if f2 else f"{op} {f1}".strip()
        for attr in ("prompt", "promptTitle", "error", "errorTitle"):
            if text := dv.get(attr):
                field[attr] = text
        first = parse_range(sqref.split()[0]) if sqref else None
        items.append(
            Item(
                Category.FORM,
                summaries.form([field]) + f" ({kind})",
                FormContent(fields=[field], kind="data_validation"),
                {"source_range": sqref},
                (first[0], first[1]) if first else (0, 0),
            )
        )
    return items


# --- print header and footer --------------------------------------------------------------------

_CODES = {
    "P": "{page}",
    "N": "{pages}",
    "D": "{date}",
    "T": "{time}",
    "F": "{file}",
    "A": "{sheet}",
    "Z": "{path}",
    "G": "{picture}",
}


def header_footer_text(code: str) -> str:
    """`&L&"Arial,Bold"Left&CPage &P of &N&R&D` → `Left | Page {page} of {pages} | {date}`."""
    sections: dict[str, str] = {"L": "", "C": "", "R": ""}
    current = "C"
    i = 0
    buf: list[str] = []
    while i < len(code):
        ch = code[i]
        if ch != "&" or i + 1 >= len(code):
            buf.append(ch)
            i += 1
            continue
        nxt = code[i + 1]
        if nxt in "LCR":
            sections[current] += "".join(buf)
            buf = []
            current = nxt
            i += 2
        elif nxt == "&":
            buf.append("&")
            i += 2
        elif nxt == '"':
            end = code.find('"', i + 2)
            i = end + 1 if end >= 0 else len(code)
        elif nxt.upper() in _CODES:
            buf.append(_CODES[nxt.upper()])
            i += 2
        elif nxt.isdigit():
            m = re.match(r"\d+", code[i + 1 :])
            i += 1 + (len(m.group(0)) if m else 1)
        else:
            i += 2  # &B &I &U &S &X &Y &K..: formatting only
            if nxt == "K":
                i += 6
    sections[current] += "".join(buf)
    return " | ".join(s.strip() for s in sections.values() if s.strip())


def header_footer_items(tail: etree._Element) -> list[Item]:
    hf = next(walk(tail, "headerFooter"), None)
    if hf is None:
        return []
    items: list[Item] = []
    for el in hf:
        name = local(el)
        text = header_footer_text(el.text or "")
        if not text or not name.endswith(("Header", "Footer")):
            continue
        which = name[: -len("Header")] if name.endswith("Header") else name[: -len("Footer")]
        is_header = name.endswith("Header")
        category = Category.HEADER if is_header else Category.FOOTER
        summary = summaries.header(text) if is_header else summaries.footer(text)
        items.append(
            Item(category, summary, HeaderFooterContent(text=text, pages=which, code=el.text or ""))
        )
    return items
