"""After the initial sync the informers keep the cyclic collector's work small: survivors
are refrozen each interval, and a periodic full collection still frees frozen cycles."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from netsight.graph.runtime.collector import keep_collections_young, next_wait
from tests.graph.keeping import keeper

pytestmark = pytest.mark.anyio


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()


async def run_for(seconds: float, **kwargs: float) -> None:
    async with keeper(**kwargs):
        await asyncio.sleep(seconds)


async def test_survivors_are_frozen() -> None:
    gc.unfreeze()
    keep = [Node() for _ in range(1000)]
    await run_for(0.25, interval=0.05, full_every=3600)
    assert gc.get_freeze_count() >= len(keep)
    assert all(gc.is_tracked(n) for n in keep)


async def test_full_collection_frees_cycles_that_died_frozen() -> None:
    gc.unfreeze()
    holder = [cycle()]
    strong = holder[0]()  # alive while frozen
    gc.freeze()
    del strong  # now garbage, but frozen: only a full collection sees it
    await run_for(0.2, interval=0.05, full_every=3600)
    assert holder[0]() is not None
    await run_for(0.2, interval=0.05, full_every=0.0)
    assert holder[0]() is None


async def test_cycles_that_die_young_are_freed_on_the_clock() -> None:
    # The automatic trigger is held off (as far as it goes): only the clock's young
    # collection can free the cycle.
    gc.unfreeze()
    async with keeper(interval=0.05, full_every=3600, young_threshold=1_000_000_000):
        dead = cycle()
        await asyncio.sleep(0.25)
        assert dead() is None


async def test_automatic_collections_wait_for_young_threshold_while_running() -> None:
    before = gc.get_threshold()
    async with keeper(interval=0.05, full_every=3600, young_threshold=12_345):
        assert gc.get_threshold()[::2] == (12_345, before[2])
    assert gc.get_threshold() == before


async def test_no_young_threshold_leaves_automatic_collections_alone() -> None:
    before = gc.get_threshold()
    async with keeper(interval=0.05, full_every=3600):
        assert gc.get_threshold() == before


async def test_thresholds_come_back_when_the_last_of_several_keepers_stops() -> None:
    before = gc.get_threshold()
    first = asyncio.create_task(keep_collections_young(interval=0.05, young_threshold=9_000))
    await asyncio.sleep(0)
    second = asyncio.create_task(keep_collections_young(interval=0.05, young_threshold=9_000))
    await asyncio.sleep(0)
    for task in (first, second):  # not in the reverse order of their start
        assert gc.get_threshold()[::2] == (9_000, before[2])
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert gc.get_threshold() == before


async def test_automatic_collections_take_the_young_generation_only_while_running() -> None:
    # With the loop held (no clock tick), more automatic young collections than the middle
    # generation's threshold (10 by default) run; none may take the middle generation:
    # what survived them is frozen at the next tick anyway.
    started: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    async with keeper(interval=0.05, full_every=3600, young_threshold=1_000):
        gc.callbacks.append(record)
        try:
            held = [[] for _ in range(30_000)]  # survivors: ~30 automatic young collections
        finally:
            gc.callbacks.remove(record)
    assert len(held) == 30_000
    assert len(started) > 10
    assert set(started) == {0}


def test_the_clock_slows_down_when_collections_find_little_and_speeds_up_when_busy() -> None:
    wait, waits = 0.01, []
    for _ in range(8):  # idle: every pause well under a quarter of the target
        wait = next_wait(wait, 0.00001, 0.01, 0.25, 0.00025)
        waits.append(wait)
    assert waits == [0.02, 0.04, 0.08, 0.16, 0.25, 0.25, 0.25, 0.25]
    for _ in range(3):  # busy: pauses over the target
        wait = next_wait(wait, 0.0005, 0.01, 0.25, 0.00025)
    assert wait == 0.25 / 8
    assert next_wait(wait, 0.0001, 0.01, 0.25, 0.00025) == wait  # in between: kept
    for _ in range(10):
        wait = next_wait(wait, 0.0005, 0.01, 0.25, 0.00025)
    assert wait == 0.01  # never below the shortest


async def test_an_idle_keeper_with_an_idle_interval_still_refreezes() -> None:
    gc.unfreeze()
    keep = [Node() for _ in range(1000)]
    await run_for(0.25, interval=0.01, idle_interval=0.05, full_every=3600)
    assert gc.get_freeze_count() >= len(keep)
