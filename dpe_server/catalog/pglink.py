"""Connections to the shared PostgreSQL store that never wait on it for long (`postgres`).

A database that accepts TCP but does not answer (its processes stopped, a host frozen) or
that answers slowly (a table locked by `VACUUM FULL`, `CREATE INDEX` or `ALTER TABLE`) made
every read of every replica wait as long as it lasted, with no error (issue 31). Now:

- every connection is opened with PostgreSQL's `statement_timeout` and `lock_timeout`
  (`StoreOptions`: 5 s and 2 s by default), so the server itself cancels a statement that
  runs, or waits for a lock, longer;
- a `Watchdog` ends a call the server does not answer at all (the server cannot cancel
  anything while it is stopped, and its host's kernel still acknowledges every packet, so
  neither TCP keepalives nor `tcp_user_timeout` notice): past its deadline the connection's
  socket is shut down, and the waiting call fails at once;
- TCP keepalives and `tcp_user_timeout` notice a database gone from the network (a partition
  sends no reset), and `connect_timeout` bounds a connection attempt.

A call that fails so is answered as the store being unreachable just now (`timed_out` says
which failures were a timeout), logged, and tried again at the next call.
"""

from __future__ import annotations

import os
import socket
import threading
from types import TracebackType
from typing import Any

import psycopg
import psycopg.errors

from dpe_server.catalog.stores import StoreOptions

CONNECT_TIMEOUT = 3
"""Seconds a connection attempt may take (libpq's `connect_timeout`), unless less is left."""
MIN_CONNECT_TIMEOUT = 2
"""libpq takes a shorter `connect_timeout` as 2 seconds."""
GRACE = 1.0
"""Seconds a `Watchdog` gives past the statement timeout: the server's own cancel comes first
while it answers."""


def connect(
    url: str, options: StoreOptions, timeout: int = CONNECT_TIMEOUT
) -> psycopg.Connection[Any]:
    """A connection to `url` with the timeouts of `options` (and its password, if given: it is
    never part of the URL, which every local user sees in the process list), attempted for
    `timeout` seconds at most."""
    settings = (
        f"-c statement_timeout={round(options.timeout * 1000)} "
        f"-c lock_timeout={round(options.lock_timeout * 1000)}"
    )
    given = psycopg.conninfo.conninfo_to_dict(url).get("options")
    extra: dict[str, Any] = {"password": options.password} if options.password else {}
    return psycopg.connect(
        url,
        autocommit=True,
        connect_timeout=max(timeout, MIN_CONNECT_TIMEOUT),
        keepalives=1,
        keepalives_idle=5,
        keepalives_interval=2,
        keepalives_count=3,
        tcp_user_timeout=10_000,
        options=f"{settings} {given}" if given else settings,  # the URL's own come last: win
        **extra,
    )


def timed_out(exc: psycopg.Error) -> bool:
    """Whether `exc` is the server's `statement_timeout` or `lock_timeout` (a statement
    cancelled, a lock not had in time)."""
    return isinstance(exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable)


class Watchdog:
    """While its block runs, a timer that shuts the connection's socket down past `seconds`:
    the call waiting on the database fails (`psycopg.OperationalError`) instead of hanging.
    `fired` says whether it did. The socket is only ever shut down, never closed, and not
    once the block has ended, so a descriptor reused meanwhile is never touched."""

    def __init__(self, db: psycopg.Connection[Any], seconds: float) -> None:
        self.db = db
        self.fired = False
        self._done = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            try:
                dup = socket.socket(fileno=os.dup(self.db.pgconn.socket))
            except (OSError, psycopg.Error):
                return  # closed meanwhile
            try:
                dup.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            finally:
                dup.close()
