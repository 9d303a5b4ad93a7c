"""Streamable HTTP under idle and slow connections (issue 31): a server started with the usual
1,024 open files, 1,200 connections that never send a request, a body trickled byte by byte,
a request without the token whose body never comes. The server raises its open-file limit,
caps its connections (closing the longest idle one to make room), cuts a head or a body that
is late, checks the token as soon as the head arrives, and logs a failed accept() once a
second at most."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import Iterator

import httpx2
import pytest

from dpe_server.surface.connections import ACCEPT_ERROR, quiet_accept_errors
from tests.e2e.harness import HttpServer, http_server, make_folder, wait_for
from tests.e2e.test_http_security import ACCEPT, LEGACY, messages, open_session

resource = pytest.importorskip("resource")

TOKEN = "connections-test-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}
HEAD_TIMEOUT = 3.0
BODY_TIMEOUT = 1.0
IDLE = 1200


@contextlib.contextmanager
def _open_files(soft: int) -> Iterator[None]:
    """This process's soft limit of open files set to `soft` in the block (children started in
    it inherit it)."""
    before, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (before, hard))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < IDLE + 300:
        pytest.skip(f"the hard limit of open files ({hard}) is below {IDLE + 300}")
    folder = make_folder(tmp_path_factory.mktemp("connections") / "docs")
    extra = ("--head-timeout", str(HEAD_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT))
    with _open_files(1024), http_server(folder, *extra, token=TOKEN) as started:
        yield started


def _level0(url: str, session: str) -> float:
    """Seconds an authorised Level 0 read takes, on a new connection."""
    headers = {**ACCEPT, **AUTH, "mcp-session-id": session, "mcp-protocol-version": LEGACY}
    body = {"jsonrpc": "2.0", "id": 7, "method": "resources/read"}
    with httpx2.Client(timeout=10) as client:
        host_of = client.post(url, json={**body, "method": "resources/list"}, headers=headers)
        host = messages(host_of)[0]["result"]["resources"][0]["uri"].split("/")[2]
        began = time.monotonic()
        response = client.post(
            url, json={**body, "params": {"uri": f"dpe://{host}"}}, headers=headers
        )
    took = time.monotonic() - began
    level0 = json.loads(messages(response)[0]["result"]["contents"][0]["text"])
    assert level0["total_count"] >= 1
    return took


def _closed(sock: socket.socket) -> bytes | None:
    """What the server sent before closing `sock`, or None while it is open."""
    sock.setblocking(False)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except BlockingIOError:
        return None
    except OSError:
        pass
    return received or b"(closed)"


def test_idle_connections_do_not_lock_clients_out(server: HttpServer) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, IDLE + 1000)), hard))
    session = open_session(server.url, AUTH)
    alone = _level0(server.url, session)
    idle: list[socket.socket] = []
    try:
        for i in range(IDLE):  # half send nothing, half the start of a head
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            if i % 2:
                sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            idle.append(sock)
        took = _level0(server.url, session)
        assert took < 1.0, f"Level 0 took {took:.2f} s beside {IDLE} idle connections"
        # every idle connection is closed once its head is late
        wait_for(lambda: all(_closed(s) is not None for s in idle), "idle closed", 30)
        answers = {_closed(s) for s in idle}
        assert all(b"408" in a or a == b"(closed)" for a in answers if a), answers
    finally:
        for sock in idle:
            sock.close()
    assert _level0(server.url, session) < max(1.0, 5 * alone)
    assert len(server.stderr()) < 20_000, server.stderr()[-2000:]
    assert ACCEPT_ERROR not in server.stderr()


def _raw(port: int, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head)
    return sock


def _read_until_closed(sock: socket.socket, seconds: float, trickle: bool = False) -> bytes:
    """Everything the server sends until it closes, sending a byte of body every 0.1 s
    meanwhile when `trickle`; fails past `seconds`."""
    deadline = time.monotonic() + seconds
    received = b""
    sock.settimeout(0.1)
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            if trickle:
                with contextlib.suppress(OSError):
                    sock.sendall(b"x")
            continue
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    raise AssertionError(f"still open after {seconds:g} s; received {received[:200]!r}")


def _post_head(port: int, auth: bool) -> bytes:
    token = f"authorization: Bearer {TOKEN}\r\n" if auth else ""
    return (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\n{token}content-length: 1000\r\n\r\n"
    ).encode()


def test_a_trickled_body_is_cut_at_its_timeout(server: HttpServer) -> None:
    sock = _raw(server.port, _post_head(server.port, auth=True) + b"{")
    began = time.monotonic()
    with sock:
        answer = _read_until_closed(sock, 10 * BODY_TIMEOUT + 5, trickle=True)
    took = time.monotonic() - began
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert BODY_TIMEOUT * 0.9 <= took < BODY_TIMEOUT + 3


def test_the_token_is_checked_when_the_head_arrives(server: HttpServer) -> None:
    """No token: 401 at once and the connection closed, its body never awaited."""
    began = time.monotonic()
    with _raw(server.port, _post_head(server.port, auth=False)) as sock:
        answer = _read_until_closed(sock, 5 * BODY_TIMEOUT + 5)
    assert answer.startswith(b"HTTP/1.1 401"), answer
    assert time.monotonic() - began < BODY_TIMEOUT


def test_accept_errors_are_logged_once_a_second(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.new_event_loop()
    try:
        quiet_accept_errors(loop)
        error = OSError(24, "Too many open files")
        with caplog.at_level(logging.ERROR, logger="dpe_server.surface.connections"):
            for _ in range(10_000):
                loop.call_exception_handler({"message": ACCEPT_ERROR, "exception": error})
    finally:
        loop.close()
    assert len(caplog.records) == 1
    assert "Too many open files" in caplog.records[0].getMessage()
