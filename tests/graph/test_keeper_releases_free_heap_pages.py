"""While the informers run, the collector's keeper also gives the heap's free pages back to
the OS every so often: a block freed below live ones (a hash table rebuilt under churn)
would otherwise stay in RSS as a hole in glibc's heap (netsight/graph/allocator.py)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from netsight.graph.allocator import heap_usage
from netsight.graph.collecting import keep_collections_young

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


async def run_for(seconds: float, release_every: float) -> None:
    task = asyncio.create_task(keep_collections_young(
        interval=0.05, full_every=3600, release_every=release_every))
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_hole_left_in_the_heap_leaves_rss_at_the_next_release() -> None:
    if heap_usage() is None:
        pytest.skip("glibc only")
    # 20 MiB of blocks small enough for the heap (below glibc's mapping threshold), then
    # one kept after them: freed, they are a hole below a live block, which glibc keeps.
    blocks = [bytearray(32 * 1024) for _ in range(640)]
    pinned = bytearray(32 * 1024)
    del blocks
    with_hole = rss()
    await run_for(0.2, release_every=0.0)
    assert rss() > with_hole - 4 * MiB
    await run_for(0.2, release_every=0.05)
    assert rss() < with_hole - 12 * MiB
    assert len(pinned) == 32 * 1024
