"""Tools for hosts whose model calls tools rather than reading resources (SPEC §7).

- `read(uri)`: exactly what `resources/read` of the URI returns (its text, and a picture as an
  image for an image element).
- `search(query, file_type?, limit?)`: elements whose text holds every word of the query,
  with their URIs and summaries, best first (`dpe_server.read.search`).

`--no-tools` leaves both out.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from dpe_server.catalog.catalog import Catalog
from dpe_server.model.errors import RequestError
from dpe_server.read.reader import Reader
from dpe_server.read.search import SEARCH_MAX, QueryError, search

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


class ToolBox:
    """The two tools, over the read path and the catalog (what resources/read would use)."""

    def __init__(self, reader: Reader, catalog: Catalog) -> None:
        self.reader = reader
        self.catalog = catalog

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
                self.catalog, args.get("query"), args.get("file_type"), args.get("limit")
            )
        except QueryError as exc:
            return _error(str(exc))
        text = json.dumps(body, ensure_ascii=False, indent=2)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )
