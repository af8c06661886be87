"""Reading a raw API object into its record: its identity, then the record of its kind
(graph/model/core_records.py, graph/model/generic_records.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.graph.model.core_records import BUILDERS, endpoint_slice_record
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.field_values import (
    controller_owner,
    interned,
    kept_annotations,
    timestamp,
)
from netsight.graph.model.generic_records import DATA_KINDS, generic_record
from netsight.graph.model.kinds import WORKLOAD_KINDS, ObjectId, is_cluster_scoped, kind_id
from netsight.graph.model.records import EMPTY_MAP, Record
from netsight.graph.model.selectors import shared_labels
from netsight.graph.model.workload_records import workload_record


def object_id(raw: Mapping[str, Any], default_namespace: str = "default") -> ObjectId:
    """The identity of a raw object, validating only what identity needs."""
    api_version = raw.get("apiVersion")
    kind = raw.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise MalformedObject("apiVersion", "required: a non-empty string such as 'v1'")
    if not isinstance(kind, str) or not kind:
        raise MalformedObject("kind", "required: a non-empty string such as 'Service'")
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        raise MalformedObject("metadata", "required: an object with at least a name")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        hint = " (generateName objects get their name from the API server)" * bool(
            meta.get("generateName")
        )
        raise MalformedObject("metadata.name", f"required: a non-empty string{hint}")
    kid = kind_id(api_version, kind)
    namespace = meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise MalformedObject("metadata.namespace", "must be a string")
    if is_cluster_scoped(kid):
        namespace = ""
    elif not namespace:
        namespace = default_namespace
    # Interned: thousands of records share a handful of namespace and kind strings.
    return ObjectId(interned(kid), interned(namespace), interned(name))


def to_record(raw: Mapping[str, Any], default_namespace: str = "default", *,
              oid: ObjectId | None = None, previous: Record | None = None) -> Record:
    """Build the slim record of a raw API object; raises MalformedObject with a field path.

    ``oid`` is the object's :func:`object_id` when the caller has computed it already;
    ``previous`` the record of the object's version before this one, whose unchanged parts
    may be reused (the result is equal either way).
    """
    if oid is None:
        oid = object_id(raw, default_namespace)
    meta = raw["metadata"]
    base: dict[str, Any] = {
        "kind": oid.kind,
        "api_version": raw["apiVersion"],
        "namespace": oid.namespace,
        "name": oid.name,
        "labels": shared_labels(meta.get("labels"), "metadata.labels") or EMPTY_MAP,
        "annotations": kept_annotations(meta.get("annotations")),
        "owner": controller_owner(meta.get("ownerReferences")),
        "created": timestamp(meta.get("creationTimestamp")),
    }
    builder = BUILDERS.get(oid.kind)
    if builder is None and oid.kind in WORKLOAD_KINDS:
        builder = workload_record
    if builder is None:
        data_kind = DATA_KINDS.get(oid.kind)
        return data_kind(raw, base) if data_kind is not None else generic_record(raw, base)
    spec = raw.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise MalformedObject("spec", f"must be an object, got {type(spec).__name__}")
    if builder is endpoint_slice_record:
        return endpoint_slice_record(raw, base, spec, previous)
    return builder(raw, base, spec)


