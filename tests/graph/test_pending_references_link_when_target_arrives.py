"""References by name are kept while their target is missing and linked when it arrives:
an EndpointSlice read before its Service and pods ends up with the same edges as one read
after them."""

from __future__ import annotations

import itertools

import pytest

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, endpoint_slice, pod, rels, service, targets
from tests.graph.snapshots import snapshot

SLICE = "EndpointSlice/default/web-abc"
OBJECTS = [
    endpoint_slice("web-abc", "web", ["web-1", "web-2"]),
    service("web", selector={"app": "web"}),
    pod("web-1", labels={"app": "web"}),
    pod("web-2", labels={"app": "web"}),
]


def test_slice_before_service_and_pods_is_linked_when_they_arrive() -> None:
    store = GraphStore()
    store.apply("ADDED", OBJECTS[0])

    assert store.state.graph.number_of_edges() == 0
    assert set(store.state.pending["Service/default/web"]) == {
        (SLICE, "Service/default/web", Rel.BELONGS_TO)
    }
    assert set(store.state.pending) == {
        "Service/default/web", "Pod/default/web-1", "Pod/default/web-2"
    }

    store.apply("ADDED", OBJECTS[1])
    assert rels(store, SLICE, "Service/default/web") == {Rel.BELONGS_TO}
    assert targets(store, SLICE, Rel.TARGETS) == set()
    # Linked references are edges, no longer pending.
    assert set(store.state.pending) == {"Pod/default/web-1", "Pod/default/web-2"}

    store.apply("ADDED", OBJECTS[2])
    assert targets(store, SLICE, Rel.TARGETS) == {"Pod/default/web-1"}
    store.apply("ADDED", OBJECTS[3])
    assert targets(store, SLICE, Rel.TARGETS) == {"Pod/default/web-1", "Pod/default/web-2"}


@pytest.mark.parametrize("order", list(itertools.permutations(range(len(OBJECTS)))))
def test_arrival_order_does_not_change_the_graph(order: tuple[int, ...]) -> None:
    reference = GraphStore()
    apply_all(reference, *OBJECTS)
    store = GraphStore()
    apply_all(store, *(OBJECTS[i] for i in order))

    assert snapshot(store.state) == snapshot(reference.state)


def test_deleted_target_leaves_reference_pending_and_relinks() -> None:
    store = GraphStore()
    apply_all(store, *OBJECTS)
    store.apply("DELETED", OBJECTS[2])

    assert targets(store, SLICE, Rel.TARGETS) == {"Pod/default/web-2"}
    assert (SLICE, "Pod/default/web-1", Rel.TARGETS) in store.state.pending[
        "Pod/default/web-1"
    ]

    store.apply("ADDED", OBJECTS[2])
    assert targets(store, SLICE, Rel.TARGETS) == {"Pod/default/web-1", "Pod/default/web-2"}


def test_deleting_the_referrer_forgets_its_pending_references() -> None:
    store = GraphStore()
    store.apply("ADDED", OBJECTS[0])
    store.apply("DELETED", OBJECTS[0])

    assert store.state.pending == {}
    store.apply("ADDED", OBJECTS[1])
    assert store.state.graph.number_of_edges() == 0


def test_slice_retargeted_by_modification_moves_its_edges() -> None:
    store = GraphStore()
    apply_all(store, *OBJECTS, service("api"))
    store.apply("MODIFIED", endpoint_slice("web-abc", "api", ["web-2"]))

    assert rels(store, SLICE, "Service/default/web") == set()
    assert rels(store, SLICE, "Service/default/api") == {Rel.BELONGS_TO}
    assert targets(store, SLICE, Rel.TARGETS) == {"Pod/default/web-2"}
    assert "Pod/default/web-1" not in store.state.pending
