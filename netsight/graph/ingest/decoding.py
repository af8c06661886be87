"""Decode list pages and watch events into only the fields the records read.

A Pod from the API server is 4-8 KB of JSON, most of it ``managedFields``, images, env,
volumes, probes and container statuses that no record keeps. Parsing all of it into Python
objects, only to drop them, was a third of the informers' time at 100k pods. msgspec decodes
against a *shape* — nested TypedDicts naming the fields
:func:`netsight.graph.model.records.to_record` reads — and skips everything else inside its
C parser, without building objects for it.

The shapes only select fields; they do not validate them: every leaf is ``Any``, so a
malformed value reaches the record builder exactly as before and is reported there with its
field path. Where a *container* on the way to a leaf has the wrong type (``spec`` a string),
msgspec refuses the whole body, and it is decoded again with orjson, in full: one bad
object costs speed, never correctness. ``tests/graph/test_shapes_keep_what_records_read.py``
checks that records built from shaped and from full bodies are equal.
"""

from __future__ import annotations

import contextlib
from typing import Any, TypedDict

import msgspec
import orjson

from netsight.graph.model.kinds import Kind


class _OwnerReference(TypedDict, total=False):
    apiVersion: Any
    kind: Any
    name: Any
    controller: Any


class _ObjectMeta(TypedDict, total=False):
    name: Any
    generateName: Any
    namespace: Any
    labels: Any
    annotations: Any
    ownerReferences: list[_OwnerReference] | None
    creationTimestamp: Any
    deletionTimestamp: Any
    resourceVersion: Any


class _ContainerPort(TypedDict, total=False):
    containerPort: Any
    protocol: Any
    name: Any


class _Container(TypedDict, total=False):
    name: Any
    restartPolicy: Any
    ports: list[_ContainerPort] | None


class _PodSpec(TypedDict, total=False):
    containers: list[_Container] | None
    initContainers: list[_Container] | None
    nodeName: Any
    hostNetwork: Any
    serviceAccountName: Any
    hostname: Any
    subdomain: Any


class _PodIP(TypedDict, total=False):
    ip: Any


class _PodCondition(TypedDict, total=False):
    type: Any
    status: Any


class _PodStatus(TypedDict, total=False):
    podIP: Any
    podIPs: list[_PodIP] | None
    phase: Any
    conditions: list[_PodCondition] | None


class _Pod(TypedDict, total=False):
    apiVersion: Any
    kind: Any
    metadata: _ObjectMeta
    spec: _PodSpec | None
    status: _PodStatus | None


class _PodList(TypedDict, total=False):
    metadata: Any
    items: list[_Pod] | None


class _PodEvent(TypedDict, total=False):
    type: Any
    object: _Pod


class _TargetRef(TypedDict, total=False):
    kind: Any
    name: Any


class _Endpoint(TypedDict, total=False):
    addresses: Any
    conditions: Any
    targetRef: _TargetRef | None
    nodeName: Any


class _EndpointSlice(TypedDict, total=False):
    apiVersion: Any
    kind: Any
    metadata: _ObjectMeta
    addressType: Any
    endpoints: list[_Endpoint] | None
    ports: Any


class _EndpointSliceList(TypedDict, total=False):
    metadata: Any
    items: list[_EndpointSlice] | None


class _EndpointSliceEvent(TypedDict, total=False):
    type: Any
    object: _EndpointSlice


class _Object(TypedDict, total=False):
    """Services, NetworkPolicies, Namespaces, Ingresses, IngressClasses: spec and status in
    full (their records read most of them), metadata without managedFields."""

    apiVersion: Any
    kind: Any
    metadata: _ObjectMeta
    spec: Any
    status: Any


class _ObjectList(TypedDict, total=False):
    metadata: Any
    items: list[_Object] | None


class _ObjectEvent(TypedDict, total=False):
    type: Any
    object: _Object


_OBJECTS = (msgspec.json.Decoder(_ObjectList), msgspec.json.Decoder(_ObjectEvent))

# Kind id -> (list page decoder, watch event decoder), for kinds whose record builders are
# known to read nothing else (records.py). Every other kind is decoded in full: a custom
# resource's record keeps its whole spec, and some keep fields beside it.
_DECODERS: dict[str, tuple[msgspec.json.Decoder[Any], msgspec.json.Decoder[Any]]] = {
    Kind.POD: (msgspec.json.Decoder(_PodList), msgspec.json.Decoder(_PodEvent)),
    Kind.ENDPOINT_SLICE: (msgspec.json.Decoder(_EndpointSliceList),
                          msgspec.json.Decoder(_EndpointSliceEvent)),
    Kind.SERVICE: _OBJECTS, Kind.NETWORK_POLICY: _OBJECTS, Kind.NAMESPACE: _OBJECTS,
    Kind.INGRESS: _OBJECTS, Kind.INGRESS_CLASS: _OBJECTS,
}


def decode_page(kind_id: str, body: bytes) -> dict[str, Any]:
    """A list page (``{"metadata": ..., "items": [...]}``), shaped where a shape exists."""
    return _decode(kind_id, body, 0)


def decode_event(kind_id: str, line: bytes) -> dict[str, Any]:
    """A watch event (``{"type": ..., "object": ...}``), shaped where a shape exists."""
    return _decode(kind_id, line, 1)


def _decode(kind_id: str, data: bytes, which: int) -> dict[str, Any]:
    decoders = _DECODERS.get(kind_id)
    if decoders is not None:
        try:
            decoded = decoders[which].decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass  # an unusual body: decode it in full (orjson names a syntax error)
        else:
            # An ERROR event carries a Status (code 410, reason, message), not an object
            # of the kind: the shape would drop what the informer acts on.
            if isinstance(decoded, dict) and decoded.get("type") != "ERROR":
                return decoded
    parsed = orjson.loads(data)
    if not isinstance(parsed, dict):
        raise orjson.JSONDecodeError("expected a JSON object", data.decode(errors="replace"), 0)
    return parsed


class _ListHead(msgspec.Struct):
    metadata: dict[str, Any] | None = None


_LIST_HEAD = msgspec.json.Decoder(_ListHead)
_ITEMS = b',"items":'


def list_metadata(body: bytes) -> dict[str, Any] | None:
    """A list page's ``metadata`` (resourceVersion, continue) without reading its items
    (whoever reads them reports what is wrong there); None if the body is not a list
    object with an object (or no) metadata.

    The API server writes ``metadata`` before ``items``: the head before the first
    ``,"items":`` is decoded alone. That sequence cannot occur inside a JSON string (its
    quote would be escaped), and if it is nested inside the head, the head closed by one
    brace does not parse; then, as when ``items`` comes first, the whole body is decoded,
    its items skipped by msgspec's parser.
    """
    end = body.find(_ITEMS)
    if end > 0:
        with contextlib.suppress(msgspec.ValidationError, msgspec.DecodeError):
            head = _LIST_HEAD.decode(body[:end] + b"}")
            if head.metadata is not None:
                return head.metadata
    try:
        return _LIST_HEAD.decode(body).metadata or {}
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
