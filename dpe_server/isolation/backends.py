"""Where extraction jobs run. The catalog only knows the `Backend` protocol.

- `workers.ProcessBackend`: jobs in child processes with a deadline and a memory
  limit, killed on overrun (the default of `serve` and `read`: untrusted files are parsed out
  of the process that answers).
- `ThreadBackend`: jobs in worker threads of this process (tests, where isolation is not
  what is tested).

Both run `jobs.run_job`, so they produce the same trees and the same errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Protocol, TypeVar

import anyio
import anyio.to_thread

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.jobs import (
    Job,
    decode_document,
    decode_image,
    decode_pages,
    decode_probe,
    pages_arg,
    run_job,
    unwrap,
)
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


class Backend(Protocol):
    """Runs extraction jobs; raises `ExtractionError` for a file that cannot be read."""

    @property
    def parallelism(self) -> int:
        """Jobs it runs at once (the catalog splits a large paged document that many ways)."""
        ...

    async def probe(self, root: Path, rel: str) -> Properties: ...

    async def extract(self, root: Path, rel: str) -> Document: ...

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]: ...

    async def image(
        self, root: Path, rel: str, metadata: Mapping[str, JSON]
    ) -> tuple[str, str] | None:
        """The picture an image element's metadata names: (base64 bytes, mime type)."""
        ...

    async def aclose(self) -> None: ...


class ThreadBackend:
    """Jobs in threads of this process, at most `concurrency` at once."""

    def __init__(self, concurrency: int = 2, limits: Limits = DEFAULT_LIMITS) -> None:
        self._limiter = anyio.CapacityLimiter(concurrency)
        self._limits = limits
        self._concurrency = concurrency

    @property
    def parallelism(self) -> int:
        return 1  # threads share one interpreter lock: splitting a parse gains nothing

    async def _run(self, job: Job, decode: Callable[[JSON], T]) -> T:
        with failures_as_extraction_errors(job):
            result = await anyio.to_thread.run_sync(run_job, job, limiter=self._limiter)
            return decode(unwrap(result))

    async def probe(self, root: Path, rel: str) -> Properties:
        return await self._run(Job(str(root), rel, "probe", limits=self._limits), decode_probe)

    async def extract(self, root: Path, rel: str) -> Document:
        job = Job(str(root), rel, "extract", limits=self._limits)
        return await self._run(job, decode_document)

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]:
        job = Job(str(root), rel, "pages", pages_arg(pages), self._limits)
        return await self._run(job, decode_pages)

    async def image(
        self, root: Path, rel: str, metadata: Mapping[str, JSON]
    ) -> tuple[str, str] | None:
        job = Job(str(root), rel, "image", limits=self._limits, metadata=dict(metadata))
        return await self._run(job, decode_image)

    async def aclose(self) -> None:
        return None


__all__ = ["Backend", "ExtractionError", "ThreadBackend"]
