"""While the informers run, the collector's keeper also gives the heap's free pages back to
the OS every so often: a block freed below live ones (a hash table rebuilt under churn)
would otherwise stay in RSS as a hole in glibc's heap (netsight/graph/runtime/allocator.py)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest

from netsight.graph.runtime.allocator import heap_usage, release_free_memory
from tests.graph.keeping import keeper

pytestmark = pytest.mark.anyio

MiB = 1 << 20


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()


def rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def run_for(seconds: float, **kwargs: Any) -> tuple[int, int]:
    """RSS with a 20 MiB hole in the heap, and after the keeper ran for ``seconds``."""
    # Free pages earlier tests left resident would take the blocks below without RSS
    # rising (nothing for the rise to see): give them back first.
    release_free_memory()
    async with keeper(interval=0.05, full_every=3600, **kwargs):  # it has read RSS
        # Blocks small enough for the heap (below glibc's mapping threshold), then one
        # kept after them: freed, they are a hole below a live block, which glibc keeps.
        blocks = [bytearray(32 * 1024) for _ in range(640)]
        pinned = bytearray(32 * 1024)
        del blocks
        with_hole = rss()
        await asyncio.sleep(seconds)
    assert len(pinned) == 32 * 1024
    return with_hole, rss()


@pytest.fixture(autouse=True)
def glibc() -> None:
    if heap_usage() is None:
        pytest.skip("glibc only")


async def test_a_hole_left_in_the_heap_leaves_rss_at_the_next_release() -> None:
    with_hole, after = await run_for(0.2, release_every=0.0)
    assert after > with_hole - 4 * MiB
    with_hole, after = await run_for(0.2, release_every=0.05)
    assert after < with_hole - 12 * MiB


async def test_rss_risen_since_the_last_release_brings_the_next_one_forward() -> None:
    # RSS is looked at once a second; the timer alone would wait an hour.
    with_hole, after = await run_for(1.3, release_every=3600, release_rise=1 << 40)
    assert after > with_hole - 4 * MiB
    with_hole, after = await run_for(1.3, release_every=3600, release_rise=8 * MiB)
    assert after < with_hole - 12 * MiB
