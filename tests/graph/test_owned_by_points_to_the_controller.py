"""OWNED_BY links an object to its controlling owner: the reference with controller: true,
or the first reference when none is the controller."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, deployment, pod, targets

POD = "Pod/default/p"


def ref(kind: str, name: str, controller: bool | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": name}
    if controller is not None:
        result["controller"] = controller
    return result


def owned_pod(*refs: dict[str, Any]) -> dict[str, Any]:
    raw = pod("p")
    raw["metadata"]["ownerReferences"] = list(refs)
    return raw


def store_with_owners(raw: dict[str, Any]) -> GraphStore:
    store = GraphStore()
    apply_all(store, deployment("d"), deployment("rs", kind="ReplicaSet"),
              deployment("ss", kind="StatefulSet"), raw)
    return store


def test_controller_reference_wins_over_earlier_ones() -> None:
    store = store_with_owners(owned_pod(ref("StatefulSet", "ss", controller=False),
                                        ref("ReplicaSet", "rs", controller=True)))

    assert targets(store, POD, Rel.OWNED_BY) == {"ReplicaSet/default/rs"}
    record = store.state.record(POD)
    assert record is not None
    assert record.owner == ("ReplicaSet", "rs")


def test_first_reference_when_none_is_the_controller() -> None:
    store = store_with_owners(owned_pod(ref("StatefulSet", "ss"), ref("ReplicaSet", "rs")))

    assert targets(store, POD, Rel.OWNED_BY) == {"StatefulSet/default/ss"}


def test_references_without_kind_or_name_are_skipped() -> None:
    store = store_with_owners(owned_pod({"kind": "ReplicaSet"}, {"name": "rs"}, "junk",
                                        ref("Deployment", "d")))

    assert targets(store, POD, Rel.OWNED_BY) == {"Deployment/default/d"}
    assert store.problems == {}


def test_owner_in_the_same_namespace_only() -> None:
    store = GraphStore()
    other = deployment("rs", ns="other", kind="ReplicaSet")
    apply_all(store, other, owned_pod(ref("ReplicaSet", "rs", controller=True)))

    assert targets(store, POD, Rel.OWNED_BY) == set()
    assert store.state.pending == {
        "ReplicaSet/default/rs": {(POD, "ReplicaSet/default/rs", Rel.OWNED_BY)}}
