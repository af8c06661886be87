"""410 Gone — mid-stream or when resuming — makes the informer re-list and reconcile."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphStore, Source
from netsight.sim.apiserver import SimConfig, SimServer
from tests.watching.conftest import FAST, Cluster, eventually, namespace, pod

pytestmark = pytest.mark.anyio


async def test_410_mid_stream_relists(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a"), pod("b")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    # Synced means listed; the Pod watch may not be open yet, and expiring before it
    # opens would test nothing.
    await eventually(lambda: any(w.rtype.kind == "Pod" for w in state.watchers))
    state.expire_all_watches()  # ERROR 410 on every open stream
    state.apply([pod("c")])
    await eventually(lambda: cluster.store.view().exists("Pod/x/c"))
    assert cluster.store.sync[Kind.POD].relists >= 1


async def test_objects_deleted_while_the_watch_was_down_leave_the_graph(
        cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), *(pod(f"p{i}") for i in range(10))])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    # Take the watch down and keep it down while objects go away and history is compacted.
    state.faults.fail(500, count=3, path_contains="/pods", watch_only=True)
    state.close_all_watches()
    for i in range(5):
        state.delete(pods, "x", f"p{i}")
    state.compact()
    await eventually(lambda: cluster.kind_count(Kind.POD) == 5)
    assert cluster.store.sync[Kind.POD].relists >= 1
    assert not any(cluster.store.view().exists(f"Pod/x/p{i}") for i in range(5))


@pytest.mark.parametrize("gone_as_http", [False, True])
async def test_410_when_resuming_relists(tmp_path: Path, gone_as_http: bool) -> None:
    config = SimConfig(bookmark_interval=10, gone_as_http=gone_as_http)
    async with SimServer(config=config) as sim:
        sim.state.apply([namespace("x"), pod("a")])
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        store = GraphStore(source=Source.CLUSTER)
        watcher = ClusterWatcher(transport, store, FAST)
        try:
            await watcher.start()
            assert await watcher.wait_synced(5)
            sim.state.apply([pod("b")])
            await eventually(lambda: store.view().exists("Pod/x/b"))
            # An outage: the watch ends and reconnects fail while a write happens and the
            # log is compacted past it, so the informer's resourceVersion is too old.
            sim.state.faults.fail(503, count=3, path_contains="/pods", watch_only=True)
            sim.state.close_all_watches()
            sim.state.apply([pod("c")])
            sim.state.compact()
            await asyncio.sleep(0.1)
            await eventually(lambda: store.view().exists("Pod/x/c"))
            assert store.sync[Kind.POD].relists >= 1
        finally:
            await watcher.stop()
            await transport.close()
