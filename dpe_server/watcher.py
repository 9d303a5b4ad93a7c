"""The folder watcher: watchfiles events, debounced, turned into catalog rescans.

Every batch of changes triggers one `Catalog.rescan`, which compares the whole folder with
the catalog: adds, edits, deletes, renames and moves of files or whole folders all come out
of the same comparison, and editor temp and lock files are ignored there (`paths.is_ignored`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
from watchfiles import Change as FsChange
from watchfiles import awatch

from dpe_server.catalog import Catalog
from dpe_server.paths import is_ignored, relative

log = logging.getLogger(__name__)


def _interesting(catalog: Catalog, path: str) -> bool:
    rel = relative(catalog.root, Path(path))
    return rel is not None and rel != "." and not is_ignored(rel)


async def watch(catalog: Catalog, debounce_ms: int = 150) -> None:
    """Rescan the catalog after each debounced burst of changes, until cancelled."""

    def keep(change: FsChange, path: str) -> bool:
        return _interesting(catalog, path)

    try:
        async for _changes in awatch(
            catalog.root,
            watch_filter=keep,
            debounce=debounce_ms,
            step=min(50, debounce_ms),
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
