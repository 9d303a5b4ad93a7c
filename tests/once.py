"""What a test run builds once, even when pytest-xdist runs it in several worker processes.

A session fixture runs once per process: under `pytest -n 2` each worker would build it
again. `once_per_run` builds it in the first worker that asks and pickles it into the run's
own temporary folder (the parent of every worker's base temporary folder: new for every
run, so nothing is read from an earlier run); the other workers wait on the lock and read
it. A run without workers simply builds it.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import TypeVar

import pytest
from filelock import FileLock

T = TypeVar("T")


def once_per_run(factory: pytest.TempPathFactory, name: str, build: Callable[[], T]) -> T:
    """`build()`, done once for every worker of this run; `name` names its file."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return build()
    path = factory.getbasetemp().parent / f"{name}.pickle"
    with FileLock(f"{path}.lock"):
        if path.is_file():
            value: T = pickle.loads(path.read_bytes())
            return value
        value = build()
        path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return value
