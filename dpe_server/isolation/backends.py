"""Where extraction jobs run. The catalog only knows the `Backend` protocol.

- `workers.ProcessBackend`: jobs in child processes with a deadline and a memory
  limit, killed on overrun (the default of `serve` and `read`: untrusted files are parsed out
  of the process that answers).
- `ThreadBackend`: jobs in worker threads of this process (tests, where isolation is not
  what is tested);
- `InlineJobs`: jobs in the caller's thread, no event loop (`dpe-server read` of one document).

All are `JobClient`s running `jobs.run_job`, so they produce the same trees and the same errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import anyio
import anyio.to_thread

from dpe_server.extractors import DEFAULT_LIMITS, Limits
from dpe_server.isolation.client import JobClient
from dpe_server.isolation.jobs import Job, run_job, unwrap
from dpe_server.isolation.passwords import NO_PASSWORDS, Passwords
from dpe_server.model.errors import ExtractionError
from dpe_server.model.tree import JSON, Document, Page, Properties


class Backend(Protocol):
    """Runs extraction jobs; raises `ExtractionError` for a file that cannot be read."""

    passwords: Passwords
    """Which passwords the jobs of each file carry (the catalog keys trees by its digest)."""

    @property
    def parallelism(self) -> int:
        """Jobs it runs at once (the catalog splits a large paged document that many ways)."""
        ...

    @property
    def bounds(self) -> str:
        """The limits it runs jobs under that a `bound` failure depends on (memory,
        deadlines): the catalog keeps such a failure with them, and reads the file again when
        they differ."""
        ...

    async def probe(self, root: Path, rel: str) -> Properties: ...

    async def extract(self, root: Path, rel: str) -> Document: ...

    async def extract_pages(self, root: Path, rel: str, pages: Sequence[int]) -> list[Page]: ...

    async def extract_children(
        self, root: Path, rel: str, paths: Sequence[str]
    ) -> list[tuple[str, Document | ExtractionError]]:
        """The documents at `paths` inside the file or child at `rel`, in one job (the
        container opened once), each with its own error; in order, and fewer than asked when
        the job's time ran out (docs/children.md)."""
        ...

    async def recognise(self, root: Path, rel: str, index: int) -> Page | None:
        """Page `index` with its pictures recognised (OCR), where extraction left it
        `ocr: "pending"`; a job of its own, under its own deadline."""
        ...

    async def image(
        self, root: Path, rel: str, metadata: Mapping[str, JSON]
    ) -> tuple[str, str] | None:
        """The picture an image element's metadata names: (base64 bytes, mime type)."""
        ...

    async def export(self, root: Path, rel: str) -> str:
        """The file exported to PDF by LibreOffice (`Format.pdf_export`), base64: what
        `dpe-server view` draws an office file's pages from."""
        ...

    async def aclose(self) -> None: ...

    def kill_now(self) -> None:
        """End every parse under way at once, waiting for nothing and taking no lock (a
        second Ctrl-C calls it from a signal handler just before the process ends)."""
        ...


class ThreadBackend(JobClient):
    """Jobs in threads of this process, at most `concurrency` at once."""

    def __init__(
        self,
        concurrency: int = 2,
        limits: Limits = DEFAULT_LIMITS,
        passwords: Passwords = NO_PASSWORDS,
    ) -> None:
        super().__init__(limits, passwords)
        self._limiter = anyio.CapacityLimiter(concurrency)

    @property
    def parallelism(self) -> int:
        return 1  # threads share one interpreter lock: splitting a parse gains nothing

    async def _execute(self, job: Job) -> JSON:
        return unwrap(await anyio.to_thread.run_sync(run_job, job, limiter=self._limiter))


__all__ = ["Backend", "ExtractionError", "ThreadBackend"]
