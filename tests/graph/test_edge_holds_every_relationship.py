"""One pair of objects related in several ways has one edge carrying each relationship,
and losing one relationship keeps the others."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, endpoint_slice, rels, service

SLICE, SERVICE = "EndpointSlice/default/web-abc", "Service/default/web"


def test_owned_slice_has_belongs_to_and_owned_by_on_one_edge() -> None:
    store = GraphStore()
    apply_all(store, service("web"), endpoint_slice("web-abc", "web", [], owned=True))

    data = store.state.graph.edges[SLICE, SERVICE]
    assert data == {Rel.BELONGS_TO: True, Rel.OWNED_BY: True}
    assert store.state.graph.number_of_edges() == 1


def test_same_edge_when_the_slice_arrives_first() -> None:
    store = GraphStore()
    apply_all(store, endpoint_slice("web-abc", "web", [], owned=True), service("web"))

    assert rels(store, SLICE, SERVICE) == {Rel.BELONGS_TO, Rel.OWNED_BY}


def test_dropping_the_owner_reference_keeps_belongs_to() -> None:
    store = GraphStore()
    apply_all(store, service("web"), endpoint_slice("web-abc", "web", [], owned=True))
    store.apply("MODIFIED", endpoint_slice("web-abc", "web", []))

    assert rels(store, SLICE, SERVICE) == {Rel.BELONGS_TO}

    unlabelled = endpoint_slice("web-abc", "web", [], owned=True)
    del unlabelled["metadata"]["labels"]
    store.apply("MODIFIED", unlabelled)
    assert rels(store, SLICE, SERVICE) == {Rel.OWNED_BY}

    store.apply("MODIFIED", {**unlabelled, "metadata": {"name": "web-abc"}})
    assert rels(store, SLICE, SERVICE) == set()
    assert (SLICE, SERVICE) not in store.state.graph.edges
