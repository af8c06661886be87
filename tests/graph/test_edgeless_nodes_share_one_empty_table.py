"""A node without out-edges (or in-edges) shares one read-only empty adjacency instead of
a dict of its own: most pods have no out-edges at all. Its first edge gives it a dict, its
last one leaving (an unlink, or the neighbour's removal) gives the shared one back, and
a write that bypasses the store fails instead of reaching every edgeless node."""

from __future__ import annotations

import pytest

from netsight.graph.store.digraph import NO_EDGES, predecessors, successors
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, endpoint_slice, namespace, pod, service


def test_edgeless_nodes_share_no_edges_until_their_first_edge() -> None:
    store = GraphStore()
    apply_all(store, namespace("shop"), pod("a", ns="shop"), pod("b", ns="shop"))
    graph = store.state.graph

    assert successors(graph)["Pod/shop/a"] is NO_EDGES
    assert successors(graph)["Pod/shop/b"] is NO_EDGES
    assert predecessors(graph)["Namespace/shop"] is NO_EDGES
    assert set(predecessors(graph)["Pod/shop/a"]) == {"Namespace/shop"}
    assert set(successors(graph)["Namespace/shop"]) == {"Pod/shop/a", "Pod/shop/b"}
    assert NO_EDGES == {}


def test_last_edge_gone_gives_the_shared_table_back() -> None:
    store = GraphStore()
    slice_ = endpoint_slice("web-1", "web", ["a"], ns="shop")
    apply_all(store, service("web", ns="shop"), pod("a", ns="shop"), slice_)
    graph = store.state.graph
    assert predecessors(graph)["Pod/shop/a"] is not NO_EDGES

    store.apply("DELETED", slice_)

    assert predecessors(graph)["Pod/shop/a"] is NO_EDGES
    assert predecessors(graph)["Service/shop/web"] is NO_EDGES
    assert store.state.graph.number_of_edges() == 0

    store.apply("ADDED", namespace("shop"))
    store.apply("DELETED", namespace("shop"))
    assert predecessors(graph)["Pod/shop/a"] is NO_EDGES
    assert predecessors(graph)["Service/shop/web"] is NO_EDGES


def test_an_edge_written_around_the_store_fails_loudly() -> None:
    store = GraphStore()
    apply_all(store, pod("a", ns="shop"), pod("b", ns="shop"))

    with pytest.raises(TypeError):
        store.state.graph.add_edge("Pod/shop/a", "Pod/shop/b")
    assert successors(store.state.graph)["Pod/shop/b"] is NO_EDGES
    assert not NO_EDGES
