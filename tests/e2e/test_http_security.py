"""Streamable HTTP facing hostile clients: Host and Origin validation (on loopback and on a
non-loopback bind with an explicit allowlist), the bearer token, bounded request size and
session count, idle sessions expiring, and completion requests rate limited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.e2e.harness import HttpServer, http_server, make_folder, wait_for

TOKEN = "s3cret-token-for-tests"
IDLE = 1.0
MAX_SESSIONS = 3
LEGACY = "2025-06-18"
ACCEPT = {"accept": "application/json, text/event-stream"}


def _init_body(request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "security-test", "version": "1"},
        },
    }


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.post(url, json=body, headers={**ACCEPT, **(headers or {})}, timeout=15)


def messages(response: Any) -> list[dict[str, Any]]:
    """JSON-RPC messages of a response, whether JSON or an SSE stream."""
    text = response.text
    if response.headers.get("content-type", "").startswith("application/json"):
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def open_session(url: str, headers: dict[str, str]) -> str:
    response = post(url, _init_body(), headers)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    post(url, done, {**headers, "mcp-session-id": session, "mcp-protocol-version": LEGACY})
    return session


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("sec") / "docs")


@pytest.fixture(scope="module")
def guarded(folder: Path) -> Iterator[HttpServer]:
    """Loopback, bearer token, small request."""
    with http_server(folder, "--max-request-bytes", "4096", "--no-watch", token=TOKEN) as server:
        yield server


@pytest.fixture(scope="module")
def crowded(folder: Path) -> Iterator[HttpServer]:
    """At most MAX_SESSIONS sessions, none expiring while the test runs (one that expired while
    the next ones were opened, on a busy machine, would make room for one more)."""
    with http_server(folder, "--max-sessions", str(MAX_SESSIONS), "--no-watch", token=TOKEN) as s:
        yield s


@pytest.fixture(scope="module")
def expiring(folder: Path) -> Iterator[HttpServer]:
    """One session at most, closed after IDLE seconds without a request (the SDK logs each
    session it closes so)."""
    extra = ["--max-sessions", "1", "--session-idle-timeout", str(IDLE), "--log-level", "info"]
    with http_server(folder, *extra, "--no-watch", token=TOKEN) as server:
        yield server


@pytest.fixture(scope="module")
def exposed(folder: Path) -> Iterator[HttpServer]:
    """Bound to every interface, with one allowed host name."""
    with http_server(folder, "--bind", "0.0.0.0", "--allow-host", "dpe.example", "--no-watch") as s:
        yield s


AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"authorization": "Bearer wrong"}, 401),
        ({"authorization": f"Basic {TOKEN}"}, 401),
        ({"authorization": f"Bearer {TOKEN}x"}, 401),
        (AUTH, 200),
    ],
    ids=["missing", "wrong", "not-bearer", "longer", "right"],
)
def test_http_token(guarded: HttpServer, headers: dict[str, str], status: int) -> None:
    response = post(guarded.url, _init_body(), headers)
    assert response.status_code == status


def test_http_foreign_origin_403(guarded: HttpServer) -> None:
    response = post(guarded.url, _init_body(), {**AUTH, "origin": "http://evil.example"})
    assert response.status_code == 403


def test_http_loopback_origin_accepted(guarded: HttpServer) -> None:
    origin = f"http://localhost:{guarded.port}"
    assert post(guarded.url, _init_body(), {**AUTH, "origin": origin}).status_code == 200


def test_http_foreign_host_421(guarded: HttpServer) -> None:
    response = post(guarded.url, _init_body(), {**AUTH, "host": "evil.example"})
    assert response.status_code == 421


def test_http_request_size_bounded_413(guarded: HttpServer) -> None:
    body = _init_body()
    body["params"]["clientInfo"]["name"] = "x" * 8192
    assert post(guarded.url, body, AUTH).status_code == 413


def test_http_idle_session_expires_404(expiring: HttpServer) -> None:
    session = open_session(expiring.url, AUTH)
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    headers = {**AUTH, "mcp-session-id": session, "mcp-protocol-version": LEGACY}
    assert post(expiring.url, ping, headers).status_code == 200
    assert post(expiring.url, _init_body(), AUTH).status_code == 503  # the one place is taken
    # Any request of the session would keep it alive: the server's log says when it is closed.
    wait_for(lambda: f"Session {session} idle timeout" in expiring.stderr(), "idle session closed")
    assert post(expiring.url, ping, headers).status_code == 404
    assert post(expiring.url, _init_body(), AUTH).status_code == 200  # its place is free again


def test_http_session_count_bounded_503(crowded: HttpServer) -> None:
    """At most MAX_SESSIONS open at once; a session the client ends makes room for another."""
    responses = [post(crowded.url, _init_body(), AUTH) for _ in range(MAX_SESSIONS + 1)]
    assert [r.status_code for r in responses] == [200] * MAX_SESSIONS + [503]
    session = responses[0].headers["mcp-session-id"]
    ended = httpx2.delete(crowded.url, headers={**AUTH, "mcp-session-id": session}, timeout=15)
    assert ended.status_code == 200
    assert post(crowded.url, _init_body(), AUTH).status_code == 200


def test_http_completion_burst_rate_limited(exposed: HttpServer) -> None:
    headers = {"host": "dpe.example"}
    session = open_session(exposed.url, headers)
    headers = {**headers, "mcp-session-id": session, "mcp-protocol-version": LEGACY}
    host = "local.dpe.docs"
    codes: list[int | None] = []

    async def one(i: int, client: Any) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 100 + i,
            "method": "completion/complete",
            "params": {
                "ref": {"type": "ref/resource", "uri": f"dpe://{host}/{{doc_ref}}/pages/{{n}}"},
                "argument": {"name": "doc_ref", "value": "rep"},
            },
        }
        response = await client.post(exposed.url, json=body, headers={**ACCEPT, **headers})
        for message in messages(response):
            codes.append(message["error"]["code"] if "error" in message else None)

    async def burst() -> None:
        async with httpx2.AsyncClient(timeout=30) as client, anyio.create_task_group() as tg:
            for i in range(120):
                tg.start_soon(one, i, client)

    anyio.run(burst, backend="asyncio")
    assert len(codes) == 120
    assert codes.count(None) >= 40  # the burst allowance
    assert -32000 in codes  # then the bucket is empty


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "dpe.example"}, 200),
        ({}, 421),  # Host 127.0.0.1:port: not on the allowlist of a non-loopback bind
        ({"host": "localhost"}, 421),
        ({"host": "evil.example"}, 421),
        ({"host": "dpe.example", "origin": "http://evil.example"}, 403),
    ],
    ids=["allowed-host", "loopback-ip-host", "localhost", "foreign-host", "foreign-origin"],
)
def test_http_non_loopback_bind_enforces_allowlist(
    exposed: HttpServer, headers: dict[str, str], status: int
) -> None:
    assert post(exposed.url, _init_body(), headers).status_code == status
