"""GraphView.out_edges lists every relationship out of a node in one pass (stored and
selector edges alike), kind_generation tells when a kind last changed, and changes_since
reads the change ring oldest first, or newest first."""

from __future__ import annotations

from itertools import pairwise

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, endpoint_slice, namespace, pod, service


def cluster() -> GraphStore:
    store = GraphStore()
    apply_all(store, namespace("shop"), pod("web-1", ns="shop", labels={"app": "web"}),
              pod("web-2", ns="shop", labels={"app": "web"}),
              service("web", ns="shop", selector={"app": "web"}),
              endpoint_slice("web-abc", "web", ["web-1"], ns="shop", owned=True))
    return store


def test_out_edges_equal_neighbors_of_every_relationship() -> None:
    store = cluster()
    view = store.view()
    for key, _, _ in store.state.edges():
        expected = {(r.key, rel) for rel in Rel for r in view.neighbors(key, rel)}
        assert set(view.out_edges(key)) == expected, key
    assert set(view.out_edges("Service/shop/web")) == {
        ("Pod/shop/web-1", Rel.SELECTS), ("Pod/shop/web-2", Rel.SELECTS)}
    assert set(view.out_edges("EndpointSlice/shop/web-abc")) == {
        ("Service/shop/web", Rel.BELONGS_TO), ("Service/shop/web", Rel.OWNED_BY),
        ("Pod/shop/web-1", Rel.TARGETS)}
    assert list(view.out_edges("Pod/shop/missing")) == []


def test_kind_generation_moves_only_with_its_kind() -> None:
    store = cluster()
    view = store.view()
    services = view.kind_generation("Service")
    assert 0 < services < store.generation
    apply_all(store, pod("web-3", ns="shop", labels={"app": "web"}))
    assert view.kind_generation("Service") == services
    assert view.kind_generation("Pod") == store.generation
    store.apply("DELETED", service("web", ns="shop"))
    assert view.kind_generation("Service") == store.generation
    assert view.kind_generation("Gateway") == 0


def test_out_edge_runs_are_out_edges_grouped_in_order() -> None:
    store = cluster()
    view = store.view()
    for key in [*(k for k, _, _ in store.state.edges()), "Pod/shop/missing"]:
        runs = [(rel, list(targets)) for rel, targets in view.out_edge_runs(key)]
        assert [(t, rel) for rel, targets in runs for t in targets] == list(view.out_edges(key))
        assert all(targets for _, targets in runs)
        assert all(a != b for (a, _), (b, _) in pairwise(runs))  # runs, not single edges
    assert [(rel, sorted(t)) for rel, t in view.out_edge_runs("Service/shop/web")] == [
        (Rel.SELECTS, ["Pod/shop/web-1", "Pod/shop/web-2"])]


def test_changes_since_reads_newest_first_when_asked() -> None:
    store = cluster()
    view = store.view()
    start = store.generation
    apply_all(store, pod("web-3", ns="shop", labels={"app": "web"}),
              pod("web-4", ns="shop", labels={"app": "web"}))
    oldest_first = [c.key for c in view.changes_since(start)]
    assert oldest_first == ["Pod/shop/web-3", "Pod/shop/web-4"]
    assert [c.key for c in view.changes_since(start, newest_first=True)] == oldest_first[::-1]
    assert [c.key for c in view.changes_since(0, newest_first=True)][:2] == \
        oldest_first[::-1]
