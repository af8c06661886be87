"""A view of the graph with a few objects added, replaced or deleted: what-if answers.

``diff_routes(proposed=...)`` answers as if some objects were applied. Copying the graph
would cost what the graph costs; an :class:`OverlayView` answers every ``GraphView`` read
from a small *delta* (records by key; ``None`` for a deleted object) over the view beneath
it, which it never writes. The delta's edges come from the code the graph itself is built
with (``building.record_references`` and ``record_selector``), so a proposed route
attaches_to its Gateway and routes_to its Services as it would once applied, and a route
already waiting for a proposed Service (a pending reference) links to it. Each read costs
the same read beneath plus work proportional to the delta.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

from netsight.graph.model.kept_events import KeptEvent
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel, make_key, parse_key
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import Change, IngestProblem
from netsight.graph.store.record_edges import (
    SELECTOR_RELS,
    record_references,
    record_selector,
    selectable_labels,
)
from netsight.graph.store.view import GraphView, WrappedView

T = TypeVar("T")

# Kinds whose records own a pod selector (building.record_selector).
_SELECTOR_KINDS = (Kind.SERVICE, Kind.NETWORK_POLICY)
_REFERENCE_RELS = frozenset(Rel) - SELECTOR_RELS - {Rel.CONTAINS}


class OverlayView(WrappedView):
    """``view`` with ``delta`` applied: key -> the record that replaces or adds it, or None
    to delete it. ``problems`` are the delta's own (values kept as written)."""

    __slots__ = ("_added", "_base_has", "_by_kind", "_delta", "_extra_problems", "_refs_in")

    def __init__(self, view: GraphView, delta: Mapping[str, Record | None],
                 problems: Iterable[IngestProblem] = ()) -> None:
        super().__init__(view)  # nothing here can reach past ``view``, let alone write it
        self._delta = dict(delta)
        self._base_has = {key: view.exists(key) for key in self._delta}
        # Keys the delta brings in that are absent beneath (pending references may name them).
        self._added = frozenset(k for k, r in self._delta.items()
                                if r is not None and not self._base_has[k])
        self._by_kind: dict[str, dict[str, list[Record]]] = {}
        self._refs_in: dict[str, list[tuple[str, Rel]]] = {}
        for record in self._delta.values():
            if record is None:
                continue
            self._by_kind.setdefault(record.kind, {}).setdefault(
                record.namespace, []).append(record)
            for source, target, rel in record_references(record):
                self._refs_in.setdefault(target, []).append((source, rel))
        self._extra_problems = list(problems)

    @property
    def delta(self) -> Mapping[str, Record | None]:
        """What this overlay changes: key -> record (added or replacing), None (deleted)."""
        return self._delta

    @property
    def base(self) -> GraphView:
        """The view beneath."""
        return self._inner

    # --- the GraphView interface ----------------------------------------------------------

    def get(self, key: str) -> Record | None:
        if key in self._delta:
            return self._delta[key]
        return self._inner.get(key)

    def exists(self, key: str) -> bool:
        if key in self._delta:
            return self._delta[key] is not None
        return self._inner.exists(key)

    def for_each(self, kind: str, namespace: str | None = None) -> Iterator[Record]:
        delta = self._delta
        for record in self._inner.for_each(kind, namespace):
            if record.key not in delta:
                yield record
        per_ns = self._by_kind.get(kind)
        if per_ns:
            if namespace is None:
                for records in per_ns.values():
                    yield from records
            else:
                yield from per_ns.get(namespace, ())

    def count(self, kind: str, namespace: str | None = None) -> int:
        total = self._inner.count(kind, namespace)
        for key, record in self._delta.items():
            oid = parse_key(key)
            if oid.kind == kind and (namespace is None or oid.namespace == namespace):
                total += (record is not None) - self._base_has[key]
        return total

    def neighbors(
        self, key: str, rel: Rel, *, incoming: bool = False, kind: str | None = None
    ) -> Iterator[Record]:
        record = self.get(key)
        if record is None:
            return
        for other in self._related(record, rel, incoming):
            if kind is None or other.kind == kind:
                yield other

    def adjacent_keys(self, key: str) -> Iterator[str]:
        record = self.get(key)
        if record is None:
            return
        for rel in Rel:
            for incoming in (False, True):
                for other in self._related(record, rel, incoming):
                    yield other.key

    def out_edges(self, key: str) -> Iterator[tuple[str, Rel]]:
        record = self.get(key)
        if record is None:
            return
        for rel in Rel:
            for other in self._related(record, rel, False):
                yield other.key, rel

    def derived(self, name: Hashable, kinds: Iterable[str],
                build: Callable[[GraphView], T]) -> T:
        # An overlay lives for one answer: nothing to keep it for. Callers that need speed
        # take the base's derived structure and adjust it by ``delta`` themselves.
        return build(self)

    def kept(self) -> dict[str, Any]:
        # Nothing kept across calls: an overlay lives for one answer, and what is kept for
        # the graph beneath describes it without the delta.
        return {}

    def identities(self) -> Iterator[tuple[str, Mapping[str, str], AbstractSet[str],
                                           Mapping[str, Rel]]]:
        raise NotImplementedError(
            "an overlay keeps no identity index: evaluate its flows pod by pod")

    def matching_label_maps(self, namespace: str, selector: LabelSelector
                            ) -> Iterator[Mapping[str, str]]:
        raise NotImplementedError(
            "an overlay keeps no identity index: evaluate its flows pod by pod")

    def pending_references(self, key: str) -> Iterator[tuple[str, Rel]]:
        if self.exists(key):
            return
        delta = self._delta
        if key in delta and self._base_has[key]:
            # Deleted by the delta: the references to it beneath now wait for it.
            for rel in _REFERENCE_RELS:
                for source in self._inner.neighbors(key, rel, incoming=True):
                    if source.key not in delta:
                        yield source.key, rel
        else:
            for source_key, rel in self._inner.pending_references(key):
                if source_key not in delta:
                    yield source_key, rel
        yield from self._refs_in.get(key, ())

    def matching(self, namespace: str, selector: LabelSelector) -> Iterator[Record]:
        delta = self._delta
        for record in self._inner.matching(namespace, selector):
            if record.key not in delta:
                yield record
        for record in self._pod_likes(namespace):
            if selector.matches(selectable_labels(record)):
                yield record

    def namespaces(self) -> set[str]:
        names = set(self._inner.namespaces())
        gone: set[str] = set()
        for key, record in self._delta.items():
            oid = parse_key(key)
            if record is not None:
                names.add(oid.name if oid.kind == Kind.NAMESPACE else oid.namespace)
            else:
                gone.add(oid.name if oid.kind == Kind.NAMESPACE else oid.namespace)
        kinds = self.kinds()
        for name in gone - {""}:
            if not self.exists(make_key(Kind.NAMESPACE, "", name)) and \
                    not any(self.count(kind, name) for kind in kinds):
                names.discard(name)
        names.discard("")
        return names

    def kinds(self) -> list[str]:
        touched = {parse_key(key).kind for key in self._delta}
        kept = [kind for kind in self._inner.kinds() if kind not in touched]
        kept += [kind for kind in touched if self.count(kind)]
        return sorted(kept)

    def problems(self) -> list[IngestProblem]:
        # An object the delta replaces or deletes takes its problems with it.
        delta = self._delta
        found = [p for p in self._inner.problems() if p.key.partition("#")[0] not in delta]
        return found + self._extra_problems

    def changes_since(self, generation: int, *, at: float | None = None,
                      newest_first: bool = False) -> Iterator[Change]:
        # What the live graph took in.
        return self._inner.changes_since(generation, at=at, newest_first=newest_first)

    def events(self, namespace: str | None = None, kind: str | None = None,
               name: str | None = None) -> Iterator[KeptEvent]:
        # Events are the live cluster's history: a proposed object has none of its own.
        return self._inner.events(namespace, kind, name)

    @property
    def node_count(self) -> int:
        return self._inner.node_count + sum(
            (record is not None) - self._base_has[key] for key, record in self._delta.items())

    @property
    def edge_count(self) -> int:
        # (source, target) pairs touching the delta are counted again, in the overlay.
        keys = list(self._delta)
        return self._inner.edge_count - len(_pairs(self._inner, keys)) + \
            len(_pairs(self, keys))

    # --- edges ------------------------------------------------------------------------------

    def _pod_likes(self, namespace: str) -> Iterator[Record]:
        for kind, per_ns in self._by_kind.items():
            if kind in POD_LIKE_KINDS:
                yield from per_ns.get(namespace, ())

    def _related(self, record: Record, rel: Rel, incoming: bool) -> Iterator[Record]:
        if rel is Rel.CONTAINS:
            yield from (self._contained_in(record) if incoming else self._contents(record))
        elif rel in SELECTOR_RELS:
            yield from (self._selectors_of(record, rel) if incoming
                        else self._selected_by(record, rel))
        elif incoming:
            yield from self._referrers(record.key, rel)
        else:
            yield from self._referenced(record, rel)

    def _contents(self, record: Record) -> Iterator[Record]:
        if record.kind != Kind.NAMESPACE:
            return
        delta, name = self._delta, record.name
        if self._inner.exists(record.key):
            members: Iterable[Record] = self._inner.neighbors(record.key, Rel.CONTAINS)
        else:  # a proposed Namespace contains what its namespace already holds
            members = (r for kind in self._inner.kinds() for r in self._inner.for_each(kind, name))
        for member in members:
            if member.key not in delta:
                yield member
        for per_ns in self._by_kind.values():
            yield from per_ns.get(name, ())

    def _contained_in(self, record: Record) -> Iterator[Record]:
        if record.namespace:
            namespace = self.get(make_key(Kind.NAMESPACE, "", record.namespace))
            if namespace is not None:
                yield namespace

    def _selected_by(self, owner: Record, rel: Rel) -> Iterator[Record]:
        selected = record_selector(owner)
        if selected is not None and selected[0] is rel:
            yield from self.matching(owner.namespace, selected[1])

    def _selectors_of(self, record: Record, rel: Rel) -> Iterator[Record]:
        if record.kind not in POD_LIKE_KINDS:
            return
        delta = self._delta
        labels = selectable_labels(record)
        if record.key in delta:
            owners: Iterable[Record] = (o for kind in _SELECTOR_KINDS
                                        for o in self.for_each(kind, record.namespace))
        else:
            for owner in self._inner.neighbors(record.key, rel, incoming=True):
                if owner.key not in delta:
                    yield owner
            owners = (o for kind in _SELECTOR_KINDS
                      for o in self._by_kind.get(kind, {}).get(record.namespace, ()))
        for owner in owners:
            selected = record_selector(owner)
            if selected is not None and selected[0] is rel and selected[1].matches(labels):
                yield owner

    def _referenced(self, record: Record, rel: Rel) -> Iterator[Record]:
        delta = self._delta
        if record.key in delta:
            for _, target, ref_rel in record_references(record):
                if ref_rel is rel:
                    found = self.get(target)
                    if found is not None:
                        yield found
            return
        for beneath in self._inner.neighbors(record.key, rel):
            replaced = delta.get(beneath.key, beneath)
            if replaced is not None:
                yield replaced
        if self._added and rel in _REFERENCE_RELS:
            # References waiting beneath for an object the delta adds.
            for _, target, ref_rel in record_references(record):
                if ref_rel is rel and target in self._added:
                    added = delta[target]
                    if added is not None:
                        yield added

    def _referrers(self, key: str, rel: Rel) -> Iterator[Record]:
        delta = self._delta
        sources: Iterable[Record]
        if self._inner.exists(key):
            sources = self._inner.neighbors(key, rel, incoming=True)
        else:
            sources = (found for source, ref_rel in self._inner.pending_references(key)
                       if ref_rel is rel and (found := self._inner.get(source)) is not None)
        for source in sources:
            if source.key not in delta:
                yield source
        for source_key, ref_rel in self._refs_in.get(key, ()):
            if ref_rel is rel:
                found = delta[source_key]
                if found is not None:
                    yield found


def _pairs(view: GraphView, keys: Iterable[str]) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for key in keys:
        for target, _ in view.out_edges(key):
            pairs.add((key, target))
        for rel in Rel:
            for source in view.neighbors(key, rel, incoming=True):
                pairs.add((source.key, key))
    return pairs
