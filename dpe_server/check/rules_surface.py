"""MCP surface rules (SPEC §3, §6, §7): capabilities, templates, resources/list, errors,
formats and completion. Same conventions as `rules.py`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import mcp_types as types

from dpe_server.check import spec
from dpe_server.check.report import Problem, problem_if, rule
from dpe_server.check.shapes import type_name


@rule("caps.resources", "capabilities: resources with subscribe and listChanged")
def caps_resources(caps: types.ServerCapabilities) -> list[Problem]:
    res = caps.resources
    if res is None:
        return [Problem("a resources capability", "none")]
    out = problem_if(res.list_changed is not True, "resources.listChanged true", res.list_changed)
    out += problem_if(res.subscribe is not True, "resources.subscribe true", res.subscribe)
    return out


@rule("caps.completions", "capabilities: completions")
def caps_completions(caps: types.ServerCapabilities) -> list[Problem]:
    return problem_if(caps.completions is None, "a completions capability", "none")


@rule(
    "templates",
    "resources/templates/list gives dpe://{host}/{doc_ref}/pages/{page_index} "
    "and dpe://{host}/{doc_ref}/elements/{element_id}",
)
def templates(found: Sequence[str], host: str) -> list[Problem]:
    want = {
        f"dpe://{host}/{{doc_ref}}/pages/{{page_index}}",
        f"dpe://{host}/{{doc_ref}}/elements/{{element_id}}",
    }
    missing = sorted(want - set(found))
    return problem_if(bool(missing), f"templates {sorted(want)}", sorted(found))


@rule(
    "list.fields",
    "resources/list: a Resource per document with name, title, mimeType "
    "application/json, annotations.lastModified and _meta {page_count, file_type, file_uri, "
    "keywords}",
)
def list_fields(res: types.Resource) -> list[Problem]:
    out = problem_if(not res.name, "a name", res.name)
    out += problem_if(not res.title, "a title", res.title)
    out += problem_if(
        res.mime_type != "application/json", "mimeType application/json", res.mime_type
    )
    modified = res.annotations.last_modified if res.annotations else None
    out += problem_if(
        modified is None or spec.ISO_Z_RE.fullmatch(modified) is None,
        "annotations.lastModified, ISO 8601 with Z",
        modified,
    )
    meta: dict[str, Any] = dict(res.meta or {})
    for key, kind in (
        ("page_count", int),
        ("file_type", str),
        ("file_uri", str),
        ("keywords", list),
    ):
        value = meta.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            out.append(Problem(f"_meta.{key} ({kind.__name__})", type_name(value)))
    return out


@rule(
    "list.matches_L0",
    "resources/list names the documents of Level 0 (Level 1 URIs), with "
    "the same title, page_count and file_uri",
)
def list_matches_l0(res: types.Resource, doc: dict[str, Any] | None) -> list[Problem]:
    if doc is None:
        return [Problem("a Level 1 URI of a document listed at Level 0", res.uri)]
    meta: dict[str, Any] = dict(res.meta or {})
    out = problem_if(res.name != doc.get("title"), f"name {doc.get('title')!r}", res.name)
    for key in ("page_count", "file_uri", "file_type"):
        out += problem_if(
            meta.get(key) != doc.get(key), f"_meta.{key} {doc.get(key)!r}", meta.get(key)
        )
    return out


@rule("list.complete", "resources/list and Level 0 hold the same documents, each once")
def list_complete(listed: Sequence[str], level0: Sequence[str]) -> list[Problem]:
    out = problem_if(len(set(listed)) != len(listed), "each URI listed once", len(listed))
    missing = sorted(set(level0) - set(listed))
    extra = sorted(set(listed) - set(level0))
    out += problem_if(bool(missing), "every Level 0 document listed", f"missing {missing[:5]}")
    out += problem_if(bool(extra), "only Level 0 documents listed", f"extra {extra[:5]}")
    return out


@rule(
    "read.json",
    "format=json (the default) returns application/json text that is a JSON "
    "object, echoing the URI",
)
def read_json(contents: Sequence[Any], uri: str) -> list[Problem]:
    if not contents:
        return [Problem("one text content item", "no contents")]
    first = contents[0]
    if not isinstance(first, types.TextResourceContents):
        return [Problem("a text content item first", type(first).__name__)]
    out = problem_if(
        first.mime_type != spec.MIME["json"], "mimeType application/json", first.mime_type
    )
    out += problem_if(first.uri != uri, f"contents uri {uri}", first.uri)
    try:
        body = json.loads(first.text)
    except ValueError as exc:
        return [*out, Problem("a JSON body", f"unparsable: {exc}")]
    out += problem_if(not isinstance(body, dict), "a JSON object", type_name(body))
    return out


@rule(
    "read.format",
    "format=markdown / format=text return text/markdown / text/plain with a non-empty body",
)
def read_format(contents: Sequence[Any], fmt: str) -> list[Problem]:
    if not contents or not isinstance(contents[0], types.TextResourceContents):
        return [Problem("one text content item", repr(contents[:1]))]
    first = contents[0]
    out = problem_if(
        first.mime_type != spec.MIME[fmt], f"mimeType {spec.MIME[fmt]}", first.mime_type
    )
    out += problem_if(not first.text.strip(), "a non-empty body", first.text)
    return out


@rule(
    "read.markdown_heading",
    "a Level 2 page in Markdown starts with its title as a heading, unless the title is "
    "'Page {N+1}' (a page with no heading nor outline entry)",
)
def read_markdown_heading(text: str, page: dict[str, Any]) -> list[Problem]:
    first = text.lstrip().split("\n", 1)[0]
    index = page.get("page_index")
    if isinstance(index, int) and page.get("title") == f"Page {index + 1}":
        return problem_if(
            first.startswith("# Page "), "no heading 'Page {N+1}' of a page with none", first
        )
    return problem_if(not first.startswith("#"), "a first line '# {title}'", first)


@rule(
    "read.image_blob",
    "a picture after an image element's JSON is a blob of a showable type (png, jpeg, gif, webp)",
)
def read_image_blob(contents: Sequence[Any]) -> list[Problem]:
    out: list[Problem] = []
    for item in contents[1:]:
        if not isinstance(item, types.BlobResourceContents):
            out.append(Problem("blob contents after the JSON", type(item).__name__))
        elif item.mime_type not in spec.IMAGE_MIME_TYPES:
            out.append(Problem("image/png, jpeg, gif or webp", str(item.mime_type)))
    return out


@rule(
    "read.query_tolerance",
    "unknown parameters, parameters of another level and a trailing "
    "'/' are ignored: the read succeeds with the same payload",
)
def read_query_tolerance(plain: Any, variant: Any) -> list[Problem]:
    return problem_if(plain != variant, "the same payload as without them", variant)


# ---- errors ----------------------------------------------------------------------------------


def expect_error(
    err: types.ErrorData | None, code: int, dpe_code: int, page_count: int | None = None
) -> list[Problem]:
    """The JSON-RPC `code` with `data.dpe_code` (and `data.page_count`, `data.uri`)."""
    if err is None:
        return [Problem(f"error {code} with data.dpe_code {dpe_code}", "a successful read")]
    data = err.data if isinstance(err.data, dict) else {}
    out = problem_if(
        (err.code, data.get("dpe_code")) != (code, dpe_code),
        f"error {code} with data.dpe_code {dpe_code}",
        f"error {err.code} with data.dpe_code {data.get('dpe_code')}: {err.message}",
    )
    out += problem_if("uri" not in data, "data.uri", sorted(data))
    if page_count is not None:
        out += problem_if(
            data.get("page_count") != page_count,
            f"data.page_count {page_count}",
            data.get("page_count"),
        )
    message = err.message or ""
    out += problem_if(
        not message.strip() or "Traceback" in message, "a plain one-sentence message", message
    )
    return out


# ---- completion ------------------------------------------------------------------------------


@rule(
    "complete.bounds",
    "completion: at most 100 values, total >= len(values), hasMore when total says more exist",
)
def complete_bounds(c: types.Completion) -> list[Problem]:
    n = len(c.values)
    out = problem_if(n > spec.MAX_COMPLETION_VALUES, "at most 100 values", n)
    if c.total is not None:
        out += problem_if(c.total < n, f"total >= {n}", c.total)
        out += problem_if(bool(c.has_more) != (c.total > n), f"hasMore {c.total > n}", c.has_more)
    return out


@rule(
    "complete.values",
    "completion values are real: doc_refs, page indexes and element ids "
    "that exist (best match first)",
)
def complete_values(
    values: Sequence[str], real: Sequence[str], must_include: str | None, exact: bool
) -> list[Problem]:
    unknown = [v for v in values if v not in set(real)]
    out = problem_if(bool(unknown), "only existing values", unknown[:5])
    if must_include is not None:
        out += problem_if(
            must_include not in values, f"{must_include!r} among the values", list(values[:5])
        )
    if exact:
        want = sorted(real)[: spec.MAX_COMPLETION_VALUES]
        out += problem_if(
            sorted(values) != want and len(real) <= spec.MAX_COMPLETION_VALUES,
            f"all {len(real)} values",
            list(values[:10]),
        )
    return out


@rule(
    "complete.no_context",
    "completion without the context it needs gives empty values, not an error",
)
def complete_no_context(c: types.Completion | None, error: str | None) -> list[Problem]:
    if error is not None:
        return [Problem("empty values", f"an error: {error}")]
    assert c is not None
    return problem_if(bool(c.values), "empty values", list(c.values[:5]))
