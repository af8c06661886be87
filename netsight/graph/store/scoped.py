"""A read-only view of the graph restricted to some namespaces, for callers who may not see all.

The graph is built with netsight's own RBAC, which reads every namespace; a caller over HTTP
may be allowed only a few. :class:`ScopedView` is a :class:`GraphView` that hides every object
in the other namespaces — and the Namespace objects themselves — from every read, so each
analyzer and the graph export respect the restriction without knowing about it. An answer
about a hidden object is the answer about a missing one: it never exists, is never a
neighbour, never changed and has no problems. Cluster-scoped objects (IngressClasses,
GatewayClasses, AdminNetworkPolicies, …) stay visible: they are nobody's namespace.

It subclasses ``GraphView`` only so that analyzers typed against it accept it; every public
attribute is overridden here. One that is not — a method someone adds to ``GraphView`` later —
raises :class:`UnscopedRead` instead of quietly answering from the whole graph, and
``tests/graph/test_scoped_view_hides_other_namespaces.py`` fails until it is scoped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

from netsight.graph.model.kept_events import KeptEvent
from netsight.graph.model.kinds import Kind, Rel, parse_key
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import Change, IngestProblem
from netsight.graph.store.view import GraphView, WrappedView

T = TypeVar("T")

SCOPES_KEPT = 8  # callers' scopes whose kept indexes (GraphView.kept) are held at once


class UnscopedRead(NotImplementedError):
    """A ``GraphView`` read that :class:`ScopedView` does not know how to restrict."""


class ScopedView(WrappedView):
    """``view`` as seen by a caller allowed only ``namespaces`` (plus cluster-scoped objects)."""

    __slots__ = ("_allowed",)

    def __init__(self, view: GraphView, namespaces: Iterable[str]) -> None:
        super().__init__(view)  # code reaching for the raw graph fails, reads nothing
        self._allowed = frozenset(namespaces)

    @property
    def scope(self) -> frozenset[str]:
        """The namespaces this view shows."""
        return self._allowed

    @property
    def scope_digest(self) -> str:
        """A short stable digest of :attr:`scope` (for ETags and cache keys)."""
        joined = "\n".join(sorted(self._allowed)).encode()
        return hashlib.sha256(joined).hexdigest()[:12]

    def shows(self, key: str) -> bool:
        """Whether an object with this key, present or not, would be visible."""
        kind, namespace, name = parse_key(key)
        if namespace:
            return namespace in self._allowed
        return kind != Kind.NAMESPACE or name in self._allowed

    def _shows(self, record: Record) -> bool:
        if record.namespace:
            return record.namespace in self._allowed
        return record.kind != Kind.NAMESPACE or record.name in self._allowed

    def _spaces(self, kind: str, namespace: str | None) -> Iterable[str]:
        """The namespace buckets (``""``: cluster-scoped) a read of ``kind`` may look in."""
        if namespace is None:
            return (*self._allowed, "")
        if namespace == "" or namespace in self._allowed:
            return (namespace,)
        return ()

    # --- the GraphView interface, restricted ---------------------------------------------


    def get(self, key: str) -> Record | None:
        record = self._inner.get(key)
        return record if record is not None and self._shows(record) else None

    def exists(self, key: str) -> bool:
        return self.shows(key) and self._inner.exists(key)

    def for_each(self, kind: str, namespace: str | None = None) -> Iterator[Record]:
        for space in self._spaces(kind, namespace):
            for record in self._inner.for_each(kind, space):
                if self._shows(record):
                    yield record

    def count(self, kind: str, namespace: str | None = None) -> int:
        if kind == Kind.NAMESPACE:  # cluster-scoped, but one per namespace
            return sum(1 for _ in self.for_each(kind, namespace))
        return sum(self._inner.count(kind, space) for space in self._spaces(kind, namespace))

    def neighbors(
        self, key: str, rel: Rel, *, incoming: bool = False, kind: str | None = None
    ) -> Iterator[Record]:
        if not self.shows(key):
            return
        for record in self._inner.neighbors(key, rel, incoming=incoming, kind=kind):
            if self._shows(record):
                yield record

    def adjacent_keys(self, key: str) -> Iterator[str]:
        if not self.shows(key):
            return
        for other in self._inner.adjacent_keys(key):
            if self.shows(other):
                yield other

    def out_edges(self, key: str) -> Iterator[tuple[str, Rel]]:
        if not self.shows(key):
            return
        for target, rel in self._inner.out_edges(key):
            if self.shows(target):
                yield target, rel

    def derived(self, name: Hashable, kinds: Iterable[str],
                build: Callable[[GraphView], T]) -> T:
        # Built from what this scope shows, so kept per scope, never shared with the whole
        # graph's (the store keeps a bounded number of them).
        return self._inner.derived((name, self._allowed), kinds, lambda _: build(self))

    def pending_references(self, key: str) -> Iterator[tuple[str, Rel]]:
        if not self.shows(key):
            return
        for source, rel in self._inner.pending_references(key):
            if self.shows(source):
                yield source, rel

    def matching(self, namespace: str, selector: LabelSelector) -> Iterator[Record]:
        if namespace not in self._allowed:
            return iter(())
        return self._inner.matching(namespace, selector)

    def identities(self) -> Iterator[tuple[str, Mapping[str, str], AbstractSet[str],
                                           Mapping[str, Rel]]]:
        for namespace, labels, members, selected in self._inner.identities():
            if namespace in self._allowed:
                # Selector owners are of the identity's namespace: visible with it.
                yield namespace, labels, members, selected

    def matching_label_maps(self, namespace: str, selector: LabelSelector
                            ) -> Iterator[Mapping[str, str]]:
        if namespace not in self._allowed:
            return iter(())
        return self._inner.matching_label_maps(namespace, selector)

    def kept(self) -> dict[str, Any]:
        # What an analyzer derives from this view holds only what the scope shows: kept
        # per scope, never shared with the unrestricted view or another scope. The last
        # few scopes are kept (each may hold indexes of its namespaces).
        scopes: dict[str, dict[str, Any]] = self._inner.kept().setdefault(
            "scopes", {})
        kept = scopes.pop(self.scope_digest, None)
        if kept is None:
            kept = {}
            while len(scopes) >= SCOPES_KEPT:
                del scopes[next(iter(scopes))]
        scopes[self.scope_digest] = kept  # the most recently used last
        return kept

    def namespaces(self) -> set[str]:
        return self._inner.namespaces() & self._allowed

    def kinds(self) -> list[str]:
        return [kind for kind in self._inner.kinds() if self.count(kind)]

    def problems(self) -> list[IngestProblem]:
        return [p for p in self._inner.problems() if self._shows_problem(p)]

    def _shows_problem(self, problem: IngestProblem) -> bool:
        if problem.namespace:
            return problem.namespace in self._allowed
        if problem.object_kind == Kind.NAMESPACE:
            return problem.name in self._allowed
        return True  # cluster-scoped objects, and manifest documents that never parsed

    def changes_since(self, generation: int, *, at: float | None = None,
                      newest_first: bool = False) -> Iterator[Change]:
        for change in self._inner.changes_since(generation, at=at, newest_first=newest_first):
            if self.shows(change.key):
                related = tuple(k for k in change.related if self.shows(k))
                yield change if related == change.related else replace(change, related=related)

    def events(self, namespace: str | None = None, kind: str | None = None,
               name: str | None = None) -> Iterator[KeptEvent]:
        # An event about a cluster-scoped object is nobody's namespace's, as the object is.
        for event in self._inner.events(namespace, kind, name):
            if not event.namespace or event.namespace in self._allowed:
                yield event

    def events_unknown(self) -> str | None:
        return self._inner.events_unknown()

    @property
    def node_count(self) -> int:
        return sum(self.count(kind) for kind in self._inner.kinds())

    @property
    def edge_count(self) -> int:
        # Distinct (source, target) pairs, as GraphView counts them; O(visible edges).
        return len({(record.key, target) for kind in self._inner.kinds()
                    for record in self.for_each(kind) for target, _ in self.out_edges(record.key)})


def unrestricted(view: GraphView) -> tuple[GraphView, Callable[[str], bool]]:
    """The whole graph behind ``view``, and whether the caller may see an object by key.

    For answers whose *outcome* depends on objects the caller may not see (route precedence
    on a Gateway shared with other namespaces): compute on the whole graph, then show only
    what the predicate allows, never a hidden object's name.
    """
    if isinstance(view, ScopedView):
        inner, shows = unrestricted(view._inner)
        return inner, lambda key: view.shows(key) and shows(key)
    return view, _everything


def _everything(key: str) -> bool:
    return True


def refusing_read(name: str) -> Any:
    """A property that raises :class:`UnscopedRead` on access: a read nobody scoped."""

    def fail(self: ScopedView, *args: Any, **kwargs: Any) -> NoReturn:
        raise UnscopedRead(f"GraphView.{name} is not restricted to the caller's namespaces "
                           "yet; add it to netsight/graph/store/scoped.py")

    return property(fail)


# Public reads GraphView has and ScopedView does not override would answer from the whole
# graph through inheritance: each becomes a property that raises on access instead.
UNSCOPED = frozenset(name for name in dir(GraphView)
                     if not name.startswith("_") and name not in vars(ScopedView))
for _name in UNSCOPED:
    setattr(ScopedView, _name, refusing_read(_name))
