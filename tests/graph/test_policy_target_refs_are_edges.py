"""A policy's targetRefs (GEP-713 policy attachment) are edges policy --target_ref--> target:
BackendTLSPolicy -> Service, Envoy Gateway / kgateway / Istio policies -> Gateway, route or
GatewayClass; pending until the target arrives, moved when the spec changes, never an error
for a malformed ref."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import EventType, GraphStore
from tests.graph.factories import apply_all, service, sources, targets

V1 = "gateway.networking.k8s.io/v1"


def gateway(name: str, ns: str = "infra") -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "Gateway", "metadata": {"name": name, "namespace": ns},
            "spec": {"gatewayClassName": "eg",
                     "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}


def policy(api_version: str, kind: str, name: str, ns: str, spec: dict[str, Any]
           ) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def backend_tls(name: str, *refs: dict[str, Any], ns: str = "shop") -> dict[str, Any]:
    return policy("gateway.networking.k8s.io/v1alpha3", "BackendTLSPolicy", name, ns,
                  {"targetRefs": list(refs),
                   "validation": {"hostname": "web.example.com",
                                  "wellKnownCACertificates": "System"}})


def test_target_refs_of_every_policy_kind_become_edges() -> None:
    store = GraphStore()
    apply_all(
        store,
        {"apiVersion": V1, "kind": "GatewayClass", "metadata": {"name": "eg"},
         "spec": {"controllerName": "example.com/eg"}},
        gateway("edge"), service("web", ns="shop"),
        backend_tls("web-tls", {"group": "", "kind": "Service", "name": "web",
                                "sectionName": "https"}),
        policy("gateway.envoyproxy.io/v1alpha1", "ClientTrafficPolicy", "ctp", "infra",
               {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                "name": "edge", "sectionName": "http"}]}),
        policy("gateway.kgateway.dev/v1alpha1", "TrafficPolicy", "class-wide", "infra",
               {"targetRef": {"group": "gateway.networking.k8s.io", "kind": "GatewayClass",
                              "name": "eg"}}),
        policy("security.istio.io/v1", "AuthorizationPolicy", "deny", "infra",
               {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                "name": "edge"}], "action": "DENY"}),
    )
    assert targets(store, "BackendTLSPolicy/shop/web-tls", Rel.TARGET_REF) == {
        "Service/shop/web"}
    assert targets(store, "TrafficPolicy/infra/class-wide", Rel.TARGET_REF) == {
        "GatewayClass/eg"}
    # The Gateway's policies, without scanning every policy.
    assert sources(store, "Gateway/infra/edge", Rel.TARGET_REF) == {
        "ClientTrafficPolicy/infra/ctp", "AuthorizationPolicy/infra/deny"}


def test_target_refs_wait_for_their_targets_and_follow_spec_changes() -> None:
    store = GraphStore()
    ref = {"group": "", "kind": "Service", "name": "web"}
    apply_all(store, backend_tls("web-tls", ref))
    assert set(store.state.pending) == {"Service/shop/web"}
    apply_all(store, service("web", ns="shop"), service("api", ns="shop"))
    assert sources(store, "Service/shop/web", Rel.TARGET_REF) == {"BackendTLSPolicy/shop/web-tls"}
    apply_all(store, backend_tls("web-tls", {**ref, "name": "api"}), event=EventType.MODIFIED)
    assert sources(store, "Service/shop/web", Rel.TARGET_REF) == set()
    assert sources(store, "Service/shop/api", Rel.TARGET_REF) == {"BackendTLSPolicy/shop/web-tls"}
    store.apply(EventType.DELETED, service("api", ns="shop"))
    assert store.state.pending == {
        "Service/shop/api": {("BackendTLSPolicy/shop/web-tls", "Service/shop/api",
                              Rel.TARGET_REF)}}


def test_malformed_target_refs_make_no_edge_and_no_error() -> None:
    store = GraphStore()
    apply_all(store, backend_tls("bad", "web", {"kind": "Service"}, {"name": "web"},
                                 {"kind": "Service", "name": 5},
                                 {"kind": "Service", "name": "a/b"}),
              policy("gateway.envoyproxy.io/v1alpha1", "SecurityPolicy", "odd", "shop",
                     {"targetRef": "edge", "targetRefs": {"name": "edge"}}))
    assert targets(store, "BackendTLSPolicy/shop/bad", Rel.TARGET_REF) == set()
    assert targets(store, "SecurityPolicy/shop/odd", Rel.TARGET_REF) == set()
    assert store.state.pending == {}
    assert store.problems == {}
