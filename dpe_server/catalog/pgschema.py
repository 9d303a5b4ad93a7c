"""The shared PostgreSQL store's tables (`postgres`), created and migrated by the server.

`schema_version` holds the version a database is at; a replica brings it to the latest
(`MIGRATIONS`, in order) when it connects, one replica at a time, and refuses a database a
newer server migrated.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

log = logging.getLogger(__name__)

MIGRATIONS: tuple[str, ...] = (
    # 1: the store and the work queue.
    """
    CREATE TABLE docs (
        key TEXT PRIMARY KEY,
        props TEXT,
        error TEXT,
        outline TEXT,
        used TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE pages (
        key TEXT NOT NULL,
        page_index INTEGER NOT NULL,
        body BYTEA NOT NULL,
        PRIMARY KEY (key, page_index)
    );
    CREATE TABLE jobs (
        key TEXT PRIMARY KEY,
        owner TEXT,
        lease_until TIMESTAMPTZ NOT NULL DEFAULT now(),
        done BOOLEAN NOT NULL DEFAULT false,
        attempts INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 2: the full-text index (`pgtext`); pages stored before it are indexed when first served.
    # No GIN pending list (fastupdate): every search would scan it, and while replicas extract
    # it is never empty (measured: a word found nowhere took 22 ms instead of 0.4 at 10,000
    # elements, the planner preferring a scan of the table).
    """
    CREATE TABLE elements (
        id BIGSERIAL PRIMARY KEY,
        key TEXT NOT NULL,
        page_index INTEGER NOT NULL,
        element_id TEXT NOT NULL,
        category TEXT NOT NULL,
        text TEXT NOT NULL,
        words TSVECTOR NOT NULL
    );
    CREATE INDEX elements_page ON elements (key, page_index);
    CREATE INDEX elements_words ON elements USING gin (words) WITH (fastupdate = off);
    CREATE TABLE unindexed (key TEXT PRIMARY KEY);
    INSERT INTO unindexed SELECT DISTINCT key FROM pages;
    """,
)


def migrate(db: psycopg.Connection[Any]) -> None:
    """Bring the schema to the latest version, one replica at a time (an advisory lock)."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(hashtext('dpe-server schema'))")
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = db.execute("SELECT max(version) FROM schema_version").fetchone()
        current = row[0] if row and row[0] is not None else 0
        if current > len(MIGRATIONS):
            raise RuntimeError(
                f"the database's schema is version {current}, newer than this server's "
                f"({len(MIGRATIONS)}): upgrade dpe-server"
            )
        if current < len(MIGRATIONS):  # a migration may take long: no timeout on it
            db.execute("SET LOCAL statement_timeout = 0")
            db.execute("SET LOCAL lock_timeout = 0")
        for version in range(current + 1, len(MIGRATIONS) + 1):
            db.execute(MIGRATIONS[version - 1])
            db.execute("INSERT INTO schema_version VALUES (%s)", (version,))
            log.info("database schema migrated to version %d", version)
