"""Tesseract through its command (`tesseract`): one process a run, the picture as a BMP on its
standard input, read with one thread (`OMP_THREAD_LIMIT=1`: the server runs one worker process
per core) and the worker's own limits (the child inherits its address-space limit, and is
killed with it: `PR_SET_PDEATHSIG`). Where Tesseract's library is loaded in the process
(`tess_library`), the command is not run; it stays where the library is not found."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import io
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any

from dpe_server.extractors.ocr import settings
from dpe_server.extractors.ocr.words import EngineExhausted, Unavailable, exhausted


def run(args: list[str], grey: Any, timeout: float) -> str:
    """Run the command on the picture (BMP on its standard input); its standard output.
    `RuntimeError` when it fails, `EngineExhausted` when it ran out of memory."""
    path = settings.tesseract()[0]
    if not path:
        raise Unavailable("the tesseract command is not found")
    buf = io.BytesIO()
    grey.save(buf, "BMP")  # nothing to compress or decompress
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            [path, "stdin", "stdout", *args],
            input=buf.getvalue(),
            capture_output=True,
            timeout=timeout,
            env=env,
            preexec_fn=_dies_with_parent(),
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"tesseract ran past {timeout:g} s") from exc
    except OSError as exc:
        if exhausted(exc):
            raise EngineExhausted(type(exc).__name__) from None
        raise RuntimeError(f"tesseract did not start: {exc}") from exc
    err = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        if exhausted(RuntimeError(err)) or done.returncode == -signal.SIGKILL:
            raise EngineExhausted(err[-200:] or f"tesseract killed ({done.returncode})")
        raise RuntimeError(f"tesseract failed ({done.returncode}): {err[-300:]}")
    return done.stdout.decode("utf-8", "replace")


@functools.cache
def _dies_with_parent() -> Callable[[], None] | None:
    """What the child runs before exec: ask for SIGKILL when its parent (a worker killed at
    its deadline) dies. Resolved here, in the parent; None where there is no `prctl`."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        libc = None
    prctl = getattr(libc, "prctl", None)
    if prctl is None:
        return None

    def setup() -> None:  # pragma: no cover - runs in the child before exec
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return setup
