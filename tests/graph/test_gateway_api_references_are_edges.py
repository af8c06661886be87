"""Gateway API references by name are edges: route -> parent (Gateway, ListenerSet, or a
Service for mesh routing) and ListenerSet -> Gateway as attaches_to, route -> backend Service as
routes_to, Gateway -> GatewayClass as uses_class — with the API's defaults, pending until the
target arrives, and never an error for a malformed spec."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, service, targets

V1 = "gateway.networking.k8s.io/v1"
ROUTE = "HTTPRoute/shop/web"


def gateway(name: str, ns: str = "infra", class_name: object = "eg") -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "Gateway", "metadata": {"name": name, "namespace": ns},
            "spec": {"gatewayClassName": class_name,
                     "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}


def route(spec: dict[str, Any], kind: str = "HTTPRoute") -> dict[str, Any]:
    return {"apiVersion": V1, "kind": kind, "metadata": {"name": "web", "namespace": "shop"},
            "spec": spec}


def test_parents_backends_and_classes_become_edges() -> None:
    store = GraphStore()
    apply_all(
        store,
        {"apiVersion": V1, "kind": "GatewayClass", "metadata": {"name": "eg"},
         "spec": {"controllerName": "example.com/eg"}},
        gateway("public"), gateway("local", ns="shop"), service("web", ns="shop"),
        service("api", ns="other"), service("mesh", ns="shop"),
        route({"parentRefs": [{"name": "public", "namespace": "infra"}, {"name": "local"},
                              {"group": "", "kind": "Service", "name": "mesh"}],
               "rules": [{"backendRefs": [{"name": "web", "port": 80}]},
                         {"backendRefs": [{"name": "api", "namespace": "other", "port": 80},
                                          {"group": "example.com", "kind": "Bucket",
                                           "name": "b"}]}]}),
    )
    assert targets(store, ROUTE, Rel.ATTACHES_TO) == {
        "Gateway/infra/public", "Gateway/shop/local", "Service/shop/mesh"}
    assert targets(store, ROUTE, Rel.ROUTES_TO) == {"Service/shop/web", "Service/other/api"}
    assert targets(store, "Gateway/infra/public", Rel.USES_CLASS) == {"GatewayClass/eg"}
    # The Gateway's routes, without scanning every route.
    view = store.view()
    assert [r.key for r in view.neighbors("Gateway/infra/public", Rel.ATTACHES_TO,
                                          incoming=True)] == [ROUTE]
    # A backend of a kind netsight does not know waits, like any reference.
    assert set(store.state.pending) == {"Bucket/shop/b"}


def test_references_wait_for_their_targets() -> None:
    store = GraphStore()
    apply_all(store, route({"parentRefs": [{"name": "gw"}],
                            "rules": [{"backendRefs": [{"name": "web"}]}]}, kind="GRPCRoute"))
    assert targets(store, "GRPCRoute/shop/web", Rel.ATTACHES_TO) == set()
    apply_all(store, gateway("gw", ns="shop"), service("web", ns="shop"))
    assert targets(store, "GRPCRoute/shop/web", Rel.ATTACHES_TO) == {"Gateway/shop/gw"}
    assert targets(store, "GRPCRoute/shop/web", Rel.ROUTES_TO) == {"Service/shop/web"}


def test_malformed_specs_make_no_edge_and_no_error() -> None:
    store = GraphStore()
    apply_all(store, gateway("gw", ns="shop", class_name=7),
              route({"parentRefs": ["gw", {"name": 3}, {"name": "gw", "kind": 5}],
                     "rules": [None, {"backendRefs": "web"}, {"backendRefs": [[]]}]}))
    assert targets(store, ROUTE, Rel.ATTACHES_TO) == set()
    assert targets(store, "Gateway/shop/gw", Rel.USES_CLASS) == set()
    assert store.state.pending == {}


def test_null_fields_take_the_defaults() -> None:
    store = GraphStore()
    apply_all(store, gateway("gw", ns="shop"),
              route({"parentRefs": [{"name": "gw", "namespace": None, "kind": None}]}))
    assert targets(store, ROUTE, Rel.ATTACHES_TO) == {"Gateway/shop/gw"}


def test_other_groups_named_gateway_are_not_gateway_api() -> None:
    store = GraphStore()
    apply_all(store, {"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
                      "metadata": {"name": "gw", "namespace": "shop"},
                      "spec": {"gatewayClassName": "eg"}})
    assert store.state.pending == {}


def test_listenersets_attach_to_their_gateway_and_routes_to_listenersets() -> None:
    store = GraphStore()
    x = "gateway.networking.x-k8s.io/v1alpha1"
    apply_all(
        store, gateway("public"),
        # ParentGatewayReference defaults: group gateway.networking.k8s.io, kind Gateway, the
        # ListenerSet's namespace unless given.
        {"apiVersion": V1, "kind": "ListenerSet", "metadata": {"name": "ls", "namespace": "shop"},
         "spec": {"parentRef": {"name": "public", "namespace": "infra"}}},
        {"apiVersion": x, "kind": "XListenerSet", "metadata": {"name": "xls", "namespace": "infra"},
         "spec": {"parentRef": {"name": "public"}}},
        {"apiVersion": V1, "kind": "ListenerSet", "metadata": {"name": "bad", "namespace": "shop"},
         "spec": {"parentRef": "public"}},
        route({"parentRefs": [{"kind": "ListenerSet", "name": "ls"},
                              {"group": "gateway.networking.x-k8s.io", "kind": "XListenerSet",
                               "name": "xls", "namespace": "infra"}]}),
    )
    assert targets(store, "ListenerSet/shop/ls", Rel.ATTACHES_TO) == {"Gateway/infra/public"}
    assert targets(store, "XListenerSet/infra/xls", Rel.ATTACHES_TO) == {"Gateway/infra/public"}
    assert targets(store, "ListenerSet/shop/bad", Rel.ATTACHES_TO) == set()
    assert targets(store, ROUTE, Rel.ATTACHES_TO) == {"ListenerSet/shop/ls",
                                                      "XListenerSet/infra/xls"}
    assert set(store.state.pending) == {"GatewayClass/eg"}  # the Gateway's, not in the input
