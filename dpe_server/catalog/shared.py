"""What a store shared by several replicas adds to a `Store`: a work queue and a change feed.

`postgres.PostgresStore` is one; the catalog asks a store whether it is one (`SharedStore`)
and, when it is, claims each extraction before doing it and follows the feed.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable


class Claim(enum.Enum):
    CLAIMED = "claimed"
    """This replica extracts the key (renewing the lease) and then `finish`es or `release`s it."""
    DONE = "done"
    """Another replica extracted it: its result is in the store."""
    BUSY = "busy"
    """Another replica is extracting it, within its lease."""


def pages_job(key: str, indices: Sequence[int]) -> str:
    """The job of extracting some pages of the version `key` alone (a read of a page before
    its document is extracted)."""
    return f"{key}/pages/{','.join(map(str, indices))}"


def recognise_job(key: str, index: int) -> str:
    """The job of recognising page `index` of the version `key` (OCR: a page left pending)."""
    return f"{key}/ocr/{index}"


@runtime_checkable
class SharedStore(Protocol):
    lease: float
    """Seconds a claimed job stays the claimant's without a `renew`."""

    def claim(self, key: str) -> Claim: ...

    def busy(self, key: str) -> bool:
        """Whether another replica holds the job of `key` within its lease."""
        ...

    def renew(self, key: str) -> None: ...

    def finish(self, key: str) -> None: ...

    def release(self, key: str) -> None: ...

    def publish(self, rels: Sequence[str]) -> None:
        """Tell every other replica that these files (relative paths) changed."""
        ...

    async def follow(self, on_change: Callable[[list[str] | None], Awaitable[None]]) -> None:
        """Call `on_change` with what other replicas publish (None: changes may have been
        missed while the feed was down), until cancelled."""
        ...
