"""Apply one object change to the graph, keeping nodes, edges and indexes exact.

This is the only code that mutates the graph (graph_state.py). Manifest loading and the
watch streams both call it, one object at a time, so a graph built incrementally equals one
built from scratch (the property tests check exactly that). Nothing here does I/O.
"""

from __future__ import annotations

import sys
from operator import attrgetter
from typing import TypeVar

from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel, is_cluster_scoped, make_key
from netsight.graph.model.records import EndpointSliceRecord, PodRecord, Record
from netsight.graph.store.digraph import (
    add_node,
    link,
    link_new,
    predecessors,
    remove_node,
    set_record,
    unlink,
)
from netsight.graph.store.graph_state import GraphState, Identity
from netsight.graph.store.record_edges import (
    REFERENCE_RELS,
    Edge,
    record_references,
    record_selector,
    selectable_labels,
)
from netsight.graph.store.selector_index import NamespaceSelectors

K = TypeVar("K")
V = TypeVar("V")


def upsert(state: GraphState, record: Record) -> None:
    """Add a record, or replace the record stored under the same key."""
    old = state.record(record.key)
    if old is None:
        _add(state, record)
    elif old != record:
        replace_record(state, old, record)


def replace_record(state: GraphState, old: Record, record: Record) -> None:
    """Replace ``old``, the record the graph holds under ``record``'s key, with a record
    not equal to it (``upsert``'s last case, for a caller that has compared them)."""
    key = record.key
    set_record(state.graph, key, record)
    old_refs: tuple[Edge, ...] = ()
    new_refs: tuple[Edge, ...] = ()
    # A slice's references are its owner, its Service and its endpoints' pods: with the
    # first two unchanged, only the pods' TARGETS edges can differ.
    changes = slice_target_changes(old, record)
    if changes is not None:
        old_refs, new_refs = changes
    elif not same_references(old, record):
        old_refs, new_refs = record_references(old), record_references(record)
    if old_refs != new_refs:
        # Most updates (pod status) keep their references and skip this; a slice that
        # swaps one endpoint of a hundred moves one edge, not all of them.
        kept = set(old_refs).intersection(new_refs)
        _unlink_references(state, tuple(r for r in old_refs if r not in kept))
        _link_references(state, tuple(r for r in new_refs if r not in kept))
    if type(record) is not PodRecord:  # a pod owns no selector
        old_selector, new_selector = record_selector(old), record_selector(record)
        if old_selector != new_selector:
            _drop_selector(state, old)
            _add_selector(state, record)
    if record.kind in POD_LIKE_KINDS:
        old_labels, new_labels = selectable_labels(old), selectable_labels(record)
        # Identities are keyed by the label map object: a new map means a move, even when
        # its content is equal (then no selector edge changes).
        if old_labels is not new_labels:
            _unindex_labels(state, old)
            _index_labels(state, record)


def add(state: GraphState, record: Record) -> None:
    """Add a record under a key the graph does not hold (``upsert``'s first case, for a
    caller that has checked already: a list page of new objects)."""
    if type(record) is PodRecord:
        _add_pod(state, record)
    else:
        _add(state, record)


def _add_pod(state: GraphState, record: PodRecord) -> None:
    """``_add`` of a pod (most of an initial list) in one function: every edge it makes is
    new, as the node is. tests/graph/test_listed_pages_apply_like_events.py compares the
    two."""
    key, ns = record.key, record.namespace
    graph = state.graph
    add_node(graph, record)
    per_ns = state.by_kind.get(record.kind)
    if per_ns is None:
        per_ns = state.by_kind[record.kind] = {}
    keys = per_ns.get(ns)
    if keys is None:
        keys = per_ns[ns] = set()
    keys.add(key)
    if ns:
        ns_key = _NAMESPACE_KEYS.get(ns) or _namespace_key(ns)
        if ns_key in graph:
            link_new(graph, ns_key, key, Rel.CONTAINS)
    owner = record.owner
    if owner is not None:
        target = _OWNER_KEYS.get((ns, owner)) or _owner_key(ns, owner)
        if target in graph:
            link_new(graph, key, target, Rel.OWNED_BY)
        elif not state.never_arriving or target.partition("/")[0] not in state.never_arriving:
            state.pending.setdefault(target, set()).add((key, target, Rel.OWNED_BY))
    if state.pending:
        for source, target, rel in state.pending.pop(key, ()):
            link(graph, source, target, rel)
    identities = state.identities.get(ns)
    identity = identities.get(id(record.labels)) if identities is not None else None
    if identity is None:
        _index_labels(state, record)
    else:
        identity.members.add(key)


def same_references(old: Record, new: Record) -> bool:
    """True when two versions of an object certainly name the same objects: cheaper than
    building and comparing their references (a slice's ~100 keys, on every update)."""
    if type(old) is not type(new) or old.owner != new.owner:
        return False
    if type(new) is PodRecord:  # a pod names its owner only
        return True
    if isinstance(old, EndpointSliceRecord) and isinstance(new, EndpointSliceRecord):
        before, after = old.group.endpoints, new.group.endpoints
        # The endpoints' pods, position by position, read in C: most of a slice's
        # endpoints are the previous version's own (typed_records.slice_record).
        return old.service_name == new.service_name and len(before) == len(after) and (
            list(map(_TARGET_POD, before)) == list(map(_TARGET_POD, after)))
    return False


_TARGET_POD = attrgetter("target_pod")


def slice_target_changes(old: Record, new: Record
                          ) -> tuple[tuple[Edge, ...], tuple[Edge, ...]] | None:
    """For two versions of a slice that name the same Service and owner (so only TARGETS
    edges can differ: a restarted pod's endpoint swapped for its replacement's), the edges
    only ``old`` has and those only ``new`` has, in its order: what comparing both versions'
    ``record_references`` leaves, without building the ~100 references a slice names twice
    over. None for any other pair."""
    if type(old) is not EndpointSliceRecord or type(new) is not EndpointSliceRecord \
            or old.owner != new.owner or old.service_name != new.service_name:
        return None
    old_pods = list(map(_TARGET_POD, old.group.endpoints))
    new_pods = list(map(_TARGET_POD, new.group.endpoints))
    if old_pods == new_pods:  # most updates: an endpoint's conditions
        return (), ()
    before, after = set(old_pods), set(new_pods)
    before.discard(None)
    before.discard("")
    after.discard(None)
    after.discard("")
    if before == after:
        return (), ()
    key, ns = new.key, new.namespace
    # In each version's order (filtered in C): the pods one has and the other has not.
    gone = tuple((key, make_key(Kind.POD, ns, pod), Rel.TARGETS)
                 for pod in dict.fromkeys(filter((before - after).__contains__, old_pods)))
    came = tuple((key, make_key(Kind.POD, ns, pod), Rel.TARGETS)
                 for pod in dict.fromkeys(filter((after - before).__contains__, new_pods)))
    return gone, came


def remove(state: GraphState, key: str) -> Record | None:
    """Remove the object under ``key``; references that name it stay pending."""
    record = state.record(key)
    if record is None:
        return None
    graph = state.graph
    if type(record) is PodRecord:  # most removals: a pod names its owner at most
        if record.owner is not None:
            _unlink_owner(state, key, record.namespace, record.owner)
    else:
        _unlink_references(state, record_references(record))
    # References other objects make to this one wait for it to come back.
    for source, data in predecessors(graph)[key].items():
        for rel in data:
            if rel in REFERENCE_RELS:
                state.pending.setdefault(key, set()).add((source, key, rel))
    if record.kind in POD_LIKE_KINDS:
        _unindex_labels(state, record)  # pod-likes own no selector
    else:
        _drop_selector(state, record)
    _discard(state.by_kind.get(record.kind, {}), record.namespace, key)
    if not state.by_kind.get(record.kind):
        state.by_kind.pop(record.kind, None)
    remove_node(graph, key)
    return record


def _add(state: GraphState, record: Record) -> None:
    key, ns = record.key, record.namespace
    graph = state.graph
    add_node(graph, record)
    state.by_kind.setdefault(record.kind, {}).setdefault(ns, set()).add(key)
    # Namespace containment is derived from by_kind rather than stored as references:
    # one edge per object, no per-object bookkeeping.
    if ns:
        ns_key = _NAMESPACE_KEYS.get(ns) or _namespace_key(ns)
        if ns_key in graph:
            link(graph, ns_key, key, Rel.CONTAINS)
    elif record.kind == Kind.NAMESPACE:
        for per_ns in state.by_kind.values():
            for member in per_ns.get(record.name, ()):
                link(graph, key, member, Rel.CONTAINS)
    if type(record) is PodRecord:  # most records: a pod names its owner at most
        if record.owner is not None:
            _link_owner(state, key, ns, record.owner)
    else:
        _link_references(state, record_references(record))
    if state.pending:
        for source, target, rel in state.pending.pop(key, ()):
            link(graph, source, target, rel)
    if record.kind in POD_LIKE_KINDS:
        _index_labels(state, record)  # pod-likes own no selector
    else:
        _add_selector(state, record)


_NAMESPACE_KEYS: dict[str, str] = {}


def _namespace_key(namespace: str) -> str:
    if len(_NAMESPACE_KEYS) >= 65536:
        _NAMESPACE_KEYS.clear()
    key = _NAMESPACE_KEYS[namespace] = make_key(Kind.NAMESPACE, "", namespace)
    return key


# (namespace, owner) -> the owner's key: the pods of one ReplicaSet name the same owner.
_OWNER_KEYS: dict[tuple[str, tuple[str, str]], str] = {}


def _link_owner(state: GraphState, key: str, namespace: str, owner: tuple[str, str]) -> None:
    """``_link_references`` of a pod's one reference, its owner, without building it."""
    target = _OWNER_KEYS.get((namespace, owner)) or _owner_key(namespace, owner)
    graph = state.graph
    if target in graph:
        link(graph, key, target, Rel.OWNED_BY)
    elif not state.never_arriving or target.partition("/")[0] not in state.never_arriving:
        state.pending.setdefault(target, set()).add((key, target, Rel.OWNED_BY))


def _unlink_owner(state: GraphState, key: str, namespace: str, owner: tuple[str, str]
                  ) -> None:
    """``_unlink_references`` of a pod's one reference, its owner, without building it."""
    target = _OWNER_KEYS.get((namespace, owner)) or _owner_key(namespace, owner)
    if target in state.graph:
        unlink(state.graph, key, target, Rel.OWNED_BY)
    else:
        _discard(state.pending, target, (key, target, Rel.OWNED_BY))


def cache_sizes() -> dict[str, int]:
    """Entries in this module's bounded caches (footprint.census)."""
    return {"cache_namespace_keys": len(_NAMESPACE_KEYS), "cache_owner_keys": len(_OWNER_KEYS)}


def _owner_key(namespace: str, owner: tuple[str, str]) -> str:
    if len(_OWNER_KEYS) >= 65536:
        _OWNER_KEYS.clear()
    # A cluster-scoped owner (the Node of a mirror pod) has no namespace.
    owner_ns = "" if is_cluster_scoped(owner[0]) else namespace
    key = _OWNER_KEYS[(namespace, owner)] = make_key(owner[0], owner_ns, owner[1])
    return key


def _link_references(state: GraphState, refs: tuple[Edge, ...]) -> None:
    graph = state.graph
    for source, target, rel in refs:
        if target in graph:
            link(graph, source, target, rel)
        elif not state.never_arriving or \
                target.partition("/")[0] not in state.never_arriving:
            state.pending.setdefault(target, set()).add((source, target, rel))


def _unlink_references(state: GraphState, refs: tuple[Edge, ...]) -> None:
    graph = state.graph
    for edge in refs:
        source, target, rel = edge
        if target in graph:
            unlink(graph, source, target, rel)
        else:
            _discard(state.pending, target, edge)


def _add_selector(state: GraphState, record: Record) -> None:
    selected = record_selector(record)
    if selected is None:
        return
    rel, selector = selected
    key, ns = record.key, record.namespace
    index = state.selectors.get(ns)
    if index is None:
        index = state.selectors[ns] = NamespaceSelectors()
    index.add(key, selected)
    matched = set(state.matching_identities(ns, selector))
    for identity in matched:
        identity.selected_by[key] = rel
    if matched:
        state.selected[key] = matched


def _drop_selector(state: GraphState, record: Record) -> None:
    index = state.selectors.get(record.namespace)
    if index is None or index.discard(record.key) is None:
        return
    if not index:
        del state.selectors[record.namespace]
    for identity in state.selected.pop(record.key, ()):
        del identity.selected_by[record.key]


def _index_labels(state: GraphState, record: Record) -> None:
    key, ns = record.key, record.namespace
    labels = selectable_labels(record)
    per_ns = state.identities.get(ns)
    if per_ns is None:
        per_ns = state.identities[ns] = {}
    identity = per_ns.get(id(labels))
    if identity is None:
        identity = per_ns[id(labels)] = Identity(ns, labels)
        for label, value in labels.items():
            state.by_label.setdefault((ns, label, value), set()).add(identity)
            state.by_label_key.setdefault((ns, label), set()).add(value)
        index = state.selectors.get(ns)
        if index is not None:
            identity.selected_by = dict(index.matching(labels))
            for owner in identity.selected_by:
                state.selected.setdefault(owner, set()).add(identity)
    identity.members.add(key)


def _unindex_labels(state: GraphState, record: Record) -> None:
    key, ns = record.key, record.namespace
    labels = selectable_labels(record)
    per_ns = state.identities[ns]
    identity = per_ns[id(labels)]
    identity.members.discard(key)
    if identity.members:
        identity.members = compacted(identity.members)
        return
    # The last member went: the identity and its index entries go too.
    del per_ns[id(labels)]
    if not per_ns:
        del state.identities[ns]
    for owner in identity.selected_by:
        _discard(state.selected, owner, identity)
    for label, value in labels.items():
        _discard(state.by_label, (ns, label, value), identity)
        if (ns, label, value) not in state.by_label:  # the last pod with this value went
            _discard(state.by_label_key, (ns, label), value)


def _discard(index: dict[K, set[V]], index_key: K, key: V) -> None:
    members = index.get(index_key)
    if members is None:
        return
    members.discard(key)
    if not members:
        del index[index_key]
        return
    smaller = compacted(members)
    if smaller is not members:
        index[index_key] = smaller


_SET_BYTES = sys.getsizeof(set())


def compacted(members: set[V]) -> set[V]:
    """``members``, or a copy sized to what it holds once its table has become more than
    twice that size.

    A set never shrinks on removal, and takes a table of its own (off the 8-slot one built
    into the set object) with its fifth member: under churn every index set (identities'
    members, the label index, selector matches) would end up with the table its busiest
    moment needed, and keep it, its bytes growing while its entries stay flat
    (footprint.container_bytes). A copy of n members has the built-in table up to 4 of
    them, else 16 bytes a slot for the smallest power of two above 2n (CPython's set
    merge); one at least twice that is copied, so a set is copied again only after its
    size has halved, and the copies cost O(1) per removal amortized."""
    n = len(members)
    fresh = _SET_BYTES if n <= 4 else _SET_BYTES + (16 << (2 * n).bit_length())
    return set(members) if sys.getsizeof(members) > 2 * fresh else members
