"""Page and element rules (SPEC §2, §4): Level 2 and Level 3 payloads and element `content`
per category. Same conventions as `rules.py`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, get_args

from dpe_server.check import fidelity, phrases, spec
from dpe_server.check.report import Problem, problem_if, rule
from dpe_server.check.rules import JSON, span
from dpe_server.check.shapes import Kind, all_kind, fields, items_of
from dpe_server.model.content import FieldKind
from dpe_server.model.integers import uint_or_none

L2_FIELDS: Final[dict[str, Kind]] = {
    "page_index": "int",
    "title": "str",
    "doc_ref": "str",
    "uri": "str",
    "elements": "list",
    "element_count": "int",
}
L2_ELEMENT_FIELDS: Final[dict[str, Kind]] = {
    "element_id": "str",
    "category": "str",
    "summary": "str",
    "content": "object",
}
L3_FIELDS: Final[dict[str, Kind]] = {
    "element_id": "str",
    "category": "str",
    "doc_ref": "str",
    "page_index": "int",
    "uri": "str",
    "summary": "str",
    "content": "object",
    "metadata": "object",
}


# ---- Level 2 ---------------------------------------------------------------------------------


@rule(
    "L2.fields",
    "Level 2 is {page_index, title, doc_ref, uri, elements: [{element_id, "
    "category, summary, content}], element_count}",
)
def l2_fields(payload: JSON, host: str, doc_ref: str, index: int) -> list[Problem]:
    out = fields(payload, L2_FIELDS)
    if out:
        return out
    out += items_of(payload["elements"], L2_ELEMENT_FIELDS, None, "elements")
    out += problem_if(payload["page_index"] != index, f"page_index {index}", payload["page_index"])
    out += problem_if(payload["doc_ref"] != doc_ref, f"doc_ref {doc_ref}", payload["doc_ref"])
    uri = f"dpe://{host}/{doc_ref}/pages/{index}"
    out += problem_if(payload["uri"] != uri, uri, payload["uri"])
    return out


@rule("L2.element_count", "element_count equals the number of elements returned")
def l2_element_count(payload: JSON) -> list[Problem]:
    if not isinstance(payload, dict) or not isinstance(payload.get("elements"), list):
        return []
    n = len(payload["elements"])
    return problem_if(
        payload.get("element_count") != n, f"element_count {n}", payload.get("element_count")
    )


@rule("L2.category", "every element's category is one of the 19")
def l2_category(elements: Sequence[JSON]) -> list[Problem]:
    bad = [e.get("category") for e in elements if e.get("category") not in spec.ABBR]
    return problem_if(bool(bad), "categories among the 19 of SPEC §2", bad)


@rule("L2.element_id", "element ids are p{page}-{abbr}{n}, abbr matching the category")
def l2_element_id(elements: Sequence[JSON], index: int) -> list[Problem]:
    out: list[Problem] = []
    for e in elements:
        eid, cat = str(e.get("element_id")), e.get("category")
        m = spec.ELEMENT_ID_RE.fullmatch(eid)
        want = f"p{index}-{spec.ABBR.get(str(cat), '?')}{{n}}"
        if (
            m is None
            or uint_or_none(m[1]) != index
            or uint_or_none(m[3]) is None
            or m[2] != spec.ABBR.get(str(cat))
        ):
            out.append(Problem(f"an id like {want} for a {cat}", eid))
    return out[:5]


@rule("L2.element_numbering", "n counts each category within the page from 1 (1, 2, 3...)")
def l2_element_numbering(elements: Sequence[JSON]) -> list[Problem]:
    seen: dict[str, list[int]] = defaultdict(list)
    for e in elements:
        m = spec.ELEMENT_ID_RE.fullmatch(str(e.get("element_id")))
        n = uint_or_none(m[3]) if m else None  # an n of 19 digits or more fails L2.element_id
        if m and n is not None:
            seen[m[2]].append(n)
    out: list[Problem] = []
    for abbr, ns in seen.items():
        want = list(range(1, len(ns) + 1))
        if sorted(ns) != want:
            out.append(Problem(f"{abbr} numbered {span(want)}", str(sorted(ns))))
    return out


@rule("L2.unique_ids", "element ids are unique within a document")
def l2_unique_ids(ids: Sequence[str]) -> list[Problem]:
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    return problem_if(bool(dupes), "no id twice in the document", dupes[:10])


@rule("L2.summary", "every summary is one line of at most 120 characters, not empty")
def l2_summary(elements: Sequence[JSON]) -> list[Problem]:
    out: list[Problem] = []
    for e in elements:
        s = e.get("summary")
        if not isinstance(s, str):
            continue
        if not s.strip() or "\n" in s or "\r" in s or len(s) > spec.SUMMARY_MAX:
            out.append(
                Problem(
                    f"{e.get('element_id')}: one line, 1..120 characters",
                    f"{len(s)} characters: {s!r}",
                )
            )
    return out[:5]


@rule(
    "L2.table_preview",
    "a Level 2 table gives total_rows and flags rows_truncated when it shows fewer rows",
)
def l2_table_preview(elements: Sequence[JSON]) -> list[Problem]:
    out: list[Problem] = []
    for e in elements:
        if e.get("category") not in ("table", "pivot_table"):
            continue
        c = e.get("content") or {}
        rows, total = c.get("rows"), c.get("total_rows")
        if e.get("category") == "table" and not isinstance(total, int):
            out.append(Problem(f"{e.get('element_id')}: total_rows", repr(total)))
        elif (
            isinstance(rows, list)
            and isinstance(total, int)
            and len(rows) < total
            and (c.get("rows_truncated") is not True)
        ):
            out.append(
                Problem(
                    f"{e.get('element_id')}: rows_truncated true ({len(rows)} of {total} rows)",
                    repr(c.get("rows_truncated")),
                )
            )
    return out


@rule(
    "L2.markdown_recall",
    "a page's Level 2 Markdown carries every phrase of each element's text content "
    "(check/phrases.py: table rows past the preview and chart points past the cap excepted)",
)
def l2_markdown_recall(elements: Sequence[JSON], markdown: str) -> list[Problem]:
    out: list[Problem] = []
    body = phrases.flat(markdown)
    for e in elements:
        content = e.get("content")
        if isinstance(content, dict):
            lost = phrases.lost(str(e.get("category")), content, body)
            if lost:
                out.append(Problem(f"{e.get('element_id')}: every phrase", _clip(lost)))
    return out[:5]


@rule(
    "L2.words",
    "a pdf page's Markdown holds the words pdftotext reads on the page of the served file, an "
    "e-mail message's those of its header fields and shown body (check/mailtext.py) "
    f"(at least {fidelity.EVERY_PAGE} of them); the pages of a web page, Markdown text, EPUB "
    "or text file together hold every word a browser shows of the file (check/webtext.py), "
    "those of an office file every word Word, PowerPoint, Excel or LibreOffice shows of it "
    "(check/officetext.py), "
    "each word lost named with the words around it (check/fidelity.py)",
)
def l2_words(reference: str, served: str, whole: bool = False) -> list[Problem]:
    """`reference`: a page's text (`whole`: the document's, every word of it required)."""
    page = fidelity.compare(0, reference, served)
    if not whole:
        return problem_if(
            page.recall < fidelity.EVERY_PAGE,
            f"at least {fidelity.EVERY_PAGE} of the page's {page.found} words",
            f"{page.recall:.3f}, missing {list(page.missing[:12])}",
        )
    out = [
        Problem(f"'{word}' where the file reads “{fidelity.located(word, reference)}”", "lost")
        for word in page.missing[:LOCATED_WORDS]
    ]
    rest = page.missing[LOCATED_WORDS:]
    if rest:
        out.append(
            Problem(f"every one of the file's {page.found} words", f"lost too: {list(rest)}")
        )
    return out


LOCATED_WORDS = 20
"""Lost words of a document named each with where the file says it; the rest listed after."""


@rule(
    "L2.categories_filter",
    "categories=... returns exactly the page's elements of those categories, in order",
)
def l2_categories_filter(full: JSON, filtered: JSON, wanted: Sequence[str]) -> list[Problem]:
    if not isinstance(full, dict) or not isinstance(filtered, dict):
        return []
    want = [e.get("element_id") for e in full.get("elements") or [] if e.get("category") in wanted]
    got = [e.get("element_id") for e in filtered.get("elements") or [] if isinstance(e, dict)]
    out = problem_if(got != want, f"elements {want}", got)
    out += problem_if(
        filtered.get("element_count") != len(want),
        f"element_count {len(want)}",
        filtered.get("element_count"),
    )
    return out


# ---- Level 3 ---------------------------------------------------------------------------------


@rule(
    "L3.fields",
    "Level 3 is {element_id, category, doc_ref, page_index, uri, summary, content, metadata}",
)
def l3_fields(payload: JSON, host: str, doc_ref: str, element_id: str) -> list[Problem]:
    out = fields(payload, L3_FIELDS)
    if out:
        return out
    uri = f"dpe://{host}/{doc_ref}/elements/{element_id}"
    out += problem_if(payload["uri"] != uri, uri, payload["uri"])
    out += problem_if(payload["doc_ref"] != doc_ref, f"doc_ref {doc_ref}", payload["doc_ref"])
    return out


@rule(
    "L3.resolves",
    "an element id from Level 2 reads at Level 3 as the same element (id, category, summary, page)",
)
def l3_resolves(level3: JSON, entry: JSON, index: int) -> list[Problem]:
    if not isinstance(level3, dict):
        return []
    out: list[Problem] = []
    for key in ("element_id", "category", "summary"):
        if level3.get(key) != entry.get(key):
            out.append(Problem(f"{key} {entry.get(key)!r} as at Level 2", repr(level3.get(key))))
    out += problem_if(
        level3.get("page_index") != index, f"page_index {index}", level3.get("page_index")
    )
    return out


@rule(
    "L3.content_matches",
    "Level 3 content agrees with the Level 2 preview (a table's rows start with the preview's; "
    "an element cut to a size cap keeps the start of each cut string)",
)
def l3_content_matches(
    full: JSON, preview: JSON, category: str, cut: bool = False
) -> list[Problem]:
    if not isinstance(full, dict) or not isinstance(preview, dict):
        return []
    out: list[Problem] = []
    for key, value in preview.items():
        if key in ("rows", "rows_truncated"):
            continue
        if not _agrees(full.get(key), value, cut):
            out.append(Problem(f"content.{key} {_clip(value)} as at Level 2", _clip(full.get(key))))
    if category in ("table", "pivot_table"):
        rows, shown = full.get("rows"), preview.get("rows")
        if isinstance(rows, list) and isinstance(shown, list):
            start = shown[: len(rows)] if cut else shown  # a cut may leave fewer rows
            if not _agrees(rows[: len(start)], start, cut):
                out.append(Problem("rows starting with the Level 2 preview rows", _clip(rows[:3])))
    return out[:5]


def _agrees(full: JSON, preview: JSON, cut: bool) -> bool:
    """`full == preview`, where a string of a cut element may be the start of the preview's."""
    if not cut or full == preview:
        return bool(full == preview)
    if isinstance(full, str) and isinstance(preview, str):
        kept = phrases.kept(full)
        return kept is not None and preview.startswith(kept)
    if isinstance(full, list) and isinstance(preview, list):
        return len(full) == len(preview) and all(
            _agrees(a, b, cut) for a, b in zip(full, preview, strict=True)
        )
    if isinstance(full, dict) and isinstance(preview, dict):
        return full.keys() == preview.keys() and all(
            _agrees(full[k], preview[k], cut) for k in full
        )
    return False


@rule(
    "L3.table_rows",
    "a Level 3 table holds all its rows: len(rows) == total_rows (fewer only when it says it was "
    "cut to a size cap, with rows_truncated)",
)
def l3_table_rows(content: JSON, cut: bool = False) -> list[Problem]:
    rows, total = content.get("rows"), content.get("total_rows")
    if not isinstance(rows, list):
        return []
    if cut and content.get("rows_truncated") is True and isinstance(total, int):
        return problem_if(len(rows) > total, f"at most total_rows {total} rows", len(rows))
    return problem_if(total != len(rows), f"total_rows {len(rows)}", total)


@rule(
    "L3.cut",
    "an element served cut says so: cut {bytes, max_bytes}, bytes over max_bytes, "
    "its JSON body within max_bytes",
)
def l3_cut(payload: JSON, body_bytes: int) -> list[Problem]:
    record = payload.get("cut")
    if not isinstance(record, dict):
        return [Problem("cut to be an object", _clip(record))]
    size, cap = record.get("bytes"), record.get("max_bytes")
    if not isinstance(size, int) or not isinstance(cap, int):
        return [Problem("cut.bytes and cut.max_bytes integers", _clip(record))]
    out = problem_if(size <= cap, f"cut.bytes over cut.max_bytes {cap}", size)
    out += problem_if(body_bytes > cap, f"a JSON body of at most {cap} bytes", body_bytes)
    return out


def _clip(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def content_problems(category: str, content: Mapping[str, Any]) -> list[Problem]:
    """Problems of `content` against the SPEC §4 table for `category`."""
    checker = CONTENT.get(category)
    return checker(content) if checker else []


ContentCheck = Callable[[Mapping[str, Any]], list[Problem]]


def _content(
    required: Mapping[str, Kind],
    optional: Mapping[str, Kind] | None = None,
    lists: Mapping[str, tuple[Mapping[str, Kind], Mapping[str, Kind] | None]] | None = None,
) -> ContentCheck:
    def check(content: Mapping[str, Any]) -> list[Problem]:
        out = fields(content, required, optional, "content")
        for name, (req, opt) in (lists or {}).items():
            out += items_of(content.get(name), req, opt, f"content.{name}")
        return out

    return check


CONTENT: Final[dict[str, ContentCheck]] = {
    "text": _content({"text": "str"}),
    "heading": _content({"level": "int", "text": "str"}),
    "list": _content(
        {"ordered": "bool", "items": "list"},
        lists={"items": ({"text": "str", "level": "int"}, None)},
    ),
    "code": _content({"text": "str"}, {"language": "str?"}),
    "table": _content(
        {"headers": "list", "rows": "list", "total_rows": "int", "total_columns": "int"}
    ),
    "pivot_table": _content({"name": "str", "headers": "list", "rows": "list"}),
    "chart": _content(
        {"chart_type": "str", "title": "str?", "series": "list", "data_summary": "str"},
        lists={"series": ({"name": "str?", "categories": "list", "values": "list"}, None)},
    ),
    "diagram": _content({"kind": "str", "nodes": "list", "data_summary": "str"}),
    "image": _content(
        {"description": "str", "mime_type": "str"},
        {"width": "int?", "height": "int?", "text": "str", "table": "object"},
    ),
    "formula": _content({"expression": "str"}, {"cells": "any", "result": "any"}),
    "link": _content({"text": "str", "url": "str"}),
    "annotation": _content({"text": "str", "kind": "str"}, {"author": "str?", "anchor": "any"}),
    "header": _content({"text": "str"}),
    "footer": _content({"text": "str"}),
    "separator": _content({"kind": "str"}),
    "audio": _content({"name": "str", "mime_type": "str"}, {"description": "str?"}),
    "video": _content({"name": "str", "mime_type": "str"}, {"description": "str?"}),
    "form": _content(
        {"fields": "list"},
        lists={"fields": ({"name": "str", "type": "str", "value": "any"}, {"options": "list?"})},
    ),
    "widget": _content({"kind": "str", "name": "str"}, {"text": "str?"}),
}


@rule(
    "content.shape",
    "an element's content has the fields of the SPEC §4 table for its "
    "category (tables: cells are strings; separators: a known kind)",
)
def content_shape(elements: Sequence[JSON]) -> list[Problem]:
    out: list[Problem] = []
    for e in elements:
        cat, content = str(e.get("category")), e.get("content")
        if not isinstance(content, dict):
            continue
        found = content_problems(cat, content)
        if cat == "table":
            found += all_kind(content.get("headers"), "str", "content.headers")
            for row in content.get("rows") or []:
                found += all_kind(row, "str", "content.rows[..]")
                if found:
                    break
        if cat == "separator" and content.get("kind") not in spec.SEPARATOR_KINDS:
            found.append(
                Problem(f"kind one of {sorted(spec.SEPARATOR_KINDS)}", repr(content.get("kind")))
            )
        out += [Problem(f"{e.get('element_id')} ({cat}): {p.expected}", p.got) for p in found]
    return out[:8]


FIELD: Final[dict[str, Kind]] = {
    "name": "str",
    "type": "str",
    "value": "str",
    "label": "str",
    "kind": "str",
}
FIELD_KINDS: Final[tuple[str, ...]] = get_args(FieldKind)
_BOXES = ("checkbox", "radio")


@rule(
    "content.form",
    "a form's fields have the shape of docs/content.md: name, type, value and label strings, "
    "a kind of the documented vocabulary, checked a boolean on (and only on) checkbox and "
    "radio fields (an unchecked box's value empty, a checked one's not), options strings",
)
def content_form(elements: Sequence[JSON]) -> list[Problem]:
    out: list[Problem] = []
    for e in elements:
        content = e.get("content")
        if e.get("category") != "form" or not isinstance(content, dict):
            continue
        for i, f in enumerate(content.get("fields") or []):
            found = _field_problems(f, f"content.fields[{i}]")
            out += [Problem(f"{e.get('element_id')}: {p.expected}", p.got) for p in found]
    return out[:8]


def _field_problems(f: Any, at: str) -> list[Problem]:
    out = fields(f, FIELD, {"checked": "bool", "options": "list"}, at)
    if out:
        return out
    kind, checked, value = f["kind"], f.get("checked"), f["value"]
    out += problem_if(kind not in FIELD_KINDS, f"{at}.kind one of {list(FIELD_KINDS)}", kind)
    box = kind in _BOXES
    out += problem_if(box and checked is None, f"{at}.checked on a {kind} field", "missing")
    out += problem_if(not box and checked is not None, f"{at}.checked only on boxes", kind)
    out += problem_if(checked is False and value != "", f"{at}.value empty when off", value)
    out += problem_if(checked is True and value == "", f"{at}.value its on state", "empty")
    out += all_kind(f.get("options") or [], "str", f"{at}.options")
    return out
