"""The event ring keeps at most so many events per object and in all, dropping the least
recently seen first; a recurring Event (its series) replaces its own entry; events about
objects netsight does not look at, and a Pod's Normal events, are not kept."""

from __future__ import annotations

from typing import Any

from netsight.graph.store.event_ring import EventRing
from netsight.graph.store.live import EventType, GraphStore


def event(name: str, kind: str, obj: str, reason: str = "Unhealthy", *, count: int = 1,
          event_type: str = "Warning", api_version: str = "v1", at: int = 0) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "shop"},
            "regarding": {"apiVersion": api_version, "kind": kind, "namespace": "shop",
                          "name": obj},
            "type": event_type, "reason": reason, "note": "n" * 5000,
            "series": {"count": count, "lastObservedTime": f"2026-01-01T00:00:{at:02d}.5Z"},
            "reportingController": "kubelet"}


def test_per_object_and_global_caps_evict_the_least_recent() -> None:
    ring = EventRing(limit=5, per_object=2)
    for i in range(3):
        assert ring.observe(event(f"a{i}", "Pod", "web-1", at=i))
    assert [e.event for e in ring.about("shop", "Pod", "web-1")] == ["shop/a2", "shop/a1"]
    for i in range(4):
        ring.observe(event(f"s{i}", "Service", f"svc-{i}", at=10 + i))
    assert len(ring.events) == 5
    # The sixth event pushed out the least recently seen of all: the Pod's older one.
    assert [e.event for e in ring.about("shop", "Pod", "web-1")] == ["shop/a2"]
    assert sum(len(ids) for ids in ring.by_object.values()) == len(ring.events)
    assert ring.evicted == 2


def test_a_series_replaces_its_entry_and_notes_are_cut() -> None:
    ring = EventRing()
    ring.observe(event("a", "Pod", "web-1", "BackOff", count=1))
    ring.observe(event("a", "Pod", "web-1", "BackOff", count=7, at=30))
    (kept,) = ring.about("shop", "Pod", "web-1")
    assert (kept.count, kept.reason, len(kept.note)) == (7, "BackOff", 240)
    assert kept.last == 1767225630.5


def test_unrelated_kinds_and_pod_normal_events_are_dropped() -> None:
    ring = EventRing()
    assert not ring.observe(event("n", "Node", "node-1"))
    assert not ring.observe(event("p", "Pod", "web-1", "Pulled", event_type="Normal"))
    assert not ring.observe(event("d", "Deployment", "web", "ScalingReplicaSet",
                                  event_type="Normal", api_version="apps/v1"))
    assert ring.observe(event("d2", "Deployment", "web", "FailedCreate", api_version="apps/v1"))
    assert ring.observe(event("g", "HTTPRoute", "web", "RefNotPermitted", event_type="Normal",
                              api_version="gateway.networking.k8s.io/v1"))
    assert {e.kind for e in ring.events.values()} == {"Deployment", "HTTPRoute"}


def test_core_v1_events_in_manifests_go_to_the_ring_not_the_graph() -> None:
    store = GraphStore()
    changed = store.apply(EventType.ADDED, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "x", "namespace": "shop"},
        "involvedObject": {"kind": "Service", "namespace": "shop", "name": "web"},
        "type": "Warning", "reason": "FailedToUpdateEndpointSlices", "message": "m",
        "count": 3, "lastTimestamp": "2026-01-01T00:00:00Z", "source": {"component": "x"}})
    assert not changed
    assert store.generation == 0
    (kept,) = store.view().events(kind="Service")
    assert (kept.object_ref, kept.count, kept.reporter) == ("Service/shop/web", 3, "x")
