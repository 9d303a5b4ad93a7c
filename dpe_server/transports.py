"""stdio and streamable HTTP.

stdio: the SDK's `stdio_server` points fd 1 at stderr while serving, so nothing but protocol
reaches stdout. HTTP: Host and Origin are validated whatever the bind address (loopback names
when bound to loopback, otherwise the bind address plus an explicit allowlist); an optional
bearer token is checked before anything else; request size, session count and idle time are
bounded.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from dataclasses import dataclass, field

import anyio
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from dpe_server.server import DpeServer

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


async def serve_stdio(server: DpeServer) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


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
    server: DpeServer, options: HttpOptions, ready: anyio.Event | None = None
) -> None:
    import uvicorn  # the SDK depends on it; imported here so stdio never loads it

    config = uvicorn.Config(
        http_app(server, options),
        host=options.bind,
        port=options.port,
        log_level="warning",
        lifespan="on",
        access_log=False,
    )
    userver = uvicorn.Server(config)
    if ready is not None:

        async def signal_ready() -> None:
            while not userver.started:
                await anyio.sleep(0.02)
            ready.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(signal_ready)
            await userver.serve()
    else:
        await userver.serve()
