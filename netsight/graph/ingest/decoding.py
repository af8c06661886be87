"""Decode list pages and watch events into only the fields the records read.

A Pod from the API server is 4-8 KB of JSON, most of it ``managedFields``, images, env,
volumes, probes and container statuses that no record keeps; parsing all of it into Python
objects only to drop them would cost more than the records. msgspec decodes against a
*shape* — nested TypedDicts naming the fields
:func:`netsight.graph.model.reading.to_record` reads — and skips everything else inside its
C parser, without building objects for it. The shapes are derived from the Structs that
declare those fields (api_objects.py); kinds declared there have one, the others are
decoded in full.

The shapes only select fields; they do not validate them: every leaf is ``Any``, so a
malformed value reaches the record builder exactly as it was written and is reported there
with its field path. Where a *container* on the way to a leaf has the wrong type (``spec``
a string), msgspec refuses the whole body, and it is decoded again with orjson, in full:
one bad object costs speed, never correctness.
``tests/graph/test_shapes_keep_what_records_read.py`` checks that records built from shaped
and from full bodies are equal.
"""

from __future__ import annotations

import contextlib
import types
from typing import Any, TypedDict, Union, get_args, get_origin

import msgspec
import orjson

from netsight.graph.ingest.api_objects import DECLARED, ObjectMeta
from netsight.graph.model.kinds import Kind

# Shapes are made at import from the Structs; mypy reads a TypedDict() call as a static
# declaration, so they are made through an untyped name.
_TYPED_DICT: Any = TypedDict


def _shape(struct: type[msgspec.Struct], **extra: Any) -> Any:
    """A TypedDict naming the fields ``struct`` declares (and ``extra``): every field
    optional, every leaf ``Any``, every nested Struct its own shape."""
    fields = {field.encode_name: _field_shape(field.type)
              for field in msgspec.structs.fields(struct)}
    return _TYPED_DICT(f"{struct.__name__}Shape", {**fields, **extra}, total=False)


def _field_shape(declared: Any) -> Any:
    """The shape of one declared field: a nested Struct, a list of them, either or null;
    anything else is a leaf."""
    origin = get_origin(declared)
    if origin is Union or origin is types.UnionType:
        others = [arg for arg in get_args(declared) if arg is not type(None)]
        inner = _field_shape(others[0]) if len(others) == 1 else Any
        return Any if inner is Any else inner | None
    if origin is list or origin is tuple:
        args = get_args(declared)
        item = _field_shape(args[0]) if args else Any
        return Any if item is Any else types.GenericAlias(list, (item,))
    if isinstance(declared, type) and issubclass(declared, msgspec.Struct):
        return _shape(declared)
    return Any


# Every object's metadata, with two fields the typed path never needs: the informers resume
# a watch from an event's resourceVersion, and object_id names generateName when a name is
# missing.
_META = _shape(ObjectMeta, resourceVersion=Any, generateName=Any)


def _object_shape(struct: type[msgspec.Struct]) -> Any:
    """A list item or a watch event's object: ``struct``'s fields, and the identity every
    object carries (an event's object has its kind and apiVersion; list items have not)."""
    return _shape(struct, apiVersion=Any, kind=Any, metadata=_META)


def _decoders(item: Any) -> tuple[msgspec.json.Decoder[Any], msgspec.json.Decoder[Any]]:
    """The list page decoder and the watch event decoder of objects shaped as ``item``."""
    page = _TYPED_DICT("Page", {"metadata": Any, "items": list[item] | None}, total=False)
    event = _TYPED_DICT("Event", {"type": Any, "object": item}, total=False)
    return msgspec.json.Decoder(page), msgspec.json.Decoder(event)


class _WholeObject(msgspec.Struct):
    """Ingresses and IngressClasses: spec and status in full (their records read most of
    them)."""

    spec: Any = None
    status: Any = None


# Kind id -> (list page decoder, watch event decoder), for kinds whose record builders are
# known to read nothing else. Every other kind is decoded in full: a custom resource's
# record keeps its whole spec, and some keep fields beside it.
_DECODERS: dict[str, tuple[msgspec.json.Decoder[Any], msgspec.json.Decoder[Any]]] = {
    kind: _decoders(_object_shape(item)) for kind, item in DECLARED.items()}
_DECODERS[Kind.INGRESS] = _DECODERS[Kind.INGRESS_CLASS] = _decoders(_object_shape(_WholeObject))


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
