"""Rendered bodies in the serving process: built once per key, within a budget of bytes.

A body is rendered off the event loop (by the caller, `reader.Reader`); this module decides
how many are being built at once and which are kept:

- `ByteBudget`: a semaphore counted in bytes. A big body is built only once the bytes it will
  hold are free, first come first served, so forty reads of big elements at once build a few
  at a time instead of forty copies side by side.
- `BodyCache`: bodies by key (the store key of the page they come from, and the URI's
  `shape`: what was read, with every parameter that shapes it; `plan`). A read of a key
  being built waits for that build instead of starting its own, so forty concurrent reads of
  one element render it once; bodies of at least `keep_min` bytes are kept afterwards, the
  least recently read leaving first, within `capacity` bytes.
"""

from __future__ import annotations

import sys
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

CACHE_BYTES = 64 * 1024 * 1024
"""Rendered bodies kept at most, in bytes of memory."""
BIG_BYTES = 64 * 1024
"""A body this big is built within the budget and kept; a smaller one costs less to render
again than to remember."""


class ByteBudget:
    """At most `capacity` bytes held at once; a request for more holds all of it."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self.held = 0
        self._waiting: deque[tuple[int, anyio.Event]] = deque()

    @asynccontextmanager
    async def hold(self, size: int) -> AsyncIterator[None]:
        """Wait until `size` bytes are free (after whoever waited before), hold them inside."""
        size = min(max(size, 0), self.capacity)
        if self._waiting or self.held + size > self.capacity:
            turn = (size, anyio.Event())
            self._waiting.append(turn)
            try:
                await turn[1].wait()
            except BaseException:
                if turn[1].is_set():  # granted as it was cancelled: give it back
                    self._release(size)
                else:
                    self._waiting.remove(turn)
                    self._grant()  # whoever waited behind it may fit now
                raise
        else:
            self.held += size
        try:
            yield
        finally:
            self._release(size)

    def _release(self, size: int) -> None:
        self.held -= size
        self._grant()

    def _grant(self) -> None:
        while self._waiting and self.held + self._waiting[0][0] <= self.capacity:
            size, event = self._waiting.popleft()
            self.held += size
            event.set()


@dataclass
class _Build:
    done: anyio.Event = field(default_factory=anyio.Event)
    body: str | None = None


class BodyCache:
    """Bodies by key: one build per key at a time, big ones kept (least recently read out)."""

    def __init__(self, capacity: int = CACHE_BYTES, keep_min: int = BIG_BYTES) -> None:
        self.capacity = capacity
        self.keep_min = keep_min
        self.held = 0
        self._bodies: OrderedDict[Hashable, str] = OrderedDict()
        self._building: dict[Hashable, _Build] = {}

    async def get(self, key: Hashable, build: Callable[[], Awaitable[str]]) -> str:
        """The body of `key`: kept, being built (waited for), or built now by `build`."""
        while (pending := self._building.get(key)) is not None:
            await pending.done.wait()
            if pending.body is not None:
                return pending.body
            # that build failed or its reader went away: this reader builds it
        found = self._bodies.get(key)
        if found is not None:
            self._bodies.move_to_end(key)
            return found
        pending = self._building[key] = _Build()
        try:
            pending.body = await build()
            self._keep(key, pending.body)
            return pending.body
        finally:
            del self._building[key]
            pending.done.set()

    def _keep(self, key: Hashable, body: str) -> None:
        size = sys.getsizeof(body)
        if size < self.keep_min or size > self.capacity // 4:
            return
        self._bodies[key] = body
        self.held += size
        while self.held > self.capacity:
            _, old = self._bodies.popitem(last=False)
            self.held -= sys.getsizeof(old)
