"""The folder watcher: watchfiles events, debounced, turned into catalog rescans of the paths
they name.

watchfiles hands a batch on once the folder has been quiet for `min(50, debounce_ms)` ms (or
after `debounce_ms`); batches that follow each other closer than that are gathered too (for at
most `MAX_DELAY` seconds after the first change), then handed to one `Catalog.rescan`, which
stats those paths only (and enters those that are folders): adds, edits, deletes, renames and
moves of files or whole folders come out of the same comparison, so a burst of a thousand
files is one catalog update and at most one `list_changed`. Editor temp and lock files are
ignored here and there (`is_ignored`). The whole folder is compared again only at start
(`Catalog.start`), when an event names the folder itself or a path outside it (the folder was
moved or replaced: nothing else the watcher says can be trusted), when a burst names more
paths than `FULL_RESCAN_PATHS` (one listing of the tree is then cheaper), and after a rescan
failed. watchfiles does not report a lost event queue (an inotify overflow), so changes lost
there are seen at the next start only.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
from watchfiles import Change as FsChange
from watchfiles import awatch

from dpe_server.catalog.catalog import Catalog
from dpe_server.catalog.folder import is_ignored, relative

log = logging.getLogger(__name__)

MAX_DELAY = 2.0
"""Seconds a change waits at most while a burst goes on (a long copy still shows up)."""
FULL_RESCAN_PATHS = 50_000
"""A burst naming more paths than this is handled by comparing the whole folder."""
EVERYTHING = "."
"""The path gathered for "compare the whole folder"."""


class Gathered:
    """The paths changed since the last rescan (relative; `EVERYTHING` for the whole folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: set[str] = set()
        self.batches = 0
        """Batches of changes received so far: a burst goes on while this grows."""
        self.arrived = anyio.Event()

    def add(self, changes: set[tuple[FsChange, str]]) -> None:
        self.batches += 1
        for _kind, path in changes:
            rel = relative(self.root, Path(path))
            if rel is None or rel == ".":
                self.paths.add(EVERYTHING)
            elif not is_ignored(rel):
                self.paths.add(rel)
        if self.paths:
            self.arrived.set()

    def take(self) -> set[str] | None:
        """The paths to rescan and forget; None for the whole folder."""
        paths, self.paths, self.arrived = self.paths, set(), anyio.Event()
        return None if EVERYTHING in paths or len(paths) > FULL_RESCAN_PATHS else paths


async def watch(
    catalog: Catalog, debounce_ms: int = 150, max_delay: float = MAX_DELAY, quiet_ms: int = 0
) -> None:
    """Rescan what changed after each debounced burst of changes, until cancelled; a burst ends
    after `quiet_ms` (default `min(50, debounce_ms)`) without a change."""
    quiet = (quiet_ms or min(50, debounce_ms)) / 1000
    stop = anyio.Event()
    gathered = Gathered(catalog.root)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_set_when_cancelled, stop)
        tg.start_soon(_rescan_gathered, catalog, gathered, quiet, max_delay)
        await _gather(catalog, gathered, debounce_ms, stop)


async def _set_when_cancelled(stop: anyio.Event) -> None:
    """awatch waits for changes in a thread that a cancellation cannot interrupt: only its
    stop event ends the wait at once (else a shutdown waits up to 5 s for it)."""
    try:
        await anyio.sleep_forever()
    finally:
        stop.set()


async def _gather(
    catalog: Catalog, gathered: Gathered, debounce_ms: int, stop: anyio.Event
) -> None:
    def keep(change: FsChange, path: str) -> bool:
        rel = relative(catalog.root, Path(path))
        return rel is None or rel == "." or not is_ignored(rel)

    try:
        async for changes in awatch(
            catalog.root,
            watch_filter=keep,
            debounce=debounce_ms,
            step=min(50, debounce_ms),
            stop_event=stop,
            recursive=True,
            ignore_permission_denied=True,
        ):
            gathered.add(changes)
    except (OSError, RuntimeError) as exc:
        log.error("watching %s stopped: %s; changes will not be noticed", catalog.root, exc)
        await anyio.sleep_forever()


async def _rescan_gathered(
    catalog: Catalog, gathered: Gathered, quiet: float, max_delay: float
) -> None:
    """One rescan per burst: once changes arrived, wait until none arrived for `quiet`
    seconds (or `max_delay` passed), then rescan every path gathered meanwhile."""
    while True:
        await gathered.arrived.wait()
        deadline = anyio.current_time() + max_delay
        while True:
            seen = gathered.batches
            await anyio.sleep(min(quiet, max(0.0, deadline - anyio.current_time())))
            if gathered.batches == seen or anyio.current_time() >= deadline:
                break
        paths = gathered.take()
        try:
            await catalog.rescan(paths)
        except Exception:  # the watcher outlives any one rescan, whatever failed in it
            log.exception("rescan of %s failed; will retry on the next change", catalog.root)
            gathered.paths.add(EVERYTHING)  # what it missed is not known: all, next time
