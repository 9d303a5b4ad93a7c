"""stdio and streamable HTTP.

stdio: the SDK's `stdio_server` points fd 1 at stderr while serving, so nothing but protocol
reaches stdout. HTTP: Host and Origin are validated whatever the bind address (loopback names
when bound to loopback, otherwise the bind address plus an explicit allowlist); an optional
bearer token is checked before anything else, as soon as a request's head arrives (a refused
request's connection is closed, its body never read); request size, session count and idle time
are bounded; so are open connections and the time a request's head and body may take to arrive
(`connections`).

Both stop the same way on SIGINT or SIGTERM: the workers are killed at once, serving ends, the
server's lifespan closes (workers reaped, cache closed) and the command exits 0. A second
signal while that runs kills the workers again and ends the process at once, as if no signal
had been handled.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from dpe_server.surface.app import DpeServer
from dpe_server.surface.connections import (
    ConnectionLimits,
    connection_cap,
    protocol_class,
    quiet_accept_errors,
    raise_fd_limit,
)

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@asynccontextmanager
async def stop_on_signal(
    stop: Callable[[int], None], kill_now: Callable[[], None]
) -> AsyncIterator[None]:
    """On the first SIGINT or SIGTERM received in the block, call `kill_now()` (the parses
    under way end at once, whatever else the shutdown waits for) and `stop(signal number)`;
    from then on either signal calls `kill_now()` again and ends the process at once, as the
    signal's default action does."""

    def forced(signum: int, _frame: object) -> None:
        kill_now()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    async def receive(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            task_status.started()
            signum = await anext(aiter(signals))
        for again in STOP_SIGNALS:
            signal.signal(again, forced)
        log.info("%s received; shutting down", signal.Signals(signum).name)
        kill_now()
        stop(signum)

    async with anyio.create_task_group() as tg:
        await tg.start(receive)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


async def serve_stdio(server: DpeServer) -> None:
    with anyio.CancelScope() as serving:
        server.app.stop = serving.cancel
        stop = stop_on_signal(lambda _signum: serving.cancel(), server.app.backend.kill_now)
        async with stop, stdio_server(stdin=_stdin()) as (read, write):
            await server.run(read, write, server.create_initialization_options())


def _stdin() -> anyio.AsyncFile[str] | None:
    """Our stdin for the SDK's stdio transport (None: the SDK's own, where fds cannot be
    waited on)."""
    return None if sys.platform == "win32" else _Stdin()


class _Stdin(anyio.AsyncFile[str]):
    """stdin line by line, waiting for input on the event loop: a shutdown cancels the wait
    at once, where the SDK's reader blocks a thread until the client sends a line."""

    def __init__(self) -> None:
        super().__init__(sys.stdin)
        self._fd = sys.stdin.fileno()
        self._buffer = bytearray()
        self._eof = False
        self._pollable = True

    async def readline(self) -> str:
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0 and not self._eof:
            searched = len(self._buffer)
            await self._readable()
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:  # a non-blocking stdin with nothing after all
                continue
            self._buffer += chunk
            self._eof = not chunk
        size = end + 1 if end >= 0 else len(self._buffer)
        line = bytes(self._buffer[:size])
        del self._buffer[:size]
        return line.decode("utf-8", "replace")

    async def _readable(self) -> None:
        if self._pollable:
            try:
                await anyio.wait_readable(self._fd)
                return
            except OSError:  # a regular file (`serve < requests`): reading never blocks
                self._pollable = False
        await anyio.lowlevel.checkpoint()


@dataclass
class HttpOptions:
    bind: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    allow_hosts: list[str] = field(default_factory=list)
    allow_origins: list[str] = field(default_factory=list)
    max_sessions: int = 100
    session_idle_timeout: float = 600.0
    max_request_bytes: int = 1024 * 1024
    path: str = "/mcp"
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)


def is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


def security_settings(options: HttpOptions) -> TransportSecuritySettings:
    """Host/Origin validation, always on: loopback names, the bind address, the allowlist."""
    names: list[str] = list(LOOPBACK_NAMES) if is_loopback(options.bind) else []
    if options.bind not in ("0.0.0.0", "::", "") and not is_loopback(options.bind):
        names.append(f"[{options.bind}]" if ":" in options.bind else options.bind)
    hosts = [pattern for name in [*names, *options.allow_hosts] for pattern in _patterns(name)]
    origins: list[str] = []
    for name in names:
        origins += [f"http://{name}", f"http://{name}:*", f"https://{name}", f"https://{name}:*"]
    origins += options.allow_origins
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _patterns(name: str) -> list[str]:
    """A Host allowlist entry as given, plus any port when it names none."""
    after = name.rsplit("]", 1)[-1] if name.startswith("[") else name
    return [name] if ":" in after else [name, f"{name}:*"]


class BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = b""
            for name, value in scope.get("headers", []):
                if name == b"authorization" and value[:7].lower() == b"bearer ":
                    given = value[7:].strip()
            if not hmac.compare_digest(given, self._token):
                body = b'{"error": "unauthorized", "message": "A valid bearer token is required."}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="dpe-server"'),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"),  # its body, if any, is never read
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: DpeServer, options: HttpOptions) -> ASGIApp:
    """The ASGI app serving `server` over streamable HTTP at `options.path`."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=options.path,
        stateless_http=server.app.settings.stateless,
        transport_security=security_settings(options),
        host=options.bind,
        max_request_body_size=options.max_request_bytes,
        max_sessions=options.max_sessions,
        session_idle_timeout=options.session_idle_timeout,
    )
    if options.token:
        app = BearerToken(app, options.token)
    return app


async def serve_http(
    server: DpeServer, options: HttpOptions, on_listening: Callable[[str], None] | None = None
) -> None:
    """Serve until SIGINT or SIGTERM; `on_listening` gets the URL once the port is bound (the
    port actually bound when `options.port` is 0)."""
    import uvicorn  # the SDK depends on it; imported here so stdio never loads it

    fd_limit = raise_fd_limit()
    cap = connection_cap(options.connections, fd_limit)
    if cap < options.connections.max_connections:
        log.warning("at most %d connections at once: the open-file limit is %s", cap, fd_limit)
    quiet_accept_errors(asyncio.get_running_loop())

    class Uvicorn(uvicorn.Server):
        """uvicorn without its own signal handlers (once stopped, it re-raises the signal:
        SIGTERM would end the process with status -15): `stop_on_signal` calls
        `handle_exit`, which sse-starlette also hooks to end the open event streams."""

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    config = uvicorn.Config(
        http_app(server, options),
        host=options.bind,
        port=options.port,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=protocol_class(options.connections, cap),
    )
    userver = Uvicorn(config)
    server.app.stop = lambda: userver.handle_exit(signal.SIGTERM, None)
    stop = stop_on_signal(
        lambda signum: userver.handle_exit(signum, None), server.app.backend.kill_now
    )
    async with stop, anyio.create_task_group() as tg:
        if on_listening is not None:
            tg.start_soon(_report_listening, userver, options, on_listening)
        failed = await _serve(userver)
        tg.cancel_scope.cancel()
    if failed is not None:  # raised out here, where no task group wraps it in a group
        raise failed


async def _serve(userver: uvicorn.Server) -> SystemExit | None:
    """Run uvicorn; the SystemExit it raises when it cannot start (it logged why)."""
    try:
        await userver.serve()
    except SystemExit as exc:
        return exc
    return None


async def _report_listening(
    userver: uvicorn.Server, options: HttpOptions, on_listening: Callable[[str], None]
) -> None:
    while not userver.started:  # uvicorn has no start-up hook
        await anyio.sleep(0.02)
    port = userver.servers[0].sockets[0].getsockname()[1]
    host = f"[{options.bind}]" if ":" in options.bind else options.bind
    on_listening(f"http://{host}:{port}{options.path}")
