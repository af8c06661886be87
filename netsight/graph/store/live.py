"""The live graph: one mutable store, read through views.

Writers (manifest loading, the watch streams) call :meth:`GraphStore.apply` with one raw
object change at a time; every change that alters the graph bumps ``generation``. Readers
(analyzers) get a :class:`GraphView`, which offers lookups and index queries but no way to
mutate, and never copies the graph. Analyzers are synchronous, so on the single asyncio loop
a view is consistent for the whole of one call.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from enum import StrEnum
from itertools import compress
from operator import attrgetter, ne
from typing import Any, TypeVar

from netsight.graph.model.constructors import builder
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.reading import object_id, to_record
from netsight.graph.model.records import ContainerPort, PodRecord, Record, invalid_values
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store import digraph
from netsight.graph.store.building import add, remove, replace_record
from netsight.graph.store.graph_state import GraphState
from netsight.graph.store.record_edges import SELECTOR_RELS

log = logging.getLogger(__name__)
T = TypeVar("T")


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


class Source(StrEnum):
    MANIFESTS = "manifests"
    CLUSTER = "cluster"
    DEMO = "demo"


class ProblemKind(StrEnum):
    UNPARSEABLE = "unparseable"  # the document is not YAML/JSON
    NOT_AN_OBJECT = "not_an_object"  # parsed, but not a Kubernetes object
    MALFORMED = "malformed"  # a Kubernetes object with a field netsight cannot read
    INVALID_VALUE = "invalid_value"  # read and kept, but a value the API server rejects
    DUPLICATE = "duplicate"  # a second object with the same identity in the input


# Problems tracked beside an object that is in the graph, rather than instead of it.
_PROBLEM_SUFFIX = {"duplicate": "#duplicate", "invalid_value": "#invalid"}


@dataclass(frozen=True, slots=True)
class IngestProblem:
    """An input netsight could not take as it is; analyzers report it as a finding."""

    kind: ProblemKind
    message: str
    field_path: str | None = None
    location: str | None = None  # "file.yaml#3" for manifests
    object_kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    api_version: str | None = None

    @property
    def key(self) -> str:
        """One problem per object (or per location); a duplicate is tracked beside its object."""
        if self.object_kind and self.name:
            key = make_key(self.object_kind, self.namespace or "", self.name)
            suffix = _PROBLEM_SUFFIX.get(self.kind, "")
            return f"{key}{suffix}"
        return self.location or self.message


@dataclass(frozen=True, slots=True)
class Change:
    """One change the graph took in: the ring of these answers "what changed around X"."""

    generation: int
    at: float  # time.time()
    type: EventType
    key: str
    fields: tuple[str, ...] = ()  # record fields that differ from the previous version
    # Neighbours just before the change (at most RELATED_LIMIT): a pod whose new labels
    # took it out of a Service still counts as a change "around" that Service.
    related: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChangeHorizon:
    """How far back the change ring reaches."""

    generation: int  # every change after this generation is held (0: none was dropped)
    at: float  # time.time() of the newest dropped change (0.0: none was dropped)
    started_at: float  # when the graph was created: nothing before is known


class SyncState(StrEnum):
    SYNCING = "syncing"  # listing for the first time
    SYNCED = "synced"  # listed, and the watch is up
    RETRYING = "retrying"  # the list or watch failed; retrying with backoff
    FORBIDDEN = "forbidden"  # RBAC denies list/watch of this kind
    STOPPED = "stopped"  # the kind's CRD went away


@dataclass
class KindStatus:
    """How current the graph is for one watched kind (written by the informers)."""

    kind: str
    state: SyncState = SyncState.SYNCING
    last_error: str | None = None
    down_since: float | None = None  # time.time() when the watch went down
    synced_at: float | None = None
    relists: int = 0
    events: int = 0

    @property
    def settled(self) -> bool:
        """Synced, or never going to be (forbidden, stopped): readiness stops waiting."""
        return self.state in (SyncState.SYNCED, SyncState.FORBIDDEN, SyncState.STOPPED)


CHANGE_RING_SIZE = 10_000
RELATED_LIMIT = 64
# Derived structures kept per store (GraphView.derived); a scope of callers keeps its own.
DERIVED_LIMIT = 32


@dataclass
class GraphStore:
    source: Source = Source.MANIFESTS
    cluster_name: str = "local"
    state: GraphState = field(default_factory=GraphState)
    generation: int = 0
    problems: dict[str, IngestProblem] = field(default_factory=dict)
    changes: deque[Change] = field(default_factory=lambda: deque(maxlen=CHANGE_RING_SIZE))
    sync: dict[str, KindStatus] = field(default_factory=dict)
    listeners: list[Callable[[Change], None]] = field(default_factory=list)
    # kind -> the generation of its last change (GraphView.kind_generation)
    kind_generations: dict[str, int] = field(default_factory=dict)
    # Keys of records with an invalid-value problem: most applies can skip the lookup.
    invalid_keys: set[str] = field(default_factory=set, repr=False)
    # The ports of the last pod found to have no invalid value (_note_invalid_values).
    _valid_ports: tuple[ContainerPort, ...] | None = field(default=None, repr=False)
    created_at: float = field(default_factory=time.time)
    # The newest change the ring dropped: (generation, time).
    dropped: tuple[int, float] = (0, 0.0)
    # GraphView.derived: name -> (the kind generations it was built at, the value), most
    # recently used last.
    derived: OrderedDict[Hashable, tuple[tuple[int, ...], object]] = field(
        default_factory=OrderedDict, repr=False)
    # GraphView.kept: what readers keep across calls and check themselves (policy sets).
    kept: dict[str, Any] = field(default_factory=dict, repr=False)

    def apply(
        self,
        event: EventType | str,
        raw: Mapping[str, Any],
        *,
        location: str | None = None,
        default_namespace: str = "default",
    ) -> bool:
        """Apply one ADDED/MODIFIED/DELETED object; returns whether the graph changed.

        A malformed object never raises: it is recorded as a problem and, if an earlier
        valid version exists, that version stays in the graph.
        """
        try:
            oid = object_id(raw, default_namespace)
        except MalformedObject as exc:
            self._note(IngestProblem(ProblemKind.NOT_AN_OBJECT, exc.message, exc.field_path,
                                     location))
            return False
        key = oid.key
        if event == EventType.DELETED:
            return self.apply_deleted(key)
        try:
            record = to_record(raw, default_namespace, oid=oid, previous=self.state.record(key))
        except MalformedObject as exc:
            self._note(
                IngestProblem(
                    ProblemKind.MALFORMED, exc.message, exc.field_path, location,
                    oid.kind, oid.namespace, oid.name, str(raw.get("apiVersion")),
                )
            )
            return False
        except Exception as exc:  # a reader bug: one object must not stop a whole kind
            log.exception("reading %s failed", key)
            self._note(
                IngestProblem(
                    ProblemKind.MALFORMED,
                    f"netsight could not read this object ({type(exc).__name__}); it is "
                    "left out of the graph", "", location,
                    oid.kind, oid.namespace, oid.name, str(raw.get("apiVersion")),
                )
            )
            return False
        return self.apply_record(record, location=location)

    def apply_deleted(self, key: str) -> bool:
        """Remove the object under ``key`` (a DELETED event); returns whether the graph
        changed."""
        before = self.state.record(key)
        related = self._neighbours(key) if before is not None else ()
        # The object's problem goes with it: readers see that as a change too.
        if self.problems:
            self.problems.pop(f"{key}#invalid", None)
            self.invalid_keys.discard(key)
            dropped = self.problems.pop(key, None) is not None
        else:
            dropped = False
        if remove(self.state, key) is None and not dropped:
            return False
        self.generation += 1
        self._record_change(_CHANGE(generation=self.generation, at=time.time(),
                                    type=EventType.DELETED, key=key, fields=(),
                                    related=related))
        return True

    def apply_record(self, record: Record, *, location: str | None = None) -> bool:
        """Add or replace an object whose record is already built (an ADDED or MODIFIED
        event read by typed.py); returns whether the graph changed."""
        key = record.key
        before = self.state.record(key)
        # One comparison, field by field, both for "equal?" and for the change's fields:
        # no field differs exactly when == would find the records equal (it compares every
        # field but the key, which follows from three of them).
        fields = _changed_fields(before, record)
        same = not fields and before is not None and type(before) is type(record)
        if same and key not in self.invalid_keys and key not in self.problems:
            # A status-only update (a pod's conditions' timestamps, its resourceVersion):
            # nothing netsight reads changed, and no problem is waiting to be cleared.
            return False
        related = self._neighbours(key) if before is not None else ()
        fixed = self.problems.pop(key, None) is not None if self.problems else False
        fixed |= self._note_invalid_values(record, location)
        if before is None:
            add(self.state, record)
        elif not same:
            replace_record(self.state, before, record)
        if same and not fixed:
            return False
        self.generation += 1
        kind = EventType.ADDED if before is None else EventType.MODIFIED
        self._record_change(_CHANGE(generation=self.generation, at=time.time(), type=kind,
                                    key=key, fields=fields, related=related))
        return True

    def apply_listed(self, records: Iterable[Record], seen: set[str] | None = None) -> int:
        """:meth:`apply_record` for each record of a list page, in order (noting each key
        in ``seen``); returns how many changed the graph.

        An initial list adds objects the graph does not hold yet: for those, the parts of
        ``apply_record`` that only matter for a replacement (the old version's neighbours,
        its fields, a problem it left) have nothing to do, and the graph takes the record
        directly. The graph, its problems and its change ring end up exactly as after
        ``apply_record`` one record at a time (tests/graph/test_listed_pages_apply_like_events.py).
        """
        state = self.state
        nodes = digraph.nodes(state.graph)
        problems, invalid = self.problems, self.invalid_keys
        ring, listeners, kind_generations = self.changes, self.listeners, self.kind_generations
        added = EventType.ADDED
        # A pod's invalid values are in its ports alone, and the pods of one template share
        # one ports tuple (typed.py): one found valid is not looked at again in this page.
        valid_ports: tuple[ContainerPort, ...] | None = None
        changed = 0
        for record in records:
            key = record.key
            if seen is not None:
                seen.add(key)
            if key in nodes or (problems and key in problems) or key in invalid:
                changed += self.apply_record(record)
                continue
            if type(record) is PodRecord and record.ports is valid_ports:
                pass
            elif invalid_values(record):
                self._note_invalid_values(record, None)
            elif type(record) is PodRecord:
                valid_ports = record.ports
            add(state, record)
            generation = self.generation = self.generation + 1
            # _record_change, inline: a page adds a thousand objects.
            change = _CHANGE(generation=generation, at=time.time(), type=added, key=key,
                             fields=(), related=())
            kind_generations[key.partition("/")[0]] = generation
            if len(ring) == ring.maxlen:
                self.dropped = (ring[0].generation, ring[0].at)
            ring.append(change)
            for listener in listeners:
                listener(change)
            changed += 1
        return changed

    def _neighbours(self, key: str) -> tuple[str, ...]:
        return self.state.adjacent_prefix(key, RELATED_LIMIT)

    def _note_invalid_values(self, record: Record, location: str | None) -> bool:
        """Track values kept as written that the API server would reject; True if changed."""
        # A pod's invalid values are in its ports alone, and the pods of one template share
        # one ports tuple (typed.py): once one is found valid, the next pod skips the check.
        ports = record.ports if isinstance(record, PodRecord) else None
        if ports is not None and ports is self._valid_ports and record.key not in self.invalid_keys:
            return False
        notes = invalid_values(record)
        if not notes and ports is not None:
            self._valid_ports = ports
        if not notes and record.key not in self.invalid_keys:
            return False
        key = f"{record.key}#invalid"
        if not notes:
            self.invalid_keys.discard(record.key)
            return self.problems.pop(key, None) is not None
        self.invalid_keys.add(record.key)
        problem = IngestProblem(
            ProblemKind.INVALID_VALUE,
            "; ".join(n.message for n in notes) + " (kept as written)",
            notes[0].field_path, location, record.kind, record.namespace, record.name,
            record.api_version)
        changed = self.problems.get(key) != problem
        self.problems[key] = problem
        return changed

    def remove_kind(self, kind: str, keep: set[str] | None = None) -> int:
        """Delete every object of ``kind`` not in ``keep`` (a re-list's reconciliation)."""
        stale = [k for k in self.state.keys_of(kind) if keep is None or k not in keep]
        for key in stale:
            related = self._neighbours(key)
            remove(self.state, key)
            self.problems.pop(key, None)
            self.problems.pop(f"{key}#invalid", None)
            self.invalid_keys.discard(key)
            self.generation += 1
            self._record_change(Change(self.generation, time.time(), EventType.DELETED, key,
                                       related=related))
        return len(stale)

    def _record_change(self, change: Change) -> None:
        self.kind_generations[change.key.partition("/")[0]] = change.generation
        if len(self.changes) == self.changes.maxlen:
            oldest = self.changes[0]
            self.dropped = (oldest.generation, oldest.at)
        self.changes.append(change)
        for listener in self.listeners:
            listener(change)

    def note_problem(self, problem: IngestProblem) -> None:
        """Record a problem found outside ``apply`` (a document that did not parse)."""
        self._note(problem)

    def _note(self, problem: IngestProblem) -> None:
        # The same problem again (a malformed object re-sent by a re-list) changes nothing:
        # the generation, and with it every cached answer and ETag, stays put.
        if self.problems.get(problem.key) == problem:
            return
        self.problems[problem.key] = problem
        self.generation += 1

    def view(self) -> GraphView:
        return GraphView(self)


_CHANGE = builder(Change)


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


def _changed_fields(before: Record | None, after: Record | None) -> tuple[str, ...]:
    if before is None or after is None or type(before) is not type(after):
        return ()
    names, values = _FIELDS.get(type(before)) or _fields(type(before))
    # Each pair compared with !=, in C: the field names whose values differ.
    changed = tuple(compress(names, map(ne, values(before), values(after))))
    # One tuple per combination (a few dozen): the change ring holds ten thousand, and
    # each new object there is one more for the cyclic collector to scan.
    shared = _CHANGED.get(changed)
    if shared is None:
        if len(_CHANGED) >= 4096:
            _CHANGED.clear()
        shared = _CHANGED[changed] = changed
    return shared


_CHANGED: dict[tuple[str, ...], tuple[str, ...]] = {}


# record class -> its field names, and a getter of their values in that order
_FIELDS: dict[type[Record], tuple[tuple[str, ...], Callable[[Record], tuple[Any, ...]]]] = {}


def _fields(cls: type[Record]) -> tuple[tuple[str, ...], Callable[[Record], tuple[Any, ...]]]:
    names = tuple(f.name for f in fields(cls))
    found = _FIELDS[cls] = (names, attrgetter(*names))
    return found


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
            return
        run: list[str] = []
        run_rel: Rel | None = None
        for target, data in digraph.successors(graph)[key].items():
            for rel in data:
                if rel is not run_rel:
                    if run_rel is not None:
                        yield run_rel, run
                    run, run_rel = [], rel
                run.append(target)
        if run_rel is not None:
            yield run_rel, run
        owned = state.selector_rel(digraph.nodes(graph)[key].record)
        if owned is not None:
            yield owned, state.selected_keys(key)

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

    @property
    def node_count(self) -> int:
        return int(self._state.graph.number_of_nodes())

    @property
    def edge_count(self) -> int:
        return self._state.edge_count()


def edge_runs(edges: Iterable[tuple[str, Rel]]) -> Iterator[tuple[Rel, list[str]]]:
    """(target, relationship) pairs as runs of one relationship, in order: ``out_edge_runs``
    for views that filter or compute their edges one at a time."""
    run: list[str] = []
    run_rel: Rel | None = None
    for target, rel in edges:
        if rel is not run_rel:
            if run_rel is not None:
                yield run_rel, run
            run, run_rel = [], rel
        run.append(target)
    if run_rel is not None:
        yield run_rel, run
