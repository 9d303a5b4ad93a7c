"""A failure that hit a limit the server was started with (a worker's memory, a deadline) is
kept in the cache with those limits: a restart under the same ones lists it without reading the
file again; under others (`--memory-mb` raised) the file is read again. A failure of the file
itself (`corrupt`) is kept whatever the limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.sqlite import SqliteStore
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings

pytestmark = pytest.mark.anyio
MIB = 1024 * 1024
RUNNER = "tests.hostile.runners:misbehave"
SETTLED = 1_600_000_000
"""An mtime long past: a failure of the file is not retried as if it were half-written."""


async def _listed(folder: Path, cache: Path, memory_mb: int) -> tuple[dict[str, str], int]:
    """A server's start over `cache` with workers of `memory_mb`: each file's error kind (""
    when it reads) and how many workers it started (0: nothing was read, all restored)."""
    store = SqliteStore(cache)
    backend = ProcessBackend(WorkerSettings(workers=1, memory_bytes=memory_mb * MIB, runner=RUNNER))
    try:
        catalog = Catalog(folder, "h", backend, store=store)
        await catalog.start()
        kinds = {}
        for entry in catalog.entries():
            error = catalog.info_of(entry).error
            kinds[entry.rel] = str(error["kind"]) if error else ""
        return kinds, backend.started
    finally:
        store.close()
        await backend.aclose()


async def test_too_large_for_the_memory_limit_is_read_again_once_it_is_raised(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("hog.docx", "segv.docx"):  # out of memory; a crash, the file's own fault
        (folder / name).write_bytes(b"PK\x03\x04")
        os.utime(folder / name, (SETTLED, SETTLED))
    cache = tmp_path / "cache"

    kinds, started = await _listed(folder, cache, 512)
    assert kinds == {"hog.docx": "too_large", "segv.docx": "corrupt"}
    assert started >= 1
    kinds, started = await _listed(folder, cache, 512)  # a restart: the same limits
    assert kinds == {"hog.docx": "too_large", "segv.docx": "corrupt"}
    assert started == 0  # both restored from the cache
    kinds, started = await _listed(folder, cache, 640)  # --memory-mb raised
    assert started == 1  # hog.docx read again (the old key lacked the limit: it was not)
    assert kinds == {"hog.docx": "too_large", "segv.docx": "corrupt"}
    kinds, started = await _listed(folder, cache, 640)
    assert started == 0  # kept again, with the new limit
