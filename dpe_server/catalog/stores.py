"""Which store a server uses, from `--store URL`:

- `sqlite://` (the default) or `sqlite:///FOLDER`: the embedded SQLite cache (`sqlite`), in the
  user's cache folder or FOLDER (as `--cache-dir`);
- `postgresql://…` (or `postgres://…`): PostgreSQL shared by several replicas (`postgres`,
  the `postgres` extra: psycopg 3), with the `StoreOptions` given. Its password is best left out
  of the URL, which every local user sees in the process list: libpq reads `PGPASSWORD` and
  `~/.pgpass` (or `PGPASSFILE`), and `--store-password-file` gives it from a file.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from dpe_server.catalog.sqlite import open_store as open_sqlite
from dpe_server.catalog.store import MemoryStore, Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
STATEMENT_TIMEOUT = 5.0
LOCK_TIMEOUT = 2.0


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """How a server uses a PostgreSQL store (`pglink.connect`)."""

    password: str | None = None
    """The database password (`--store-password-file`); None: libpq's own sources."""
    timeout: float = STATEMENT_TIMEOUT
    """Seconds a statement may run (PostgreSQL's `statement_timeout`; a database that does not
    answer at all is given this and `pglink.GRACE` more): past it a read says the store cannot
    be read just now."""
    lock_timeout: float = LOCK_TIMEOUT
    """Seconds a statement may wait for a lock (PostgreSQL's `lock_timeout`): a table locked
    by maintenance holds a read up this long at most."""

    def __repr__(self) -> str:
        hidden = "None" if self.password is None else "'***'"
        return (
            f"StoreOptions(password={hidden}, timeout={self.timeout!r}, "
            f"lock_timeout={self.lock_timeout!r})"
        )


def check_store_url(url: str) -> str:
    """`url` if a server can use it, else ValueError saying what to give instead."""
    if url.startswith("sqlite://"):
        return url
    if url.startswith(POSTGRES_SCHEMES):
        if importlib.util.find_spec("psycopg") is None:
            raise ValueError(
                "a postgresql:// store needs psycopg: pip install 'dpe-server[postgres]'"
            )
        return url
    raise ValueError(f"{url!r} is not a store URL: give sqlite:///FOLDER or postgresql://…")


def open_store(
    url: str,
    cache_dir: Path | None,
    root: Path,
    enabled: bool = True,
    options: StoreOptions | None = None,
) -> Store:
    """The store named by `url` ("" or `sqlite://`: the SQLite cache in `cache_dir`)."""
    if not enabled:
        return MemoryStore()
    if url.startswith(POSTGRES_SCHEMES):
        from dpe_server.catalog.postgres import PostgresStore

        return PostgresStore(url, options=options or StoreOptions())
    folder = url.removeprefix("sqlite://")
    return open_sqlite(Path(folder) if folder else cache_dir, root)
