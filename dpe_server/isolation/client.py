"""The one client of extraction jobs (`JobClient`): a `Backend`'s four methods build their
`Job`, have it run, and decode its result, inside one boundary that turns any failure into the
document's `ExtractionError`. A runner supplies only `_execute`: threads (`backends`), worker
processes (`workers`), or right here (`InlineJobs`, no event loop: `dpe-server read` of one
document). Imports no event loop.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.extractors.passwords import TRY_SECONDS
from dpe_server.isolation.jobs import (
    Job,
    Op,
    decode_children,
    decode_document,
    decode_export,
    decode_image,
    decode_pages,
    decode_probe,
    pages_arg,
    run_job_here,
    unwrap,
)
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords
from dpe_server.model.errors import CorruptError, ExtractionError
from dpe_server.model.tree import JSON, Document, Page, Properties

log = logging.getLogger(__name__)
T = TypeVar("T")


@contextmanager
def failures_as_extraction_errors(job: Job) -> Iterator[None]:
    """The boundary of every job: whatever goes wrong running it or decoding its result
    (a worker that cannot start, a result of the wrong shape, a bug of ours) comes out as the
    document's `ExtractionError`, never as an exception that would stop the caller's tasks."""
    try:
        yield
    except ExtractionError:
        raise
    except Exception as exc:
        log.error("%s of %s failed: %r", job.op, job.rel, exc, exc_info=True)
        raise CorruptError(
            f"The server failed while reading this {PurePosixPath(job.rel).suffix} file "
            f"({type(exc).__name__}); it is read again when it changes or the server restarts.",
            transient=True,
        ) from exc


class JobClient(ABC):
    """The one client of extraction jobs: each `Backend` method builds its `Job`, has it run
    (`_execute`, the only part a runner supplies) and decodes the result, inside the boundary
    that turns any failure into the document's `ExtractionError`."""

    def __init__(
        self, limits: Limits = DEFAULT_LIMITS, passwords: Passwords = NO_PASSWORDS
    ) -> None:
        self._limits = limits
        self.passwords = passwords
        """Which passwords the jobs of each file carry (the catalog keys trees by its digest)."""
        self.password_seconds = TRY_SECONDS
        """Seconds a job spends trying a file's passwords at most (`extractors.passwords`)."""
        self.batch_seconds = 20.0
        """Seconds after which a `children` job starts no further child (`Job.budget`)."""

    def _job(self, root: Path, rel: str, op: Op, **more: Any) -> Job:
        return Job(
            str(root),
            rel,
            op,
            limits=self._limits,
            passwords=self.passwords.for_path(rel),
            password_seconds=self.password_seconds,
            **more,
        )

    @property
    def bounds(self) -> str:
        """No limits of its own (threads, this process): "" (a worker pool says its own)."""
        return ""

    @abstractmethod
    async def _execute(self, job: Job) -> JSON:
        """Run `job`; its `ok` value, or its error raised (`jobs.unwrap`)."""

    async def _call(self, job: Job, decode: Callable[[JSON], T]) -> T:
        with failures_as_extraction_errors(job):
            return decode(await self._execute(job))

    async def probe(self, root: Path, rel: str) -> Properties:
        return await self._call(self._job(root, rel, "probe"), decode_probe)

    async def extract(self, root: Path, rel: str) -> Document:
        job = self._job(root, rel, "extract")
        return await self._call(job, decode_document)

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]:
        job = self._job(root, rel, "pages", pages=pages_arg(pages))
        return await self._call(job, decode_pages)

    async def extract_children(
        self, root: Path, rel: str, paths: Sequence[str]
    ) -> list[tuple[str, Document | ExtractionError]]:
        job = self._job(root, rel, "children", members=tuple(paths), budget=self.batch_seconds)
        return await self._call(job, decode_children)

    async def recognise(self, root: Path, rel: str, index: int) -> Page | None:
        job = self._job(root, rel, "ocr", pages=(index,))
        pages = await self._call(job, decode_pages)
        return next((p for p in pages if p.page_index == index), None)

    async def image(
        self, root: Path, rel: str, metadata: Mapping[str, JSON]
    ) -> tuple[str, str] | None:
        job = self._job(root, rel, "image", metadata=dict(metadata))
        return await self._call(job, decode_image)

    async def export(self, root: Path, rel: str) -> str:
        return await self._call(self._job(root, rel, "export"), decode_export)

    async def aclose(self) -> None:
        return None

    def kill_now(self) -> None:
        return None


class InlineJobs(JobClient):
    """Jobs run right here, in the caller's thread, by coroutines that never suspend:
    `run_inline(jobs.probe(...))` reads a file with no event loop (`dpe-server read` of one
    document, which limits its own process instead). The trees are handed over as the
    extractor built them (`run_job_here`): no JSON in between (frozen trees, which nothing
    downstream writes to)."""

    @property
    def parallelism(self) -> int:
        return 1

    async def _execute(self, job: Job) -> JSON:
        return unwrap(run_job_here(job))


def run_inline(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that completes without suspending (no event loop needed)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coroutine.close()
    raise RuntimeError("a coroutine run inline waited for something; it needs an event loop")
