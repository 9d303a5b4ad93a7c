"""A Rust library's panic (calamine, through pyo3) kept off stderr.

Rust's default panic hook writes `thread '<unnamed>' panicked at ...: MESSAGE` (and a backtrace
where `RUST_BACKTRACE` is set) to the process's stderr before pyo3 raises the panic in Python
as a `PanicException`, which the formats report as `corrupt` with its message. In a worker,
whose stderr is the server's, that text reached the terminal or the host's log as though the
server had crashed. `quiet()` points the process's fd 2 at the null device while the library
runs: what it says is in the exception. Parsing runs in worker processes (one job at a time)
or in the one-shot reader of `dpe-server read`: no other thread of the process writes to
stderr meanwhile.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def is_panic(exc: BaseException) -> bool:
    """A panic inside a Rust library surfaces as pyo3's PanicException, a BaseException."""
    return type(exc).__name__ == "PanicException"


@contextmanager
def quiet() -> Iterator[None]:
    """Within the block, nothing written to fd 2 is shown (a Rust panic's message)."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
