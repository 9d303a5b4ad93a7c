"""The catalog's side of the work queue of replicas sharing a store (`shared.SharedStore`).

A job (extracting a version of a file, some of its pages, recognising a page) is claimed
before it is done: while another replica holds it, this one waits; once one has done it, its
result is read from the store; the replica doing it renews its lease meanwhile, and a job whose
lease expired (its replica stopped) is taken over by the next that asks. Without a shared
store every job is this process's own: each method then does the job at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from dpe_server.catalog.index import Entry
from dpe_server.catalog.shared import Claim, SharedStore

T = TypeVar("T")
E = TypeVar("E", bound=Entry)

CLAIM_POLL = 0.1
"""Seconds between looks at a job another replica holds."""


class Claims:
    """Claims, waits and leases of the jobs of one catalog (`shared`: None when the store is
    not shared)."""

    def __init__(self, shared: SharedStore | None) -> None:
        self.shared = shared

    async def taken(self, key: str) -> bool:
        """Whether another replica is extracting version `key`."""
        shared = self.shared
        return shared is not None and await anyio.to_thread.run_sync(shared.busy, key)

    async def extraction(self, entry: E, key: str, restore: Callable[[E], bool]) -> bool:
        """Whether this replica is to extract `key`, the entry's version (always, unless the
        store is shared); False once another replica has, its result `restore`d into the entry.
        A job another replica holds is waited for, and taken over when its lease expires."""
        shared = self.shared
        if shared is None:
            return True
        while True:
            claim = await anyio.to_thread.run_sync(shared.claim, key)
            if claim is Claim.CLAIMED:
                return True
            if claim is Claim.DONE:
                await anyio.to_thread.run_sync(restore, entry)
                # Gone from the store meanwhile (forgotten): extracted again here.
                return not (entry.current or entry.failed)
            if key != entry.key:
                return False  # the file changed again: this version is no longer wanted
            await anyio.sleep(CLAIM_POLL)

    async def job(
        self, entry: Entry, key: str, job: str, done_there: Callable[[], T | None]
    ) -> tuple[T | None, SharedStore | None]:
        """Claim `job` (a job on version `key` of the entry's file) before doing it: while
        another replica holds it, wait; once one has done it, what `done_there` reads of it
        from the store (blocking; None: not all there, forgotten since). Else None, and the
        store to lease the job from while doing it here (None: no shared store, or the file
        changed meanwhile)."""
        shared, claim = self.shared, Claim.CLAIMED
        while shared is not None and key == entry.key:
            claim = await anyio.to_thread.run_sync(shared.claim, job)
            if claim is Claim.DONE:
                found = await anyio.to_thread.run_sync(done_there)
                if found is not None:
                    return found, None
            if claim is not Claim.BUSY:
                break  # claimed, or done but forgotten since: done here
            await anyio.sleep(CLAIM_POLL)
        return None, shared if shared is not None and claim is Claim.CLAIMED else None

    async def leased(self, job: str | None, work: Awaitable[T]) -> T:
        """Await `work`, renewing this replica's lease on `job` meanwhile (None: unclaimed)."""
        if job is None or self.shared is None:
            return await work
        done: list[T] = []
        failure: Exception | None = None
        async with anyio.create_task_group() as lease:
            lease.start_soon(_keep_lease, self.shared, job)
            try:
                done.append(await work)
            except Exception as exc:  # raised below as itself, not in the group's wrapping
                failure = exc
            lease.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return done[0]

    async def release(self, job: str) -> None:
        """Give `job` up undone: anyone may try again."""
        if self.shared is not None:
            await anyio.to_thread.run_sync(self.shared.release, job)


async def _keep_lease(shared: SharedStore, key: str) -> None:
    """Renew this replica's lease on `key` while it does the job."""
    while True:
        await anyio.sleep(shared.lease / 3)
        await anyio.to_thread.run_sync(shared.renew, key)
