"""The C allocator of the serving process: big blocks go back to the system when freed.

glibc serves a block of at least `M_MMAP_THRESHOLD` bytes (128 KiB) by a mapping of its own,
unmapped when freed, but raises that threshold to the size of each such block freed (up to
32 MiB). After one whole Level 0 read of 10,000 documents (a body of about 10 MB, and the
transport's copies of it), every later block under that size comes from the heap, where a free
one stays resident: the settled server kept about 1.5 KB per document more (bench/README.md,
"Per-entry costs"). Setting the threshold fixes it where it starts. Elsewhere (another C
library, another system) nothing is done.
"""

from __future__ import annotations

import ctypes
import logging
import sys

M_MMAP_THRESHOLD = -3
"""mallopt's parameter number (glibc's malloc.h)."""
BIG_BLOCK = 128 * 1024
"""glibc's own starting threshold, kept."""

log = logging.getLogger(__name__)


def big_blocks_returned() -> bool:
    """Keep glibc's mapping threshold at `BIG_BLOCK` (no rising): True when it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(M_MMAP_THRESHOLD, BIG_BLOCK))
    if not done:
        log.debug("mallopt(M_MMAP_THRESHOLD) refused; big blocks stay on the heap when freed")
    return done
