"""Rendered bodies: one build per key however many readers wait, big ones kept within a byte
budget; the byte budget itself."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

import anyio
import pytest

from dpe_server.read.body_cache import BodyCache, ByteBudget

pytestmark = pytest.mark.anyio

BIG = "x" * 100_000


async def test_concurrent_gets_of_one_key_build_it_once() -> None:
    cache, builds, release = BodyCache(), [], anyio.Event()

    async def build() -> str:
        builds.append(1)
        await release.wait()
        return BIG

    got: list[str] = []

    async def get() -> None:
        got.append(await cache.get("k", build))

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(get)
        await anyio.wait_all_tasks_blocked()
        release.set()
    assert len(builds) == 1
    assert got == [BIG] * 20


async def test_a_failed_build_is_tried_again_by_a_waiting_reader() -> None:
    cache, calls = BodyCache(), []
    first_started = anyio.Event()

    async def build() -> str:
        calls.append(1)
        if len(calls) == 1:
            first_started.set()
            await anyio.wait_all_tasks_blocked()
            raise RuntimeError("broken")
        return BIG

    async def failing() -> None:
        with pytest.raises(RuntimeError):
            await cache.get("k", build)

    got: list[str] = []

    async def waiting() -> None:
        await first_started.wait()
        got.append(await cache.get("k", build))

    async with anyio.create_task_group() as tg:
        tg.start_soon(failing)
        tg.start_soon(waiting)
    assert got == [BIG]
    assert len(calls) == 2


async def test_big_bodies_are_kept_and_small_ones_are_not() -> None:
    cache, builds = BodyCache(capacity=10 * 1024 * 1024, keep_min=1000), []

    async def build_big() -> str:
        builds.append("big")
        return BIG

    async def build_small() -> str:
        builds.append("small")
        return "tiny"

    for _ in range(3):
        await cache.get("big", build_big)
        await cache.get("small", build_small)
    assert builds == ["big", "small", "small", "small"]


async def test_kept_bodies_stay_within_capacity_least_recent_out() -> None:
    size = sys.getsizeof(BIG + "k")
    cache = BodyCache(capacity=4 * size + 16, keep_min=1000)  # room for four
    builds: list[str] = []

    def builder(key: str) -> Callable[[], Awaitable[str]]:
        async def build() -> str:
            builds.append(key)
            return BIG + key

        return build

    for key in ("a", "b", "c", "d", "e"):  # "a" leaves when "e" comes in
        await cache.get(key, builder(key))
    await cache.get("b", builder("b"))
    await cache.get("a", builder("a"))
    assert builds == ["a", "b", "c", "d", "e", "a"]
    assert cache.held == 4 * size


async def test_budget_holds_at_most_its_capacity() -> None:
    budget, most, inside = ByteBudget(100), [0], [0]

    async def holder() -> None:
        async with budget.hold(40):
            inside[0] += 40
            most[0] = max(most[0], inside[0])
            await anyio.wait_all_tasks_blocked()
            inside[0] -= 40

    async with anyio.create_task_group() as tg:
        for _ in range(10):
            tg.start_soon(holder)
    assert most[0] == 80
    assert budget.held == 0


async def test_budget_lets_a_request_larger_than_it_in_alone() -> None:
    budget = ByteBudget(100)
    with anyio.fail_after(5):
        async with budget.hold(10_000):
            assert budget.held == 100


async def test_budget_serves_in_order_of_arrival() -> None:
    budget, order = ByteBudget(100), []
    release = anyio.Event()

    async def first() -> None:
        async with budget.hold(50):
            await release.wait()
            order.append("first")

    async def then(name: str, size: int) -> None:
        async with budget.hold(size):
            order.append(name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(then, "large", 90)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(then, "small", 5)  # would fit beside "first", but "large" came before
        await anyio.wait_all_tasks_blocked()
        assert budget.held == 50
        release.set()
    assert order == ["first", "large", "small"]


async def test_budget_a_cancelled_waiter_lets_the_next_in() -> None:
    budget, big = ByteBudget(100), anyio.CancelScope()
    small_in = anyio.Event()

    async def big_waiter() -> None:
        with big:
            async with budget.hold(80):
                pass

    async def small() -> None:
        async with budget.hold(30):
            small_in.set()

    async with budget.hold(60), anyio.create_task_group() as tg:
        tg.start_soon(big_waiter)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(small)
        await anyio.wait_all_tasks_blocked()
        assert not small_in.is_set()  # it fits, but waits behind the 80 that came first
        big.cancel()
        with anyio.fail_after(5):
            await small_in.wait()
    assert budget.held == 0
