"""A Namespace CONTAINS every object in it, whichever arrives first; deleting the Namespace
object drops the edges and keeps the objects."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, namespace, network_policy, pod, service, targets

SHOP_OBJECTS = {"Pod/shop/a", "Service/shop/web", "NetworkPolicy/shop/deny"}


def objects() -> list[dict[str, object]]:
    return [
        pod("a", ns="shop"),
        service("web", ns="shop"),
        network_policy("deny", ns="shop"),
        pod("a", ns="other"),
    ]


def test_namespace_arriving_after_its_objects_contains_them() -> None:
    store = GraphStore()
    apply_all(store, *objects())
    assert {(u, v) for u, v, _ in store.state.edges()} == {
        ("NetworkPolicy/shop/deny", "Pod/shop/a")}

    store.apply("ADDED", namespace("shop"))

    assert targets(store, "Namespace/shop", Rel.CONTAINS) == SHOP_OBJECTS


def test_namespace_arriving_first_contains_later_objects() -> None:
    store = GraphStore()
    store.apply("ADDED", namespace("shop"))
    apply_all(store, *objects())

    assert targets(store, "Namespace/shop", Rel.CONTAINS) == SHOP_OBJECTS


def test_deleted_namespace_object_leaves_objects_and_readding_restores_edges() -> None:
    store = GraphStore()
    apply_all(store, namespace("shop"), *objects())
    store.apply("DELETED", namespace("shop"))

    assert "Namespace/shop" not in store.state.graph
    assert set(store.state.graph) >= SHOP_OBJECTS
    assert not any(Rel.CONTAINS in d for _, _, d in store.state.graph.edges(data=True))

    store.apply("ADDED", namespace("shop", labels={"team": "shop"}))
    assert targets(store, "Namespace/shop", Rel.CONTAINS) == SHOP_OBJECTS


def test_cluster_scoped_objects_belong_to_no_namespace() -> None:
    store = GraphStore()
    ingress_class = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                     "metadata": {"name": "nginx", "namespace": "shop"}}
    apply_all(store, namespace("shop"), ingress_class)

    assert "IngressClass/nginx" in store.state.graph
    assert targets(store, "Namespace/shop", Rel.CONTAINS) == set()
