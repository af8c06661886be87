"""The shortcuts a watch event takes give what the general code they replace gives.

- the change ring's neighbours (``GraphState.adjacent_prefix``) are the first keys
  ``adjacent_keys`` yields, for any limit;
- a slice update's moved references (``slice_target_changes``) are what comparing both
  versions' ``record_references`` leaves, and ``same_references`` holds only when those are
  equal;
- the changed fields a change records are the fields whose values differ.
"""

from __future__ import annotations

from dataclasses import fields
from itertools import islice

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.graph.ingest.typed_events import decode_typed_event, event_record
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import EndpointSliceRecord, Record
from netsight.graph.store.building import same_references, slice_target_changes
from netsight.graph.store.live import RELATED_LIMIT, GraphStore, changed_fields
from netsight.graph.store.record_edges import record_references
from tests.graph.universe import (
    NAMESPACES,
    POD_NAMES,
    Step,
    bodies,
    endpoint_slices,
    event_sequences,
    identities,
)

PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(sequence=event_sequences())
def test_change_neighbours_are_the_first_adjacent_keys(sequence: list[Step]) -> None:
    store = GraphStore()
    for step in sequence:
        store.apply(step.event, step.raw)
        state = store.state
        for key in [*state.graph, step.key, "Pod/alpha/absent"]:
            for limit in (0, 1, 2, 3, 5, RELATED_LIMIT):
                assert state.adjacent_prefix(key, limit) == tuple(
                    islice(state.adjacent_keys(key), limit)), (key, limit)


def _slice(raw: dict[str, object], previous: Record | None = None) -> EndpointSliceRecord:
    """A slice record the watch path builds (typed, lending unchanged endpoints)."""
    event = decode_typed_event("EndpointSlice", orjson.dumps({"type": "MODIFIED",
                                                               "object": raw}))
    assert event is not None
    record = event_record(event, "discovery.k8s.io/v1", previous)
    assert isinstance(record, EndpointSliceRecord)
    return record


def _only(edges: tuple[object, ...], other: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(edge for edge in edges if edge not in set(other))


@PROPERTY_SETTINGS
@given(namespace=st.sampled_from(NAMESPACES), name=st.sampled_from(["s1-a", "s1-b"]),
       data=st.data())
def test_slice_updates_move_the_references_a_full_comparison_would(
        namespace: str, name: str, data: st.DataObject) -> None:
    old = _slice(data.draw(endpoint_slices(namespace, name), label="old"))
    new_raw = data.draw(endpoint_slices(namespace, name), label="new")
    for new in (_slice(new_raw), _slice(new_raw, previous=old)):
        old_refs, new_refs = record_references(old), record_references(new)
        if same_references(old, new):
            assert old_refs == new_refs
        changes = slice_target_changes(old, new)
        if changes is not None:
            assert changes == (_only(old_refs, new_refs), _only(new_refs, old_refs))


def test_a_restarted_pods_endpoint_moves_one_reference_each_way() -> None:
    def version(pods: list[str]) -> dict[str, object]:
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "s1-a", "namespace": "alpha",
                             "labels": {"kubernetes.io/service-name": "s1"}},
                "addressType": "IPv4", "ports": [{"name": "web", "port": 80}],
                "endpoints": [{"addresses": [f"10.0.0.{i}"], "conditions": {"ready": True},
                               "targetRef": {"kind": "Pod", "name": pod}}
                              for i, pod in enumerate(pods)]}

    old = _slice(version(list(POD_NAMES[:2])))
    again = _slice(version(list(POD_NAMES[:2])), previous=old)
    assert again == old
    assert again.group is old.group  # nothing left to compare field by field
    new = _slice(version([POD_NAMES[0], POD_NAMES[2]]), previous=old)
    assert new.group.ports is old.group.ports
    assert not same_references(old, new)
    assert slice_target_changes(old, new) == (
        (("EndpointSlice/alpha/s1-a", "Pod/alpha/p2", "targets"),),
        (("EndpointSlice/alpha/s1-a", "Pod/alpha/p3", "targets"),))


@PROPERTY_SETTINGS
@given(identity=identities(), data=st.data())
def test_changed_fields_are_the_fields_whose_values_differ(
        identity: tuple[str, str, str], data: st.DataObject) -> None:
    before = to_record(data.draw(bodies(identity), label="before"))
    after = to_record(data.draw(bodies(identity), label="after"))
    expected = tuple(f.name for f in fields(before)
                     if getattr(before, f.name) != getattr(after, f.name))
    assert changed_fields(before, after) == expected
    assert changed_fields(before, before) == ()
    assert changed_fields(None, after) == ()
