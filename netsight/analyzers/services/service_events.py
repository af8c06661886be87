"""What Events and pod status add to a Service's inspection: endpoint controllers that
failed to write its slices, pods whose containers do not run, readiness probes failing.

An Event counts while it is recent: seen within ``RECENT`` seconds of now, or, from
manifests (a snapshot), of the newest event they hold. An hour is the API server's own
--event-ttl default: older ones the cluster has forgotten too.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Severity
from netsight.analyzers.services.service_reports import ServiceReport
from netsight.graph.model.kept_events import WARNING, KeptEvent
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphView, Source

RECENT = 3600.0
# The endpoint controllers' Warnings when a write fails (EndpointSlice controller, and the
# legacy Endpoints controller).
ENDPOINT_WRITE_FAILURES = frozenset({"FailedToUpdateEndpointSlices", "FailedToUpdateEndpoint",
                                     "FailedToCreateEndpoint"})
READINESS_FAILED = "Readiness probe failed"


def now_of(view: GraphView) -> float:
    """Now, for Events: from manifests (a snapshot), the time of the newest one."""
    if view.source is Source.MANIFESTS:
        return max((e.last for e in view.events()), default=time.time())
    return time.time()


def since(view: GraphView) -> float:
    """The oldest time an Event may have been last seen and still count as recent."""
    return now_of(view) - RECENT


def recent_warnings(view: GraphView, namespaces: Collection[str],
                    objects: Collection[tuple[str, str, str]], after: float
                    ) -> Iterator[KeptEvent]:
    """Warnings seen after ``after`` about ``objects`` ((namespace, kind, name)), most
    recent first. One pass over the ring's events of ``namespaces``: a Service with 10,000
    pods costs one set lookup per event held, not one lookup per pod."""
    for namespace in namespaces:
        for event in view.events(namespace):
            if event.type == WARNING and event.last >= after and \
                    (event.namespace, event.kind, event.name) in objects:
                yield event


def _service_warnings(view: GraphView, report: ServiceReport, after: float
                      ) -> list[KeptEvent]:
    """recent_warnings about the Service, its slices and its pods; the names of its
    (maybe ten thousand) pods are gathered only when a Pod of its namespace has one."""
    service = report.service
    own: set[tuple[str, str]] = {(Kind.SERVICE, service.name), (Kind.ENDPOINTS, service.name)}
    own.update((s.kind, s.name) for s in report.slices)
    found = [e for e in view.events(service.namespace)
             if e.type == WARNING and e.last >= after and (
                 e.kind == "Pod" or (e.kind, e.name) in own)]
    if any(e.kind == "Pod" for e in found):
        pods = {p.name for p in report.pods}
        found = [e for e in found if e.kind != "Pod" or e.name in pods]
    return found


def check_events(view: GraphView, report: ServiceReport) -> list[KeptEvent]:
    """Add the Event and pod-status findings to ``report``; returns the recent Warnings
    about the Service, its slices and its pods (diagnose_service shows them)."""
    service = report.service
    why = view.events_unknown()
    if why is not None:
        report.not_evaluated.append(why)
    _waiting(report)
    warnings = _service_warnings(view, report, since(view))
    failed = [e for e in warnings if e.reason in ENDPOINT_WRITE_FAILURES]
    if failed:
        latest = failed[0]
        report.findings.append(codes.ENDPOINT_UPDATES_FAILING.finding(
            ref(service), f"Endpoint updates for {service.ref} failed recently: "
            f"{latest.reason} ({latest.count}x)",
            detail=f"{latest.reporter or 'An endpoint controller'} reported: {latest.note}. "
            "Until a write succeeds, the slices show the pods as they were: new pods get no "
            "traffic, and gone ones may still get some.",
            suggestion="Look for what refuses the writes: a ResourceQuota on "
            "EndpointSlices, an admission webhook, the API server's health.",
            evidence=[evidence(service, "events", [_said(e) for e in failed[:3]])],
        ))
    unhealthy = [e for e in warnings if e.kind == Kind.POD and e.reason == "Unhealthy"
                 and e.note.startswith(READINESS_FAILED)]
    if unhealthy:
        pods = sorted({e.name for e in unhealthy})
        report.findings.append(codes.READINESS_PROBE_FAILING.finding(
            ref(service), f"{len(pods)} pod(s) of {service.ref} failed their readiness "
            f"probe recently: {_some(pods)}",
            detail=f"The kubelet reported: {unhealthy[0].note}. A pod failing its readiness "
            "probe is not ready: the Service's endpoints list it as not ready, and it gets "
            "no traffic until the probe passes again.",
            suggestion="Check the probe's port, path and timing against what the container "
            "serves (kubectl describe pod).",
            evidence=[evidence(service, "events", [_said(e) for e in unhealthy[:3]])],
        ))
    return warnings


def _waiting(report: ServiceReport) -> None:
    waiting = [p for p in report.pods if p.waiting is not None and not p.terminating]
    if not waiting:
        return
    service = report.service
    reasons = Counter(p.waiting for p in waiting)
    said = ", ".join(f"{reason} ({n})" for reason, n in sorted(reasons.items()))
    none_ready = not any(p.ready for p in report.pods)
    report.findings.append(codes.PODS_WAITING.finding(
        ref(service), f"{len(waiting)} of {len(report.pods)} pod(s) of {service.ref} have a "
        f"container that does not run: {said}",
        severity=Severity.CRITICAL if none_ready else None,
        detail=f"Pods {_some(sorted(p.name for p in waiting))} wait: {said}. A container "
        "that does not run serves nothing; the pod is not ready"
        + (", and no pod of the Service is." if none_ready else "."),
        suggestion="kubectl describe pod and its logs (--previous for a crash loop) say "
        "why: a crash, an image that cannot be pulled, missing configuration.",
        evidence=[evidence(p, "status.containerStatuses[].state.waiting.reason", p.waiting)
                  for p in waiting[:3]],
    ))


def _said(event: KeptEvent) -> str:
    return f"{event.kind} {event.name}: {event.reason} ({event.count}x): {event.note}"


def _some(names: Iterable[str]) -> str:
    listed = list(names)
    more = f" and {len(listed) - 3} more" if len(listed) > 3 else ""
    return ", ".join(listed[:3]) + more
