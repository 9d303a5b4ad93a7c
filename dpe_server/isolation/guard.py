"""Limits on this very process, for one-shot commands that parse a single document in-process.

`dpe-server read` of one document is itself a disposable process: rather than paying for a
worker, it caps its own address space (a file needing more memory fails with `too_large`) and
arms a watchdog that ends the command with a clear message when the parse runs past its
deadline, even inside a library's C code (`SIGALRM`'s default action is the backstop).
"""

from __future__ import annotations

import os
import signal
import sys
import threading

TIMEOUT_EXIT = 3


def limit_memory(memory_bytes: int) -> None:
    """Cap this process's address space (0: no cap)."""
    if memory_bytes <= 0:
        return
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def arm_deadline(seconds: float, what: str) -> threading.Event:
    """End the process after `seconds` unless the returned event is set first."""
    done = threading.Event()

    def watch() -> None:
        if not done.wait(seconds):
            print(
                f"Reading {what} took longer than {seconds:g} s; it was stopped (timeout). "
                "Raise --timeout to allow more.",
                file=sys.stderr,
                flush=True,
            )
            os._exit(TIMEOUT_EXIT)

    threading.Thread(target=watch, daemon=True).start()
    if hasattr(signal, "alarm"):
        signal.alarm(int(seconds) + 5)  # the kernel's backstop if the watchdog cannot run
    return done


def disarm(done: threading.Event) -> None:
    done.set()
    if hasattr(signal, "alarm"):
        signal.alarm(0)
