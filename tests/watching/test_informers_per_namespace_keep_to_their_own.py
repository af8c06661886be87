"""Watching chosen namespaces: one informer per kind and namespace, each listing and
watching its own namespace's collection, reconciling only its own objects on a re-list,
and reporting in a status of its own that the kind's status aggregates."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.store.live import EventType
from netsight.graph.store.sync_status import KindStatus, NamespacedKindStatus, SyncState
from tests.watching.conftest import FAST, Cluster, eventually, namespace, pod, service

pytestmark = pytest.mark.anyio


def scoped(cluster: Cluster) -> ClusterWatcher:
    cluster.watcher = ClusterWatcher(cluster.transport, cluster.store, FAST,
                                     namespaces=("a", "b"))
    return cluster.watcher


async def test_a_relist_deletes_only_what_its_own_namespace_lost(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("a"), namespace("b"), namespace("c"),
                 pod("p1", "a"), pod("p2", "b"), pod("p3", "c")])
    watcher = scoped(cluster)
    await watcher.start()
    assert await watcher.wait_synced(5)
    store = cluster.store
    assert sorted(r.key for r in store.view().for_each("Pod")) == ["Pod/a/p1", "Pod/b/p2"]
    await eventually(lambda: {p for p, _ in cluster.sim.api.watch_log if p.endswith("/pods")}
                     == {"/api/v1/namespaces/a/pods", "/api/v1/namespaces/b/pods"})

    # An object the cluster no longer has, in a; each namespace's informer re-lists.
    store.apply(EventType.ADDED, pod("gone", "a"))
    pods = {i.namespace: i for (kind, _), (i, _) in watcher.informers.items()
            if kind.kind == "Pod"}
    pods["b"].relist_soon("test")
    await eventually(lambda: pods["b"].status.state is SyncState.SYNCED
                     and pods["b"].status.relists == 1)
    assert store.view().exists("Pod/a/gone"), "b's re-list must leave a's objects alone"
    assert store.view().exists("Pod/a/p1")
    pods["a"].relist_soon("test")
    await eventually(lambda: not store.view().exists("Pod/a/gone"))
    assert sorted(r.key for r in store.view().for_each("Pod")) == ["Pod/a/p1", "Pod/b/p2"]
    status = store.sync["Pod"]
    assert isinstance(status, NamespacedKindStatus)
    assert sorted(status.parts) == ["a", "b"]
    assert status.relists == 2


async def test_one_namespace_forbidden_makes_the_kind_unreadable(cluster: Cluster) -> None:
    state, access = cluster.sim.state, cluster.sim.access
    state.apply([namespace("a"), namespace("b"), pod("p1", "a"), service("s", "a")])
    # sim-token's own account, cut down to: everything in a, all but Services in b.
    account = "system:serviceaccount:netsight:netsight"
    access.rules.clear()
    access.allow(user=account, verbs=("get", "list", "watch"), resources=("*",),
                 namespaces=("a",))
    access.allow(user=account, verbs=("get", "list", "watch"), resources=(
        "pods", "endpointslices", "networkpolicies", "ingresses", "secrets", "configmaps"),
        namespaces=("b",))
    access.enforce = True
    watcher = scoped(cluster)
    await watcher.start()
    assert await watcher.wait_synced(5)
    view = cluster.store.view()
    assert view.unreadable("Pod") is None
    assert view.exists("Service/a/s"), "what a's informer listed stays"
    reason = view.unreadable("Service")
    assert reason is not None
    assert 'in b: services is forbidden' in reason
    await eventually(lambda: view.not_visible() == [
        "CustomResourceDefinition", "IngressClass", "Namespace", "Service"])
    assert watcher.ready


def test_a_kind_is_as_current_as_its_least_current_namespace() -> None:
    status = NamespacedKindStatus("Pod", {
        "a": KindStatus("Pod", SyncState.SYNCED, synced_at=10.0, relists=1, events=5),
        "b": KindStatus("Pod", SyncState.SYNCING)})
    assert status.state is SyncState.SYNCING
    assert status.synced_at is None
    assert not status.settled
    status.parts["b"] = KindStatus("Pod", SyncState.RETRYING, "HTTP 500", down_since=3.0,
                                   synced_at=8.0, events=2)
    assert status.state is SyncState.RETRYING
    assert (status.synced_at, status.down_since) == (8.0, 3.0)
    assert status.last_error == "in b: HTTP 500"
    assert (status.relists, status.events) == (1, 7)
    status.parts["a"].state = SyncState.FORBIDDEN
    assert status.state is SyncState.FORBIDDEN
    assert status.settled is False  # b is still retrying
    status.parts["a"].state = status.parts["b"].state = SyncState.STOPPED
    assert status.state is SyncState.STOPPED


async def test_namespaces_it_may_only_get_are_read_again_and_again(cluster: Cluster) -> None:
    state, access = cluster.sim.state, cluster.sim.access
    state.apply([namespace("a"), namespace("c")])
    account = "system:serviceaccount:netsight:netsight"
    access.rules.clear()
    access.allow(user=account, verbs=("get", "list", "watch"), resources=("*",),
                 namespaces=("a", "b"))  # b does not exist
    access.enforce = True
    cluster.watcher = watcher = ClusterWatcher(
        cluster.transport, cluster.store, replace(FAST, namespace_poll=0.05),
        namespaces=("a", "b"))
    await watcher.start()
    assert await watcher.wait_synced(5)
    view = cluster.store.view()
    await eventually(lambda: view.unreadable("Namespace") is None)
    assert [r.key for r in view.for_each("Namespace")] == ["Namespace/a"]
    relabelled = namespace("a")
    relabelled["metadata"]["labels"] = {"team": "a"}
    state.apply([relabelled, namespace("b")])
    await eventually(lambda: sorted((r.name, dict(r.labels))
                                    for r in view.for_each("Namespace")) == [
        ("a", {"team": "a"}), ("b", {})])
    assert not view.exists("Namespace/c")
