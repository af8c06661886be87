"""Istio routing objects are edges to the Services they act on: a VirtualService configures
the Services of its hosts and routes_to those of its destinations (http, tls, tcp), a
DestinationRule configures the Service of its host — short names completed in the object's
namespace, FQDNs parsed, wildcards and external hosts left out, pending until the Service
arrives, exported by /api/graph like every edge, and never an error for a malformed spec."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from netsight.graph.store.mesh_edges import service_key
from tests.graph.factories import apply_all, service, targets

ISTIO = "networking.istio.io/v1"
VS = "VirtualService/shop/cart"
DR = "DestinationRule/shop/cart"


def istio(kind: str, spec: object, api_version: str = ISTIO, name: str = "cart"
          ) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def test_hosts_and_destinations_become_edges() -> None:
    store = GraphStore()
    apply_all(
        store, service("cart", ns="shop"), service("cart-v2", ns="shop"),
        service("pricing", ns="payments"), service("audit", ns="ops"),
        istio("VirtualService", {
            "hosts": ["cart", "*.example.com", "shop.example.com"],
            "http": [{"route": [{"destination": {"host": "cart", "subset": "v1"},
                                 "weight": 90},
                                {"destination": {"host": "cart-v2"}, "weight": 10}]}],
            "tcp": [{"route": [{"destination": {
                "host": "pricing.payments.svc.cluster.local"}}]}],
            "tls": [{"route": [{"destination": {"host": "audit.ops.svc.cluster.local"}}]}]}),
        istio("DestinationRule", {"host": "cart", "subsets": [{"name": "v1"}]},
              api_version="networking.istio.io/v1beta1"),
    )
    assert targets(store, VS, Rel.CONFIGURES) == {"Service/shop/cart"}
    assert targets(store, VS, Rel.ROUTES_TO) == {
        "Service/shop/cart", "Service/shop/cart-v2", "Service/payments/pricing",
        "Service/ops/audit"}
    assert targets(store, DR, Rel.CONFIGURES) == {"Service/shop/cart"}
    # From the Service, what acts on it, without scanning every mesh object.
    view = store.view()
    assert {r.key for r in view.neighbors("Service/shop/cart", Rel.CONFIGURES,
                                          incoming=True)} == {VS, DR}
    assert store.state.pending == {}


def test_a_service_that_arrives_later_is_linked() -> None:
    store = GraphStore()
    apply_all(store, istio("DestinationRule", {"host": "cart.shop.svc.cluster.local"}))
    assert targets(store, DR, Rel.CONFIGURES) == set()
    apply_all(store, service("cart", ns="shop"))
    assert targets(store, DR, Rel.CONFIGURES) == {"Service/shop/cart"}


def test_other_groups_and_malformed_specs_make_no_edge_and_no_error() -> None:
    store = GraphStore()
    apply_all(
        store, service("cart", ns="shop"),
        istio("VirtualService", {"hosts": "cart", "http": [None, {"route": "cart"},
                                                           {"route": [{"destination": 7}]},
                                                           {"route": [{"destination":
                                                                       {"host": 3}}]}]}),
        istio("DestinationRule", {"host": ["cart"]}),
        istio("DestinationRule", {"host": "cart"}, api_version="example.com/v1",
              name="other"),
    )
    assert targets(store, VS, Rel.CONFIGURES) == set()
    assert targets(store, VS, Rel.ROUTES_TO) == set()
    assert targets(store, DR, Rel.CONFIGURES) == set()
    assert targets(store, "DestinationRule/shop/other", Rel.CONFIGURES) == set()
    assert store.state.pending == {}


def test_which_hosts_name_a_service() -> None:
    assert service_key("shop", "cart") == "Service/shop/cart"
    assert service_key("shop", "cart.data.svc.cluster.local") == "Service/data/cart"
    for host in ("*", "*.shop.svc.cluster.local", "cart.data", "api.example.com", "",
                 "Cart", "cart\n", "cart.data.svc.cluster.local\n", None, 7):
        assert service_key("shop", host) is None, host
