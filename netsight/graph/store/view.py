"""Read-only access to the live graph for analyzers.

A :class:`GraphView` offers lookups and index queries but no way to mutate, and never copies
the graph. Analyzers are synchronous, so on the single asyncio loop a view is consistent for
the whole of one call. Views over other views (overlay.py, scoped.py) subclass it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store import digraph
from netsight.graph.store.record_edges import SELECTOR_RELS
from netsight.graph.store.sync_status import Source, SyncState

if TYPE_CHECKING:  # the store hands out views of itself (GraphStore.view)
    from netsight.graph.model.kept_events import KeptEvent
    from netsight.graph.store.live import Change, GraphStore, IngestProblem

T = TypeVar("T")

# Derived structures kept per store (GraphView.derived); a scope of callers keeps its own.
DERIVED_LIMIT = 32


@dataclass(frozen=True, slots=True)
class ChangeHorizon:
    """How far back the change ring reaches."""

    generation: int  # every change after this generation is held (0: none was dropped)
    at: float  # time.time() of the newest dropped change (0.0: none was dropped)
    started_at: float  # when the graph was created: nothing before is known


class GraphView:
    """Read-only access to the graph for analyzers."""

    __slots__ = ("_state", "_store")

    def __init__(self, store: GraphStore) -> None:
        self._store = store
        self._state = store.state

    @property
    def generation(self) -> int:
        return self._store.generation

    @property
    def source(self) -> Source:
        return self._store.source

    @property
    def cluster_name(self) -> str:
        return self._store.cluster_name

    def get(self, key: str) -> Record | None:
        return self._state.record(key)

    def exists(self, key: str) -> bool:
        return key in self._state.graph

    def for_each(self, kind: str, namespace: str | None = None) -> Iterator[Record]:
        """Records of one kind, in one namespace or all; order is unspecified."""
        nodes = digraph.nodes(self._state.graph)
        for key in self._state.keys_of(kind, namespace):
            yield nodes[key].record

    def count(self, kind: str, namespace: str | None = None) -> int:
        per_ns = self._state.by_kind.get(kind, {})
        if namespace is not None:
            return len(per_ns.get(namespace, ()))
        return sum(len(keys) for keys in per_ns.values())

    def neighbors(
        self, key: str, rel: Rel, *, incoming: bool = False, kind: str | None = None
    ) -> Iterator[Record]:
        """Records related to ``key`` by ``rel``: its targets, or with ``incoming`` its sources."""
        state = self._state
        graph = state.graph
        if key not in graph:
            return
        nodes = digraph.nodes(graph)
        others: Iterable[str]
        if rel in SELECTOR_RELS:
            # Selector edges live in the identity index, not in networkx (building.py).
            if incoming:
                others = [owner for owner, owner_rel in
                          state.selectors_of(nodes[key].record).items() if owner_rel is rel]
            else:
                owned = state.selector_rel(nodes[key].record)
                others = state.selected_keys(key) if owned is rel else ()
        else:
            table = digraph.predecessors(graph) if incoming else digraph.successors(graph)
            adjacency = table[key]
            others = [other for other, data in adjacency.items() if rel in data]
        for other in others:
            found: Record = nodes[other].record
            if kind is None or found.kind == kind:
                yield found

    def adjacent_keys(self, key: str) -> Iterator[str]:
        """Keys of every node one edge away from ``key``, in either direction."""
        return self._state.adjacent_keys(key)

    def out_edges(self, key: str) -> Iterator[tuple[str, Rel]]:
        """(target key, relationship) for every relationship out of ``key``, selector
        edges included: one pass for an export, instead of one ``neighbors`` call a type."""
        state = self._state
        graph = state.graph
        if key not in graph:
            return
        for target, data in digraph.successors(graph)[key].items():
            for rel in data:
                yield target, rel
        owned = state.selector_rel(digraph.nodes(graph)[key].record)
        if owned is not None:
            for target in state.selected_keys(key):
                yield target, owned

    def out_edge_runs(self, key: str) -> Iterator[tuple[Rel, Iterable[str]]]:
        """``out_edges`` in runs of one relationship, in the same order: (relationship,
        target keys). A selector's matches are one run, so an export can encode them in
        bulk rather than one edge at a time."""
        state = self._state
        graph = state.graph
        if key not in graph:
            return iter(())
        stored = edge_runs(digraph.successors(graph)[key].items())
        owned = state.selector_rel(digraph.nodes(graph)[key].record)
        if owned is None:
            return stored
        return chain(stored, ((owned, state.selected_keys(key)),))

    def kind_generation(self, kind: str) -> int:
        """The graph generation at which an object of ``kind`` last changed (0: never).
        Lets an analyzer keep something derived from one kind until that kind changes."""
        return self._store.kind_generations.get(kind, 0)

    def derived(self, name: Hashable, kinds: Iterable[str],
                build: Callable[[GraphView], T]) -> T:
        """``build(self)``, kept with the store until an object of one of ``kinds`` changes.

        For indexes an analyzer would otherwise rebuild on every call (routes by hostname):
        ``build`` must read only objects of ``kinds``, and callers must not mutate the
        value, unless it keeps itself current: with no ``kinds`` it is kept until evicted
        (the store keeps the most recently used few), e.g. an index moved forward from
        :meth:`changes_since`, or a cache whose entries are checked against their records.
        """
        return _derived(self._store, name, tuple(kinds), self, build)

    def pending_references(self, key: str) -> Iterator[tuple[str, Rel]]:
        """References objects make to ``key`` while it is absent, as (source key, rel):
        the edges that will appear when it arrives (a route naming a missing Service)."""
        for source, _, rel in self._state.pending.get(key, ()):
            yield source, rel

    def matching(self, namespace: str, selector: LabelSelector) -> Iterator[Record]:
        """Pods and workload templates in ``namespace`` the selector matches, via the index."""
        nodes = digraph.nodes(self._state.graph)
        for key in self._state.matching(namespace, selector):
            yield nodes[key].record

    def kept(self) -> dict[str, Any]:
        """Where an analyzer keeps what it derives from this graph across calls (indexes
        kept current by generation): it lives and dies with the store, so nothing derived
        from one graph is ever taken for another's. Entries check their own validity
        (unlike :meth:`derived`, nothing here is dropped when a kind changes)."""
        return self._store.kept

    def identities(self) -> Iterator[tuple[str, Mapping[str, str], AbstractSet[str],
                                           Mapping[str, Rel]]]:
        """Every identity (pod-likes of a namespace sharing one label map): (namespace,
        labels, member keys, selector owner -> edge type). The sets are the graph's own,
        read-only, valid until the next change."""
        for per_ns in self._state.identities.values():
            for identity in per_ns.values():
                yield identity.namespace, identity.labels, identity.members, \
                    identity.selected_by

    def matching_label_maps(self, namespace: str, selector: LabelSelector
                            ) -> Iterator[Mapping[str, str]]:
        """The label map of each identity in ``namespace`` the selector matches (one test
        per identity, through the label index)."""
        for identity in self._state.matching_identities(namespace, selector):
            yield identity.labels

    def namespaces(self) -> set[str]:
        """Namespaces that exist as objects or hold at least one object."""
        names = {ns for per_ns in self._state.by_kind.values() for ns in per_ns if ns}
        names.update(r.name for r in self.for_each(Kind.NAMESPACE))
        return names

    def kinds(self) -> list[str]:
        return sorted(self._state.by_kind)

    def problems(self) -> list[IngestProblem]:
        return list(self._store.problems.values())

    def unreadable(self, kind: str) -> str | None:
        """Why objects of ``kind`` cannot be trusted to be complete, or None if they can.

        A kind RBAC forbids, or one whose first list has not finished, is empty in the
        graph without being empty in the cluster; analyzers must not read that as "none".
        """
        status = self._store.sync.get(kind)
        if status is None:
            return None  # manifests: what was given is all there is
        if status.state is SyncState.FORBIDDEN:
            return f"{kind}: listing is forbidden ({status.last_error})"
        if status.synced_at is None:
            return f"{kind}: not listed yet ({status.state.value})"
        return None

    def untracked(self, kind: str) -> str | None:
        """Why a missing object of ``kind`` may still exist in the cluster, or None.

        From manifests, what was given is all there is. From a cluster, only the kinds an
        informer lists are known: one that is not watched (Secrets with SECRET_METADATA off,
        an older API server) is as unknown as one RBAC forbids or not listed yet.
        """
        if self.source is Source.MANIFESTS:
            return None
        if kind not in self._store.sync:
            return f"{kind}: not watched"
        return self.unreadable(kind)

    @property
    def watched_namespaces(self) -> tuple[str, ...] | None:
        """The namespaces netsight watches (NAMESPACE=a,b); None: the whole cluster."""
        return self._store.namespaces

    def served(self) -> dict[str, str]:
        """From a cluster, each watched kind's apiVersion (its CRD's served version netsight
        reads); empty from manifests."""
        return dict(self._store.served)

    def not_visible(self) -> list[str]:
        """Kinds RBAC forbids netsight to list (in a watched namespace, or at all)."""
        return sorted(kind for kind, status in self._store.sync.items()
                      if status.state is SyncState.FORBIDDEN)

    def staleness(self) -> dict[str, float]:
        """Kinds whose watch is down, with the seconds since it went down."""
        now = time.time()
        return {kind: round(now - status.down_since, 1)
                for kind, status in self._store.sync.items()
                if status.down_since is not None}

    def change_horizon(self) -> ChangeHorizon:
        """How far back :meth:`changes_since` reaches: before it, changes are not known."""
        generation, at = self._store.dropped
        return ChangeHorizon(generation, at, self._store.created_at)

    def changes_since(self, generation: int, *, at: float | None = None,
                      newest_first: bool = False) -> Iterator[Change]:
        """Changes after ``generation`` (and, given ``at``, taken in after that time) that
        the ring still holds, oldest first (``newest_first``: from the newest back, lazily,
        for a reader that stops after a few)."""
        # From the newest back: a few recent changes cost a few steps, not the whole ring.
        newer = []
        for change in reversed(self._store.changes):
            if change.generation <= generation or (at is not None and change.at <= at):
                break
            if newest_first:
                yield change
            else:
                newer.append(change)
        yield from reversed(newer)

    def events(self, namespace: str | None = None, kind: str | None = None,
               name: str | None = None) -> Iterator[KeptEvent]:
        """Recent Events held about objects (of ``namespace``, ``kind``, ``name`` where
        given), most recent first."""
        ring = self._store.events
        if namespace is not None and kind is not None and name is not None:
            yield from ring.about(namespace, kind, name)
            return
        for event in ring.newest_first():
            if (namespace is None or event.namespace == namespace) and \
                    (kind is None or event.kind == kind) and (name is None or event.name == name):
                yield event

    def events_unknown(self) -> str | None:
        """Why recent Events may be missing (their watch forbidden or down), or None."""
        return self._store.events.why_unknown()

    @property
    def node_count(self) -> int:
        return int(self._state.graph.number_of_nodes())

    @property
    def edge_count(self) -> int:
        return self._state.edge_count()


class WrappedView(GraphView):
    """A view answering from another view beneath it (overlay.py, scoped.py).

    ``GraphView.__init__`` is not called: its slots (the store, the raw state) stay empty,
    so nothing in a subclass can reach past the view beneath into the graph. What describes
    the graph as a whole rather than any object (its generation and source, the informers'
    state, the change ring's reach) reads the same through it.
    """

    __slots__ = ("_inner",)

    def __init__(self, view: GraphView) -> None:
        self._inner = view

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Each subclass takes these reads as its own, as if it had written them: a view
        # over a view defines every GraphView read itself, and none falls through to
        # GraphView's, which would read the raw graph (scoped.UNSCOPED refuses any other).
        super().__init_subclass__(**kwargs)
        for name in _WHOLE_GRAPH_READS:
            if name not in vars(cls):
                setattr(cls, name, vars(WrappedView)[name])

    @property
    def generation(self) -> int:
        return self._inner.generation

    @property
    def source(self) -> Source:
        return self._inner.source

    @property
    def cluster_name(self) -> str:
        return self._inner.cluster_name

    def kind_generation(self, kind: str) -> int:
        # A timing, not an object. Whatever is kept until the kind changes (derived) must
        # still be kept per view: a subclass keys or builds its own.
        return self._inner.kind_generation(kind)

    def out_edge_runs(self, key: str) -> Iterator[tuple[Rel, Iterable[str]]]:
        return edge_runs((target, (rel,)) for target, rel in self.out_edges(key))

    def unreadable(self, kind: str) -> str | None:
        return self._inner.unreadable(kind)  # about the informers, not about any object

    def untracked(self, kind: str) -> str | None:
        return self._inner.untracked(kind)  # about the informers, not about any object

    def staleness(self) -> dict[str, float]:
        return self._inner.staleness()

    @property
    def watched_namespaces(self) -> tuple[str, ...] | None:
        return self._inner.watched_namespaces  # netsight's configuration, not an object

    def not_visible(self) -> list[str]:
        return self._inner.not_visible()  # about the informers, not about any object

    def served(self) -> dict[str, str]:
        return self._inner.served()  # about the informers, not about any object

    def change_horizon(self) -> ChangeHorizon:
        return self._inner.change_horizon()  # about the ring, not about any object

    def events(self, namespace: str | None = None, kind: str | None = None,
               name: str | None = None) -> Iterator[KeptEvent]:
        return self._inner.events(namespace, kind, name)  # live history, as proposed or not

    def events_unknown(self) -> str | None:
        return self._inner.events_unknown()


_WHOLE_GRAPH_READS = ("generation", "source", "cluster_name", "kind_generation", "out_edge_runs",
                      "unreadable", "untracked", "staleness", "change_horizon",
                      "watched_namespaces", "not_visible", "served",
                      "events_unknown")


def _derived(store: GraphStore, name: Hashable, kinds: tuple[str, ...], view: GraphView,
             build: Callable[[GraphView], T]) -> T:
    generations = tuple(store.kind_generations.get(kind, 0) for kind in kinds)
    held = store.derived.get(name)
    if held is not None and held[0] == generations:
        store.derived.move_to_end(name)
        return held[1]  # type: ignore[return-value]  # stored by this function for name
    value = build(view)
    store.derived[name] = (generations, value)
    store.derived.move_to_end(name)
    while len(store.derived) > DERIVED_LIMIT:
        store.derived.popitem(last=False)
    return value


def edge_runs(edges: Iterable[tuple[str, Iterable[Rel]]]) -> Iterator[tuple[Rel, list[str]]]:
    """(target, its relationships) pairs as runs of one relationship, in order: the stored
    edges of ``GraphView.out_edge_runs``, and all of it for views that filter or compute
    their edges one at a time."""
    run: list[str] = []
    run_rel: Rel | None = None
    for target, rels in edges:
        for rel in rels:
            if rel is not run_rel:
                if run_rel is not None:
                    yield run_rel, run
                run, run_rel = [], rel
            run.append(target)
    if run_rel is not None:
        yield run_rel, run
