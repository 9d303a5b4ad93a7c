"""The folder watcher: watchfiles events, debounced, turned into catalog rescans.

Every batch of changes triggers one `Catalog.rescan`, which compares the whole folder with
the catalog: adds, edits, deletes, renames and moves of files or whole folders all come out
of the same comparison, and editor temp and lock files are ignored there (`paths.is_ignored`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio
from watchfiles import Change as FsChange
from watchfiles import awatch

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.folder import is_ignored, relative

log = logging.getLogger(__name__)


def _interesting(catalog: Catalog, path: str) -> bool:
    rel = relative(catalog.root, Path(path))
    return rel is not None and rel != "." and not is_ignored(rel)


async def watch(catalog: Catalog, debounce_ms: int = 150) -> None:
    """Rescan the catalog after each debounced burst of changes, until cancelled."""

    def keep(change: FsChange, path: str) -> bool:
        return _interesting(catalog, path)

    stop = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_set_when_cancelled, stop)
        await _rescan_on_changes(catalog, keep, debounce_ms, stop)


async def _set_when_cancelled(stop: anyio.Event) -> None:
    """awatch waits for changes in a thread that a cancellation cannot interrupt: only its
    stop event ends the wait at once (else a shutdown waits up to 5 s for it)."""
    try:
        await anyio.sleep_forever()
    finally:
        stop.set()


async def _rescan_on_changes(
    catalog: Catalog, keep: Callable[[FsChange, str], bool], debounce_ms: int, stop: anyio.Event
) -> None:
    try:
        async for _changes in awatch(
            catalog.root,
            watch_filter=keep,
            debounce=debounce_ms,
            step=min(50, debounce_ms),
            stop_event=stop,
            recursive=True,
            ignore_permission_denied=True,
        ):
            try:
                await catalog.rescan()
            except Exception:  # the watcher outlives any one rescan, whatever failed in it
                log.exception("rescan of %s failed; will retry on the next change", catalog.root)
    except (OSError, RuntimeError) as exc:
        log.error("watching %s stopped: %s; changes will not be noticed", catalog.root, exc)
        await anyio.sleep_forever()
