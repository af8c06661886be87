"""Deleting a Service removes every edge to and from it; adding it back restores them all,
both its own selections and the references other objects make to it."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, endpoint_slice, namespace, pod, service
from tests.graph.snapshots import snapshot

SERVICE = "Service/shop/web"


def ingress() -> dict[str, object]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
            "service": {"name": "web", "port": {"number": 80}}}}]}}]},
    }


def test_delete_then_readd_service_restores_edges() -> None:
    store = GraphStore()
    apply_all(
        store,
        namespace("shop"),
        pod("web-1", ns="shop", labels={"app": "web"}),
        pod("db", ns="shop", labels={"app": "db"}),
        service("web", ns="shop", selector={"app": "web"}),
        endpoint_slice("web-abc", "web", ["web-1"], ns="shop", owned=True),
        ingress(),
    )
    before = snapshot(store.state)
    graph = store.state.graph
    edges_of_service = {(u, v, rels) for u, v, rels in store.state.edges() if SERVICE in (u, v)}
    assert edges_of_service == {
        ("Namespace/shop", SERVICE, frozenset({Rel.CONTAINS})),
        (SERVICE, "Pod/shop/web-1", frozenset({Rel.SELECTS})),
        ("EndpointSlice/shop/web-abc", SERVICE, frozenset({Rel.BELONGS_TO, Rel.OWNED_BY})),
        ("Ingress/shop/web", SERVICE, frozenset({Rel.ROUTES_TO})),
    }

    store.apply("DELETED", service("web", ns="shop"))
    assert SERVICE not in graph
    assert store.state.selectors == {}
    assert not any(SERVICE in (u, v) for u, v, _ in store.state.edges())
    assert store.state.selected == {}

    store.apply("ADDED", service("web", ns="shop", selector={"app": "web"}))
    assert snapshot(store.state) == before
