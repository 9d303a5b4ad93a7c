"""Tools for hosts whose model calls tools rather than reading resources (SPEC §7).

- `read(uri)`: exactly what `resources/read` of the URI returns (its text, and a picture as an
  image for an image element).
- `search(query, file_type?, category?, doc_ref?, limit?, cursor?)`: elements whose text holds
  every term of the query, best first, with their URIs, document titles, pages and snippets
  (`dpe_server.read.search`). Past the searches the server runs at once (`SearchSlots`), a
  search gets JSON-RPC error -32000 with a sentence saying to search again in a moment.

`--no-tools` leaves both out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from dpe_server.catalog.catalog import Catalog
from dpe_server.model.errors import RequestError
from dpe_server.read.reader import Reader
from dpe_server.read.search import (
    CATEGORIES,
    SEARCH_MAX,
    QueryError,
    SearchBusy,
    SearchSlots,
    search,
)
from dpe_server.surface.errors import RATE_LIMITED

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
        "Find elements (paragraphs, tables, headings, notes...) containing every term of the "
        'query: words, "phrases in quotes", prefix*. Returns their dpe:// URIs, document '
        "titles, pages and snippets, best first; next_cursor fetches more. "
        '"indexing": true means some documents are not extracted yet: search again shortly.'
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "file_type": {"type": "string", "description": "xlsx, pdf, pptx, docx..."},
            "category": {
                "type": "string",
                "description": "Element categories, comma-separated: " + ", ".join(CATEGORIES),
            },
            "doc_ref": {"type": "string", "description": "Only this document (its doc_ref)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX},
            "cursor": {"type": "string", "description": "next_cursor of the previous answer"},
        },
        "required": ["query"],
    },
)


class ToolBox:
    """The two tools, over the read path and the catalog (what resources/read would use)."""

    def __init__(
        self,
        reader: Reader,
        catalog: Catalog,
        session_of: Callable[[ServerRequestContext[Any, Any]], Hashable],
        slots: SearchSlots | None = None,
    ) -> None:
        self.reader = reader
        self.catalog = catalog
        self.session_of = session_of
        """The key of a request's session (its connection), for `slots`."""
        self.slots = slots or SearchSlots()

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
            try:
                with self.slots.slot(self.session_of(ctx)):
                    return await self._search(args)
            except SearchBusy as exc:
                raise MCPError(RATE_LIMITED, exc.message) from None
        return _error(f"No tool named '{params.name}'; the tools are read and search.")

    async def _read(self, uri: str) -> types.CallToolResult:
        try:
            found = await self.reader.read(uri)
        except RequestError as exc:
            return _error(f"{exc.message} (dpe {exc.dpe_code})")
        content: list[types.TextContent | types.ImageContent] = [
            types.TextContent(type="text", text=body.text)
            if body.text is not None
            else types.ImageContent(type="image", data=body.blob or "", mime_type=body.mime_type)
            for body in found
        ]
        return types.CallToolResult(content=content)  # type: ignore[arg-type]

    async def _search(self, args: dict[str, Any]) -> types.CallToolResult:
        try:
            body = await search(
                self.catalog,
                args.get("query"),
                args.get("file_type"),
                args.get("limit"),
                category=args.get("category"),
                doc_ref=args.get("doc_ref"),
                cursor=args.get("cursor"),
            )
        except QueryError as exc:
            return _error(str(exc))
        text = json.dumps(body, ensure_ascii=False, indent=2)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )
