"""`RecentFirst`: things waiting for work (documents with pages to recognise), taken most
recently modified first, each once.

A heap of (modification time, order of arrival): taking the next is O(log n), where picking
the newest of everything that waits every turn was O(n) a turn, O(n²) for a folder. What is
added again with the time it waits under is not queued twice; added with a new time (the file
changed meanwhile), its old place is skipped when reached. Additions may come from a worker
thread (a restore of the store lists documents off the event loop): a lock keeps it whole.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class RecentFirst(Generic[T]):
    def __init__(self) -> None:
        self._heap: list[tuple[int, int, T]] = []
        self._waiting: dict[T, int] = {}
        """What waits (taken or not, until `done`), with the modification time it waits under."""
        self._order = itertools.count()
        self._lock = threading.Lock()

    def add(self, item: T, mtime_ns: int) -> None:
        """Queue `item` (modified at `mtime_ns`) unless it waits already under that time."""
        with self._lock:
            if self._waiting.get(item) == mtime_ns:
                return
            self._waiting[item] = mtime_ns
            heapq.heappush(self._heap, (-mtime_ns, next(self._order), item))

    def take(self) -> tuple[T, int] | None:
        """The most recently modified item not yet taken, with its time (None: none left). It
        still waits (is listed) until `done`."""
        with self._lock:
            while self._heap:
                mtime, _, item = heapq.heappop(self._heap)
                if self._waiting.get(item) == -mtime:
                    return item, -mtime
            return None

    def queued(self) -> bool:
        """Whether an item is there to take (one taken and not done is not)."""
        with self._lock:
            while self._heap and self._waiting.get(self._heap[0][2]) != -self._heap[0][0]:
                heapq.heappop(self._heap)  # a place left by what was done or re-added
            return bool(self._heap)

    def done(self, item: T, mtime_ns: int) -> None:
        """`item`, taken under `mtime_ns`, waits no more (unless added since with a new time)."""
        with self._lock:
            if self._waiting.get(item) == mtime_ns:
                del self._waiting[item]

    def __iter__(self) -> Iterator[T]:
        with self._lock:
            return iter(list(self._waiting))

    def __len__(self) -> int:
        return len(self._waiting)

    def __bool__(self) -> bool:
        return bool(self._waiting)
