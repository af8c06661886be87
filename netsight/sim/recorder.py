"""Events as Kubernetes components record them (client-go's events.k8s.io recorder): one
Event per object, reason and note, whose ``series`` grows each time it happens again."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from netsight.sim.state import ApiError, Obj, SimState


def micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventRecorder:
    """Records Events about objects of a :class:`SimState` on behalf of one controller."""

    def __init__(self, state: SimState, controller: str, instance: str = "sim") -> None:
        self.state, self.controller, self.instance = state, controller, instance
        self.event_type = state.registry.require("events.k8s.io/v1", "Event")

    def record(self, regarding: Mapping[str, Any], event_type: str, reason: str, note: str,
               action: str) -> Obj:
        """Record that ``reason`` happened to ``regarding`` (an object of the state); the
        same again adds to its Event's series rather than writing another Event."""
        meta = regarding.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        digest = hashlib.sha256(f"{reason}\n{note}".encode()).hexdigest()[:10]
        name = f"{meta.get('name')}.{digest}"
        stamp = micro_time()
        try:
            held = self.state.get(self.event_type, namespace, name)
        except ApiError:
            held = None
        if held is not None:
            count = int((held.get("series") or {}).get("count") or 1) + 1
            again = {**held, "metadata": {**held["metadata"]},
                     "series": {"count": count, "lastObservedTime": stamp}}
            return self.state.replace(self.event_type, again, namespace, name, owned=True)
        event: Obj = {
            "metadata": {"name": name, "namespace": namespace},
            "eventTime": stamp, "type": event_type, "reason": reason, "note": note,
            "action": action, "reportingController": self.controller,
            "reportingInstance": self.instance,
            "regarding": {"apiVersion": regarding.get("apiVersion"),
                          "kind": regarding.get("kind"), "namespace": meta.get("namespace"),
                          "name": meta.get("name"), "uid": meta.get("uid")},
        }
        return self.state.create(self.event_type, event, namespace, owned=True)
