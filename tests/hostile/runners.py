"""Job runners for worker tests, chosen by the job's file name (run inside a worker).

`ok*`: echoes the job; `sleep*`: hangs; `stall*`: hangs after creating `stalled-<pid>` beside
the served folder (tests wait for that file to know a parse is under way); `hog*`: allocates
until RLIMIT_AS stops it (Python's MemoryError, caught by the job); `abort*`: a native abort
(as Rust/glibc allocators do on refused memory); `segv*`: a segfault; `print*`: writes to
stdout, then answers; `json*`: a stored JSON result read from `job.root`; `exit*`: the worker
exits mid-job.

`fake_ocr` runs jobs as the server does, except `ocr` jobs: each waits for a file `ocr-go`
beside the served folder, then hangs on the pages its JSON lists as `hang`, and on the others
takes its `seconds` and says the page recognised without running the engine.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from dpe_server.isolation.jobs import OUT_OF_MEMORY, Job, run_job


def misbehave(job: Any) -> dict[str, Any]:
    name = job.rel
    if name.startswith("sleep"):
        time.sleep(3600)
    if name.startswith("stall"):
        (Path(job.root).parent / f"stalled-{os.getpid()}").touch()
        time.sleep(3600)
    if name.startswith("hog"):
        try:
            hoard = [bytearray(64 * 1024 * 1024) for _ in range(1000)]
        except MemoryError:
            return {"error": {"kind": "too_large", "message": OUT_OF_MEMORY, "transient": False}}
        return {"ok": len(hoard)}
    if name.startswith("abort"):
        os.abort()
    if name.startswith("segv"):
        ctypes.string_at(0)
    if name.startswith("exit"):
        os._exit(3)
    if name.startswith("print"):
        print("stray output from a worker")
        sys.stdout.flush()
        os.write(1, b"stray bytes on fd 1\n")
    if name.startswith("json"):  # a stored result, sent back (measures the transfer)
        with open(job.root, encoding="utf-8") as f:
            return {"ok": json.load(f)}
    if name.startswith("env"):
        return {"ok": {"token": os.environ.get("DPE_SERVER_TOKEN"), "path": sys.path}}
    if name.startswith("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    return {"ok": {"rel": name, "pid": os.getpid()}}


def fake_ocr(job: Job) -> dict[str, Any]:
    if job.op != "ocr":
        return run_job(job)
    gate = Path(job.root).parent / "ocr-go"
    while not gate.exists():
        time.sleep(0.02)
    told = json.loads(gate.read_text() or "{}")
    if set(job.pages) & set(told.get("hang", ())):
        time.sleep(3600)
    time.sleep(told.get("seconds", 0))
    result = run_job(dataclasses.replace(job, op="pages"))
    for page in result.get("ok") or ():
        page["metadata"]["ocr"] = True
        page["metadata"]["recognised_by"] = "test"
    return result
