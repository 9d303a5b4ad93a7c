"""The shared store of several replicas: PostgreSQL (`--store postgresql://…`, psycopg 3).

Several `dpe-server serve` processes over one folder (a shared file system, mounted at the
same path everywhere) share through one database:

- the store: the same rows as the SQLite cache (per key the probe, the error or the outline,
  and each page as compressed JSON), so every replica serves every page;
- a work queue (`jobs`): a replica extracts a document version only once it has claimed its
  key (`SELECT … FOR UPDATE SKIP LOCKED`), under a lease it renews while it works; a replica
  that dies mid-parse stops renewing, and once the lease expires another claims the job;
- a change feed (`Feed`, `LISTEN/NOTIFY` on one channel): a replica that sees a file change
  publishes it, and every replica rescans the folder and tells its own sessions.

The schema is created and migrated by the server (`pgschema`). The `search` tool's
index is PostgreSQL's own (`pgtext`: a `tsvector` per element, GIN-indexed), written with the
pages, so every replica searches what any replica extracted. When the database is
unreachable nothing is fatal: claims succeed locally (the replica extracts for itself), what
it writes is kept in its memory and served from there, the connection is tried again on the
next call (at most once a second), and once the database is back the writes kept are sent to
it: a restarted database is used again without restarting any replica, and nothing is lost.

When the database is slow or does not answer (`pglink`: a table locked by maintenance, its
processes stopped), no read waits longer than the statement timeout and a second: for the
connection (`_call`), then for the answer (PostgreSQL's `statement_timeout` and
`lock_timeout`, and a `pglink.Watchdog` for a server that answers nothing); past it the read
says the store cannot be read just now (`StoreUnavailable`, logged). Lease renewals have a
connection of their own, so they never wait behind a read.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import psycopg

from dpe_server.catalog import pgtext
from dpe_server.catalog.pglink import (
    CONNECT_TIMEOUT,
    GRACE,
    MIN_CONNECT_TIMEOUT,
    Watchdog,
    connect,
    timed_out,
)
from dpe_server.catalog.pgschema import migrate
from dpe_server.catalog.shared import Claim, pages_job
from dpe_server.catalog.store import Cached, MemoryStore, Outline, StoreUnavailable, compact_json
from dpe_server.catalog.stores import StoreOptions
from dpe_server.catalog.textquery import Found, Position, Scope, TextQuery
from dpe_server.model.tree import JSON, Page, Properties

log = logging.getLogger(__name__)

T = TypeVar("T")
CHANNEL = "dpe_changes"
NOTIFY_BYTES = 7_900
"""What a change-feed message may hold: PostgreSQL's NOTIFY payload is under 8,000 bytes."""
LEASE_SECONDS = 30.0
"""How long a claimed job stays another replica's without the claimant renewing it."""
RECONNECT_SECONDS = 1.0
"""At most one connection attempt per this many seconds while the database is unreachable."""
WRITE_STATEMENTS = 6
"""A write (several statements: a page's rows and its words) gets this many statement
timeouts before its connection is cut (`Watchdog`)."""
UNREACHABLE = "the shared store (PostgreSQL) is unreachable"
"""What a read that needs the database says while it cannot be reached (`StoreUnavailable`)."""


class PostgresStore:
    """The shared `Store`, work queue and feed publisher. Thread-safe: one connection behind
    a lock, reconnected when lost; another for lease renewals (`renew`)."""

    def __init__(
        self, url: str, lease: float = LEASE_SECONDS, options: StoreOptions | None = None
    ) -> None:
        self.url = url
        self.lease = lease
        self.options = options or StoreOptions()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """This replica's name in the work queue and the feed."""
        self._lock = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._next_attempt = 0.0
        self._closed = False
        self._local_lock = threading.Lock()
        """Guards `_local` and `_pending` (never held while waiting on the database)."""
        self._local = MemoryStore()
        """What was written while the database was unreachable, served from here meanwhile."""
        self._pending: list[Callable[[psycopg.Connection[Any]], object]] = []
        """Those writes, replayed once the database is back: nothing extracted is lost."""
        self._live: dict[str, tuple[str, str, str]] = {}
        """The versions this replica serves (`serve`): a new connection's `live` table."""
        self._lease_lock = threading.Lock()
        self._lease_db: psycopg.Connection[Any] | None = None
        """The connection of lease renewals (`renew`), which never wait behind a read."""
        self._lease_attempt = 0.0
        with self._lock:
            self._connection()  # migrate now; unreachable: log, and try again on use

    @property
    def slow(self) -> str:
        """What a read says when the database did not answer in time (`StoreUnavailable`)."""
        return f"the shared store (PostgreSQL) did not answer within {self.options.timeout:g} s"

    def _connection(self, timeout: int = CONNECT_TIMEOUT) -> psycopg.Connection[Any] | None:
        """The connection; when there is none, one attempt (at most one a second) of at most
        `timeout` seconds."""
        if self._db is not None and not self._db.closed:
            return self._db
        if time.monotonic() < self._next_attempt:
            return None
        try:
            db = connect(self.url, self.options, timeout)
            migrate(db)
            pgtext.fill_live(db, list(self._live.values()))
            self._replay(db)
        except psycopg.Error as exc:
            self._next_attempt = time.monotonic() + RECONNECT_SECONDS
            log.warning("the shared store is unreachable (%s); extracting locally meanwhile", exc)
            return None
        self._db = db
        return db

    def _replay(self, db: psycopg.Connection[Any]) -> None:
        """Write what was written locally while the database was unreachable."""
        with self._local_lock:
            ops = list(self._pending)
        for i, op in enumerate(ops):
            try:
                op(db)
            except psycopg.OperationalError:
                with self._local_lock:
                    del self._pending[:i]
                raise
            except psycopg.Error as exc:
                log.warning("a write kept while the shared store was unreachable failed (%s)", exc)
        if ops:
            log.info("the shared store is back; %d writes kept meanwhile sent", len(ops))
        with self._local_lock:
            del self._pending[: len(ops)]
            if not self._pending:
                self._local = MemoryStore()

    def _write(
        self, op: Callable[[psycopg.Connection[Any]], object], local: Callable[[MemoryStore], None]
    ) -> None:
        """Write with `op`; while the database cannot be used, `local`ly (served from there)
        and `op` again once it can (the connection is dropped: the next one sends it)."""

        def run(db: psycopg.Connection[Any]) -> bool:
            op(db)
            return True

        try:
            self._call(run, write=True)
        except StoreUnavailable:
            with self._local_lock:
                local(self._local)
                self._pending.append(op)

    def _run(self, fn: Callable[[psycopg.Connection[Any]], T], default: T) -> T:
        """`_call`, answering `default` when the store cannot be used just now."""
        try:
            return self._call(fn)
        except StoreUnavailable:
            return default

    def _call(self, fn: Callable[[psycopg.Connection[Any]], T], write: bool = False) -> T:
        """Run `fn` on the connection; raises `StoreUnavailable` saying why when the database
        cannot be reached, refuses, or does not answer in time. A read waits for the
        connection and for its answer within the statement timeout and `GRACE` in all (it
        tries to connect only when that leaves time for an attempt); a write waits for the
        connection as long as it takes, then `WRITE_STATEMENTS` statement timeouts at most."""
        budget = self.options.timeout + GRACE
        start = time.monotonic()
        if not self._lock.acquire(timeout=-1 if write else budget):
            log.warning("a read of the shared store waited %g s for the connection", budget)
            raise StoreUnavailable(self.slow)
        try:
            if self._closed:
                raise StoreUnavailable(UNREACHABLE)
            left = budget - (time.monotonic() - start)
            if not write and left < MIN_CONNECT_TIMEOUT and (self._db is None or self._db.closed):
                raise StoreUnavailable(UNREACHABLE)  # no time left to connect: a later read will
            db = self._connection(CONNECT_TIMEOUT if write else min(int(left), CONNECT_TIMEOUT))
            if db is None:
                raise StoreUnavailable(UNREACHABLE)
            left = budget - (time.monotonic() - start)
            watch = Watchdog(db, self.options.timeout * WRITE_STATEMENTS if write else left)
            try:
                with watch:
                    return fn(db)
            except psycopg.Error as exc:
                raise self._failed(db, exc, watch.fired, write) from None
        finally:
            self._lock.release()

    def _failed(
        self, db: psycopg.Connection[Any], exc: psycopg.Error, cut: bool, write: bool
    ) -> StoreUnavailable:
        """Log why a call failed, and say it; the connection is dropped unless the server only
        cancelled a read (a write kept for later is sent by the next connection)."""
        if cut or timed_out(exc):
            log.warning("the shared store did not answer in time (%s)", "cut" if cut else exc)
            if cut or write:
                db.close()
            return StoreUnavailable(self.slow)
        if isinstance(exc, psycopg.OperationalError):
            log.warning("the shared store failed (%s); will reconnect", exc)
            db.close()
        else:
            log.warning("shared store operation refused (%s)", exc)
        return StoreUnavailable(UNREACHABLE)

    # ---- Store ---------------------------------------------------------------------------

    def lookup(self, key: str) -> Cached | None:
        return self.lookup_many([key]).get(key)

    def lookup_many(self, keys: Sequence[str]) -> dict[str, Cached]:
        def q(db: psycopg.Connection[Any]) -> dict[str, Cached]:
            rows = db.execute(
                "SELECT key, props, error, outline FROM docs WHERE key = ANY(%s)", (list(keys),)
            ).fetchall()
            return {
                key: Cached(
                    Properties.from_json(json.loads(props)) if props else None,
                    json.loads(error) if error else None,
                    Outline.loads(outline) if outline else None,
                )
                for key, props, error, outline in rows
            }

        if not keys:
            return {}
        found: dict[str, Cached] = self._run(q, {})
        with self._local_lock:
            return found | self._local.lookup_many(keys)

    @staticmethod
    def _upsert(key: str, column: str, value: str) -> Callable[[psycopg.Connection[Any]], object]:
        return lambda db: db.execute(
            f"INSERT INTO docs (key, {column}) VALUES (%s, %s) "
            f"ON CONFLICT (key) DO UPDATE SET {column} = EXCLUDED.{column}, used = now()",
            (key, value),
        )

    def put_probe(self, key: str, props: Properties) -> None:
        self._write(
            self._upsert(key, "props", compact_json(props.to_json())),
            lambda m: m.put_probe(key, props),
        )

    def put_error(self, key: str, error: Mapping[str, JSON]) -> None:
        self._write(
            self._upsert(key, "error", compact_json(dict(error))), lambda m: m.put_error(key, error)
        )
        self.finish(key)

    def put_pages(self, key: str, pages: Sequence[Page]) -> None:
        rows = [
            (key, p.page_index, zlib.compress(compact_json(p.to_json()).encode("utf-8"), 1))
            for p in pages
        ]

        def q(db: psycopg.Connection[Any]) -> None:
            with db.transaction(), db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO pages VALUES (%s, %s, %s) ON CONFLICT (key, page_index) "
                    "DO UPDATE SET body = EXCLUDED.body",
                    rows,
                )
                pgtext.put_pages(db, key, pages)

        self._write(q, lambda m: m.put_pages(key, pages))

    def put_document(
        self, key: str, outline: Outline, pages: Sequence[Page], *, index: bool = True
    ) -> None:
        # Indexed whatever `index` says: `dpe-server read` writes no shared store, so every
        # version here is indexed (`Cached.unindexed` is never set).
        self.put_pages(key, pages)
        self._write(
            self._upsert(key, "outline", outline.dumps()),
            lambda m: m.put_document(key, outline, ()),
        )
        self.finish(key)

    def put_documents(self, items: Sequence[tuple[str, Outline, Sequence[Page]]]) -> None:
        for key, outline, pages in items:  # (a shared store extracts children one by one)
            self.put_document(key, outline, pages)

    def index_stored(self, key: str) -> bool:
        """Nothing to build: every version is indexed as it is stored (`put_document`)."""
        return True

    def page(self, key: str, index: int) -> Page | None:
        def q(db: psycopg.Connection[Any]) -> bytes | None:
            row = db.execute(
                "SELECT body FROM pages WHERE key = %s AND page_index = %s", (key, index)
            ).fetchone()
            return bytes(row[0]) if row else None

        with self._local_lock:
            kept = self._local.page(key, index)
        if kept is not None:
            return kept
        body = self._call(q)
        if body is None:
            return None
        page = _decoded(body)
        if page is None:
            log.warning("a stored page is unreadable; it will be extracted again")
            self.forget(key)
        return page

    def forget(self, key: str) -> None:
        def q(db: psycopg.Connection[Any]) -> None:
            with db.transaction():
                for table in ("pages", "docs", "jobs", "elements", "unindexed"):
                    db.execute(f"DELETE FROM {table} WHERE key = %s", (key,))
                db.execute("DELETE FROM jobs WHERE starts_with(key, %s)", (pages_job(key, ()),))

        self._run(q, None)
        with self._local_lock:
            self._local.forget(key)

    def serve(self, added: Sequence[tuple[str, str, str]], dropped: Sequence[str]) -> None:
        """Searches look at the keys `added`, no longer at `dropped` (this replica's `live`
        table only: other replicas may still serve them, so the shared rows stay)."""
        with self._lock:
            for key in dropped:
                self._live.pop(key, None)
            self._live.update((row[0], row) for row in added)

        def q(db: psycopg.Connection[Any]) -> None:
            try:
                with db.transaction():
                    pgtext.serve(db, added, dropped)
            except psycopg.Error:
                db.close()  # the next connection's `live` is filled from `_live`
                raise
            _index_unindexed(db)

        self._run(q, None)

    def search(self, query: TextQuery, scope: Scope, limit: int, at: Position) -> Found | None:
        """Raises `StoreUnavailable` while the database cannot be used (the index is there)."""
        return self._call(lambda db: pgtext.search(db, query, scope, limit, at))

    def close(self) -> None:
        """Close the connections, first giving up the jobs this replica holds unfinished (a
        graceful stop: other replicas take them at once rather than when the lease expires)."""
        with self._lease_lock:
            if self._lease_db is not None:
                self._lease_db.close()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._db is None or self._db.closed:
                return
            try:
                with Watchdog(self._db, self.options.timeout + GRACE):
                    self._db.execute(
                        "UPDATE jobs SET owner = NULL, lease_until = now() "
                        "WHERE owner = %s AND NOT done",
                        (self.owner,),
                    )
            except psycopg.Error as exc:
                log.warning("could not give up this replica's jobs (%s): their leases expire", exc)
            self._db.close()

    # ---- the work queue ------------------------------------------------------------------

    def claim(self, key: str) -> Claim:
        """Claim the extraction of `key` (unreachable database: claimed, extracted locally)."""

        def q(db: psycopg.Connection[Any]) -> Claim:
            with db.transaction():
                db.execute(
                    "INSERT INTO jobs (key, lease_until) VALUES (%s, now()) "
                    "ON CONFLICT (key) DO NOTHING",
                    (key,),
                )
                row = db.execute(
                    "SELECT done, owner IS NULL OR lease_until < now() FROM jobs "
                    "WHERE key = %s FOR UPDATE SKIP LOCKED",
                    (key,),
                ).fetchone()
                if row is None:
                    return Claim.BUSY  # another replica is claiming it right now
                done, free = row
                if done:
                    return Claim.DONE
                if not free:
                    return Claim.BUSY
                db.execute(
                    "UPDATE jobs SET owner = %s, attempts = attempts + 1, "
                    "lease_until = now() + make_interval(secs => %s) WHERE key = %s",
                    (self.owner, self.lease, key),
                )
                return Claim.CLAIMED

        return self._run(q, Claim.CLAIMED)

    def busy(self, key: str) -> bool:
        """Whether another replica holds the job of `key` within its lease."""

        def q(db: psycopg.Connection[Any]) -> bool:
            row = db.execute(
                "SELECT 1 FROM jobs WHERE key = %s AND NOT done AND owner <> %s "
                "AND lease_until >= now()",
                (key, self.owner),
            ).fetchone()
            return row is not None

        return self._run(q, False)

    def renew(self, key: str) -> None:
        """Extend this replica's lease on `key` (while it extracts), on a connection of its
        own: a renewal never waits behind reads and writes, however slow the database is for
        them, and so no other replica takes over a job this one is still doing."""
        with self._lease_lock:
            if self._closed:
                return
            db = self._lease_db
            if db is None or db.closed:
                if time.monotonic() < self._lease_attempt:
                    return
                try:
                    db = self._lease_db = connect(self.url, self.options)
                except psycopg.Error as exc:
                    self._lease_attempt = time.monotonic() + RECONNECT_SECONDS
                    log.warning("could not renew a lease: the store is unreachable (%s)", exc)
                    return
            try:
                with Watchdog(db, self.options.timeout + GRACE):
                    db.execute(
                        "UPDATE jobs SET lease_until = now() + make_interval(secs => %s) "
                        "WHERE key = %s AND owner = %s AND NOT done",
                        (self.lease, key, self.owner),
                    )
            except psycopg.Error as exc:
                log.warning("could not renew a lease (%s)", exc)
                if isinstance(exc, psycopg.OperationalError) and not timed_out(exc):
                    db.close()

    def finish(self, key: str) -> None:
        """The result of `key` is in the store."""
        self._write(
            lambda db: db.execute(
                "INSERT INTO jobs (key, done) VALUES (%s, true) "
                "ON CONFLICT (key) DO UPDATE SET done = true, owner = NULL",
                (key,),
            ),
            lambda m: None,
        )

    def release(self, key: str) -> None:
        """Give the job of `key` up unfinished (a failure that may pass): anyone may retry."""
        self._run(
            lambda db: db.execute(
                "DELETE FROM jobs WHERE key = %s AND owner = %s AND NOT done", (key, self.owner)
            ),
            None,
        )

    def extractions(self) -> dict[str, int]:
        """Claims per key so far (what the tests and the bench count)."""
        rows: list[tuple[str, int]] = self._run(
            lambda db: db.execute("SELECT key, attempts FROM jobs").fetchall(), []
        )
        return dict(rows)

    # ---- the change feed -----------------------------------------------------------------

    def publish(self, rels: Sequence[str]) -> None:
        """Tell every replica that these files (relative paths) changed; past what one
        notification holds (8,000 bytes), that the folder changed (each rescans it whole)."""
        message = compact_json({"origin": self.owner, "rels": list(rels)})
        if len(message.encode()) > NOTIFY_BYTES:
            message = compact_json({"origin": self.owner, "rels": None})
        self._run(lambda db: db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, message)), None)

    async def follow(self, on_change: Callable[[list[str] | None], Awaitable[None]]) -> None:
        """Call `on_change` with what other replicas publish, until cancelled; with None
        after a lost connection is back (changes may have been missed meanwhile)."""
        db: psycopg.Connection[Any] | None = None
        lost = False
        try:
            while True:
                if db is None or db.closed:
                    db = await anyio.to_thread.run_sync(self._listener)
                    if db is None:
                        lost = True
                        await anyio.sleep(RECONNECT_SECONDS)
                        continue
                    if lost:
                        lost = False
                        await on_change(None)
                try:
                    batch = await anyio.to_thread.run_sync(_wait_notifies, db)
                except psycopg.OperationalError as exc:
                    log.warning("the change feed was lost (%s); reconnecting", exc)
                    db.close()
                    lost = True
                    continue
                for payload in batch:
                    message = json.loads(payload)
                    if message.get("origin") != self.owner:
                        rels = message.get("rels")
                        await on_change(None if rels is None else list(rels))
        finally:
            if db is not None:
                db.close()

    def _listener(self) -> psycopg.Connection[Any] | None:
        try:
            db = connect(self.url, self.options)
            db.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error as exc:
            log.warning("the change feed is unreachable (%s); retrying", exc)
            return None
        return db


def _wait_notifies(db: psycopg.Connection[Any]) -> list[str]:
    """The notifications that arrive within half a second (a thread, so cancellable between)."""
    return [n.payload for n in db.notifies(timeout=0.5)]


def _decoded(body: bytes) -> Page | None:
    """A stored page (None: unreadable)."""
    try:
        return Page.from_json(json.loads(zlib.decompress(body)))
    except (zlib.error, ValueError, KeyError, TypeError):
        return None


def _index_unindexed(db: psycopg.Connection[Any]) -> None:
    """Index the served versions whose pages were stored before the index existed (schema 1)."""
    rows = db.execute("SELECT u.key FROM unindexed u JOIN live l ON l.key = u.key").fetchall()
    for (key,) in rows:
        with db.transaction():
            bodies = db.execute("SELECT body FROM pages WHERE key = %s", (key,)).fetchall()
            pages = [p for (body,) in bodies if (p := _decoded(bytes(body))) is not None]
            pgtext.put_pages(db, key, pages)
            db.execute("DELETE FROM unindexed WHERE key = %s", (key,))
