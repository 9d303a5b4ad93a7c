"""The cyclic garbage collector paused while a reader builds a sheet's rows.

A 500,000-cell sheet is a few hundred thousand row lists (the reader's, the display strings',
the tables') holding only strings and numbers: they cannot form reference cycles, and
reference counting frees them. The cyclic collector would still walk every one of them each
time its allocation counters trip (two full collections and hundreds of young ones for the
benchmark's 50,000-row .ods: a fifth of its extraction time). Paused, it runs as usual after
the block. The pause is process-wide: a block inside another, or beside one in another
thread, leaves the collector as the outermost caller found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Within the block, no cyclic garbage collection (reference counting frees as usual)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
