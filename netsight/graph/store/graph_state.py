"""The graph and the indexes that keep incremental updates cheap, and their reads.

Edges come from two sources:
- *references by name* (slice -> Service, Ingress -> Service, object -> owner): networkx
  edges, recorded even when the target does not exist yet (``pending``), and linked the
  moment it appears;
- *label selectors* (Service -> pods, NetworkPolicy -> pods): not stored as networkx edges
  at all. Pod-likes with the same labels share an :class:`Identity`; a selector is matched
  against identities, and its edges are the members of the identities it matches: a
  default-deny policy "selects" every pod of its namespace, kept as one entry per identity
  instead of one edge per pod. Read them through :meth:`GraphState.selected_keys`,
  :meth:`GraphState.selectors_of` or ``GraphView``.

building.py writes all of it; nothing here does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from types import MappingProxyType

import networkx as nx

from netsight.graph.model.kinds import POD_LIKE_KINDS, Rel, parse_key
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector, Operator
from netsight.graph.store.digraph import nodes, predecessors, successors
from netsight.graph.store.record_edges import Edge, selectable_labels
from netsight.graph.store.selector_index import NamespaceSelectors

EMPTY_SELECTED: Mapping[str, Rel] = MappingProxyType({})


class Identity:
    """The pod-like objects of one namespace that carry the same labels.

    Selectors see labels only, so they match an identity as a whole: a selector is tested
    once per identity rather than once per pod, and a pod joining an existing identity
    takes its selector edges from ``selected_by`` without testing anything. Label maps are
    shared between records with equal labels (``selectors.shared_labels``), so an identity
    is keyed by the map's ``id``; it holds the map, which keeps that id from being reused.
    """

    __slots__ = ("labels", "members", "namespace", "selected_by")

    def __init__(self, namespace: str, labels: Mapping[str, str]) -> None:
        self.namespace = namespace
        self.labels = labels
        self.members: set[str] = set()
        # selector owner -> edge type, for every selector of the namespace that matches
        self.selected_by: dict[str, Rel] = {}

    def __repr__(self) -> str:
        return f"Identity({self.namespace}, {dict(self.labels)}, {len(self.members)} members)"


@dataclass
class GraphState:
    """The graph and the indexes that keep incremental updates cheap."""

    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    # kind -> namespace ("" for cluster-scoped) -> keys
    by_kind: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    # namespace -> id of a label map -> the identity of the pod-likes carrying it
    identities: dict[str, dict[int, Identity]] = field(default_factory=dict)
    # (namespace, label key, label value) -> identities with that label
    by_label: dict[tuple[str, str, str], set[Identity]] = field(default_factory=dict)
    # (namespace, label key) -> the values present: Exists selectors expand through by_label.
    by_label_key: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    # namespace -> its selector owners (Services, policies), indexed by an anchor label
    selectors: dict[str, NamespaceSelectors] = field(default_factory=dict)
    # selector owner -> the identities its selector matches (its virtual edges)
    selected: dict[str, set[Identity]] = field(default_factory=dict)
    # target key -> references naming it while it is absent (linked the moment it arrives).
    # Only absent targets: a present one has the edge itself. Declared references are not
    # stored either; record_references() derives them from the record again when needed.
    pending: dict[str, set[Edge]] = field(default_factory=dict)
    # Kinds that never enter this graph (from a cluster: the workloads, which are not
    # watched): references to them are not kept pending, as nothing would ever link them.
    never_arriving: frozenset[str] = frozenset()

    def never_arrive(self, kinds: Iterable[str]) -> None:
        """Declare kinds that will never be added; forget references waiting for them."""
        self.never_arriving = frozenset(kinds)
        for target in [t for t in self.pending if parse_key(t).kind in self.never_arriving]:
            del self.pending[target]

    def record(self, key: str) -> Record | None:
        node = nodes(self.graph).get(key)
        return None if node is None else node.record

    def keys_of(self, kind: str, namespace: str | None = None) -> Iterator[str]:
        per_ns = self.by_kind.get(kind)
        if not per_ns:
            return
        if namespace is not None:
            yield from per_ns.get(namespace, ())
            return
        for keys in per_ns.values():
            yield from keys

    def selected_keys(self, owner: str) -> Iterator[str]:
        """Pod-likes the selector of ``owner`` (a Service or policy) matches."""
        # chained in C: an export reads every member of every selector this way
        return chain.from_iterable(
            identity.members for identity in self.selected.get(owner, ()))

    def selector_rel(self, record: Record) -> Rel | None:
        """The edge type of the selector ``record`` owns in the graph (SELECTS for a
        Service, APPLIES_TO for a policy); None if it owns none."""
        index = self.selectors.get(record.namespace)
        selected = index.owners.get(record.key) if index is not None else None
        return None if selected is None else selected[0]

    def selectors_of(self, record: Record) -> Mapping[str, Rel]:
        """Selector owners matching a pod-like record -> their edge type (SELECTS or
        APPLIES_TO); empty for any other record."""
        if record.kind not in POD_LIKE_KINDS:
            return EMPTY_SELECTED
        identity = self.identity(record)
        return EMPTY_SELECTED if identity is None else identity.selected_by

    def adjacent_keys(self, key: str) -> Iterator[str]:
        """Keys one edge away from ``key`` in either direction, selector edges included."""
        graph = self.graph
        if key not in graph:
            return
        yield from successors(graph)[key]
        yield from predecessors(graph)[key]
        yield from self.selected_keys(key)
        record = nodes(graph)[key].record
        yield from self.selectors_of(record)

    def adjacent_prefix(self, key: str, limit: int) -> tuple[str, ...]:
        """``tuple(islice(self.adjacent_keys(key), limit))``, built from whole parts where
        they fit (the change ring takes one of these for every event)."""
        graph = self.graph
        succ = successors(graph).get(key)
        if succ is None or limit <= 0:
            return ()
        found = tuple(succ) if len(succ) < limit else tuple(islice(succ, limit))
        rest = limit - len(found)
        if not rest:
            return found
        pred = predecessors(graph)[key]
        found += tuple(pred) if len(pred) < rest else tuple(islice(pred, rest))
        rest = limit - len(found)
        if not rest:
            return found
        if key in self.selected:
            found += tuple(islice(self.selected_keys(key), rest))
            rest = limit - len(found)
            if not rest:
                return found
        selectors = self.selectors_of(nodes(graph)[key].record)
        if selectors:
            found += tuple(selectors) if len(selectors) < rest else tuple(
                islice(selectors, rest))
        return found

    def edges(self) -> Iterator[tuple[str, str, frozenset[Rel]]]:
        """Every edge, stored and selector edges alike, as (source, target, relationships)."""
        virtual: dict[tuple[str, str], set[Rel]] = {}
        for owner, identities in self.selected.items():
            for identity in identities:
                rel = identity.selected_by[owner]
                for member in identity.members:
                    virtual.setdefault((owner, member), set()).add(rel)
        for source, target, data in self.graph.edges(data=True):
            extra = virtual.pop((source, target), set())
            yield source, target, frozenset(data) | extra
        for (source, target), rels in virtual.items():
            yield source, target, frozenset(rels)

    def edge_count(self) -> int:
        selector_edges = sum(len(identity.members) for identities in self.selected.values()
                             for identity in identities)
        return int(self.graph.number_of_edges()) + selector_edges

    def identity(self, record: Record) -> Identity | None:
        """The identity a pod-like record belongs to (None if it is not in the graph)."""
        labels = selectable_labels(record)
        return self.identities.get(record.namespace, {}).get(id(labels))

    def matching(self, namespace: str, selector: LabelSelector) -> set[str]:
        """Pod-like keys in ``namespace`` whose labels the selector matches."""
        keys: set[str] = set()
        for identity in self.matching_identities(namespace, selector):
            keys |= identity.members
        return keys

    def matching_identities(self, namespace: str, selector: LabelSelector
                            ) -> Iterator[Identity]:
        """Identities in ``namespace`` whose labels the selector matches: one test each."""
        for identity in self._candidates(namespace, selector):
            if selector.matches(identity.labels):
                yield identity

    def _candidates(self, namespace: str, selector: LabelSelector) -> Iterable[Identity]:
        # Narrow with the most selective index entry; matches() then checks every term.
        best: set[Identity] | None = None
        for key, value in selector.match_labels:
            found = self.by_label.get((namespace, key, value))
            if not found:
                return ()
            if best is None or len(found) < len(best):
                best = found
        for req in selector.requirements:
            if req.operator is Operator.IN:
                union: set[Identity] = set()
                for value in req.values:
                    union |= self.by_label.get((namespace, req.key, value), set())
                found = union
            elif req.operator is Operator.EXISTS:
                found = set()
                for value in self.by_label_key.get((namespace, req.key), ()):
                    found |= self.by_label[(namespace, req.key, value)]
            else:
                continue
            if not found:
                return ()
            if best is None or len(found) < len(best):
                best = found
        if best is not None:
            return best
        return list(self.identities.get(namespace, {}).values())
