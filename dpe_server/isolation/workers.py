"""`ProcessBackend`: extraction jobs in child processes, killed on overrun.

Process isolation is the primary defense against hostile files (Apache Tika's rule): a parse
that hangs, eats memory or crashes takes down its worker, never the server.

- A small pool of long-lived workers (default: one per core), started lazily as fresh
  interpreters (`python -c ...`: spawned, never forked, since the parent runs an event loop
  and threads; and unlike multiprocessing's "spawn" the parent's `__main__` is not
  re-imported). Each talks over a socketpair with multiprocessing's `Connection`.
- A worker's fd 1 is the parent's stderr from its first instruction, so nothing it prints
  can reach the stdio transport; it sets RLIMIT_AS (default 2 GiB) on itself.
- A worker never outlives the server: it holds the read end of a pipe (its lifeline) whose
  only write end the server holds, and exits the moment that read returns (the server exited,
  died or dropped it), even mid-parse. SIGINT and SIGTERM are the server's to handle: it
  SIGKILLs its workers on the first (`kill_now`), and again on a second, which ends it at once.
- Each job has a wall-clock deadline (probe 15 s, extract 60 s by default; the recognition of
  one pdf page, an `ocr` job, has the extract deadline to itself; the probe of a format whose
  probe reads the whole file, a LibreOffice conversion, has the extract deadline too). On
  overrun the worker is SIGKILLed, reaped, and replaced on next use; the job fails with
  `timeout`.
- A worker that dies on a job (out of memory, a native crash) fails that job with
  `too_large` or `corrupt`; the next job gets a fresh worker. A job that runs out of memory
  (a worker killed for it, a `MemoryError`, or the OCR engine's refused allocation) in a worker
  that had run other jobs before, or any `ocr` job, is run once more in a fresh worker: a
  long-lived worker's address space grows (heaps fragment, onnxruntime keeps its arena), so
  the first failure may be the worker's, not the file's. An `ocr` job that runs out of memory
  in a fresh worker too leaves its page pending (logged), never stored as failed. Failures
  bound to the memory limit or a deadline carry `bound`: the catalog keeps them with the
  limits (`bounds`) and reads the file again once these change.
- Results come back over the pipe as the JSON text of what `jobs.run_job` returns (for a
  50k-row sheet, json is faster than pickle both ways); the event loop never blocks: a
  thread per in-flight job waits on the pipe and decodes.
- Workers are recycled after `max_jobs` jobs (fragmented heaps are returned to the system),
  and after a job that left their address space past `recycle_share` of the memory limit
  (read from `/proc/PID/statm` where there is one).
- On shutdown every worker is killed at once (busy or idle: none holds anything to save).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from dpe_server.extractors import DEFAULT_LIMITS, Limits, format_of
from dpe_server.isolation.client import JobClient
from dpe_server.isolation.jobs import (
    OUT_OF_MEMORY,
    Job,
    unwrap,
)
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords
from dpe_server.model.errors import CorruptError, ExtractionError, ExtractionTimeout, TooLargeError
from dpe_server.model.tree import JSON

log = logging.getLogger(__name__)
T = TypeVar("T")

GIB = 1024 * 1024 * 1024
MEMORY_EXIT = 86
"""Exit status of a worker that ran out of memory outside `run_job` (while sending)."""
MEMORY_STATUSES = (MEMORY_EXIT, -signal.SIGKILL, -signal.SIGABRT, 1)
"""Exit statuses of a worker that ran out of memory. SIGABRT: native allocators (Rust, glibc)
abort when RLIMIT_AS refuses memory; SIGKILL: the kernel's OOM killer; 1: MemoryError
escaping the interpreter."""


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """How many workers, how long a job may run, how much memory a worker may map."""

    workers: int = 0
    """Worker processes at most (0: one per core)."""
    timeout: float = 60.0
    """Seconds an extraction (whole document or pages) may run."""
    probe_timeout: float = 15.0
    """Seconds a probe may run."""
    memory_bytes: int = 2 * GIB
    """Address space of one worker (RLIMIT_AS); 0 for no limit."""
    max_jobs: int = 200
    """Jobs a worker runs before it is replaced."""
    recycle_share: float = 0.75
    """A worker whose address space passes this share of `memory_bytes` after a job is
    replaced (where the system says a process's size: Linux)."""
    runner: str = "dpe_server.isolation.jobs:run_job"
    """`module:function` a worker runs each job with (tests substitute misbehaving ones)."""
    passwords: Passwords = field(default=NO_PASSWORDS, repr=False)
    """The passwords file's contents: each job carries its file's over the worker's pipe."""

    @property
    def pool_size(self) -> int:
        return self.workers if self.workers > 0 else max(1, os.cpu_count() or 1)


def child_main(fd: int, lifeline: int, memory_bytes: int, runner: str) -> None:
    """A worker's loop: run jobs from the pipe on `fd` until told to stop (None) or it closes;
    the process ends as soon as `lifeline` (the read end of the server's pipe) reads EOF."""
    os.dup2(2, 1)  # belt and braces: the parent already started us with fd 1 on its stderr
    if memory_bytes > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    for stop in (signal.SIGINT, signal.SIGTERM):  # the server's to handle: it ends us
        signal.signal(stop, signal.SIG_IGN)
    logging.basicConfig(  # library chatter about hostile files stays out of the server's log
        level=logging.ERROR, stream=sys.stderr, format="dpe-server worker %(name)s: %(message)s"
    )
    threading.Thread(target=_orphan_watch, args=(lifeline,), daemon=True).start()
    module, _, name = runner.partition(":")
    run_job = getattr(importlib.import_module(module), name)
    conn = Connection(fd)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            conn.send_bytes(json.dumps(run_job(job), separators=(",", ":")).encode())
        except MemoryError:
            os._exit(MEMORY_EXIT)
        except (EOFError, OSError):
            return


def _orphan_watch(lifeline: int) -> None:
    """End this worker when the server is gone (even mid-parse, where nobody else would).

    The server never writes to the lifeline and holds its only write end, so this read
    returns (EOF) exactly when the server exits, is killed, or closes it to drop us."""
    with contextlib.suppress(OSError):
        os.read(lifeline, 1)
    os._exit(0)


_BOOT = (
    "import sys; from dpe_server.isolation.workers import child_main; "
    "child_main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])"
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
TOKEN_ENV = "DPE_SERVER_TOKEN"
"""(transports.TOKEN_ENV, not imported: workers must not load the HTTP stack.)"""


def _stderr_fd() -> int:
    """Our stderr's descriptor for the child's stdout (fd 2 when stderr is replaced)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def _child_env() -> dict[str, str]:
    """Our environment without the HTTP bearer token, with this package importable."""
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    paths = [_PACKAGE_PARENT, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def address_space(pid: int) -> int | None:
    """The address space (virtual size, what RLIMIT_AS counts) of process `pid` in bytes, or
    None where the system does not say (no `/proc`)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            pages = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def _exhausted(status: str, value: Any) -> bool:
    """Whether a job's outcome says it ran out of memory: its worker died of it, or the job
    reports it (`jobs.out_of_memory`)."""
    if status == "died":
        return value in MEMORY_STATUSES
    if status != "ok" or not isinstance(value, dict):
        return False
    error = value.get("error")
    return isinstance(error, dict) and bool(error.get("exhausted"))


def _memory_message(limit: int) -> str:
    if limit <= 0:
        return "The reader ran out of memory on this file; it is too large to read."
    size = f"{limit / GIB:g} GiB" if limit >= GIB else f"{limit // (1024 * 1024)} MiB"
    return f"The reader ran out of memory (limit {size}) on this file; it is too large to read."


class _Worker:
    """One child process and the parent's end of its pipe."""

    def __init__(self, memory_bytes: int, runner: str) -> None:
        ours, theirs = socket.socketpair()
        lifeline, self._lifeline = os.pipe()  # we keep the write end, and never write
        try:
            with ours, theirs:
                # The child's fd 1 is our stderr from its first instruction: nothing it
                # prints can reach a stdio transport on our stdout.
                # -P: the working folder (maybe the documents folder) is not on sys.path.
                fds = (theirs.fileno(), lifeline)
                argv = [sys.executable, "-P", "-c", _BOOT, *map(str, fds), str(memory_bytes)]
                self.process = subprocess.Popen(
                    [*argv, runner],
                    stdin=subprocess.DEVNULL,
                    stdout=_stderr_fd(),
                    pass_fds=fds,
                    env=_child_env(),
                )
                self.conn = Connection(ours.detach())
        except BaseException:
            os.close(self._lifeline)
            raise
        finally:
            os.close(lifeline)
        self.jobs = 0
        self.dead = False
        self._lock = threading.Lock()

    def alive(self) -> bool:
        return not self.dead and self.process.poll() is None

    def call(self, job: Job, deadline: float) -> tuple[str, Any]:
        """Run `job`: ("ok", result) | ("timeout", None) | ("died", exit status). Blocking."""
        self.jobs += 1
        try:
            self.conn.send(job)
            if self.conn.poll(deadline):
                return "ok", json.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            self.kill()
            return "died", self.process.returncode
        if self.process.poll() is not None:
            self.kill()
            return "died", self.process.returncode
        self.kill()
        return "timeout", None

    def kill(self) -> None:
        """SIGKILL, reap and close; safe to call twice and from two threads."""
        with self._lock:
            if self.dead:
                return
            self.dead = True
            if self.process.poll() is None:
                with contextlib.suppress(OSError):
                    self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)
            self.conn.close()
            with contextlib.suppress(OSError):
                os.close(self._lifeline)

    def stop(self, grace: float) -> None:
        """Ask the worker to exit; kill it when it has not within `grace` seconds."""
        with self._lock:
            if not self.dead:
                with contextlib.suppress(OSError):
                    self.conn.send(None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(grace)
        self.kill()


class ProcessBackend(JobClient):
    """The `Backend` that runs `jobs.run_job` in a pool of worker processes."""

    def __init__(
        self, settings: WorkerSettings | None = None, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        self.settings = settings or WorkerSettings()
        super().__init__(limits, self.settings.passwords)
        # Half the probe's deadline for passwords: a protected file that none of them opens is
        # listed `encrypted` however long the list, not `timeout` (the rest is for the parse).
        self.password_seconds = self.settings.probe_timeout / 2
        # A batch of children starts none past a third of its deadline: the one under way
        # then has the rest (a child that would take longer fails the batch, then alone).
        self.batch_seconds = self.settings.timeout / 3
        size = self.settings.pool_size
        self._slots = anyio.Semaphore(size)
        self._threads = anyio.CapacityLimiter(size)
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0
        """Worker processes started so far (for tests and logs)."""

    # ---- Backend ------------------------------------------------------------------------

    @property
    def parallelism(self) -> int:
        return self.settings.pool_size

    async def _execute(self, job: Job) -> JSON:
        deadline = self.settings.timeout
        if job.op == "probe" and not _probe_reads_whole(job.rel):
            deadline = self.settings.probe_timeout
        return await self.run(job, deadline)

    async def aclose(self) -> None:
        """Kill every worker at once: a shutdown waits for none of them (an idle worker asked
        to exit would spend its interpreter's tear-down on the way out)."""
        self.kill_now()
        with self._lock:
            workers = list(self._all)
            self._all.clear()
            self._idle.clear()
        for worker in workers:  # reaped and closed; one started since is killed here
            await anyio.to_thread.run_sync(worker.kill)

    def kill_now(self) -> None:
        """Refuse new jobs and SIGKILL every worker, reaping none: the process is stopping,
        its workers must not outlive it, even one deep in native code that its lifeline
        cannot interrupt (the jobs cut short fail as `_shutting_down`, blaming no file)."""
        self._closed = True
        for worker in tuple(self._all):  # one C-level copy: no lock, safe in a signal handler
            if not worker.dead:  # (a dead one may be reaped: its pid may be another's now)
                with contextlib.suppress(OSError):
                    worker.process.kill()  # which skips a process already reaped

    # ---- the pool -----------------------------------------------------------------------

    @property
    def bounds(self) -> str:
        """The limits a `bound` failure depends on (part of what the catalog keeps of it)."""
        s = self.settings
        return f"memory={s.memory_bytes};timeout={s.timeout:g};probe={s.probe_timeout:g}"

    async def run(self, job: Job, deadline: float) -> JSON:
        """Run any job in a worker; its `ok` value, or its error raised."""
        if self._closed:
            raise _shutting_down()
        async with self._slots:
            status, value, ran = await self._attempt(job, deadline, fresh=False)
            if _exhausted(status, value) and (ran > 1 or job.op == "ocr") and not self._closed:
                log.warning(
                    "%s of %s ran out of memory in a worker that had run %d job%s; "
                    "trying it again in a fresh worker",
                    job.op,
                    job.rel,
                    ran,
                    "" if ran == 1 else "s",
                )
                status, value, ran = await self._attempt(job, deadline, fresh=True)
                if _exhausted(status, value) and job.op == "ocr":
                    log.warning(
                        "ocr of page %s of %s ran out of memory in a fresh worker too (limit "
                        "%d MiB); the page stays pending and is tried again when read or at "
                        "the next start",
                        ", ".join(map(str, job.pages)),
                        job.rel,
                        self.settings.memory_bytes >> 20,
                    )
                    message = _memory_message(self.settings.memory_bytes)
                    raise TooLargeError(message, transient=True, bound=True)
            if status == "ok":
                return unwrap(self._rewrite(value))
            if self._closed:  # killed by `aclose`: says nothing about the file
                raise _shutting_down()
            raise self._failure(job, status, value, deadline)

    async def _attempt(self, job: Job, deadline: float, fresh: bool) -> tuple[str, Any, int]:
        """Run `job` in an idle worker (`fresh`: a new one): `Worker.call`'s outcome, and how
        many jobs that worker has run, this one included. The worker goes back to the pool
        unless it failed, ran out of memory, or has grown past `recycle_share`."""
        worker = None if fresh else self._take()
        if worker is None:
            worker = await anyio.to_thread.run_sync(self._spawn)
        try:
            status, value = await anyio.to_thread.run_sync(
                worker.call, job, deadline, limiter=self._threads, abandon_on_cancel=True
            )
        except BaseException:
            # Cancelled: the job is not wanted any more; the worker must not keep it.
            self._drop(worker)
            raise
        if status == "ok" and not _exhausted(status, value):
            self._give_back(worker)
        else:
            self._drop(worker)
        return status, value, worker.jobs

    def _spawn(self) -> _Worker:
        worker = _Worker(self.settings.memory_bytes, self.settings.runner)
        with self._lock:
            self._all.add(worker)
            self.started += 1
        return worker

    def _take(self) -> _Worker | None:
        dead: list[_Worker] = []
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    break
                self._all.discard(worker)
                dead.append(worker)
            else:
                worker = None
        for gone in dead:  # died while idle: reap it, close its pipes
            gone.kill()
        return worker

    def _give_back(self, worker: _Worker) -> None:
        if self._closed or worker.jobs >= self.settings.max_jobs or self._grown(worker):
            self._drop(worker, graceful=True)
            return
        with self._lock:
            self._idle.append(worker)

    def _drop(self, worker: _Worker, graceful: bool = False) -> None:
        with self._lock:
            self._all.discard(worker)
        if graceful:
            worker.stop(2.0)
        else:
            worker.kill()

    def _grown(self, worker: _Worker) -> bool:
        """Whether the worker's address space has passed `recycle_share` of the limit."""
        limit = self.settings.memory_bytes
        if limit <= 0:
            return False
        size = address_space(worker.process.pid)
        if size is None or size <= limit * self.settings.recycle_share:
            return False
        log.info(
            "a worker grew to %d MiB of its %d MiB after %d jobs; replacing it",
            size >> 20,
            limit >> 20,
            worker.jobs,
        )
        return True

    def _rewrite(self, result: dict[str, JSON]) -> dict[str, JSON]:
        """A MemoryError inside the job names this backend's limit."""
        error = result.get("error")
        if isinstance(error, dict) and error.get("message") == OUT_OF_MEMORY:
            return {"error": {**error, "message": _memory_message(self.settings.memory_bytes)}}
        return result

    def _failure(self, job: Job, status: str, exitcode: Any, deadline: float) -> ExtractionError:
        if status == "timeout":
            log.warning("%s of %s ran past %g s; its worker was killed", job.op, job.rel, deadline)
            if job.op == "ocr":
                return ExtractionTimeout(
                    f"Recognising the text of this page took longer than {deadline:g} seconds "
                    "and was stopped.",
                    bound=True,
                )
            return ExtractionTimeout(
                f"Reading this file took longer than {deadline:g} seconds and was stopped; "
                "it may be too large or malformed.",
                bound=True,
            )
        log.warning("worker died on %s of %s (exit status %s)", job.op, job.rel, exitcode)
        if exitcode in MEMORY_STATUSES:
            return TooLargeError(_memory_message(self.settings.memory_bytes), bound=True)
        status_note = f" (exit status {exitcode})" if exitcode is not None else ""
        return CorruptError(
            f"The reader crashed on this file{status_note}; it is probably malformed."
        )


def _shutting_down() -> CorruptError:
    """A job refused or cut short by `aclose` (transient: the file is not to blame)."""
    return CorruptError("The server is shutting down; the file was not read.", transient=True)


__all__ = ["ProcessBackend", "WorkerSettings"]


def _probe_reads_whole(rel: str) -> bool:
    fmt = format_of(rel)
    return fmt is not None and fmt.probe_reads_whole
