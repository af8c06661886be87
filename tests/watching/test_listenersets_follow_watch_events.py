"""ListenerSets (GEP-1713) are watched once their CRDs exist, both shapes: ListenerSet of
gateway.networking.k8s.io/v1 and XListenerSet of gateway.networking.x-k8s.io/v1alpha1; the
answers follow their watch events and those of the Gateway that takes them."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.model.kinds import Rel
from tests.watching.conftest import Cluster, crd, eventually, namespace

pytestmark = pytest.mark.anyio

V1 = "gateway.networking.k8s.io/v1"
X = "gateway.networking.x-k8s.io/v1alpha1"



CRDS = [crd("gateway.networking.k8s.io", "GatewayClass", "gatewayclasses", scope="Cluster"),
        crd("gateway.networking.k8s.io", "Gateway", "gateways"),
        crd("gateway.networking.k8s.io", "ListenerSet", "listenersets"),
        crd("gateway.networking.x-k8s.io", "XListenerSet", "xlistenersets", "v1alpha1")]


def gateway(allowed: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"gatewayClassName": "eg",
                            "listeners": [{"name": "web", "port": 80, "protocol": "HTTP"}]}
    if allowed is not None:
        spec["allowedListeners"] = {"namespaces": {"from": allowed}}
    return {"apiVersion": V1, "kind": "Gateway", "metadata": {"name": "edge", "namespace": "x"},
            "spec": spec}


def listener_set(api_version: str, kind: str, name: str, port: int) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "x"},
            "spec": {"parentRef": {"name": "edge"},
                     "listeners": [{"name": name, "port": port, "protocol": "HTTP"}]}}


def accepted(cluster: Cluster) -> dict[str, str]:
    answer = to_json(call_tool(cluster.store.view(), "check_gateway_status",
                               {"gateway": "x/edge"}), detail=True)
    (state,) = answer["gateways"]
    return {s["listenerSet"]: s["conditions"]["Accepted"]["reason"]
            for s in state.get("listenerSets", [])}


async def test_listenersets_of_both_shapes_are_watched_and_answered(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), *CRDS])
    state.apply([{"apiVersion": V1, "kind": "GatewayClass", "metadata": {"name": "eg"},
                  "spec": {"controllerName": "example.com/eg"}},
                 gateway(None),
                 listener_set(V1, "ListenerSet", "shop", 8080),
                 listener_set(X, "XListenerSet", "blog", 8081)])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    await eventually(lambda: cluster.store.view().exists("XListenerSet/x/blog"))
    view = cluster.store.view()
    assert view.exists("ListenerSet/x/shop")
    assert {r.key for r in view.neighbors("Gateway/x/edge", Rel.ATTACHES_TO, incoming=True)} \
        == {"ListenerSet/x/shop", "XListenerSet/x/blog"}
    # The Gateway takes no ListenerSets until its allowedListeners says so.
    assert accepted(cluster) == {"x/blog": "NotAllowed", "x/shop": "NotAllowed"}

    gateways = state.registry.for_kind(V1, "Gateway")
    assert gateways is not None
    state.patch(gateways, "x", "edge", {"spec": {"allowedListeners":
                                                 {"namespaces": {"from": "Same"}}}},
                "application/merge-patch+json")
    await eventually(lambda: accepted(cluster) == {"x/blog": "Accepted", "x/shop": "Accepted"})

    # A ListenerSet whose listener now takes the Gateway's port and hostname loses it.
    sets = state.registry.for_kind(X, "XListenerSet")
    assert sets is not None
    state.patch(sets, "x", "blog", {"spec": {"listeners": [
        {"name": "blog", "port": 80, "protocol": "HTTP"}]}}, "application/merge-patch+json")
    await eventually(lambda: accepted(cluster)["x/blog"] == "ListenersNotValid")
    state.delete(sets, "x", "blog")
    await eventually(lambda: accepted(cluster) == {"x/shop": "Accepted"})
