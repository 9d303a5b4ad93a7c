"""`dpe-server view FOLDER`: a web page showing what the server sees of the folder.

The folder's documents with their state, a document's pages, a page drawn as a picture (a pdf
page by PDFium, read like any picture of the file: an `image` job, in a worker process; an
office page from LibreOffice's pdf export of the file, `viewer_pictures`) with every
element's box over it where the tree gives one, coloured by category; choosing an element
shows its URI, JSON and Markdown; a search box runs the server's own search. Everything is
read through the same read path as the MCP surface (`DpeApp.reader`, `read.search`): Level 0
to 3 JSON and Markdown, never a second implementation. A page polls `/changes` and reloads
when what it shows changed: the list and a search when the folder did, a document's pages
when that document did or went.

Bound to 127.0.0.1 only, on a free port unless one is given; a request naming another `Host`
is refused (421), so a page of another site cannot reach it through DNS rebinding. Documents
are named by their doc_refs, looked up in the catalog: no path of the request reaches the file
system.
"""

from __future__ import annotations

import json
import logging
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from dpe_server.catalog.catalog import Change
from dpe_server.model.errors import RequestError
from dpe_server.model.uri import format_uri, parse
from dpe_server.read.search import QueryError, search
from dpe_server.surface.app import DpeApp
from dpe_server.surface.viewer_html import (
    catalog_html,
    document_html,
    page_view_html,
    problem_html,
    search_html,
)
from dpe_server.surface.viewer_pictures import NoPicture, Pictures

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


class Viewer:
    """The viewer's routes over one `DpeApp` (its catalog, reader and search)."""

    def __init__(self, app: DpeApp, port: int) -> None:
        self.app = app
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.pictures = Pictures(app)
        self.changes = 0
        """Changes of the folder announced since start: the list and a search reload when it
        grows."""
        self.updates: Counter[str] = Counter()
        """Changes of each document's contents announced since start: a page of a document
        reloads when its count grows (not for every other document's: that would drop the
        element chosen on it), or when the document is gone."""
        app.on_change = self._changed

    def _changed(self, change: Change) -> None:
        self.changes += 1
        self.updates.update(change.updated)

    def starlette(self) -> Starlette:
        routes = [
            Route("/", self._guard(self.catalog)),
            Route("/doc/{ref}", self._guard(self.document)),
            Route("/doc/{ref}/pages/{index:int}", self._guard(self.page)),
            Route("/doc/{ref}/pages/{index:int}/picture", self._guard(self.picture)),
            Route("/element", self._guard(self.element)),
            Route("/search", self._guard(self.search)),
            Route("/changes", self._guard(self.changed)),
        ]
        return Starlette(routes=routes, lifespan=lambda _: self.app.lifespan(None))  # type: ignore[arg-type]

    def _guard(self, handler: Handler) -> Handler:
        async def guarded(request: Request) -> Response:
            if request.headers.get("host", "") not in self.hosts:
                refused = problem_html(421, "This viewer answers on 127.0.0.1 only.")
                return HTMLResponse(refused, 421)
            try:
                return await handler(request)
            except RequestError as exc:
                return HTMLResponse(problem_html(404, exc.message), 404)

        return guarded

    async def _json(self, uri: str) -> Any:
        bodies = await self.app.reader.read(uri)
        return json.loads(bodies[0].text or "null")

    async def catalog(self, request: Request) -> Response:
        await self.app.catalog.listed.wait()
        listing = await self._json(format_uri(self.app.host))
        return HTMLResponse(catalog_html(self.app.host, listing))

    async def document(self, request: Request) -> Response:
        ref = request.path_params["ref"]
        uri = format_uri(self.app.host, ref) + "?depth=pages&limit=100"
        return HTMLResponse(document_html(await self._json(uri)))

    async def page(self, request: Request) -> Response:
        ref, index = request.path_params["ref"], request.path_params["index"]
        host = self.app.host
        document = await self._json(format_uri(host, ref))
        page = await self._json(format_uri(host, ref, page_index=index))
        elements = [
            await self._json(format_uri(host, ref, element_id=str(e["element_id"])))
            for e in page["elements"]
        ]
        entry = self.app.catalog.entry(ref)
        note = self.pictures.drawn(entry.file_type, entry.rel)
        drawn = "" if note else "pdf" if entry.file_type == "pdf" else "office"
        return HTMLResponse(page_view_html(document, page, elements, drawn, note))

    async def picture(self, request: Request) -> Response:
        ref, index = request.path_params["ref"], request.path_params["index"]
        try:
            png, kind = await self.pictures.picture(ref, index)
        except NoPicture as exc:
            return Response(str(exc), 404, media_type="text/plain; charset=utf-8")
        return Response(png, media_type=kind)

    async def element(self, request: Request) -> Response:
        uri = request.query_params.get("uri", "")
        parsed = parse(uri)
        if parsed.level != 3:
            return JSONResponse({"error": "give the dpe:// URI of an element"}, 400)
        self.app.catalog.check_host(parsed)
        text = (await self.app.reader.read(uri))[0].text or ""
        markdown = (await self.app.reader.read(uri + "?format=markdown"))[0].text or ""
        return JSONResponse({"uri": uri, "json": text, "markdown": markdown})

    async def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        try:
            answer = await search(self.app.catalog, query, limit=50)
        except QueryError as exc:
            return HTMLResponse(search_html(query, None, str(exc)), 400)
        return HTMLResponse(search_html(query, answer))

    async def changed(self, request: Request) -> Response:
        """`{"changes": N}`: of the folder; with `?doc=REF`, of that document (-1: gone)."""
        ref = request.query_params.get("doc")
        if ref is None:
            return JSONResponse({"changes": self.changes})
        try:
            self.app.catalog.entry(ref)
        except RequestError:
            return JSONResponse({"changes": -1})
        return JSONResponse({"changes": self.updates[ref]})


def loopback_socket(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (`port` 0: a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


async def serve_viewer(
    app: DpeApp, sock: socket.socket, on_listening: Callable[[str], None] | None = None
) -> None:
    """Serve the viewer on `sock` until SIGINT or SIGTERM."""
    import uvicorn

    port = sock.getsockname()[1]
    viewer = Viewer(app, port)
    config = uvicorn.Config(
        viewer.starlette(), log_level="warning", lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:

        async def announce() -> None:
            while not server.started:  # uvicorn has no start-up hook
                await anyio.sleep(0.02)
            if on_listening is not None:
                on_listening(f"http://127.0.0.1:{port}/")

        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()
