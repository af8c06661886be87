"""Pod and EndpointSlice watch events decoded into typed Structs
(graph/ingest/typed_events.py) build the same records as the checked path (decoding.py +
to_record, with the previous version), and whatever is unusual (a bookmark, an ERROR, a
malformed object) is not read typed."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.graph.ingest.typed_events import decode_typed_event, event_record
from netsight.graph.model.kinds import Kind
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import EndpointSliceRecord, Record
from netsight.sim.synthetic import generate
from tests.graph.test_shapes_keep_what_records_read import outcome, pods, slices


def line(event_type: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj})


def test_generated_pod_and_slice_events_are_read_typed_into_the_same_records() -> None:
    cluster = generate(pods=200, seed=3, policies_per_namespace=2)
    for obj in cluster.objects():
        if obj["kind"] not in (Kind.POD, Kind.ENDPOINT_SLICE):
            continue
        event = decode_typed_event(obj["kind"], line("MODIFIED", obj))
        assert event is not None
        assert event_record(event, obj["apiVersion"]) == to_record(obj, "")


def test_a_slice_event_reuses_the_endpoints_that_did_not_change() -> None:
    cluster = generate(pods=200, seed=3)
    obj = next(o for o in cluster.objects()
               if o["kind"] == Kind.ENDPOINT_SLICE and len(o.get("endpoints") or ()) > 2)
    previous = to_record(obj, "")
    assert isinstance(previous, EndpointSliceRecord)
    changed = {**obj, "endpoints": [{**obj["endpoints"][0], "addresses": ["10.9.9.9"]},
                                    *obj["endpoints"][1:]]}
    event = decode_typed_event(Kind.ENDPOINT_SLICE, line("MODIFIED", changed))
    assert event is not None
    record = event_record(event, obj["apiVersion"], previous)
    assert record == to_record(changed, "", previous=previous)
    assert isinstance(record, EndpointSliceRecord)
    before, after = previous.group.endpoints, record.group.endpoints
    assert after[0] is not before[0]
    assert all(a is b for a, b in zip(after[1:], before[1:], strict=True))


def test_bookmarks_errors_and_malformed_objects_are_not_read_typed() -> None:
    bookmark = {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}}
    error = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": 410,
             "message": "too old resource version"}
    bad_port = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]}}
    assert decode_typed_event(Kind.POD, line("BOOKMARK", bookmark)) is None
    assert decode_typed_event(Kind.POD, line("ERROR", error)) is None
    assert decode_typed_event(Kind.POD, line("MODIFIED", bad_port)) is None
    assert decode_typed_event(Kind.SERVICE, line("ADDED", bad_port)) is None


@settings(max_examples=300, deadline=None)
@given(st.one_of(pods, slices), st.one_of(st.none(), slices))
def test_any_event_typed_gives_the_checked_record(obj: Any, before: Any) -> None:
    event = decode_typed_event(obj["kind"], line("MODIFIED", obj))
    if event is None:
        return  # read the checked way, which the shapes test covers
    checked = outcome(obj)
    # The typed path accepts only what the checked path reads without complaint.
    assert isinstance(checked, Record), checked
    previous = outcome(before) if before is not None else None
    previous = previous if isinstance(previous, Record) else None
    assert event_record(event, obj["apiVersion"], previous) == checked


def test_a_deleted_event_is_read_for_its_identity_only() -> None:
    cluster = generate(pods=50, seed=3)
    obj = next(o for o in cluster.objects() if o["kind"] == Kind.POD)
    event = decode_typed_event(Kind.POD, line("DELETED", obj))
    assert event is not None
    assert event.type == "DELETED"
    meta = event.object.metadata
    assert (meta.namespace, meta.name, meta.resourceVersion) == (
        obj["metadata"]["namespace"], obj["metadata"]["name"],
        obj["metadata"].get("resourceVersion"))
