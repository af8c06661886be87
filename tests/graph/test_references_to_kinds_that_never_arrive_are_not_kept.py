"""From a cluster, pods name ReplicaSets (not watched) as owners: such references are not
kept pending — at 100k pods they cost ~18 MB and nothing would ever link them."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, deployment, pod, service, targets


def owned(name: str, owner: str) -> dict[str, object]:
    raw = pod(name)
    raw["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "controller": True}]
    return raw


def test_pending_references_to_never_arriving_kinds_are_dropped() -> None:
    store = GraphStore()
    apply_all(store, owned("a", "rs"))
    assert set(store.state.pending) == {"ReplicaSet/default/rs"}

    store.state.never_arrive({"ReplicaSet"})
    assert store.state.pending == {}
    apply_all(store, owned("b", "rs"))
    assert store.state.pending == {}
    # The owner is still on the record for analyzers.
    record = store.state.record("Pod/default/b")
    assert record is not None
    assert record.owner == ("ReplicaSet", "rs")


def test_references_to_other_kinds_still_wait() -> None:
    store = GraphStore()
    store.state.never_arrive({"ReplicaSet"})
    slice_ = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": {"name": "web-1", "namespace": "default",
                           "labels": {"kubernetes.io/service-name": "web"}},
              "addressType": "IPv4", "endpoints": []}
    apply_all(store, slice_)
    assert set(store.state.pending) == {"Service/default/web"}
    apply_all(store, service("web"))
    assert targets(store, "EndpointSlice/default/web-1", Rel.BELONGS_TO) == {
        "Service/default/web"}


def test_a_declared_kind_that_arrives_anyway_is_still_a_node() -> None:
    store = GraphStore()
    store.state.never_arrive({"ReplicaSet"})
    apply_all(store, deployment("rs", kind="ReplicaSet"), owned("a", "rs"))
    # Present targets link as always; only waiting for absent ones is skipped.
    assert targets(store, "Pod/default/a", Rel.OWNED_BY) == {"ReplicaSet/default/rs"}
