"""Bounds on HTTP connections, beneath the ASGI app.

uvicorn alone keeps a connection whose request head never completes, or whose body trickles,
for as long as the client likes, and accepts connections until the process runs out of file
descriptors; then every client times out and asyncio logs each failed `accept()` (thousands a
second). Here:

- **A cap on open connections** (`ConnectionLimits.max_connections`, never more than the file
  descriptors allow: `connection_cap`). Past it, the connection that has waited longest for a
  request head (a client that connected and sent nothing, or an idle keep-alive one) is
  closed to make room; when every connection is busy with a request, the new one gets 503 and
  is closed.
- **Deadlines for a request's head and body.** The head must be complete within
  `head_timeout` seconds of the connection's opening (or of the previous response's end); a
  body within `body_timeout` seconds of its head. Past either: 408 and the connection closed.
  A request whose head and body have arrived (a long read, an event stream) has no deadline
  here.
- **The file-descriptor soft limit raised to the hard limit** at start (`raise_fd_limit`).
- **Repeated accept errors logged once a second at most** (`quiet_accept_errors`).

The bearer token is checked by the ASGI app, which uvicorn calls as soon as a request's head
is parsed, before its body is read (`transports.BearerToken`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

FD_RESERVE = 128
"""File descriptors kept for everything but client connections (workers, the cache, the
watcher, the listening socket)."""


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = 1000
    head_timeout: float = 10.0
    body_timeout: float = 30.0


def _response(status: str, message: str) -> bytes:
    body = f'{{"error": "{status.split(" ", 1)[1].lower()}", "message": "{message}"}}'.encode()
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


HEAD_LATE = _response("408 Request Timeout", "The request head did not arrive in time.")
BODY_LATE = _response("408 Request Timeout", "The request body did not arrive in time.")
BUSY = _response("503 Service Unavailable", "Too many connections; try again shortly.")


def raise_fd_limit() -> int | None:
    """Raise this process's soft limit of open files to its hard limit; the soft limit then
    (None where there is no such limit)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return None if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError) as exc:  # e.g. macOS caps the soft limit below `hard`
        log.warning("could not raise the open-file limit from %d to %d: %s", soft, wanted, exc)
        return soft
    return wanted


def connection_cap(limits: ConnectionLimits, fd_limit: int | None) -> int:
    """The connections served at once: the configured cap, within the file descriptors."""
    if fd_limit is None:
        return limits.max_connections
    return max(1, min(limits.max_connections, fd_limit - FD_RESERVE))


def protocol_class(limits: ConnectionLimits, cap: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the cap and the deadlines (uvicorn's `http=` option)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Bounded(H11Protocol):
        _phase = "head"
        """`head` (waiting for a request head), `body` (for its body) or `busy`."""
        _waiting_since = 0.0
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._await_head()
            if len(self.connections) > cap:
                _make_room(self, self.connections)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            cycle = self.cycle
            if cycle is None or self.transport.is_closing():
                return
            if cycle is not before:  # a request head arrived
                if cycle.more_body:
                    self._phase = "body"
                    self._arm(limits.body_timeout, self._body_late)
                else:
                    self._phase = "busy"
                    self._disarm()
            elif self._phase == "body" and not cycle.more_body:
                self._phase = "busy"
                self._disarm()

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._await_head()
            super().on_response_complete()

        def _await_head(self) -> None:
            self._phase = "head"
            self._waiting_since = time.monotonic()
            self._arm(limits.head_timeout, self._head_late)

        def _arm(self, seconds: float, then: Any) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, then)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _head_late(self) -> None:
            self._timer = None
            if self._phase == "head":
                self.close_with(HEAD_LATE)

        def _body_late(self) -> None:
            self._timer = None
            cycle = self.cycle
            if self._phase != "body" or cycle is None or not cycle.more_body:
                return
            started = cycle.response_started
            cycle.disconnected = True  # the app's next receive() is http.disconnect
            cycle.message_event.set()
            self.close_with(b"" if started else BODY_LATE)

        def close_with(self, response: bytes) -> None:
            if self.transport.is_closing():
                return
            if response:
                self.transport.write(response)
            self.transport.close()

    return Bounded


def _make_room(new: H11Protocol, connections: set[Any]) -> None:
    """Close the connection that has waited longest for a request head, or refuse `new`."""
    waiting = [
        c
        for c in connections
        if c is not new
        and getattr(c, "_phase", "") == "head"
        and c.transport is not None
        and not c.transport.is_closing()
    ]
    if waiting:
        min(waiting, key=lambda c: c._waiting_since).close_with(HEAD_LATE)
    else:
        new.close_with(BUSY)  # type: ignore[attr-defined]


ACCEPT_ERROR = "socket.accept() out of system resource"


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Log the event loop's failed `accept()`s (out of file descriptors) once a second at
    most, saying how many were left out; other errors as before."""
    previous = loop.get_exception_handler()
    last = -math.inf
    left_out = 0

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal last, left_out
        if context.get("message") != ACCEPT_ERROR:
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = time.monotonic()
        if now - last < 1.0:
            left_out += 1
            return
        more = f" ({left_out} more in the last second not logged)" if left_out else ""
        log.error(
            "%s: %s; new connections are refused until some close%s",
            ACCEPT_ERROR,
            context.get("exception"),
            more,
        )
        last, left_out = now, 0

    loop.set_exception_handler(handler)
