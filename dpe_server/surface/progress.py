"""A progress bar on stderr while a folder is indexed or read (only on a terminal).

The bar has a line of its own: it is redrawn in place while the work runs, drawn a last time
when the work is done (so it ends at `N/N`) and closed with a newline, so whatever is printed
next (the banner) starts on a fresh line. Off a terminal (a host's log, a pipe) it prints
nothing at all.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TextIO

import anyio

WIDTH = 30
INTERVAL = 0.2
"""Seconds between redraws."""

Count = Callable[[], tuple[int, int]]
"""(done, total) so far."""


def bar(label: str, done: int, total: int) -> str:
    """`label [#####     ] done/total`."""
    filled = WIDTH * min(done, total) // max(total, 1)
    return f"{label} [{'#' * filled}{' ' * (WIDTH - filled)}] {done}/{total}"


@asynccontextmanager
async def progress(label: str, count: Count, stream: TextIO | None = None) -> AsyncIterator[None]:
    """Show `count()` as a bar while the block runs; on the way out, its final value and a
    newline (only the newline when the block failed; nothing when `stream` is not a
    terminal)."""
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        yield
        return

    def draw() -> None:
        out.write("\r" + bar(label, *count()))
        out.flush()

    async def redraw() -> None:
        while True:
            draw()
            await anyio.sleep(INTERVAL)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(redraw)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
        draw()
    except BaseExceptionGroup as group:  # the block's own error, not the group wrapping it
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:  # interrupted too: what follows starts on its own line
        out.write("\n")
        out.flush()
