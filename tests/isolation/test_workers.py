"""ProcessBackend: jobs in worker processes, killed on overrun, replaced, never on stdout."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from dpe_server.isolation.backends import ThreadBackend
from dpe_server.isolation.jobs import Job
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings
from dpe_server.model.errors import CorruptError, ExtractionTimeout, TooLargeError, UnsupportedError
from tests.e2e.harness import HAS_PROC, alive, write_doc

pytestmark = pytest.mark.anyio
MIB = 1024 * 1024
RUNNER = "tests.hostile.runners:misbehave"


@pytest.fixture
async def backend() -> AsyncIterator[ProcessBackend]:
    pb = ProcessBackend(WorkerSettings(workers=2, memory_bytes=512 * MIB, runner=RUNNER))
    try:
        yield pb
    finally:
        await pb.aclose()


def _job(name: str) -> Job:
    return Job("/nonexistent", name, "extract")


async def test_workers_extract_same_tree_as_threads(tmp_path: Path) -> None:
    write_doc(tmp_path / "notes.docx", ["Intro", "Details"])
    pb = ProcessBackend(WorkerSettings(workers=1))
    try:
        in_process = await ThreadBackend().extract(tmp_path, "notes.docx")
        in_worker = await pb.extract(tmp_path, "notes.docx")
    finally:
        await pb.aclose()
    assert in_worker == in_process


async def test_workers_reuse_one_process(backend: ProcessBackend) -> None:
    first = await backend.run(_job("ok-1"), 30)
    second = await backend.run(_job("ok-2"), 30)
    assert first["pid"] == second["pid"]
    assert backend.started == 1


async def test_workers_deadline_kills_a_hung_parse(backend: ProcessBackend) -> None:
    hung = (await backend.run(_job("ok-0"), 30))["pid"]
    start = time.monotonic()
    with pytest.raises(ExtractionTimeout, match="longer than 1 seconds") as raised:
        await backend.run(_job("sleep"), 1.0)
    assert raised.value.bound  # kept with the deadline: read again under a longer one
    assert time.monotonic() - start < 5
    with pytest.raises(ProcessLookupError):
        os.kill(hung, 0)
    after = await backend.run(_job("ok-next"), 30)
    assert after["pid"] != hung


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("hog", TooLargeError, "ran out of memory \\(limit 512 MiB\\)"),
        ("abort", TooLargeError, "ran out of memory"),
        ("kill", TooLargeError, "ran out of memory"),
        ("segv", CorruptError, "reader crashed"),
        ("exit", CorruptError, "reader crashed"),
    ],
    ids=["memory-error", "native-abort", "sigkill", "segfault", "exit"],
)
async def test_workers_job_that_breaks_its_worker(
    backend: ProcessBackend, name: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as raised:
        await backend.run(_job(name), 30)
    assert getattr(raised.value, "bound", None) is (error is TooLargeError)  # memory: the limit's
    assert (await backend.run(_job("ok-next"), 30))["rel"] == "ok-next"


async def test_workers_never_write_to_stdout(
    backend: ProcessBackend, capfd: pytest.CaptureFixture[str]
) -> None:
    await backend.run(_job("print"), 30)
    out, err = capfd.readouterr()
    assert "stray" not in out
    assert "stray output from a worker" in err


async def test_workers_cancelled_job_kills_its_worker(backend: ProcessBackend) -> None:
    pid = (await backend.run(_job("ok-0"), 30))["pid"]
    with anyio.move_on_after(0.5):
        await backend.run(_job("sleep"), 60)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert (await backend.run(_job("ok-1"), 30))["pid"] != pid


async def test_workers_run_in_parallel(backend: ProcessBackend) -> None:
    pids: list[int] = []

    async def one(i: int) -> None:
        pids.append((await backend.run(_job(f"ok-{i}"), 30))["pid"])

    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(one, i)
    assert len(pids) == 6
    assert 1 <= len(set(pids)) <= 2


async def test_workers_aclose_leaves_no_process() -> None:
    pb = ProcessBackend(WorkerSettings(workers=2, runner=RUNNER))
    pids = set()
    async with anyio.create_task_group() as tg:
        for i in range(4):

            async def one(i: int = i) -> None:
                pids.add((await pb.run(_job(f"ok-{i}"), 30))["pid"])

            tg.start_soon(one)
    await pb.aclose()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
async def test_workers_aclose_kills_a_busy_worker_and_blames_no_file(tmp_path: Path) -> None:
    """A parse cut short by shutdown fails as transient (not cached as the file's error)."""
    pb = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    (tmp_path / "docs").mkdir()
    failed: list[CorruptError] = []

    async def parse() -> None:
        with pytest.raises(CorruptError) as info:
            await pb.run(Job(str(tmp_path / "docs"), "stall", "extract"), 3600)
        failed.append(info.value)

    async with anyio.create_task_group() as tg:
        tg.start_soon(parse)
        while not (marker := next(tmp_path.glob("stalled-*"), None)):
            await anyio.sleep(0.02)
        await pb.aclose()
    assert failed[0].transient
    assert "shutting down" in failed[0].message
    assert not alive(int(marker.name.split("-")[1]))


@pytest.mark.skipif(not HAS_PROC, reason="reads /proc")
async def test_workers_one_dead_while_idle_leaves_no_descriptor_open() -> None:
    pb = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    try:
        first = (await pb.run(_job("ok-0"), 30))["pid"]
        open_fds = len(os.listdir("/proc/self/fd"))
        os.kill(first, signal.SIGKILL)
        # until it can be reaped (not merely a zombie leader while its threads still exit)
        while os.waitid(os.P_PID, first, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            await anyio.sleep(0.02)
        assert (await pb.run(_job("ok-1"), 30))["pid"] != first
        assert len(os.listdir("/proc/self/fd")) == open_fds
    finally:
        await pb.aclose()


async def test_workers_recycled_after_max_jobs() -> None:
    pb = ProcessBackend(WorkerSettings(workers=1, max_jobs=2, runner=RUNNER))
    try:
        pids = [(await pb.run(_job(f"ok-{i}"), 30))["pid"] for i in range(4)]
    finally:
        await pb.aclose()
    assert pids[0] == pids[1] != pids[2] == pids[3]


@pytest.mark.skipif(not HAS_PROC, reason="the address space is read from /proc")
async def test_workers_recycled_once_grown_past_their_share_of_the_limit() -> None:
    """A worker whose address space passed `recycle_share` of its limit after a job is
    replaced (a share no worker stays under: every job gets a fresh one)."""
    settings = WorkerSettings(workers=1, memory_bytes=512 * MIB, recycle_share=0.01, runner=RUNNER)
    pb = ProcessBackend(settings)
    try:
        pids = [(await pb.run(_job(f"ok-{i}"), 30))["pid"] for i in range(3)]
    finally:
        await pb.aclose()
    assert len(set(pids)) == 3


async def test_workers_out_of_memory_after_other_jobs_runs_again_in_a_fresh_worker(
    tmp_path: Path,
) -> None:
    """A worker that ran other jobs may have grown: the job that runs out of memory in it is
    run once more in a fresh worker, which has room for it. In a fresh worker, the same failure
    is the file's (`too_large`, bound to the limit) and not tried again."""
    pb = ProcessBackend(WorkerSettings(workers=1, memory_bytes=512 * MIB, runner=RUNNER))
    try:
        first = (await pb.run(_job("ok-0"), 30))["pid"]
        again = await pb.run(Job(str(tmp_path), "hogonce", "extract"), 30)
        assert again["rel"] == "hogonce"
        assert again["pid"] != first
        assert (tmp_path / "hogged").exists()
        assert pb.started == 2
    finally:
        await pb.aclose()
    fresh = ProcessBackend(WorkerSettings(workers=1, memory_bytes=512 * MIB, runner=RUNNER))
    try:
        with pytest.raises(TooLargeError) as err:
            await fresh.run(_job("hog"), 30)  # a worker's first job
        assert err.value.bound
        assert not err.value.transient
        assert fresh.started == 1  # not run again
    finally:
        await fresh.aclose()


async def test_workers_refuse_jobs_after_aclose() -> None:
    pb = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    await pb.aclose()
    with pytest.raises(CorruptError, match="shutting down"):
        await pb.run(_job("ok"), 30)


async def test_workers_do_not_inherit_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPE_SERVER_TOKEN", "secret-token")
    pb = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    try:
        seen = await pb.run(_job("env"), 30)
    finally:
        await pb.aclose()
    assert seen["token"] is None


async def test_workers_ignore_modules_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `json.py` in the folder the server was started from is never imported."""
    (tmp_path / "json.py").write_text("raise SystemExit('imported from the working folder')\n")
    monkeypatch.chdir(tmp_path)
    pb = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    try:
        seen = await pb.run(_job("env"), 30)
    finally:
        await pb.aclose()
    assert "" not in seen["path"]
    assert str(tmp_path) not in seen["path"]


async def test_workers_fifo_swapped_in_is_refused_at_once(tmp_path: Path) -> None:
    """A regular file replaced by a FIFO after the scan: it is opened without blocking and
    refused as not a regular file (no writer needed, no deadline spent), and the next file
    is read."""
    os.mkfifo(tmp_path / "swapped.docx")
    write_doc(tmp_path / "next.docx", ["After"])
    pb = ProcessBackend(WorkerSettings(workers=1, probe_timeout=30.0))
    try:
        with anyio.fail_after(10), pytest.raises(UnsupportedError):
            await pb.probe(tmp_path, "swapped.docx")
        assert (await pb.probe(tmp_path, "next.docx")).page_count >= 1
    finally:
        await pb.aclose()


ORPHAN_PARENT = """
import os, sys, anyio
from dpe_server.isolation.jobs import Job
from dpe_server.isolation.workers import ProcessBackend, WorkerSettings

async def main():
    pb = ProcessBackend(WorkerSettings(workers=1, runner="tests.hostile.runners:misbehave"))
    first = await pb.run(Job("/nonexistent", "ok-0", "extract"), 30)
    print(first["pid"], flush=True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(pb.run, Job("/nonexistent", "sleep", "extract"), 600)
        await anyio.sleep(0.5)
        os._exit(9)  # the server dies mid-parse, cleaning nothing up

anyio.run(main)
"""


def test_workers_end_when_the_server_dies_mid_parse() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN_PARENT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=False,
    )
    worker = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(worker, 9)
    pytest.fail("the worker outlived its server by more than 10 s")


async def test_workers_result_of_the_wrong_shape_is_the_documents_error(
    backend: ProcessBackend,
) -> None:
    """Whatever goes wrong past the worker (here: a result that is not a probe) is the
    document's ExtractionError, never an exception that would end the caller's tasks."""
    with pytest.raises(CorruptError, match=r"server failed while reading this \.pptx file"):
        await backend.probe(Path("/nonexistent"), "ok-shape.pptx")


async def test_workers_that_cannot_start_fail_the_job_not_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_more_files(*_: object, **__: object) -> None:
        raise OSError(24, "Too many open files")

    pb = ProcessBackend(WorkerSettings(workers=1, runner=RUNNER))
    monkeypatch.setattr(subprocess, "Popen", no_more_files)
    try:
        with pytest.raises(CorruptError, match=r"\(OSError\)") as caught:
            await pb.extract(Path("/nonexistent"), "ok.docx")
        assert caught.value.transient
    finally:
        await pb.aclose()
