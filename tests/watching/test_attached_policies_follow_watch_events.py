"""From a live cluster, Envoy Gateway's policies are watched once their CRDs exist, and a
policy that arrives before its Gateway is attached the moment the Gateway does: gateway_get
answers from the watched graph, and a deleted policy leaves the answer."""

from __future__ import annotations

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from tests.watching.conftest import Cluster, crd, eventually, namespace

pytestmark = pytest.mark.anyio

GW = "gateway.networking.k8s.io"
EG = "gateway.envoyproxy.io"



POLICY = {"apiVersion": f"{EG}/v1alpha1", "kind": "ClientTrafficPolicy",
          "metadata": {"name": "clients", "namespace": "x"},
          "spec": {"targetRefs": [{"group": GW, "kind": "Gateway", "name": "edge",
                                   "sectionName": "http"}]}}
GATEWAY = {"apiVersion": f"{GW}/v1", "kind": "Gateway",
           "metadata": {"name": "edge", "namespace": "x"},
           "spec": {"gatewayClassName": "eg",
                    "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}


def policies(cluster: Cluster) -> list[str]:
    answer = to_json(call_tool(cluster.store.view(), "gateway_get", {"gateway": "x/edge"}),
                     detail=False)
    return [f"{p['kind']} {p['policy']} {p['listeners']}" for p in answer["policies"]]


async def test_a_policy_attaches_when_its_gateway_arrives_and_leaves_when_deleted(
        cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), crd(GW, "GatewayClass", "gatewayclasses", scope="Cluster"),
                 crd(GW, "Gateway", "gateways"),
                 crd(EG, "ClientTrafficPolicy", "clienttrafficpolicies", "v1alpha1")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert cluster.watcher.providers == {"gateway-api", "envoy-gateway"}

    state.apply([POLICY])
    await eventually(lambda: cluster.store.view().exists("ClientTrafficPolicy/x/clients"))
    state.apply([{"apiVersion": f"{GW}/v1", "kind": "GatewayClass", "metadata": {"name": "eg"},
                  "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"}},
                 GATEWAY])
    await eventually(lambda: cluster.store.view().exists("Gateway/x/edge"))
    assert policies(cluster) == ["ClientTrafficPolicy x/clients ['http']"]

    rtype = state.registry.for_kind(f"{EG}/v1alpha1", "ClientTrafficPolicy")
    assert rtype is not None
    state.delete(rtype, "x", "clients")
    await eventually(lambda: not cluster.store.view().exists("ClientTrafficPolicy/x/clients"))
    assert policies(cluster) == []
