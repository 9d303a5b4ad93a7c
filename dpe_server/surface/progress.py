"""A progress bar on stderr while a large folder is first indexed (only on a terminal)."""

from __future__ import annotations

import sys
from typing import TextIO

import anyio

from dpe_server.catalog.catalog import Catalog

MIN_FILES = 50
"""Smaller folders index too fast for a bar to help."""
WIDTH = 30


async def progress_bar(catalog: Catalog, stream: TextIO = sys.stderr) -> None:
    """Redraw `[####    ] n/total` until the catalog is ready, then clear the line."""
    if not stream.isatty():
        return
    while not catalog.ready.is_set():
        total = catalog.scanned
        if total >= MIN_FILES:
            done = catalog.probed
            filled = WIDTH * done // max(total, 1)
            stream.write(f"\rindexing [{'#' * filled}{' ' * (WIDTH - filled)}] {done}/{total}")
            stream.flush()
        await anyio.sleep(0.2)
    stream.write("\r" + " " * (WIDTH + 30) + "\r")
    stream.flush()
