"""A list page applied in one call (GraphStore.apply_listed, the informers' initial list)
leaves the graph, its problems, its generation and its change ring exactly as applying the
same records one at a time (apply_record) does: for new objects, objects already held (a
re-list), objects with a problem from a malformed earlier version, and invalid values."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.graph.model.reading import to_record
from netsight.graph.model.records import Record
from netsight.graph.store.digraph import predecessors, successors
from netsight.graph.store.live import EventType, GraphStore
from tests.graph.snapshots import diff, snapshot
from tests.graph.universe import Step, event_sequences


def state_of(store: GraphStore) -> dict[str, Any]:
    return {
        "graph": snapshot(store.state),
        # Both directions of every edge, as networkx keeps them (snapshot reads successors).
        "adjacency": ({k: dict(v) for k, v in successors(store.state.graph).items()},
                      {k: dict(v) for k, v in predecessors(store.state.graph).items()}),
        "pending": {k: frozenset(v) for k, v in store.state.pending.items()},
        "problems": dict(store.problems),
        "generation": store.generation,
        "kind_generations": dict(store.kind_generations),
        # The time each change was taken in differs between two runs; nothing else may. The
        # order of a change's neighbours follows sets of identities, hashed by address.
        "changes": [(c.generation, c.type, c.key, c.fields, frozenset(c.related))
                    for c in store.changes],
        "dropped": store.dropped[0],
    }


def pages(sequence: list[Step]) -> list[list[Step]]:
    """Runs of valid ADDED/MODIFIED steps (a page's worth each), and every other step on
    its own."""
    runs: list[list[Step]] = []
    for step in sequence:
        listable = step.valid and step.event != EventType.DELETED
        if listable and runs and runs[-1][0].valid and runs[-1][0].event != EventType.DELETED:
            runs[-1].append(step)
        else:
            runs.append([step])
    return runs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=event_sequences(max_size=30), workloads_watched=st.booleans())
def test_a_page_applied_at_once_equals_its_records_applied_one_by_one(
        sequence: list[Step], workloads_watched: bool) -> None:
    one_by_one, listed = GraphStore(), GraphStore()
    if not workloads_watched:  # as from a cluster: references to them are not kept
        for store in (one_by_one, listed):
            store.state.never_arrive({"ReplicaSet", "Deployment", "StatefulSet"})
    for run in pages(sequence):
        if not run[0].valid or run[0].event == EventType.DELETED:
            for store in (one_by_one, listed):
                store.apply(run[0].event, run[0].raw)
            continue
        records = [to_record(step.raw, "default") for step in run]
        changed = sum(one_by_one.apply_record(record) for record in records)
        seen: set[str] = set()
        assert listed.apply_listed(records, seen) == changed
        assert seen == {record.key for record in records}
        expected, got = state_of(one_by_one), state_of(listed)
        assert got["graph"] == expected["graph"], diff(got["graph"], expected["graph"])
        assert got == expected


def service(name: str, protocol: str = "TCP") -> Record:
    return to_record({"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": name, "namespace": "x"},
                      "spec": {"selector": {"app": "a"},
                               "ports": [{"port": 80, "protocol": protocol}]}})


def test_an_invalid_value_in_a_listed_page_is_a_finding_as_for_an_event() -> None:
    one_by_one, listed = GraphStore(), GraphStore()
    page = [service("a"), service("b", protocol="HTTP"), service("c")]
    for record in page:
        one_by_one.apply_record(record)
    assert listed.apply_listed(page) == 3
    assert state_of(listed) == state_of(one_by_one)
    assert set(listed.problems) == {"Service/x/b#invalid"}
    # Listed again, fixed: the finding goes, as it would for a MODIFIED event.
    fixed = [service("a"), service("b"), service("c")]
    for record in fixed:
        one_by_one.apply_record(record)
    assert listed.apply_listed(fixed) == 1
    assert state_of(listed) == state_of(one_by_one)
    assert listed.problems == {}


def test_a_listed_object_replaces_its_malformed_version_s_finding() -> None:
    one_by_one, listed = GraphStore(), GraphStore()
    bad = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "namespace": "x"},
           "spec": {"ports": [{"port": 0}]}}
    for store in (one_by_one, listed):
        assert not store.apply(EventType.ADDED, bad)
        assert set(store.problems) == {"Service/x/a"}
    one_by_one.apply_record(service("a"))
    assert listed.apply_listed([service("a")]) == 1
    assert state_of(listed) == state_of(one_by_one)
    assert listed.problems == {}


def pod(name: str, protocol: str) -> Record:
    return to_record({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "x"},
                      "spec": {"containers": [{"name": "c", "ports": [
                          {"containerPort": 80, "protocol": protocol}]}]}})


def test_pods_sharing_invalid_ports_each_get_the_finding() -> None:
    one_by_one, listed = GraphStore(), GraphStore()
    page = [pod("a", "TCP"), pod("b", "TCP"), pod("c", "HTTP"), pod("d", "HTTP"),
            pod("e", "TCP")]
    assert page[0].ports is page[1].ports  # one template, one tuple
    assert page[2].ports is page[3].ports
    for record in page:
        one_by_one.apply_record(record)
    assert listed.apply_listed(page) == 5
    assert state_of(listed) == state_of(one_by_one)
    assert set(listed.problems) == {"Pod/x/c#invalid", "Pod/x/d#invalid"}
