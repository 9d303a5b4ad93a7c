"""The SQLite cache's search connections: each search runs on a connection of its own, never on
the one the cache writes, looks up and reads pages through (`sqlite.SqliteStore`).

In WAL mode SQLite lets readers run beside the writer and beside each other, each on its own
connection and its own snapshot, so a search (the costliest read: a query of 32 prefixes
merges the lists of every word they begin) neither waits for a write nor delays a page read
or a lookup. One connection behind one lock made 20 concurrent searches delay another
session's uncached page read by 8-13 s (issue 31).

A search joins the per-connection table `live` (the versions served, `fulltext.serve`), so
each search connection keeps its own: filled with every version served when the connection is
first used, then told of each change since at its next search (`serve` only notes them).
Connections are opened as concurrent searches need them, at most `limit` (a search past them
waits for one), and kept.

Searches run in threads of their own (`limit` of them), at a lower scheduling priority where
the platform allows one per thread (`NICENESS`, Linux): on a machine whose cores the searches
fill, a page read (SQLite and JSON, then rendering) is scheduled before them, so they share
the machine with the reads rather than the reads with them. Measured on 2 busy cores, an
uncached page read beside 2 searches of 32 one-character prefixes took 3x its time alone
at the same priority.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dpe_server.catalog import fulltext

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from dpe_server.catalog.textquery import Found, Position, Scope, TextQuery

log = logging.getLogger(__name__)

Served = tuple[str, str, str]
"""A version served: its store key, doc_ref and file type."""
NICENESS = 10
"""How much lower than the server's own a search thread's scheduling priority is (Linux)."""


def _lower_priority() -> None:
    """Lower the calling thread's priority by `NICENESS` (Linux: a thread id is a process id
    to `setpriority`; elsewhere that would lower the whole process's, so nothing is done)."""
    if sys.platform != "linux":
        return
    me = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, me, min(os.getpriority(os.PRIO_PROCESS, me) + NICENESS, 19))
    except OSError as exc:
        log.info("search threads keep the server's priority (%s)", exc)


class _Connection:
    """One search connection and what its `live` table has not been told yet."""

    __slots__ = ("db", "generation", "pending", "pending_rows", "refill")

    def __init__(self, db: sqlite3.Connection, generation: int) -> None:
        self.db = db
        self.generation = generation
        self.pending: list[tuple[Sequence[Served], Sequence[str]]] = []
        self.pending_rows = 0
        self.refill = True
        """`live` is to be filled again from every version served (a new connection, a change
        log longer than the table, or a failed update)."""


class Searchers:
    """The search connections of one cache file. Thread-safe."""

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit
        self._lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None
        """The search threads, from the first search (a `dpe-server read` searches nothing and
        does not import `concurrent.futures`)."""
        self._idle: list[_Connection] = []
        self._all: list[_Connection] = []
        self._generation = 0
        self._closed = False
        self.live: dict[str, Served] = {}
        """The versions served, by key: what every connection's `live` table is to hold."""

    def serve(self, added: Sequence[Served], dropped: Sequence[str]) -> None:
        """Searches return elements of the keys `added`, no longer of the keys `dropped` (each
        connection is told at its next search)."""
        with self._lock:
            for key in dropped:
                self.live.pop(key, None)
            self.live.update((row[0], row) for row in added)
            for conn in self._all:
                if conn.refill:
                    continue
                conn.pending.append((added, dropped))
                conn.pending_rows += len(added) + len(dropped)
                if conn.pending_rows > len(self.live):  # cheaper to fill it again
                    conn.pending, conn.pending_rows, conn.refill = [], 0, True

    def search(self, query: TextQuery, scope: Scope, limit: int, at: Position) -> Found | None:
        """`textquery.search` on a connection of its own, in a search thread (blocking until
        it is done); None when the index cannot be read just now (logged). A damaged file
        raises `sqlite3.DatabaseError` (the caller rebuilds the cache, then `reset`s this)."""
        with self._lock:
            if self._closed:
                return None
            if self._threads is None:
                from concurrent.futures import ThreadPoolExecutor

                self._threads = ThreadPoolExecutor(
                    self.limit, "dpe-search", initializer=_lower_priority
                )
            done = self._threads.submit(self._search, query, scope, limit, at)
        return done.result()

    def _search(self, query: TextQuery, scope: Scope, limit: int, at: Position) -> Found | None:
        try:
            conn = self._take()
        except sqlite3.OperationalError as exc:
            log.warning("a search could not open the index (%s)", exc)
            return None
        if conn is None:
            return None
        try:
            try:
                self._update(conn)
            except sqlite3.OperationalError as exc:  # then filled again from what is served
                log.info("the versions served could not be told to a search (%s); again", exc)
                self._update(conn)
            from dpe_server.catalog import textquery  # at the first search: a read never does

            return textquery.search(conn.db, query, scope, limit, at)
        except sqlite3.OperationalError as exc:  # busy, out of memory, interrupted...
            log.warning("a search could not read the index (%s)", exc)
            return None
        except sqlite3.DatabaseError:
            conn.generation = -1  # not given back: the file is being rebuilt
            raise
        finally:
            self._give_back(conn)

    def _take(self) -> _Connection | None:
        with self._lock:
            if self._closed:
                return None
            if self._idle:
                return self._idle.pop()
            generation = self._generation
        db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout=10000")
            db.executescript(fulltext.LIVE_DDL)
        except sqlite3.Error:
            db.close()
            raise
        conn = _Connection(db, generation)
        with self._lock:
            self._all.append(conn)
        return conn

    def _give_back(self, conn: _Connection) -> None:
        with self._lock:
            if conn.generation == self._generation and not self._closed:
                self._idle.append(conn)
                return
            if conn in self._all:
                self._all.remove(conn)
        conn.db.close()

    def _update(self, conn: _Connection) -> None:
        """Tell the connection's `live` table what changed since its last search."""
        with self._lock:
            refill, pending = conn.refill, conn.pending
            rows = list(self.live.values()) if refill else []
            conn.pending, conn.pending_rows, conn.refill = [], 0, False
        if not (refill or pending):
            return
        try:
            with fulltext.transaction(conn.db):
                if refill:
                    conn.db.execute("DELETE FROM live")
                    fulltext.serve(conn.db, rows, ())
                for added, dropped in pending:
                    fulltext.serve(conn.db, added, dropped)
        except sqlite3.Error:
            with self._lock:
                conn.pending, conn.pending_rows, conn.refill = [], 0, True
            raise

    def reset(self) -> None:
        """The cache file was replaced (rebuilt): connections to the old one are closed, the
        idle ones now, those searching once they finish."""
        with self._lock:
            self._generation += 1
            idle, self._idle = self._idle, []
            self._all = [c for c in self._all if c not in idle]
        for conn in idle:
            conn.db.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            threads = self._threads
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)
        self.reset()
