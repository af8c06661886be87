"""An API server restarted on storage restored to an older resourceVersion (etcd from a
backup): a watch from the newer version the informers hold would be accepted and silent, so
objects deleted by the restore would stay in the graph as ghosts. Before resuming, the
informers ask for a list no older than their version; "Too large resource version" makes
them re-list, and a list whose version went back makes every kind re-list."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphStore, Source
from netsight.graph.store.sync_status import SyncState
from netsight.sim.apiserver import SimConfig, SimServer
from tests.watching.conftest import FAST, Cluster, eventually, namespace, pod, service

pytestmark = pytest.mark.anyio


@pytest.fixture
async def quiet(tmp_path: Path) -> AsyncIterator[Cluster]:
    """Bookmarks rare enough that each informer's resourceVersion moves only with its own
    kind's events."""
    async with SimServer(config=SimConfig(bookmark_interval=30)) as sim:
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        store = GraphStore(source=Source.CLUSTER)
        watcher = ClusterWatcher(transport, store, FAST)
        try:
            yield Cluster(sim, store, watcher, transport)
        finally:
            await watcher.stop()
            await transport.close()


def keys(cluster: Cluster, kind: str) -> set[str]:
    return set(cluster.store.state.keys_of(kind))


def all_current(cluster: Cluster) -> bool:
    return not cluster.store.view().staleness() and all(
        s.state is SyncState.SYNCED for s in cluster.store.sync.values())


async def test_pods_gone_with_the_restore_leave_the_graph(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a")])
    backup = state.checkpoint()
    state.apply([pod(name) for name in "bcde"])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert keys(cluster, Kind.POD) == {f"Pod/x/{name}" for name in "abcde"}

    await cluster.sim.restart(backup)  # b-e never happened, as far as the server knows
    await eventually(lambda: keys(cluster, Kind.POD) == {"Pod/x/a"}, timeout=10)
    await eventually(lambda: all_current(cluster))
    assert cluster.store.sync[Kind.POD].relists >= 1
    # The informers follow the restored storage from here on.
    state.apply([pod("f")])
    await eventually(lambda: cluster.store.view().exists("Pod/x/f"))


async def test_a_version_gone_back_makes_every_kind_relist(quiet: Cluster) -> None:
    state = quiet.sim.state
    state.apply([namespace("x"), pod("a"), service("s1")])
    backup = state.checkpoint()
    state.apply([service("s2")])  # the Service informer's version: one past the backup
    state.apply([pod(name) for name in "bcde"])  # the Pod informer's: five past it
    await quiet.watcher.start()
    assert await quiet.watcher.wait_synced(5)
    await eventually(lambda: len(keys(quiet, Kind.POD)) == 5)
    await eventually(lambda: quiet.store.view().exists("Service/x/s2"))
    relists = {kind: status.relists for kind, status in quiet.store.sync.items()}

    # Restarted on the backup, the server takes three writes before the informers are
    # back: past the Service informer's version (its watch would be accepted, and miss
    # that s2 is gone), short of the Pod informer's (refused as too large).
    await quiet.sim.stop()
    quiet.sim.api.restore(backup)
    others: list[dict[str, Any]] = [namespace(f"n{i}") for i in range(3)]
    state.apply(others)
    await quiet.sim.start()

    await eventually(lambda: not quiet.store.view().exists("Service/x/s2"), timeout=10)
    await eventually(lambda: keys(quiet, Kind.POD) == {"Pod/x/a"})
    await eventually(lambda: all_current(quiet))
    assert quiet.store.sync[Kind.SERVICE].relists > relists[Kind.SERVICE]
    assert quiet.store.view().exists("Namespace/n2")
