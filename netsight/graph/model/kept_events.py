"""Kubernetes Events as netsight keeps them: a few interned strings per event, about the
networking objects netsight reads (and Warnings about the workloads that run their pods).

Both shapes are read: ``events.k8s.io/v1`` (what a live server watches: ``regarding``,
``note``, ``series``) and core ``v1`` (``involvedObject``, ``message``, ``count``; what
``kubectl get events -o yaml`` prints, so manifests may carry either).
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from netsight.graph.model.field_values import interned
from netsight.graph.model.kinds import Kind, api_group, kind_id

EVENT_API_VERSIONS = frozenset({"events.k8s.io/v1", "v1"})
# A note may hold up to 1 kB (64 kB from old clients): the start says what happened.
NOTE_LIMIT = 240

# Groups whose every kind is networking: Gateway API, admin policies, meshes, CNIs' policies,
# gateway controllers' policies.
NETWORKING_GROUPS = frozenset({
    "gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "policy.networking.k8s.io",
    "networking.istio.io", "security.istio.io", "telemetry.istio.io", "extensions.istio.io",
    "cilium.io", "crd.projectcalico.org", "projectcalico.org", "policy.linkerd.io",
    "linkerd.io", "kuma.io", "gateway.kgateway.dev", "gateway.envoyproxy.io",
})
NETWORKING_KINDS = frozenset({
    Kind.SERVICE, Kind.ENDPOINT_SLICE, Kind.ENDPOINTS, Kind.NETWORK_POLICY, Kind.INGRESS,
    Kind.INGRESS_CLASS, Kind.POD,
})
# Their Normal events (ScalingReplicaSet, SuccessfulCreate) are routine; a Warning
# (FailedCreate: quota, admission) is why a Service has no pods.
WARNING_ONLY_KINDS = frozenset({
    Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET, Kind.REPLICA_SET, Kind.JOB,
})
WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class KeptEvent:
    """One Event about an object; ``event`` ("namespace/name" of the Event) is its identity:
    a recurring event is the same Event with a higher series count."""

    event: str
    namespace: str  # the object's ("" for a cluster-scoped one)
    kind: str  # the object's kind id, as in graph keys
    name: str
    type: str  # Normal or Warning
    reason: str
    note: str
    count: int
    last: float  # time.time() of the latest occurrence
    reporter: str  # reportingController, or the v1 source component

    @property
    def object_ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}" if self.namespace else \
            f"{self.kind}/{self.name}"


def kept_event(raw: Mapping[str, Any]) -> KeptEvent | None:
    """The event as kept, or None when it is about no object netsight looks at (or is not
    readable as an Event: events are best-effort, never a problem to report)."""
    regarding = raw.get("regarding")
    if regarding is None:
        regarding = raw.get("involvedObject")
    meta = raw.get("metadata")
    if not isinstance(regarding, dict) or not isinstance(meta, dict):
        return None
    kind, name = regarding.get("kind"), regarding.get("name")
    api_version = regarding.get("apiVersion") or "v1"
    if not (isinstance(kind, str) and isinstance(name, str) and kind and name
            and isinstance(api_version, str)):
        return None
    kid = kind_id(api_version, kind)
    raw_type = raw.get("type")
    event_type = raw_type if isinstance(raw_type, str) and raw_type else "Normal"
    if not relevant(kid, api_group(api_version), event_type):
        return None
    note = raw.get("note", raw.get("message"))
    raw_series = raw.get("series")
    series: Mapping[str, Any] = raw_series if isinstance(raw_series, dict) else {}
    count = series.get("count", raw.get("deprecatedCount", raw.get("count")))
    last = (series.get("lastObservedTime") or raw.get("deprecatedLastTimestamp")
            or raw.get("lastTimestamp") or raw.get("eventTime") or meta.get("creationTimestamp"))
    source = raw.get("deprecatedSource", raw.get("source"))
    reporter = raw.get("reportingController") or raw.get("reportingComponent") or (
        source.get("component") if isinstance(source, dict) else None)
    namespace = regarding.get("namespace")
    return KeptEvent(
        event=f"{meta.get('namespace') or ''}/{meta.get('name') or ''}",
        namespace=interned(namespace) if isinstance(namespace, str) else "",
        kind=interned(kid),
        name=interned(name),
        type=interned(event_type),
        reason=interned(str(raw.get("reason") or "")),
        note=note[:NOTE_LIMIT] if isinstance(note, str) else "",
        count=count if isinstance(count, int) and not isinstance(count, bool) and count > 0
        else 1,
        last=seconds(last),
        reporter=interned(reporter) if isinstance(reporter, str) else "",
    )


def relevant(kid: str, group: str, event_type: str) -> bool:
    """Whether netsight keeps an event about an object of this kind. A Pod's Normal events
    (Scheduled, Pulled, Started: most of a cluster's events) say nothing a Pod's status
    does not."""
    if kid == Kind.POD or kid in WARNING_ONLY_KINDS:
        return event_type == WARNING
    return kid in NETWORKING_KINDS or group in NETWORKING_GROUPS


def seconds(raw: object) -> float:
    """An RFC 3339 time (MicroTime or Time) as seconds since the epoch; now if unreadable."""
    if isinstance(raw, datetime):
        return raw.timestamp()
    if isinstance(raw, str) and len(raw) >= 20:
        try:
            parsed = time.strptime(raw[:19], "%Y-%m-%dT%H:%M:%S")
        except ValueError:
            return time.time()
        fraction = 0.0
        if raw[19] == "." and raw.endswith("Z"):
            digits = raw[20:-1]
            fraction = int(digits) / 10 ** len(digits) if digits.isdigit() else 0.0
        return calendar.timegm(parsed) + fraction
    return time.time()
