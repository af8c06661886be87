"""Typed watch events: Pod and EndpointSlice events decoded into the Structs of
api_objects.py and built into records directly.

A watch event carries one object with its kind, apiVersion and resourceVersion (list items
come without the first two). Pods and slices are most of a busy cluster's events; decoded
here straight into records, they skip the dict and to_record's checks. Anything unusual (a
bookmark, an ERROR, a malformed object) does not fit and goes the checked way, as in a list
page (``tests/graph/test_typed_watch_events_build_the_same_records.py``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from netsight.graph.ingest.api_objects import EndpointSlice, NonEmpty, ObjectMeta, Pod
from netsight.graph.ingest.typed_records import pod_record, slice_record
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import EndpointSliceRecord, Record


class WatchedMeta(ObjectMeta, gc=False):
    resourceVersion: str | None = None


class WatchedPod(Pod, gc=False):
    metadata: WatchedMeta
    kind: str | None = None
    apiVersion: str | None = None


class WatchedEndpointSlice(EndpointSlice, gc=False):
    metadata: WatchedMeta
    kind: str | None = None
    apiVersion: str | None = None


class PodEvent(msgspec.Struct, gc=False):
    type: str
    object: WatchedPod


class EndpointSliceEvent(msgspec.Struct, gc=False):
    type: str
    object: WatchedEndpointSlice


class DeletedMeta(msgspec.Struct, gc=False):
    name: NonEmpty
    namespace: str | None = None
    resourceVersion: str | None = None


class DeletedObject(msgspec.Struct, gc=False):
    metadata: DeletedMeta
    kind: str | None = None
    apiVersion: str | None = None


class DeletedEvent(msgspec.Struct, gc=False):
    """A DELETED event: only the object's identity is read (a pod's spec and status, a
    slice's endpoints are skipped by the parser, never built)."""

    type: str
    object: DeletedObject


TypedEvent = PodEvent | EndpointSliceEvent | DeletedEvent
_EVENT_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    Kind.POD: msgspec.json.Decoder(PodEvent),
    Kind.ENDPOINT_SLICE: msgspec.json.Decoder(EndpointSliceEvent),
}
_DELETED_DECODER = msgspec.json.Decoder(DeletedEvent)
# API servers write the type first; a line that starts otherwise is decoded in full.
_DELETED_PREFIX = b'{"type":"DELETED"'


def has_typed_events(kind_id: str) -> bool:
    return kind_id in _EVENT_DECODERS


def decode_typed_event(kind_id: str, line: bytes) -> TypedEvent | None:
    """A watch event as Structs, or None if the kind has no typed shape or the event is
    anything unusual (or not JSON)."""
    decoder = _EVENT_DECODERS.get(kind_id)
    if decoder is None:
        return None
    if line.startswith(_DELETED_PREFIX):
        decoder = _DELETED_DECODER
    try:
        event: TypedEvent = decoder.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return event


def event_record(event: TypedEvent, api_version: str,
                 previous: Record | None = None) -> Record:
    """The record ``to_record`` builds from the event's object; ``previous`` (the object's
    record before this event) lends the slice endpoints that did not change."""
    if isinstance(event, PodEvent):
        return pod_record(event.object)
    if isinstance(event, DeletedEvent):
        raise TypeError("a DELETED event builds no record")
    return slice_record(event.object, api_version, previous=previous
                        if isinstance(previous, EndpointSliceRecord) else None)
