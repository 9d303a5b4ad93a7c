"""Document rules: one function per rule of SPEC §2 and §4, each under a stable id.

A rule takes what was read (a payload, sometimes two) and returns the problems it finds;
the runner records them against the URI. Ids: `doc.*` (a DocumentSummary at Level 0 or 1),
`L0.*`, `L1.*`; pages and elements (`L2.*`, `L3.*`, `content.*`) are in `rules_page`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from dpe_server.check import spec
from dpe_server.check.report import Problem, problem_if, rule
from dpe_server.check.shapes import Kind, all_kind, fields, items_of

JSON = Any

DOC_FIELDS: Final[dict[str, Kind]] = {
    "doc_ref": "str",
    "uri": "str",
    "file_uri": "str",
    "file_type": "str",
    "title": "str",
    "page_count": "int",
    "keywords": "list",
    "summary": "str",
    "last_modified": "str",
}
PAGE_ENTRY_FIELDS: Final[dict[str, Kind]] = {
    "page_index": "int",
    "title": "str",
    "element_count": "int",
    "uri": "str",
    "doc_ref": "str",
}

# ---- DocumentSummary (Level 0 entries and Level 1) ------------------------------------------


@rule("doc.fields", "a DocumentSummary has the fields of SPEC §4 with their types")
def doc_fields(doc: JSON) -> list[Problem]:
    out = fields(doc, DOC_FIELDS)
    if isinstance(doc, dict):
        out += all_kind(doc.get("keywords"), "str", "keywords")
    return out


@rule("doc.last_modified", "last_modified is ISO 8601 UTC ending in Z")
def doc_last_modified(doc: JSON) -> list[Problem]:
    value = doc.get("last_modified") if isinstance(doc, dict) else None
    ok = isinstance(value, str) and spec.ISO_Z_RE.fullmatch(value) is not None
    return problem_if(not ok, "an ISO 8601 UTC time like 2026-01-31T09:30:00Z", value)


@rule("doc.doc_ref", "doc_ref is short and URL-safe: [a-z0-9-]")
def doc_doc_ref(doc: JSON) -> list[Problem]:
    ref = doc.get("doc_ref") if isinstance(doc, dict) else None
    ok = isinstance(ref, str) and spec.DOC_REF_RE.fullmatch(ref) is not None and len(ref) <= 80
    return problem_if(not ok, "a doc_ref of [a-z0-9-], at most 80 characters", ref)


@rule("doc.uri", "uri is dpe://{host}/{doc_ref}")
def doc_uri(doc: JSON, host: str) -> list[Problem]:
    if not isinstance(doc, dict):
        return []
    want = f"dpe://{host}/{doc.get('doc_ref')}"
    return problem_if(doc.get("uri") != want, want, doc.get("uri"))


@rule("doc.file_uri", "file_uri is a file:// URI; file_type is the suffix without a dot")
def doc_file_uri(doc: JSON) -> list[Problem]:
    if not isinstance(doc, dict):
        return []
    file_uri, file_type = str(doc.get("file_uri", "")), str(doc.get("file_type", ""))
    out = problem_if(not file_uri.startswith("file://"), "a file:// URI", file_uri)
    suffix = file_uri.rsplit(".", 1)[-1].lower() if "." in file_uri else ""
    out += problem_if(file_type != suffix, f"file_type '{suffix}' (the file's suffix)", file_type)
    return out


@rule("doc.title", "title is a non-empty single line")
def doc_title(doc: JSON) -> list[Problem]:
    title = doc.get("title") if isinstance(doc, dict) else None
    ok = isinstance(title, str) and title.strip() != "" and "\n" not in title
    return problem_if(not ok, "a non-empty one-line title", title)


@rule("doc.summary", "a document summary is one line")
def doc_summary(doc: JSON) -> list[Problem]:
    summary = doc.get("summary") if isinstance(doc, dict) else None
    bad = isinstance(summary, str) and ("\n" in summary or "\r" in summary)
    return problem_if(bad, "a one-line summary", summary)


@rule("doc.error", "an unreadable file is listed with page_count 0 and error {kind, message}")
def doc_error(doc: JSON) -> list[Problem]:
    if not isinstance(doc, dict) or "error" not in doc:
        return []
    error = doc["error"]
    out = fields(error, {"kind": "str", "message": "str"}, where="error")
    if isinstance(error, dict):
        kind = error.get("kind")
        out += problem_if(
            kind not in spec.ERROR_KINDS, f"error.kind one of {sorted(spec.ERROR_KINDS)}", kind
        )
        message = str(error.get("message", ""))
        out += problem_if(
            not message.strip() or "Traceback" in message or "\n" in message.strip(),
            "error.message: one plain sentence",
            message,
        )
    out += problem_if(doc.get("page_count") != 0, "page_count 0", doc.get("page_count"))
    return out


# ---- Level 0 ---------------------------------------------------------------------------------


@rule("L0.fields", "Level 0 is {documents: [DocumentSummary], total_count}")
def l0_fields(payload: JSON) -> list[Problem]:
    out = fields(payload, {"documents": "list", "total_count": "int"})
    if not out and payload["total_count"] != len(payload["documents"]):
        out.append(
            Problem(
                f"total_count == len(documents) ({len(payload['documents'])}) without offset/limit",
                str(payload["total_count"]),
            )
        )
    return out


@rule("L0.unique", "Level 0 lists each doc_ref once")
def l0_unique(docs: Sequence[JSON]) -> list[Problem]:
    refs = [d.get("doc_ref") for d in docs if isinstance(d, dict)]
    dupes = sorted({str(r) for r in refs if refs.count(r) > 1})
    return problem_if(bool(dupes), "distinct doc_refs", dupes)


@rule(
    "L0.parent",
    "a document inside another names as its parent a doc_ref listed before it (docs/children.md)",
)
def l0_parent(docs: Sequence[JSON]) -> list[Problem]:
    """`docs` is the whole listing, in its order."""
    seen: set[object] = set()
    orphans = []
    for doc in docs:
        if isinstance(doc, dict):
            if "parent" in doc and doc["parent"] not in seen:
                orphans.append(f"{doc.get('doc_ref')} -> {doc['parent']}")
            seen.add(doc.get("doc_ref"))
    return problem_if(bool(orphans), "each parent listed before its children", orphans[:5])


@rule("L0.offset_limit", "Level 0 with offset/limit returns that slice and the full total_count")
def l0_offset_limit(
    full: Sequence[JSON], sliced: JSON, offset: int, limit: int, total: int
) -> list[Problem]:
    out = fields(sliced, {"documents": "list", "total_count": "int"})
    if out:
        return out
    want = [d.get("doc_ref") for d in full[offset : offset + limit]]
    got = [d.get("doc_ref") for d in sliced["documents"] if isinstance(d, dict)]
    out += problem_if(got != want, f"documents {want}", got)
    out += problem_if(sliced["total_count"] != total, f"total_count {total}", sliced["total_count"])
    return out


# ---- Level 1 ---------------------------------------------------------------------------------


@rule("L1.matches_L0", "Level 1 (depth=metadata) says what Level 0 says of the document")
def l1_matches_l0(level1: JSON, entry: JSON) -> list[Problem]:
    if not isinstance(level1, dict) or not isinstance(entry, dict):
        return []
    out: list[Problem] = []
    for key in ("doc_ref", "uri", "file_uri", "file_type", "last_modified", "page_count"):
        if key in entry and level1.get(key) != entry.get(key):
            out.append(Problem(f"{key} {entry.get(key)!r} as at Level 0", repr(level1.get(key))))
    return out


@rule(
    "L1.pages_fields",
    "depth=pages adds pages [{page_index, title, element_count, uri, "
    "doc_ref}], page_offset, page_limit, page_total",
)
def l1_pages_fields(payload: JSON) -> list[Problem]:
    out = fields(
        payload,
        {
            **DOC_FIELDS,
            "pages": "list",
            "page_offset": "int",
            "page_limit": "int",
            "page_total": "int",
        },
    )
    if isinstance(payload, dict):
        out += items_of(payload.get("pages"), PAGE_ENTRY_FIELDS, None, "pages")
    return out


@rule("L1.page_total", "page_total equals page_count")
def l1_page_total(payload: JSON) -> list[Problem]:
    if not isinstance(payload, dict):
        return []
    total, count = payload.get("page_total"), payload.get("page_count")
    return problem_if(total != count, f"page_total == page_count ({count})", total)


@rule("L1.page_slice", "pages hold page_index offset.. offset+limit-1 in order, with their URIs")
def l1_page_slice(payload: JSON, host: str, offset: int, limit: int) -> list[Problem]:
    if not isinstance(payload, dict) or not isinstance(payload.get("pages"), list):
        return []
    total = payload.get("page_total")
    if not isinstance(total, int):
        return []
    want = list(range(offset, min(total, offset + limit)))
    pages = [p for p in payload["pages"] if isinstance(p, dict)]
    got = [p.get("page_index") for p in pages]
    out = problem_if(got != want, f"page_index {span(want)}", got)
    out += problem_if(
        payload.get("page_offset") != offset, f"page_offset {offset}", payload.get("page_offset")
    )
    out += problem_if(
        payload.get("page_limit") != limit, f"page_limit {limit}", payload.get("page_limit")
    )
    ref = payload.get("doc_ref")
    for p in pages:
        uri = f"dpe://{host}/{ref}/pages/{p.get('page_index')}"
        if p.get("uri") != uri or p.get("doc_ref") != ref:
            out.append(
                Problem(f"page uri {uri} and doc_ref {ref}", f"{p.get('uri')} / {p.get('doc_ref')}")
            )
            break
    return out


def span(values: Sequence[int]) -> str:
    return f"{values[0]}..{values[-1]}" if values else "none"


def _recognised_since(entry: dict[str, JSON]) -> bool:
    """The index listed the page as waiting for OCR (`ocr: "pending"`): the Level 2 read
    recognised it, so its elements and title may have grown since (docs/ocr.md)."""
    return entry.get("ocr") == "pending"


@rule("L1.element_count", "a page's element_count in the index equals its Level 2 element_count")
def l1_element_count(entry: JSON, level2: JSON) -> list[Problem]:
    if not isinstance(entry, dict) or not isinstance(level2, dict) or _recognised_since(entry):
        return []
    want, got = level2.get("element_count"), entry.get("element_count")
    return problem_if(want != got, f"element_count {want} (as Level 2 says)", got)


@rule("L1.page_title", "a page's title in the index equals its Level 2 title")
def l1_page_title(entry: JSON, level2: JSON) -> list[Problem]:
    if not isinstance(entry, dict) or not isinstance(level2, dict) or _recognised_since(entry):
        return []
    return problem_if(
        entry.get("title") != level2.get("title"),
        f"title {level2.get('title')!r}",
        entry.get("title"),
    )


DOCUMENT_RULES = (
    doc_fields,
    doc_last_modified,
    doc_doc_ref,
    doc_file_uri,
    doc_title,
    doc_summary,
    doc_error,
)
"""The rules every DocumentSummary obeys, at Level 0 and at Level 1."""
