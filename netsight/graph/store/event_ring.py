"""The recent Events about networking objects, in a bounded ring beside the graph.

Events are history, not state: they never enter the graph, never bump its generation, and
the ring keeps at most ``per_object`` of them per object and ``limit`` in all, dropping the
least recently seen first. A recurring event is one Event whose series count grows; the
ring replaces its entry, so a crash loop holds one slot, not one per restart. Events the
API server deletes (after its --event-ttl, an hour by default) stay until they are evicted:
"recent" is the ring's to decide, from what it has seen.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.graph.model.kept_events import KeptEvent, kept_event

EVENT_RING_SIZE = 10_000
EVENTS_PER_OBJECT = 16

ObjectKey = tuple[str, str, str]  # (namespace, kind id, name)


@dataclass
class EventRing:
    limit: int = EVENT_RING_SIZE
    per_object: int = EVENTS_PER_OBJECT
    # Event identity -> the event, least recently seen first.
    events: OrderedDict[str, KeptEvent] = field(default_factory=OrderedDict)
    # Object -> the identities of its events, least recently seen first.
    by_object: dict[ObjectKey, dict[str, None]] = field(default_factory=dict)
    # Where events come from ("namespace" or "" for the cluster) -> why they cannot be
    # read there, or None while they are. Empty: no watch (manifests).
    unavailable: dict[str, str | None] = field(default_factory=dict)
    evicted: int = 0

    def observe(self, raw: Mapping[str, Any]) -> bool:
        """Keep one ADDED or MODIFIED Event; returns whether it was kept."""
        event = kept_event(raw)
        if event is None:
            return False
        self.keep(event)
        return True

    def keep(self, event: KeptEvent) -> None:
        key = (event.namespace, event.kind, event.name)
        held = self.events.pop(event.event, None)
        if held is not None and (held.namespace, held.kind, held.name) != key:
            self._forget(held)  # the Event was rewritten about another object
        ids = self.by_object.get(key)
        if ids is None:
            ids = self.by_object[key] = {}
        ids.pop(event.event, None)
        ids[event.event] = None
        self.events[event.event] = event
        while len(ids) > self.per_object:
            oldest = next(iter(ids))
            del ids[oldest]
            del self.events[oldest]
            self.evicted += 1
        while len(self.events) > self.limit:
            _, dropped = self.events.popitem(last=False)
            self._forget(dropped, evicted=True)

    def forget(self, event: KeptEvent) -> None:
        """Drop one event (the API server deleted it; tests building smaller worlds)."""
        if self.events.pop(event.event, None) is not None:
            self._forget(event)

    def _forget(self, event: KeptEvent, *, evicted: bool = False) -> None:
        key = (event.namespace, event.kind, event.name)
        ids = self.by_object.get(key)
        if ids is not None:
            ids.pop(event.event, None)
            if not ids:
                del self.by_object[key]
        self.evicted += evicted

    def about(self, namespace: str, kind: str, name: str) -> list[KeptEvent]:
        """The events held about one object, most recent first."""
        ids = self.by_object.get((namespace, kind, name), {})
        return sorted((self.events[i] for i in ids), key=lambda e: e.last, reverse=True)

    def newest_first(self) -> Iterator[KeptEvent]:
        return reversed(self.events.values())

    def why_unknown(self) -> str | None:
        """Why events may be missing (a watch forbidden or down); None when every source is
        read (or there is none: manifests). Said without the namespace: a caller scoped to
        others learns nothing about it."""
        return "; ".join(sorted({why for why in self.unavailable.values() if why})) or None
