"""Where extraction jobs run. The catalog only knows the `Backend` protocol.

- `dpe_server.workers.ProcessBackend`: jobs in child processes with a deadline and a memory
  limit, killed on overrun (the default of `serve` and `read`: untrusted files are parsed out
  of the process that answers).
- `ThreadBackend`: jobs in worker threads of this process (tests, where isolation is not
  what is tested).

Both run `jobs.run_job`, so they produce the same trees and the same errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import anyio
import anyio.to_thread

from dpe_server.errors import ExtractionError
from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.jobs import (
    Job,
    decode_document,
    decode_image,
    decode_pages,
    decode_probe,
    pages_arg,
    run_job,
    unwrap,
)
from dpe_server.model import JSON, Document, Page, Properties


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

    async def _run(self, job: Job) -> JSON:
        result = await anyio.to_thread.run_sync(run_job, job, limiter=self._limiter)
        return unwrap(result)

    async def probe(self, root: Path, rel: str) -> Properties:
        return decode_probe(await self._run(Job(str(root), rel, "probe", limits=self._limits)))

    async def extract(self, root: Path, rel: str) -> Document:
        return decode_document(await self._run(Job(str(root), rel, "extract", limits=self._limits)))

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]:
        job = Job(str(root), rel, "pages", pages_arg(pages), self._limits)
        return decode_pages(await self._run(job))

    async def image(
        self, root: Path, rel: str, metadata: Mapping[str, JSON]
    ) -> tuple[str, str] | None:
        job = Job(str(root), rel, "image", limits=self._limits, metadata=dict(metadata))
        return decode_image(await self._run(job))

    async def aclose(self) -> None:
        return None


__all__ = ["Backend", "ExtractionError", "ThreadBackend"]
