"""The embedded persistent cache: SQLite in the user's cache folder, one row per page.

- Where: `--cache-dir`, else `$XDG_CACHE_HOME/dpe-server` (`~/.cache/dpe-server`),
  `~/Library/Caches/dpe-server` on macOS, `%LOCALAPPDATA%\\dpe-server\\Cache` on Windows;
  never inside the watched folder.
- What: per key (file identity, size, mtime, ctime, a content fingerprint where the file
  system's times are coarse, extractor version: `store.cache_key`) the probe, the error or
  the outline, and each page's tree as compressed JSON, so a Level 2 read loads one page and
  a restart serves Level 0 and cached pages at once.
- Search: the full-text index of every stored page's elements, in the same database
  (`fulltext`), written in the page's transaction, and searched on connections of its own
  (`searchers`): a search never waits for a write, nor delays a page read or a lookup.
  `dpe-server read` stores a document without it (`put_document` with `index=False`: no one
  searches its cache before a server opens it), marking the key in `unindexed` in the same
  transaction; a server that looks the key up builds its rows (`index_stored`).
- Eviction: a version's rows (its probe or outline, pages and search rows) are forgotten when
  the served version of a file changes (`serve`), and, at open, those not looked up for
  `UNUSED_DAYS` days (`evict`): versions of files changed or removed while no server ran,
  which no server will ask for again. Only age is known of a row (keys are hashes, and several
  servers may share one cache), so a version still in a folder whose server has not started
  for that long is extracted again when it next starts. A running server marks the versions
  it serves as used once a day (on its next search or change), so another server opening the
  same cache does not evict them; one that neither searched nor saw a change for `UNUSED_DAYS`
  days could lose them (its reads then extract again; a search would miss those documents
  until they are).
- Old files: caches of older formats, and caches moved aside as unusable, are removed when the
  cache is opened once unused for `UNUSED_DAYS` days (`cachefiles`).
- Safety: WAL mode and a busy timeout, so two servers can share one cache; rows are
  content-addressed, so concurrent writers write the same thing. A cache that cannot be
  opened or read (corrupt, wrong schema) is moved aside and rebuilt; if even that fails the
  server runs without it. A cache error is never fatal.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sqlite3
import sys
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from dpe_server.catalog import cachefiles, fulltext
from dpe_server.catalog.searchers import Searchers
from dpe_server.catalog.store import SCHEMA, Cached, MemoryStore, Outline, compact_json
from dpe_server.model.tree import JSON, Page, Properties

if TYPE_CHECKING:
    from dpe_server.catalog.textquery import Found, Position, Scope, TextQuery

log = logging.getLogger(__name__)

T = TypeVar("T")
FILE_NAME = f"cache-v{SCHEMA}.sqlite3"
_BATCH = 500
"""Keys per lookup query (under SQLite's oldest limit of 999 bound parameters)."""
UNUSED_DAYS = 30
"""Rows of versions not looked up for this long are evicted when the cache is opened."""
SEARCHES = 4
"""Searches run at once at most (each on a connection of its own: `searchers`); the surface
answers "busy" past its own limit, which is this one (`read.search.SearchSlots`)."""
MARK_AFTER_S = 3600
"""A lookup marks a row used again only when its mark is older than this: eviction counts in
days, and rewriting every row's mark at each restart rewrote the whole table (0.10 CPU-s and
the table's pages in the WAL at 10,000 documents, against 0.02 s for the check)."""

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    key TEXT PRIMARY KEY,
    props TEXT,
    error TEXT,
    outline TEXT,
    used REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS pages (
    key TEXT NOT NULL,
    page_index INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (key, page_index)
);
CREATE TABLE IF NOT EXISTS unindexed (key TEXT PRIMARY KEY) WITHOUT ROWID;
"""
"""`unindexed`: the keys whose pages were stored without their search rows (`put_document`
with `index=False`: `dpe-server read`), until a server builds them (`index_stored`)."""

_TABLES = hashlib.sha256((_DDL + fulltext.DDL).encode()).hexdigest()[:16]
"""What the cache's tables are, kept in `meta`: a file whose tables differ is rebuilt."""


def default_cache_dir() -> Path:
    """The user's cache folder for dpe-server, by platform convention."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "dpe-server" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "dpe-server"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dpe-server"


class SqliteStore:
    """The persistent `Store`. Thread-safe: writes, lookups and page reads on one connection
    behind a lock; searches on connections of their own (`searchers`)."""

    def __init__(self, folder: Path, searches: int = SEARCHES) -> None:
        self.folder = folder
        self.path = folder / FILE_NAME
        self._lock = threading.Lock()
        self._closed = False
        self._searchers = Searchers(self.path, searches)
        """The search connections, and the keys served (`serve`)."""
        self._in_memory = False
        """The cache could not be rebuilt: `_db` is a database in memory, searched (under the
        lock) through its own `live` table."""
        self._live_stale = False
        """The in-memory database's `live` table may not hold what is served (a `serve`
        failed)."""
        self._kept_at = 0.0
        """When the versions served were last marked used (`_keep_live`)."""
        self._db = self._open()
        unused_since = time.time() - UNUSED_DAYS * 86400
        self.evicted = self.evict(unused_since)
        """How many versions the opening evicted."""
        self.removed = cachefiles.remove_unused(folder, SCHEMA, unused_since)
        """The files of older or unusable caches the opening removed (`cachefiles`)."""

    def _open(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self._move_aside(exc)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=10000")
            db.executescript(_DDL + fulltext.DDL)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if "schema" not in meta:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA,))
                db.execute("INSERT OR IGNORE INTO meta VALUES ('tables', ?)", (_TABLES,))
            elif meta["schema"] != SCHEMA:
                raise sqlite3.DatabaseError(f"cache schema {meta['schema']}, expected {SCHEMA}")
            elif meta.get("tables") != _TABLES:  # same number, other tables (a development build)
                raise sqlite3.DatabaseError("cache tables of another build")
            db.execute("SELECT count(*) FROM docs").fetchone()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _move_aside(self, exc: Exception) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        log.warning("the cache at %s is unusable (%s); rebuilding it", self.path, exc)
        for suffix in ("", "-wal", "-shm"):
            old = Path(str(self.path) + suffix)
            if old.exists():
                try:
                    old.replace(Path(f"{old}.broken-{stamp}"))
                except OSError:
                    old.unlink(missing_ok=True)

    def _run(self, fn: Callable[[sqlite3.Connection], T], default: T) -> T:
        """Run `fn` on the connection; a database error rebuilds the cache once."""
        with self._lock:
            if self._closed:
                return default
            try:
                return fn(self._db)
            except sqlite3.ProgrammingError as exc:  # our misuse, not a damaged file
                log.warning("cache operation refused (%s)", exc)
                return default
            except sqlite3.OperationalError as exc:
                log.warning("cache operation failed (%s); continuing without it", exc)
                return default
            except sqlite3.DatabaseError as exc:
                self._rebuild(exc)
                return default

    def _rebuild(self, exc: sqlite3.DatabaseError) -> None:
        """The file is damaged (`exc`): move it aside and start a new one; if even that fails,
        serve without a cache (under the lock)."""
        if self._in_memory or self._closed:
            return
        self._db.close()
        self._searchers.reset()
        self._move_aside(exc)
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError:
            log.error("the cache cannot be rebuilt; serving without a cache")
            self._db = fulltext.connect_memory()
            self._db.executescript(_DDL)
            fulltext.serve(self._db, self._searchers.live.values(), ())
            self._in_memory = True

    # ---- Store ---------------------------------------------------------------------------

    def lookup(self, key: str) -> Cached | None:
        return self.lookup_many([key]).get(key)

    def lookup_many(self, keys: Sequence[str]) -> dict[str, Cached]:
        def q(db: sqlite3.Connection) -> dict[str, Cached]:
            found: dict[str, Cached] = {}
            for i in range(0, len(keys), _BATCH):
                batch = keys[i : i + _BATCH]
                marks = ",".join("?" * len(batch))
                rows = db.execute(
                    "SELECT d.key, props, error, outline, u.key IS NOT NULL FROM docs d "
                    f"LEFT JOIN unindexed u ON u.key = d.key WHERE d.key IN ({marks})",
                    batch,
                ).fetchall()
                for key, props, error, outline, unindexed in rows:
                    parsed = Outline.loads(outline) if outline else None
                    found[key] = Cached(
                        _props(props, parsed),
                        json.loads(error) if error else None,
                        parsed,
                        bool(unindexed),
                    )
            if found:  # one transaction marks them all used (the eviction order)
                now, keys_found = time.time(), list(found)
                with fulltext.transaction(db):
                    for i in range(0, len(keys_found), _BATCH):
                        batch = keys_found[i : i + _BATCH]
                        marks = ",".join("?" * len(batch))
                        db.execute(
                            f"UPDATE docs SET used=? WHERE used < ? AND key IN ({marks})",
                            [now, now - MARK_AFTER_S, *batch],
                        )
            return found

        return self._run(q, {})

    def _upsert(self, key: str, column: str, value: str | None) -> None:
        self._run(lambda db: _set_doc(db, key, column, value), None)

    def put_probe(self, key: str, props: Properties) -> None:
        self._upsert(key, "props", compact_json(props.to_json()))

    def put_error(self, key: str, error: Mapping[str, JSON]) -> None:
        self._upsert(key, "error", compact_json(dict(error)))

    def put_pages(self, key: str, pages: Sequence[Page]) -> None:
        rows = _page_rows(key, pages)

        def q(db: sqlite3.Connection) -> None:
            with fulltext.transaction(db):
                db.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", rows)
                fulltext.put_pages(db, key, pages)

        self._run(q, None)

    def put_document(
        self, key: str, outline: Outline, pages: Sequence[Page], *, index: bool = True
    ) -> None:
        if index:
            self.put_pages(key, pages)
            self._upsert(key, "outline", outline.dumps())
            return
        rows = _page_rows(key, pages)
        dumped = outline.dumps()

        def q(db: sqlite3.Connection) -> None:
            with fulltext.transaction(db):
                db.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", rows)
                db.execute("INSERT OR IGNORE INTO unindexed VALUES (?)", (key,))
                _set_doc(db, key, "outline", dumped)

        self._run(q, None)

    def index_stored(self, key: str) -> bool:
        """`Store.index_stored`: page by page, each in a transaction of its own, its rows built
        outside the lock (page reads and searches go on meanwhile); a page replaced since it
        was read (recognised) is indexed as it is now, one forgotten since is left out. The
        mark is cleared only once every page is written: a write that fails (the cache busy
        past its wait, or read-only) leaves it, and the answer says to try again."""

        def marked(db: sqlite3.Connection) -> tuple[bool, list[tuple[int, bytes]]]:
            if db.execute("SELECT 1 FROM unindexed WHERE key=?", (key,)).fetchone() is None:
                return False, []
            return True, db.execute(
                "SELECT page_index, body FROM pages WHERE key=? ORDER BY page_index", (key,)
            ).fetchall()

        read = self._run(marked, None)
        if read is None:  # (the cache could not be read)
            return False
        if not read[0]:
            return True
        for index, body in read[1]:
            rows = _indexed_rows(body)
            put = functools.partial(_put_page_rows, key=key, index=index, read=(body, rows))
            if not self._run(put, False):
                return False
        return self._run(_unmark(key), False)

    def put_documents(self, items: Sequence[tuple[str, Outline, Sequence[Page]]]) -> None:
        rows = [row for key, _, pages in items for row in _page_rows(key, pages)]
        now = time.time()
        docs = [(key, now) for key, _, _ in items]
        outlines = [(outline.dumps(), key) for key, outline, _ in items]

        def q(db: sqlite3.Connection) -> None:
            with fulltext.transaction(db):
                db.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", rows)
                for key, _, pages in items:
                    fulltext.put_pages(db, key, pages)
                db.executemany(
                    "INSERT INTO docs (key, used) VALUES (?, ?) ON CONFLICT(key) DO NOTHING", docs
                )
                db.executemany("UPDATE docs SET outline=? WHERE key=?", outlines)

        self._run(q, None)

    def page(self, key: str, index: int) -> Page | None:
        def q(db: sqlite3.Connection) -> Page | None:
            row = db.execute(
                "SELECT body FROM pages WHERE key=? AND page_index=?", (key, index)
            ).fetchone()
            if row is None:
                return None
            return Page.from_json(json.loads(zlib.decompress(row[0])))

        try:
            return self._run(q, None)
        except (zlib.error, ValueError, KeyError, TypeError):
            log.warning("a cached page is unreadable; it will be extracted again")
            self.forget(key)
            return None

    def forget(self, key: str) -> None:
        self._run(lambda db: _forget(db, key), None)

    def serve(self, added: Sequence[tuple[str, str, str]], dropped: Sequence[str]) -> None:
        self._searchers.serve(added, dropped)

        def q(db: sqlite3.Connection) -> None:
            with fulltext.transaction(db):
                if self._in_memory:
                    self._live_stale = True
                    fulltext.serve(db, added, dropped)
                for key in set(dropped) - {row[0] for row in added}:
                    _forget(db, key)
            self._live_stale = False
            self._keep_live(db)

        self._run(q, None)

    def search(self, query: TextQuery, scope: Scope, limit: int, at: Position) -> Found | None:
        if time.time() - self._kept_at > 86400:
            self._run(self._keep_live, None)
        if self._in_memory:
            return self._run(lambda db: self._search_in_memory(db, query, scope, limit, at), None)
        try:
            return self._searchers.search(query, scope, limit, at)
        except sqlite3.DatabaseError as exc:  # not an OperationalError: the file is damaged
            with self._lock:
                self._rebuild(exc)
            return None

    def _search_in_memory(
        self, db: sqlite3.Connection, query: TextQuery, scope: Scope, limit: int, at: Position
    ) -> Found:
        if self._live_stale:  # the last `serve` failed
            with fulltext.transaction(db):
                db.execute("DELETE FROM live")
                fulltext.serve(db, self._searchers.live.values(), ())
            self._live_stale = False
        from dpe_server.catalog import textquery  # at the first search: a read never does

        return textquery.search(db, query, scope, limit, at)

    def _keep_live(self, db: sqlite3.Connection) -> None:
        """Mark the versions served as used, once a day, so that no other server opening this
        cache evicts them while this one runs (`evict`)."""
        now = time.time()
        if now - self._kept_at > 86400:
            keys = list(self._searchers.live)
            for i in range(0, len(keys), _BATCH):
                batch = keys[i : i + _BATCH]
                db.execute(
                    f"UPDATE docs SET used = ? WHERE used < ? AND key IN "
                    f"({','.join('?' * len(batch))})",
                    [now, now - MARK_AFTER_S, *batch],
                )
            self._kept_at = now

    def evict(self, unused_since: float) -> int:
        """Forget the versions not looked up (nor written) since `unused_since` (epoch
        seconds); returns how many."""

        def q(db: sqlite3.Connection) -> int:
            keys = [
                k for (k,) in db.execute("SELECT key FROM docs WHERE used < ?", (unused_since,))
            ]
            with fulltext.transaction(db):
                for key in keys:
                    _forget(db, key)
            return len(keys)

        return self._run(q, 0)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()
        self._searchers.close()


def _set_doc(db: sqlite3.Connection, key: str, column: str, value: str | None) -> None:
    """Set `column` of the `docs` row of `key`, adding the row (used now) if there is none."""
    db.execute(
        "INSERT INTO docs (key, used) VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
        (key, time.time()),
    )
    db.execute(f"UPDATE docs SET {column}=? WHERE key=?", (value, key))


def _forget(db: sqlite3.Connection, key: str) -> None:
    db.execute("DELETE FROM pages WHERE key=?", (key,))
    db.execute("DELETE FROM docs WHERE key=?", (key,))
    db.execute("DELETE FROM unindexed WHERE key=?", (key,))
    fulltext.forget(db, key)


def _page_rows(key: str, pages: Sequence[Page]) -> list[tuple[str, int, bytes]]:
    """The `pages` rows of `pages` of `key`: each page's tree as JSON, compressed."""
    return [
        (key, p.page_index, zlib.compress(compact_json(p.to_json()).encode("utf-8"), 1))
        for p in pages
    ]


def _put_page_rows(
    db: sqlite3.Connection,
    *,
    key: str,
    index: int,
    read: tuple[bytes, list[tuple[str, str, str, str]]],
) -> bool:
    """Index page `index` of `key` with the rows built from the body `read` (rebuilt from the
    page as stored now if it was replaced since; nothing if it was forgotten): True once
    written (`_run` answers its default when the write failed)."""
    body, rows = read
    with fulltext.transaction(db, write=True):
        now = db.execute(
            "SELECT body FROM pages WHERE key=? AND page_index=?", (key, index)
        ).fetchone()
        if now is not None:
            fulltext.put_rows(db, key, index, rows if now[0] == body else _indexed_rows(now[0]))
    return True


def _unmark(key: str) -> Callable[[sqlite3.Connection], bool]:
    """Clear the mark of `key` (`index_stored`): True once done."""

    def q(db: sqlite3.Connection) -> bool:
        db.execute("DELETE FROM unindexed WHERE key=?", (key,))
        return True

    return q


def _indexed_rows(body: bytes) -> list[tuple[str, str, str, str]]:
    """The search rows of a stored page (none when it is unreadable: its next read finds
    that, and forgets the version)."""
    try:
        page = Page.from_json(json.loads(zlib.decompress(body)))
    except (zlib.error, ValueError, KeyError, TypeError):
        return []
    return fulltext.indexed_rows(page)


def _props(text: str | None, outline: Outline | None) -> Properties | None:
    """The probe's properties as stored, unless the outline stored beside them says all they
    would (no page left to recognise, whose outline is derived again from them): a restart
    parses one JSON document per file instead of two."""
    if not text or (outline is not None and not outline.pending):
        return None
    return Properties.from_json(json.loads(text))


def open_store(
    cache_dir: Path | None, root: Path, enabled: bool = True
) -> SqliteStore | MemoryStore:
    """The store for a server on `root`: SQLite unless disabled or impossible."""
    if not enabled:
        return MemoryStore()
    folder = (cache_dir or default_cache_dir()).expanduser().resolve()
    if folder == root or folder.is_relative_to(root):
        log.warning(
            "the cache folder %s is inside the watched folder; using %s",
            folder,
            default_cache_dir(),
        )
        folder = default_cache_dir().resolve()
        if folder.is_relative_to(root):
            return MemoryStore()
    try:
        return SqliteStore(folder)
    except (OSError, sqlite3.Error) as exc:
        log.warning("no cache at %s (%s); serving without one", folder, exc)
        return MemoryStore()
