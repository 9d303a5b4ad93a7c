"""Which store a server uses, from `--store URL`:

- `sqlite://` (the default) or `sqlite:///FOLDER`: the embedded SQLite cache (`sqlite`), in the
  user's cache folder or FOLDER (as `--cache-dir`);
- `postgresql://…` (or `postgres://…`): PostgreSQL shared by several replicas (`postgres`,
  the `postgres` extra: psycopg 3).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from dpe_server.catalog.sqlite import open_store as open_sqlite
from dpe_server.catalog.store import MemoryStore, Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


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


def open_store(url: str, cache_dir: Path | None, root: Path, enabled: bool = True) -> Store:
    """The store named by `url` ("" or `sqlite://`: the SQLite cache in `cache_dir`)."""
    if not enabled:
        return MemoryStore()
    if url.startswith(POSTGRES_SCHEMES):
        from dpe_server.catalog.postgres import PostgresStore

        return PostgresStore(url)
    folder = url.removeprefix("sqlite://")
    return open_sqlite(Path(folder) if folder else cache_dir, root)
