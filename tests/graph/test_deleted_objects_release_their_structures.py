"""Objects that come and go leave nothing behind: after any graph, a burst of other
objects created, changed (labels, selectors, references, malformed versions) and deleted
again leaves every per-object structure of the store (nodes, edges, identities and their
label index, selector indexes and matches, pending references, problems, the shared label
maps) exactly as it was. A leak here would grow without bound under churn."""

from __future__ import annotations

import copy
import gc
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.graph.store.footprint import PER_OBJECT, census
from netsight.graph.store.live import EventType, GraphStore
from tests.graph.snapshots import snapshot
from tests.graph.universe import CLUSTER_SCOPED, Step, event_sequences


def renamed(step: Step) -> Step:
    """The same event for an object of another name (its references unchanged), so the
    burst touches objects the base graph does not hold, next to and pointing at those it
    does."""
    raw: dict[str, Any] = copy.deepcopy(step.raw)
    meta = raw["metadata"]
    meta["name"] = f"x-{meta['name']}"
    kind, _, rest = step.key.partition("/")
    namespace, _, _ = rest.rpartition("/")
    key = f"{kind}/{meta['name']}" if kind in CLUSTER_SCOPED else \
        f"{kind}/{namespace}/{meta['name']}"
    return Step(step.event, raw, key, step.valid)


def apply(store: GraphStore, steps: list[Step]) -> None:
    for step in steps:
        store.apply(step.event, step.raw)


def indexes(store: GraphStore) -> dict[str, Any]:
    return {"graph": snapshot(store.state), "problems": dict(store.problems),
            "invalid": set(store.invalid_keys),
            "pending": {k: frozenset(v) for k, v in store.state.pending.items()}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=event_sequences(max_size=25), burst=event_sequences(max_size=25),
       workloads_watched=st.booleans())
def test_a_burst_created_and_deleted_leaves_every_structure_as_it_was(
        base: list[Step], burst: list[Step], workloads_watched: bool) -> None:
    store = GraphStore()
    if not workloads_watched:  # as from a cluster
        store.state.never_arrive({"ReplicaSet", "Deployment", "StatefulSet"})
    apply(store, base)
    gc.collect()
    before, sizes_before = indexes(store), census(store)
    steps = [renamed(step) for step in burst]
    apply(store, steps)
    apply(store, [Step(EventType.DELETED, s.raw, s.key, True) for s in steps])
    gc.collect()
    assert indexes(store) == before
    sizes = census(store)
    assert {k: sizes[k] for k in PER_OBJECT} == {k: sizes_before[k] for k in PER_OBJECT}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(burst=event_sequences(max_size=30))
def test_an_emptied_store_holds_no_per_object_entries(burst: list[Step]) -> None:
    store = GraphStore()
    gc.collect()
    maps_before = census(store)["shared_label_maps"]
    apply(store, burst)
    apply(store, [Step(EventType.DELETED, s.raw, s.key, True) for s in burst])
    gc.collect()
    sizes = census(store)
    assert sizes["shared_label_maps"] == maps_before
    assert {k: sizes[k] for k in PER_OBJECT if k != "shared_label_maps"} == \
        dict.fromkeys((k for k in PER_OBJECT if k != "shared_label_maps"), 0)
    assert not store.state.by_kind
    assert not store.state.identities
    assert not store.state.selected


def test_a_relabelled_pod_leaves_its_old_identity_when_it_was_the_last_member() -> None:
    store = GraphStore()
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": "p", "namespace": "ns",
                                        "labels": {"app": "a"}}}
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "deny", "namespace": "ns"},
              "spec": {"podSelector": {"matchLabels": {"app": "a"}}}}
    store.apply(EventType.ADDED, policy)
    store.apply(EventType.ADDED, pod)
    start = census(store)
    for round_ in range(50):
        labels = {"app": "a", "round": str(round_)}
        store.apply(EventType.MODIFIED, {**pod, "metadata": {**pod["metadata"],
                                                             "labels": labels}})
    store.apply(EventType.MODIFIED, pod)
    gc.collect()
    end = census(store)
    assert {k: end[k] for k in PER_OBJECT} == {k: start[k] for k in PER_OBJECT}
    assert end["identities"] == 1
