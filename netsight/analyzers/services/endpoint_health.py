"""Endpoint health: ready, not-ready and terminating endpoints counted from EndpointSlices,
legacy Endpoints or, from manifests, the pods the controller would publish."""

from __future__ import annotations

from collections.abc import Sequence

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Severity
from netsight.analyzers.services.service_reports import (
    TERMINAL_PHASES,
    EndpointCounts,
    ServiceReport,
)
from netsight.analyzers.services.slice_consistency import check_slices
from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.records import EndpointGroup, EndpointSliceRecord, EndpointsRecord
from netsight.graph.store.live import GraphView, Source


def check_endpoints(view: GraphView, report: ServiceReport, ports: Sequence[int]) -> None:
    service = report.service
    slices_unreadable = view.unreadable(Kind.ENDPOINT_SLICE)
    if slices_unreadable:
        report.not_evaluated.append(f"endpoints: {slices_unreadable}")
        return
    slices = sorted(
        (r for r in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                   kind=Kind.ENDPOINT_SLICE)),
        key=lambda r: r.name,
    )
    legacy = list(view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                 kind=Kind.ENDPOINTS))
    report.slices = [*slices, *legacy]
    # NS0101 was reported: no pods and, from manifests, no workload template either.
    selects_nothing = service.selector is not None and not report.pods and (
        view.source is not Source.MANIFESTS or not report.templates
    )
    if slices:
        report.endpoints = _count(
            "EndpointSlice", [s.group for s in slices if isinstance(s, EndpointSliceRecord)]
        )
        check_slices(view, report, [s for s in slices
                                          if isinstance(s, EndpointSliceRecord)], ports)
    elif legacy and isinstance(legacy[0], EndpointsRecord):
        report.endpoints = _count("Endpoints", list(legacy[0].subsets))
    elif service.selector is not None and report.pods and view.source is Source.MANIFESTS:
        report.endpoints = _derive_from_pods(report)
    elif view.source is Source.MANIFESTS and not selects_nothing:
        reason = ("the Service has no selector and the manifests hold no EndpointSlices "
                  "for it" if service.selector is None else
                  "only workload templates match; endpoints exist once pods run")
        report.not_evaluated.append(f"endpoints: {reason}")
        return
    if selects_nothing:
        return  # NS0101 already names the cause
    counts = report.endpoints
    if counts.ready == 0 and counts.unknown == 0:
        fallback = counts.serving_terminating
        if fallback:
            why = f"only {fallback} terminating endpoint(s) still serve"
        elif counts.total:
            why = f"all {counts.total} endpoint(s) are not ready"
        else:
            why = "it has no endpoints" + (" and no selector" if service.selector is None
                                           else "")
        impact = ("kube-proxy falls back to terminating endpoints that still serve, until "
                  "they are gone" if fallback else
                  "Connections to the Service are refused or time out")
        report.findings.append(codes.SERVICE_NO_READY_ENDPOINTS.finding(
            ref(service), f"Service {service.ref} has no ready endpoints: {why}",
            severity=Severity.WARNING if fallback else None,
            detail=f"Endpoints from {counts.source}: {counts.ready} ready, "
            f"{counts.not_ready} not ready, {counts.terminating} terminating "
            f"({counts.serving_terminating} still serving). {impact}.",
            suggestion="Check why the pods are not ready (kubectl describe pod: readiness "
            "probe, crash loops)." if counts.not_ready else
            "Give the Service a selector, or create an EndpointSlice for it.",
            evidence=[evidence(service, "spec.selector",
                               dict(service.selector) if service.selector else None)],
        ))
    elif counts.ready and counts.not_ready:
        report.findings.append(codes.SERVICE_ENDPOINTS_PARTIALLY_READY.finding(
            ref(service),
            f"{counts.not_ready} of {counts.total} endpoints of {service.ref} are not ready "
            "(terminating ones aside)",
            detail=f"Endpoints from {counts.source}: {counts.ready} ready, "
            f"{counts.not_ready} not ready. Traffic goes to the ready ones only.",
            suggestion="Inspect the not-ready pods' readiness probes and events.",
        ))
    elif counts.unknown:
        report.not_evaluated.append(
            f"endpoints: readiness of {counts.unknown} pod(s) is not stated in the input "
            "(no Ready condition)"
        )


def _count(source: str, groups: Sequence[EndpointGroup]) -> EndpointCounts:
    # One endpoint per pod (or address): dual-stack Services list each pod in two slices.
    states: dict[str, tuple[bool, bool, bool]] = {}
    for group in groups:
        for endpoint in group.endpoints:
            identity = endpoint.target_pod or (endpoint.addresses[0] if endpoint.addresses
                                               else None)
            if identity is None:
                continue
            # EndpointConditions: an unset serving is read as true (as kube-proxy does).
            serving = endpoint.serving is not False
            was = states.get(identity, (False, False, False))
            states[identity] = (was[0] or endpoint.is_ready,
                                was[1] or bool(endpoint.terminating), was[2] or serving)
    return EndpointCounts(
        source=source,
        ready=sum(1 for r, _, _ in states.values() if r),
        not_ready=sum(1 for r, t, _ in states.values() if not r and not t),
        terminating=sum(1 for _, t, _ in states.values() if t),
        serving_terminating=sum(1 for r, t, s in states.values() if t and s and not r),
        total=len(states),
    )


def _derive_from_pods(report: ServiceReport) -> EndpointCounts:
    """What the EndpointSlice controller would publish for these pods (manifests only)."""
    ready = not_ready = unknown = terminating = serving_terminating = total = 0  # counts
    publish_all = report.service.publish_not_ready
    for pod in report.pods:
        if pod.phase in TERMINAL_PHASES:
            continue
        if pod.phase == "Pending" and not pod.ips:
            continue  # no IP yet (e.g. unschedulable): the controller lists it nowhere
        # podToEndpoint: ready = publishNotReadyAddresses || (serving && !terminating),
        # serving = pod ready, terminating = deletionTimestamp set.
        terminating += int(pod.terminating)
        if publish_all or (pod.ready and not pod.terminating):
            ready += 1
        elif pod.terminating:
            serving_terminating += int(bool(pod.ready))
        elif pod.ready is None:
            unknown += 1
        else:
            not_ready += 1
        total += 1
    return EndpointCounts("pods", ready, not_ready, terminating, serving_terminating,
                          unknown, total)
