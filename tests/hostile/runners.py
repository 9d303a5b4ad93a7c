"""Job runners for worker tests, chosen by the job's file name (run inside a worker).

`ok*`: echoes the job; `sleep*`: hangs; `stall*`: hangs after creating `stalled-<pid>` beside
the served folder (tests wait for that file to know a parse is under way); `hog*`: allocates
until RLIMIT_AS stops it (Python's MemoryError, caught by the job); `hogonce*`: as `hog` the
first time (creating `hogged` in `job.root`), then echoes; `abort*`: a native abort
(as Rust/glibc allocators do on refused memory); `segv*`: a segfault; `print*`: writes to
stdout, then answers; `json*`: a stored JSON result read from `job.root`; `exit*`: the worker
exits mid-job.

`crash_on_child` runs jobs as the server does, except one that reaches a child named `segv*`
(read alone, or in a batch of children after those before it): its worker segfaults there.

`fake_ocr` runs jobs as the server does, except `ocr` jobs: each waits for a file `ocr-go`
beside the served folder, then hangs on the pages its JSON lists as `hang`, and on the others
takes its `seconds` and says the page recognised without running the engine.

`ocr_exhausted_once` runs jobs as the server does, with the extra as if installed and a
stand-in engine (`recognise` itself runs): the first recognition in a test (no `oom-once` beside
the served folder) fails as onnxruntime does when its arena cannot grow, and every one while
`oom-always` is there; the others read `RECOGNISED`.
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

from dpe_server.isolation.jobs import Job, out_of_memory, run_job


def misbehave(job: Any) -> dict[str, Any]:
    name = job.rel
    if name.startswith("sleep"):
        time.sleep(3600)
    if name.startswith("stall"):
        (Path(job.root).parent / f"stalled-{os.getpid()}").touch()
        time.sleep(3600)
    if name.startswith("hogonce"):
        marker = Path(job.root) / "hogged"
        if marker.exists():
            return {"ok": {"rel": name, "pid": os.getpid()}}
        marker.touch()
    if name.startswith("hog"):
        try:
            hoard = [bytearray(64 * 1024 * 1024) for _ in range(1000)]
        except MemoryError:
            return out_of_memory(job)  # what `run_job` answers
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


def crash_on_child(job: Job) -> dict[str, Any]:
    paths = list(job.members) if job.op == "children" else [job.rel.rpartition("\0")[2]]
    crash = [p.rpartition("/")[2].startswith("segv") for p in paths]
    if job.op in ("children", "extract") and any(crash):
        if job.op == "children":  # the children before it are read first
            run_job(dataclasses.replace(job, members=tuple(paths[: crash.index(True)])))
        ctypes.string_at(0)
    return run_job(job)


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


ONNX_OUT_OF_MEMORY = (
    "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running "
    "Conv node. Name:'conv1' Status Message: /onnxruntime_src/onnxruntime/core/framework/"
    "bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, "
    "onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory "
    "for requested buffer of size 4194304"
)
"""What onnxruntime raises (a `RuntimeException`) when its arena cannot grow."""


class _ExhaustedOnce:
    def __init__(self, beside: Path) -> None:
        self.marker = beside / "oom-once"
        self.always = beside / "oom-always"

    def __call__(self, pixels: Any) -> tuple[list[Any], None]:
        if self.always.exists() or not self.marker.exists():
            self.marker.touch()
            raise RuntimeError(ONNX_OUT_OF_MEMORY)
        box = [[10.0, 10.0], [200.0, 10.0], [200.0, 40.0], [10.0, 40.0]]
        return [[box, "RECOGNISED", 0.99]], None


def ocr_exhausted_once(job: Job) -> dict[str, Any]:
    from dpe_server.extractors.ocr import rapid, settings, states

    states.installed = lambda engine="auto": True  # type: ignore[assignment]
    settings.chosen = lambda engine: "rapidocr"  # type: ignore[assignment]
    rapid._engine = lambda: _ExhaustedOnce(Path(job.root).parent)  # type: ignore[assignment]
    return run_job(job)
