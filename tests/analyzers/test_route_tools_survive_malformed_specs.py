"""Gateway API objects keep spec and status as written: fields of the wrong shape must give
an answer (an unsupported value, a missing reference), never an internal error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, Source

GROUP = "gateway.networking.k8s.io/v1"
ODD: list[Any] = [None, 1, "x", [], {}, [1, "a", None], {"a": [None]}, True]


def objects(odd: Any) -> list[dict[str, Any]]:
    return [
        {"apiVersion": GROUP, "kind": "GatewayClass", "metadata": {"name": "c"},
         "spec": {"controllerName": odd}, "status": {"conditions": odd}},
        {"apiVersion": GROUP, "kind": "Gateway", "metadata": {"name": "g", "namespace": "a"},
         "spec": {"gatewayClassName": "c", "listeners": [
             odd, {"name": odd, "port": odd, "protocol": odd, "hostname": odd, "tls": odd,
                   "allowedRoutes": odd},
             {"name": "h", "port": 80, "protocol": "HTTPS", "tls": {"certificateRefs": odd,
                                                                    "mode": odd},
              "allowedRoutes": {"namespaces": {"from": "Selector", "selector": odd},
                                "kinds": odd}}]},
         "status": {"listeners": odd, "conditions": [odd]}},
        {"apiVersion": GROUP, "kind": "HTTPRoute", "metadata": {"name": "r", "namespace": "a"},
         "spec": {"parentRefs": [odd, {"name": "g", "sectionName": odd, "port": odd,
                                       "kind": odd, "group": odd}],
                  "hostnames": odd,
                  "rules": [odd, {"matches": odd, "filters": odd, "backendRefs": odd},
                            {"matches": [{"path": odd, "headers": odd, "method": odd,
                                          "queryParams": [odd]}],
                             "backendRefs": [odd, {"name": odd, "port": odd, "weight": odd,
                                                   "kind": odd, "namespace": odd}]}]},
         "status": {"parents": [odd, {"parentRef": odd, "conditions": odd}]}},
        {"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
         "metadata": {"name": "rg", "namespace": "a"}, "spec": {"from": odd, "to": [odd]}},
        {"apiVersion": GROUP, "kind": "GRPCRoute", "metadata": {"name": "q", "namespace": "a"},
         "spec": {"parentRefs": [{"name": "g"}], "rules": [{"matches": [{"method": odd}]}]}},
        # Backend TLS and attached policies (targetRefs) with fields of every odd shape.
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "a"},
         "spec": {"ports": [{"name": "https", "port": 443}]}},
        {"apiVersion": GROUP, "kind": "HTTPRoute", "metadata": {"name": "t", "namespace": "a"},
         "spec": {"parentRefs": [{"name": "g"}],
                  "rules": [{"backendRefs": [{"name": "s", "port": 443}]}]}},
        {"apiVersion": GROUP, "kind": "BackendTLSPolicy",
         "metadata": {"name": "b1", "namespace": "a"},
         "spec": {"targetRefs": [odd, {"kind": "Service", "name": "s", "sectionName": odd,
                                       "group": odd}],
                  "validation": odd}, "status": {"ancestors": odd}},
        {"apiVersion": GROUP, "kind": "BackendTLSPolicy",
         "metadata": {"name": "b2", "namespace": "a"},
         "spec": {"targetRefs": [{"kind": "Service", "name": "s"}],
                  "validation": {"hostname": odd, "caCertificateRefs": [odd, {"kind": odd}],
                                 "wellKnownCACertificates": odd, "subjectAltNames": odd}},
         "status": {"ancestors": [odd, {"ancestorRef": odd, "conditions": odd}]}},
        {"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "SecurityPolicy",
         "metadata": {"name": "p", "namespace": "a"},
         "spec": {"targetRef": odd, "targetRefs": [
             odd, {"group": GROUP.partition("/")[0], "kind": "Gateway", "name": "g",
                   "sectionName": odd, "namespace": odd}]},
         "status": {"ancestors": [{"ancestorRef": {"name": "g"}, "conditions": [odd]}]}},
    ]


@pytest.mark.parametrize("odd", ODD, ids=[json.dumps(o) for o in ODD])
@pytest.mark.parametrize(("tool", "args"), [
    ("check_route_resolution", {}),
    ("check_gateway_status", {}),
    ("diff_routes", {"host": "a.example.com", "path": "/x"}),
    ("analyze_config", {"analyzers": ["gateway_api"]}),
    ("gateway_get", {"gateway": "a/g"}),
    ("gateway_list", {}),
])
def test_odd_shapes_give_an_answer(odd: Any, tool: str, args: dict[str, Any]) -> None:
    store = GraphStore(source=Source.CLUSTER)
    for raw in objects(odd):
        store.apply("ADDED", raw)
    call_tool(store.view(), tool, args)  # raises ToolFailure(INTERNAL_ERROR) on a crash
