"""Tools for hosts whose model calls tools rather than reading resources (SPEC §7).

- `read(uri)`: exactly what `resources/read` of the URI returns (its text, and a picture as an
  image for an image element).
- `search(query, file_type?, limit?)`: elements whose text holds every word of the query,
  with their URIs and summaries, best first.

`--no-tools` leaves both out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from dpe_server.errors import RequestError
from dpe_server.model import Element
from dpe_server.uri import format_uri

if TYPE_CHECKING:
    from dpe_server.server import DpeApp

SEARCH_DEFAULT = 20
SEARCH_MAX = 100

READ = types.Tool(
    name="read",
    title="Read a dpe:// URI",
    description=(
        "Read a document resource by its dpe:// URI: the catalog (dpe://HOST), a document "
        "(add ?depth=pages for its page index), a page (/pages/N, ?categories=table,...), "
        "or an element (/elements/ID). Add ?format=markdown or ?format=text."
    ),
    input_schema={
        "type": "object",
        "properties": {"uri": {"type": "string", "description": "A dpe:// URI"}},
        "required": ["uri"],
    },
)
SEARCH = types.Tool(
    name="search",
    title="Search the documents",
    description=(
        "Find elements (paragraphs, table cells, headings, notes...) containing every word of "
        "the query; returns their dpe:// URIs and one-line summaries."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "file_type": {"type": "string", "description": "xlsx, pdf, pptx, docx..."},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX},
        },
        "required": ["query"],
    },
)


def _text_of(element: Element) -> str:
    return (element.summary + " " + json.dumps(element.content, ensure_ascii=False)).lower()


class ToolBox:
    def __init__(self, app: DpeApp) -> None:
        self.app = app

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[READ, SEARCH])

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "read":
            return await self._read(str(args.get("uri", "")))
        if params.name == "search":
            return await self._search(args)
        return _error(f"No tool named '{params.name}'; the tools are read and search.")

    async def _read(self, uri: str) -> types.CallToolResult:
        try:
            result = await self.app.read(uri)
        except RequestError as exc:
            return _error(f"{exc.message} (dpe {exc.dpe_code})")
        content: list[types.TextContent | types.ImageContent] = []
        for item in result.contents:
            if isinstance(item, types.TextResourceContents):
                content.append(types.TextContent(type="text", text=item.text))
            else:
                content.append(
                    types.ImageContent(type="image", data=item.blob, mime_type=item.mime_type or "")
                )
        return types.CallToolResult(content=content)  # type: ignore[arg-type]

    async def _search(self, args: dict[str, Any]) -> types.CallToolResult:
        words = str(args.get("query", "")).lower().split()
        if not words:
            return _error("The query is empty; give one or more words to look for.")
        wanted_type = str(args.get("file_type") or "").lower().lstrip(".")
        try:
            limit = max(1, min(int(args.get("limit") or SEARCH_DEFAULT), SEARCH_MAX))
        except (TypeError, ValueError):
            return _error(f"limit must be an integer from 1 to {SEARCH_MAX}.")
        app = self.app
        await app.catalog.ready.wait()
        hits: list[tuple[int, dict[str, Any]]] = []
        for entry in app.catalog.entries():
            if wanted_type and entry.file_type != wanted_type:
                continue
            _, outline = await app.catalog.outline(entry.doc_ref, "")
            if outline is None:
                continue
            title = outline.title
            for info in outline.pages:
                try:
                    page = await app.catalog.page(entry.doc_ref, info.page_index, "")
                except RequestError:
                    continue  # the file changed under the search
                for el in page.elements:
                    text = _text_of(el)
                    if all(w in text for w in words):
                        score = sum(text.count(w) for w in words)
                        hits.append(
                            (
                                -score,
                                {
                                    "uri": format_uri(
                                        app.host, entry.doc_ref, element_id=el.element_id
                                    ),
                                    "document": title,
                                    "page_index": page.page_index,
                                    "category": el.category.value,
                                    "summary": el.summary,
                                },
                            )
                        )
        hits.sort(key=lambda h: h[0])
        found = [h for _, h in hits[:limit]]
        body = {"query": args.get("query"), "total": len(hits), "results": found}
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text=json.dumps(body, ensure_ascii=False, indent=2))
            ]
        )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )
