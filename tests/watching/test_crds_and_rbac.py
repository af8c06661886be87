"""Providers come and go with their CRDs; a kind RBAC forbids is reported, not fatal."""

from __future__ import annotations

import asyncio

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.model.kinds import Kind
from netsight.graph.store.sync_status import SyncState
from tests.watching.conftest import Cluster, crd, eventually, namespace, pod

pytestmark = pytest.mark.anyio



async def test_a_provider_appears_and_disappears_with_its_crds(cluster: Cluster) -> None:
    state = cluster.sim.state
    changes: list[set[str]] = []
    cluster.watcher.on_providers_changed = changes.append
    state.apply([namespace("x")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert cluster.watcher.providers == set()

    state.apply([crd("gateway.networking.k8s.io", "HTTPRoute", "httproutes"),
                 crd("example.com", "Widget", "widgets")])
    state.apply([{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                  "metadata": {"name": "r", "namespace": "x"}, "spec": {"hostnames": ["a"]}},
                 {"apiVersion": "example.com/v1", "kind": "Widget",
                  "metadata": {"name": "w", "namespace": "x"}}])
    await eventually(lambda: cluster.store.view().exists("HTTPRoute/x/r"))
    assert cluster.watcher.providers == {"gateway-api"}
    assert not cluster.store.view().exists("Widget/x/w"), "not a networking provider"
    record = cluster.store.view().get("HTTPRoute/x/r")
    assert record is not None
    assert record.spec == {"hostnames": ["a"]}  # type: ignore[attr-defined]

    crds = state.registry.for_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crds is not None
    state.delete(crds, None, "httproutes.gateway.networking.k8s.io")
    await eventually(lambda: not cluster.store.view().exists("HTTPRoute/x/r"))
    await eventually(lambda: cluster.watcher.providers == set())
    assert changes == [{"gateway-api"}, set()]
    assert cluster.store.sync["HTTPRoute"].state is SyncState.STOPPED


async def test_a_forbidden_kind_is_reported_and_the_rest_keeps_working(
        cluster: Cluster) -> None:
    state = cluster.sim.state
    state.faults.forbidden.add("networkpolicies")
    state.apply([namespace("x"), pod("a")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    status = cluster.store.sync[Kind.NETWORK_POLICY]
    assert status.state is SyncState.FORBIDDEN
    assert "forbidden" in (status.last_error or "")
    assert cluster.watcher.ready, "readiness does not wait for a forbidden kind"
    assert cluster.store.view().exists("Pod/x/a")
    # RBAC granted later: the informer picks the kind up on its next try.
    state.faults.forbidden.clear()
    await eventually(lambda: cluster.store.sync[Kind.NETWORK_POLICY].state is SyncState.SYNCED)


async def test_cluster_scoped_custom_objects_survive_a_relist(cluster: Cluster) -> None:
    state = cluster.sim.state
    mesh = crd("kuma.io", "Mesh", "meshes")
    mesh["spec"]["scope"] = "Cluster"
    state.apply([namespace("x"), mesh])
    state.apply([{"apiVersion": "kuma.io/v1", "kind": "Mesh", "metadata": {"name": "default"},
                  "spec": {"mtls": {"enabledBackend": "ca-1"}}}])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    view = cluster.store.view()
    await eventually(lambda: view.exists("Mesh/default"))
    # Listed is not watching yet: expire only once the Mesh watch is open.
    await eventually(lambda: any(w.rtype.kind == "Mesh" for w in state.watchers))
    state.expire_all_watches()  # every informer re-lists and reconciles
    await eventually(lambda: cluster.store.sync["Mesh"].relists >= 1)
    await asyncio.sleep(0.2)
    assert view.exists("Mesh/default")
    assert not view.exists("Mesh/default/default")
    assert [c.type.value for c in view.changes_since(0) if "Mesh/" in c.key] == ["ADDED"]


async def test_services_are_not_judged_while_pods_cannot_be_read(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.faults.forbidden.add("pods")
    state.apply([namespace("x"), pod("a", app="web"),
                 {"apiVersion": "v1", "kind": "Service",
                  "metadata": {"name": "web", "namespace": "x"},
                  "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    answer = to_json(call_tool(cluster.store.view(), "diagnose_service",
                               {"service": "x/web"}), detail=False)
    assert answer["findings"] == [], "an unreadable kind is not an empty one"
    assert any("forbidden" in note for note in answer["notEvaluated"])
