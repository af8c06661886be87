"""Values derived from graph objects and kept across answers, with the view they came from.

An entry is served only for the very object it was derived from (a parsed route, a
Gateway's state, a route's resolution, compared by identity): an object a change replaced
is derived again, so nothing needs dropping when the graph changes. Whoever keeps a
:class:`Kept` stores it where the caller's view keeps things (``GraphView.kept``: per scope
for a scoped view, nothing for an overlay), so that a restricted caller never shares an
entry with the whole graph's. An answer on an overlay (a what-if) takes :meth:`Kept.what_if`:
it reads the live entries, whose objects the overlay shares where its delta leaves them
alone, and keeps its own for that answer only, so nothing derived from a proposal is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
S = TypeVar("S")
V = TypeVar("V")


class Kept(Generic[K, S, V]):
    """At most ``limit`` values, each under a key and for the object (of type ``S``) it was
    derived from."""

    __slots__ = ("_held", "_limit", "_live")

    def __init__(self, limit: int, live: Kept[K, S, V] | None = None) -> None:
        self._held: dict[K, tuple[S, V]] = {}
        self._limit = limit
        self._live = live

    def get(self, key: K, source: S, build: Callable[[S], V]) -> V:
        """The value kept under ``key`` for ``source``, else ``build(source)``, then kept."""
        held = self._held.get(key)
        if held is None and self._live is not None:
            held = self._live._held.get(key)
        if held is not None and held[0] is source:
            return held[1]
        value = build(source)
        if len(self._held) >= self._limit:
            self._held.clear()  # what is still asked for is derived again
        self._held[key] = (source, value)
        return value

    def what_if(self) -> Kept[K, S, V]:
        """For one answer on an overlay: reads these entries, keeps nothing in them."""
        return Kept(self._limit, self)
