"""A cluster's objects are other teams' input: one written oddly (a port "²" or of 5,000
digits, a list where a name belongs) is reported or left out, and every tool still answers.
Each object here once made every tool reading it fail with INTERNAL_ERROR (found by
test_tools_survive_fuzzed_arguments' graph fuzzing).
"""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.store.live import Source
from tests.analyzers.hostile import VISIBLE
from tests.conftest import store_from_yaml

LONG = "9" * 5000
ODD = {
    "istio-port": """
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: odd, namespace: shop}
spec:
  rules: [{to: [{operation: {ports: ["PORT"]}}]}]
""",
    "istio-port-level-mtls": """
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: odd, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  portLevelMtls: {"PORT": {mode: STRICT}}
""",
    "cilium-port": """
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: odd, namespace: shop}
spec:
  endpointSelector: {}
  ingress: [{toPorts: [{ports: [{port: "PORT", protocol: TCP}]}]}]
""",
    "calico-port": """
apiVersion: projectcalico.org/v3
kind: NetworkPolicy
metadata: {name: odd, namespace: shop}
spec:
  selector: all()
  ingress: [{action: Allow, protocol: TCP, destination: {ports: ["PORT", "1:PORT"]}}]
""",
    "netpol-port": """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: odd, namespace: shop}
spec:
  podSelector: {}
  policyTypes: [Ingress]
  ingress: [{ports: [{port: "PORT"}]}]
""",
    "calico-action-list": """
apiVersion: projectcalico.org/v3
kind: NetworkPolicy
metadata: {name: odd, namespace: shop}
spec:
  selector: all()
  ingress: [{action: [Allow]}]
""",
    "cilium-protocol-list": """
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: odd, namespace: shop}
spec:
  endpointSelector: {}
  ingress: [{toPorts: [{ports: [{port: "80", protocol: [TCP]}]}]}]
""",
    "cilium-entity-list": """
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: odd, namespace: shop}
spec:
  endpointSelector: {}
  ingress: [{fromEntities: [[world]]}]
""",
    "policy-target-kind-list": """
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: odd, namespace: shop}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: [Gateway], name: gw}]
""",
    "route-parent-group-list": """
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: odd, namespace: shop}
spec:
  parentRefs: [{group: [gateway.networking.k8s.io], kind: ListenerSet, name: gw}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: shop}
spec:
  parentRef: {name: gw}
  listeners: [{name: extra, port: 8081, protocol: HTTP}]
""",
}
CASES = [(name, text.replace("PORT", port)) for name, text in ODD.items()
         for port in (("²", LONG) if "PORT" in text else ("",))]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("who_can_reach", {"destination": "shop/web-1", "port": 8080}),
    ("what_can_reach", {"source": "shop/client"}),
    ("what_can_reach", {"source": "shop/client", "port": 8080}),
    ("find_blocking_policies", {"source": "shop/client", "destination": "shop/web-1",
                                "port": 8080}),
    ("reachability_matrix", {"ports": [8080]}),
    ("diff_routes", {"host": "shop.example.com", "gateway": "shop/gw"}),
    ("diff_routes", {"host": "web.shop.svc.cluster.local", "via": "mesh",
                     "source_namespace": "shop"}),
    *((tool, {}) for tool in ("analyze_config", "k8s_networkpolicies", "check_mesh_config",
                              "check_route_resolution", "check_gateway_status",
                              "gateway_list")),
]


@pytest.mark.parametrize(("name", "text"), CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                       enumerate(CASES)])
def test_an_oddly_written_object_breaks_no_tool(name: str, text: str) -> None:
    view = store_from_yaml(f"{VISIBLE}\n---\n{text}", Source.CLUSTER).view()
    assert {tool for tool, _ in CALLS} <= set(TOOLS)
    for tool, args in CALLS:
        try:
            call_tool(view, tool, args)
        except ToolFailure as failure:
            code, message = failure.code, failure.message
        else:
            code, message = None, ""
        assert code != ErrorCode.INTERNAL_ERROR, (tool, message)
