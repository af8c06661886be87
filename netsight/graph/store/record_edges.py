"""The edges a record implies: the objects it names (references, linked when their target
arrives) and the pods its label selector matches.

One pair of nodes can be related in more than one way (an EndpointSlice belongs to its
Service and is owned by it); each relationship is one :class:`Rel`.
"""

from __future__ import annotations

from collections.abc import Mapping

from netsight.graph.model.kinds import Kind, Rel, is_cluster_scoped, make_key
from netsight.graph.model.records import (
    EndpointSliceRecord,
    EndpointsRecord,
    GenericRecord,
    IngressRecord,
    NetworkPolicyRecord,
    PodRecord,
    Record,
    ServiceRecord,
    WorkloadRecord,
)
from netsight.graph.model.selectors import LabelSelector, selector_from_map
from netsight.graph.store import gateway_edges, mesh_edges, policy_edges

# (source key, target key, relationship)
Edge = tuple[str, str, Rel]

SELECTOR_RELS = frozenset({Rel.SELECTS, Rel.APPLIES_TO})
# Relationships that come from one object naming another (record_references).
REFERENCE_RELS = frozenset(
    {Rel.BELONGS_TO, Rel.TARGETS, Rel.ROUTES_TO, Rel.USES_CLASS, Rel.OWNED_BY, Rel.ATTACHES_TO,
     Rel.TARGET_REF, Rel.CONFIGURES})


def selectable_labels(record: Record) -> Mapping[str, str]:
    """The labels a Service or policy selector is matched against."""
    if isinstance(record, WorkloadRecord):
        return record.pod_labels
    return record.labels


def record_selector(record: Record) -> tuple[Rel, LabelSelector] | None:
    """The pod selector an object carries, with the edge type its matches get."""
    if isinstance(record, ServiceRecord):
        # A Service without a selector selects nothing; its endpoints are managed elsewhere.
        if record.selector is None or record.type == "ExternalName":
            return None
        return Rel.SELECTS, selector_from_map(record.selector)
    if isinstance(record, NetworkPolicyRecord):
        return Rel.APPLIES_TO, record.pod_selector
    return None


def record_references(record: Record) -> tuple[Edge, ...]:
    """Edges to other objects named by this record (targets may not exist yet)."""
    ns = record.namespace
    if type(record) is PodRecord:  # most records: a pod names its owner at most
        if record.owner is None:
            return ()
        return (_owner_reference(record, record.owner),)
    refs: list[Edge] = []
    if isinstance(record, EndpointSliceRecord | EndpointsRecord):
        service = record.service_name if isinstance(record, EndpointSliceRecord) else record.name
        if service:
            refs.append((record.key, make_key(Kind.SERVICE, ns, service), Rel.BELONGS_TO))
        for group in record.groups:
            for endpoint in group.endpoints:
                if endpoint.target_pod:
                    refs.append(
                        (record.key, make_key(Kind.POD, ns, endpoint.target_pod), Rel.TARGETS)
                    )
    elif isinstance(record, IngressRecord):
        for backend in record.backends():
            if backend.service:
                refs.append(
                    (record.key, make_key(Kind.SERVICE, ns, backend.service), Rel.ROUTES_TO)
                )
        if record.class_name:
            refs.append(
                (record.key, make_key(Kind.INGRESS_CLASS, "", record.class_name), Rel.USES_CLASS)
            )
    elif isinstance(record, GenericRecord) and record.spec is not None:
        refs.extend(gateway_edges.references(record))
        refs.extend(policy_edges.references(record))
        refs.extend(mesh_edges.references(record))
    if record.owner is not None:
        refs.append(_owner_reference(record, record.owner))
    # dict.fromkeys: de-duplicate, keep order (two paths to one Service are one edge).
    return tuple(dict.fromkeys(refs))


def _owner_reference(record: Record, owner: tuple[str, str]) -> Edge:
    owner_kind, owner_name = owner
    # A cluster-scoped owner (the Node of a mirror pod) has no namespace.
    owner_ns = "" if is_cluster_scoped(owner_kind) else record.namespace
    return record.key, make_key(owner_kind, owner_ns, owner_name), Rel.OWNED_BY
