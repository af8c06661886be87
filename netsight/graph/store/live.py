"""The live graph: one mutable store, read through views (view.py).

Writers (manifest loading, the watch streams) call :meth:`GraphStore.apply` with one raw
object change at a time; every change that alters the graph bumps ``generation``. Readers
(analyzers) get a :class:`GraphView` from :meth:`GraphStore.view`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from itertools import compress
from operator import attrgetter, ne
from typing import Any

from netsight.graph.model.constructors import builder
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kept_events import EVENT_API_VERSIONS
from netsight.graph.model.kinds import make_key
from netsight.graph.model.reading import object_id, to_record
from netsight.graph.model.records import ContainerPort, PodRecord, Record, invalid_values
from netsight.graph.store import digraph
from netsight.graph.store.building import add, remove, replace_record
from netsight.graph.store.event_ring import EventRing
from netsight.graph.store.graph_state import GraphState
from netsight.graph.store.sync_status import AnyKindStatus, Source
from netsight.graph.store.view import GraphView

# GraphView and Source are read by every analyzer: importable from here, with the store.
__all__ = [
    "CHANGE_RING_SIZE",
    "RELATED_LIMIT",
    "Change",
    "EventType",
    "GraphStore",
    "GraphView",
    "IngestProblem",
    "ProblemKind",
    "Source",
]

log = logging.getLogger(__name__)


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


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


CHANGE_RING_SIZE = 10_000
RELATED_LIMIT = 64


@dataclass
class GraphStore:
    source: Source = Source.MANIFESTS
    cluster_name: str = "local"
    state: GraphState = field(default_factory=GraphState)
    generation: int = 0
    problems: dict[str, IngestProblem] = field(default_factory=dict)
    changes: deque[Change] = field(default_factory=lambda: deque(maxlen=CHANGE_RING_SIZE))
    sync: dict[str, AnyKindStatus] = field(default_factory=dict)
    # The namespaces watched (NAMESPACE=a,b); None: the whole cluster.
    namespaces: tuple[str, ...] | None = None
    # From a cluster: kind id -> the apiVersion it is watched in (the CRD versions served).
    served: dict[str, str] = field(default_factory=dict)
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
    # Recent Events about networking objects: history beside the graph, not in it.
    events: EventRing = field(default_factory=EventRing, repr=False)

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
        valid version exists, that version stays in the graph. An Event goes to the event
        ring and leaves the graph as it is.
        """
        if raw.get("kind") == "Event" and raw.get("apiVersion") in EVENT_API_VERSIONS:
            if event != EventType.DELETED:
                self.events.observe(raw)
            return False
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
        event read typed, typed_events.py); returns whether the graph changed."""
        key = record.key
        before = self.state.record(key)
        # One comparison, field by field, both for "equal?" and for the change's fields:
        # no field differs exactly when == would find the records equal (it compares every
        # field but the key, which follows from three of them).
        fields = changed_fields(before, record)
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
        # one ports tuple (shared_parts.py): one found valid is not looked at again in this
        # page.
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
        # one ports tuple (shared_parts.py): once one is found valid, the next pod skips
        # the check.
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

    def remove_kind(self, kind: str, keep: set[str] | None = None, *,
                    namespace: str | None = None) -> int:
        """Delete every object of ``kind`` (in ``namespace``, if given) not in ``keep`` (a
        re-list's reconciliation)."""
        stale = [k for k in self.state.keys_of(kind, namespace)
                 if keep is None or k not in keep]
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


def changed_fields(before: Record | None, after: Record | None) -> tuple[str, ...]:
    """The fields whose values differ between two versions of a record (none when either is
    missing or they are records of two types)."""
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
