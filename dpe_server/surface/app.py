"""The MCP surface (SPEC §7): thin async handlers over the catalog, views and renderers.

Handlers parse the URI, ask the catalog, shape the payload with a view, render it, and map
domain errors to JSON-RPC errors in one place (`mcp_errors`). Capabilities follow from the
handlers registered: in stateless HTTP mode handshake-era subscriptions cannot be delivered,
so `resources/subscribe` is not registered and not advertised there.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError

from dpe_server import __version__
from dpe_server.catalog.catalog import Catalog, Change
from dpe_server.catalog.folder import default_host
from dpe_server.catalog.stores import StoreOptions, open_store
from dpe_server.catalog.watcher import watch
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.backends import Backend
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from dpe_server.model.errors import RequestError, reading
from dpe_server.model.integers import uint_or_none
from dpe_server.model.uri import format_uri, parse
from dpe_server.read.completion import Completer, RateLimiter, cap
from dpe_server.read.reader import Reader
from dpe_server.surface.errors import INVALID_PARAMS, RATE_LIMITED, to_mcp_error
from dpe_server.surface.notify import Hub
from dpe_server.surface.progress import progress
from dpe_server.surface.tools import ToolBox
from dpe_server.views.element_cap import DEFAULT_MAX_ELEMENT_BYTES

log = logging.getLogger(__name__)

Ctx = ServerRequestContext[Any, Any]


@dataclass
class Settings:
    """Everything `dpe-server serve` can be told (docs/reference.md says what each option does)."""

    root: Path
    host: str = ""
    tools: bool = True
    broadcast_updates: bool = False
    stateless: bool = False
    page_size: int = 50
    completion_rate: float = 20.0
    completion_burst: int = 40
    watch: bool = True
    debounce_ms: int = 150
    warm: bool = True
    cache: bool = True
    cache_dir: Path | None = None
    store_url: str = ""
    """`--store`: "" (the SQLite cache) or a store URL (`catalog.stores`)."""
    store_options: StoreOptions = field(default_factory=StoreOptions)
    """How a postgresql:// store is used: its password, its timeouts."""
    max_element_bytes: int = DEFAULT_MAX_ELEMENT_BYTES
    """A Level 3 element whose JSON is larger is served cut (`element_cap`); 0: never."""
    workers: WorkerSettings = field(default_factory=WorkerSettings)
    """The worker pool parsing files when no `backend` is given (process isolation)."""
    limits: Limits = DEFAULT_LIMITS
    """What every extraction honours, the OCR settings among them (part of the cache key)."""
    backend: Backend | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        if not self.host:
            self.host = default_host(self.root)


class DpeServer(Server[Any]):
    """The low-level `Server`, telling handshake-era clients that the resource list changes."""

    def __init__(self, app: DpeApp, **kwargs: Any) -> None:
        self.app = app
        super().__init__(**kwargs)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(
            resources_changed=not self.app.settings.stateless
        )
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class DpeApp:
    """The server's state and handlers: one per served folder."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.host = settings.host
        self.backend: Backend = settings.backend or ProcessBackend(
            settings.workers, settings.limits
        )
        self.hub = Hub(self.host, broadcast_updates=settings.broadcast_updates)
        self.store = open_store(
            settings.store_url,
            settings.cache_dir,
            settings.root,
            settings.cache,
            settings.store_options,
        )
        self.catalog = Catalog(
            settings.root,
            self.host,
            self.backend,
            on_change=self._changed,
            store=self.store,
            limits=settings.limits,
        )
        self.reader = Reader(self.catalog, self.host, settings.max_element_bytes)
        self.limiter = RateLimiter(settings.completion_rate, settings.completion_burst)
        self.toolbox = ToolBox(self.reader, self.catalog, self.hub.connection_key)
        self.completer = Completer(self.catalog)
        self.on_ready: Callable[[], None] | None = None
        """Called once the folder is indexed (the CLI prints its banner)."""
        self.on_change: Callable[[Change], None] | None = None
        """Called with each change of the catalog once announced (the CLI logs new counts,
        the viewer tells its open pages)."""
        self.stop: Callable[[], None] | None = None
        """Ends serving (set by the transport); called when the background work fails."""
        self.failure: BaseException | None = None
        """Why the background work failed, if it did (the command then exits with status 1)."""

    async def _changed(self, change: Change) -> None:
        await self.hub.publish(change)
        if self.on_change is not None:
            self.on_change(change)

    # ---- life cycle ----------------------------------------------------------------------

    @asynccontextmanager
    async def lifespan(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        """Background work while serving; then, however serving ends (a signal cancels it),
        that work stopped, the workers gone and the cache closed."""
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._background, tg)
                try:
                    yield {}
                finally:
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled shutdown would skip the close
                await self.aclose()

    async def aclose(self) -> None:
        await self.backend.aclose()
        self.store.close()

    async def _background(self, tg: anyio.abc.TaskGroup) -> None:
        """`run_background`, and if it ever fails, serving stopped: a server whose folder is
        no longer indexed nor watched must exit (status 1, so a supervisor restarts it) rather
        than stay up answering errors. The failure is logged, never raised into the task
        group, which would leave the transport up without its lifespan."""
        try:
            async with anyio.create_task_group() as work:  # whatever it starts, too
                await self.run_background(work)
        except Exception as exc:
            while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]  # the task group's wrapping says nothing
            log.critical("the server's background work failed; stopping: %r", exc, exc_info=exc)
            self.failure = exc
            if self.stop is not None:
                self.stop()

    async def run_background(self, tg: anyio.abc.TaskGroup) -> None:
        """Index the folder, then watch it and warm every document up."""
        catalog = self.catalog
        async with progress("indexing", lambda: (catalog.probed, catalog.scanned)):
            await catalog.start(tg)
        # What is listed now lives as long as the server: the cyclic collector no longer walks
        # it at each full collection (at 100,000 documents, 320,000 objects a walk).
        gc.freeze()
        if self.on_ready is not None:
            self.on_ready()
        if self.settings.watch:
            tg.start_soon(watch, self.catalog, self.settings.debounce_ms)
            # What appeared or changed while the folder was listed and probed, before the
            # watcher ran (seconds on a large folder), is found by one rescan of the folder.
            tg.start_soon(self.catalog.rescan)
        tg.start_soon(self.catalog.follow)  # what other replicas saw (a shared store)
        if self.settings.warm:
            await self.catalog.warm()  # every document's text layer first,
            await self.catalog.recognise_pending(forever=True)  # then the pages to recognise

    # ---- resources -----------------------------------------------------------------------

    async def list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.hub.session_of(ctx)
        await self.catalog.listed.wait()
        start = 0
        if params is not None and params.cursor:
            given = uint_or_none(params.cursor)
            if given is None:
                raise MCPError(INVALID_PARAMS, "The cursor is not one this server gave out.")
            start = given
        docs = self.catalog.documents()
        size = self.settings.page_size
        chunk = docs[start : start + size]
        resources = [
            types.Resource(
                uri=format_uri(self.host, d.doc_ref),
                name=d.title,
                title=d.title,
                description=d.summary or None,
                mime_type="application/json",
                size=self.catalog.entry(d.doc_ref).stat.size,
                annotations=types.Annotations(last_modified=d.last_modified),
                _meta={
                    "page_count": d.page_count,
                    "file_type": d.file_type,
                    "file_uri": d.file_uri,
                    "keywords": list(d.keywords),
                    "tags": self._tags(d.doc_ref),
                    **({"error": dict(d.error)} if d.error else {}),
                    **({"indexing": True} if d.extra.get("indexing") else {}),
                },
            )
            for d in chunk
        ]
        more = start + size < len(docs)
        return types.ListResourcesResult(
            resources=resources, next_cursor=str(start + size) if more else None
        )

    def _tags(self, doc_ref: str) -> list[str]:
        entry = self.catalog.entry(doc_ref)
        file_rel = entry.rel.partition("\0")[0]  # a child's: its container's folders
        folders = [p for p in Path(file_rel).parent.parts if p not in ("", ".")]
        return [entry.file_type, *folders]

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        base = f"dpe://{self.host}/{{doc_ref}}"
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=f"{base}/pages/{{page_index}}",
                    name="document-page",
                    title="Document page",
                    description="One page (sheet, pdf page, slide, docx section) with its "
                    "elements. "
                    "Query: format=json|markdown|text, categories=table,chart,...",
                    mime_type="application/json",
                ),
                types.ResourceTemplate(
                    uri_template=f"{base}/elements/{{element_id}}",
                    name="document-element",
                    title="Document element",
                    description="One element in full (a whole table, chart data...). "
                    "Query: format=json|markdown|text",
                    mime_type="application/json",
                ),
            ]
        )

    async def read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self.hub.session_of(ctx)
        try:
            return await self.read(str(params.uri))
        except RequestError as exc:
            raise to_mcp_error(exc, ctx.protocol_version) from None

    async def read(self, uri: str) -> types.ReadResourceResult:
        """What `resources/read` of `uri` returns; raises `RequestError`."""
        contents: list[types.TextResourceContents | types.BlobResourceContents] = []
        for body in await self.reader.read(uri):
            if body.blob is not None:
                contents.append(
                    types.BlobResourceContents(uri=uri, mime_type=body.mime_type, blob=body.blob)
                )
            else:
                contents.append(
                    types.TextResourceContents(
                        uri=uri, mime_type=body.mime_type, text=body.text or ""
                    )
                )
        return types.ReadResourceResult(contents=contents)

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        try:
            with reading(uri):
                parsed = parse(uri)
                self.catalog.check_host(parsed)
                if parsed.doc_ref is not None:
                    await self.catalog.listed.wait()
                    self.catalog.entry(parsed.doc_ref)
        except RequestError as exc:
            raise to_mcp_error(exc, ctx.protocol_version) from None
        self.hub.subscribe(ctx, uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Ctx, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.hub.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    # ---- completion ----------------------------------------------------------------------

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        self.hub.session_of(ctx)
        if not self.limiter.allow(self.hub.connection_key(ctx)):
            raise MCPError(
                RATE_LIMITED,
                "Too many completion requests from this session; wait a moment and try again.",
            )
        request = _completion_request(params)
        done = await self.completer.complete(*request) if request is not None else cap([])
        return types.CompleteResult(
            completion=types.Completion(
                values=done.values, total=done.total, has_more=done.has_more
            )
        )


def _completion_request(
    params: types.CompleteRequestParams,
) -> tuple[str, str, str, dict[str, str]] | None:
    """(template URI, argument name, typed value, context arguments) of a completion request
    on a resource template; None for any other reference."""
    ref = params.ref
    if not isinstance(ref, types.ResourceTemplateReference):
        return None
    context = (params.context.arguments if params.context else None) or {}
    return ref.uri, params.argument.name, params.argument.value, dict(context)


def build_server(settings: Settings) -> DpeServer:
    """The MCP server for `settings`, with every handler of SPEC §7 registered."""
    app = DpeApp(settings)
    kwargs: dict[str, Any] = dict(
        name="dpe-server",
        version=__version__,
        title="DPE document server",
        instructions=(
            f"Office documents of {settings.root.name} as dpe:// resources. Read dpe://{app.host} "
            "for the catalog, then a document (?depth=pages for its page index), a page "
            "(/pages/N), an element (/elements/ID). Add ?format=markdown for Markdown."
        ),
        lifespan=app.lifespan,
        on_list_resources=app.list_resources,
        on_list_resource_templates=app.list_templates,
        on_read_resource=app.read_resource,
        on_completion=app.complete,
        on_subscriptions_listen=app.hub.listen,
    )
    if not settings.stateless:
        kwargs["on_subscribe_resource"] = app.subscribe
        kwargs["on_unsubscribe_resource"] = app.unsubscribe
    if settings.tools:
        kwargs["on_list_tools"] = app.toolbox.list_tools
        kwargs["on_call_tool"] = app.toolbox.call_tool
    return DpeServer(app, **kwargs)
