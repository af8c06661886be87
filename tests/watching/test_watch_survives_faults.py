"""Disconnects, 5xx, 429 and stalled streams: the informer backs off, reconnects, catches up."""

from __future__ import annotations

import asyncio

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.model.kinds import Kind
from netsight.graph.store.sync_status import SyncState
from tests.watching.conftest import Cluster, eventually, namespace, pod

pytestmark = pytest.mark.anyio


async def test_list_5xx_and_429_are_retried_with_backoff(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a")])
    state.faults.fail(500, count=2, path_contains="/api/v1/pods")
    state.faults.fail(429, count=1, path_contains="/api/v1/pods")
    await cluster.watcher.start()
    seen: set[SyncState] = set()

    async def observe() -> None:
        while True:
            status = cluster.store.sync.get(Kind.POD)
            if status is not None:
                seen.add(status.state)
            await asyncio.sleep(0.005)

    observer = asyncio.create_task(observe())
    try:
        assert await cluster.watcher.wait_synced(10)
    finally:
        observer.cancel()
    assert cluster.store.view().exists("Pod/x/a")
    assert SyncState.RETRYING in seen
    status = cluster.store.sync[Kind.POD]
    assert status.state is SyncState.SYNCED
    assert status.down_since is None
    assert status.last_error is None


async def test_disconnect_resumes_without_losing_events(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    state.faults.fail(503, count=2, path_contains="/pods", watch_only=True)
    state.close_all_watches()
    state.apply([pod("b"), pod("c")])  # happen while the informer is reconnecting
    await eventually(lambda: cluster.kind_count(Kind.POD) == 3)
    assert cluster.store.sync[Kind.POD].relists == 0, "a resume, not a re-list"


async def test_stalled_stream_is_detected_and_replaced(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    opened = len(cluster.sim.api.watch_log)
    state.faults.stalled = True
    state.apply([pod("b")])  # swallowed by the stalled stream
    await eventually(lambda: cluster.store.sync[Kind.POD].state is SyncState.RETRYING, 5)
    assert "stalled" in (cluster.store.sync[Kind.POD].last_error or "")
    assert cluster.store.view().staleness().get(Kind.POD, -1) >= 0
    # Every answer says so while the watch is down.
    answer = to_json(call_tool(cluster.store.view(), "list_services", {}), detail=False)
    assert Kind.POD in answer["metadata"]["stale"]
    state.faults.stalled = False
    await eventually(lambda: cluster.store.view().exists("Pod/x/b"), 5)
    assert len(cluster.sim.api.watch_log) > opened
    await eventually(lambda: cluster.store.sync[Kind.POD].state is SyncState.SYNCED)
    assert Kind.POD not in cluster.store.view().staleness()
    # The stall held every kind's stream; each recovers on its own inactivity timeout.
    await eventually(lambda: not cluster.store.view().staleness())
    answer = to_json(call_tool(cluster.store.view(), "list_services", {}), detail=False)
    assert "stale" not in answer["metadata"]
