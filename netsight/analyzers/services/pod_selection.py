"""A selector that matches no pod, and the near misses that say why."""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.services.service_reports import ServiceReport
from netsight.graph.model.records import PodRecord, ServiceRecord, WorkloadRecord
from netsight.graph.model.selectors import selector_from_map
from netsight.graph.store.live import GraphView


def selects_nothing(view: GraphView, report: ServiceReport) -> Finding:
    service = report.service
    assert service.selector is not None
    selector = selector_from_map(service.selector)
    described = selector.describe()
    hints = _near_misses(view, service)
    if report.templates:
        names = ", ".join(w.ref for w in report.templates[:3])
        hints.insert(0, f"Workload templates match ({names}) but no pods run: scaled to zero "
                        "or failing to create pods?")
    detail = f"No pod in namespace {service.namespace} has labels {described}."
    if hints:
        detail += " " + " ".join(hints)
    return codes.SERVICE_SELECTS_NO_PODS.finding(
        ref(service), f"selector {described} of Service {service.ref} matches no pods",
        detail=detail,
        suggestion="Make spec.selector equal to the pod template labels of the workload "
        "meant to serve this Service (kubectl get pods -n "
        f"{service.namespace} --show-labels).",
        evidence=[evidence(service, "spec.selector", dict(service.selector))],
    )


def _near_misses(view: GraphView, service: ServiceRecord) -> list[str]:
    """Why nothing matched: pods that miss one label, or matches in other namespaces."""
    assert service.selector is not None
    hints: list[str] = []
    pairs = sorted(service.selector.items())
    if len(pairs) > 1:
        for missing_key, missing_value in pairs:
            rest = selector_from_map({k: v for k, v in pairs if k != missing_key})
            close = list(view.matching(service.namespace, rest))
            if close:
                sample = close[0]
                labels = sample.pod_labels if isinstance(sample, WorkloadRecord) else sample.labels
                actual = labels.get(missing_key)
                have = f"{missing_key}={actual}" if actual is not None else f"no {missing_key}"
                what = "pod" if isinstance(sample, PodRecord) else "pod template"
                count = f"{len(close)} {what}{'s' * (len(close) > 1)}"
                verb = "match" if len(close) > 1 else "matches"
                hints.append(
                    f"{count} {verb} all but {missing_key}={missing_value} "
                    f"({sample.kind} {sample.name} has {have})."
                )
                break
    selector = selector_from_map(service.selector)
    elsewhere = sorted(
        ns for ns in view.namespaces()
        if ns != service.namespace and next(iter(view.matching(ns, selector)), None)
    )
    if elsewhere:
        hints.append(
            f"Pods with these labels exist in namespace(s) {', '.join(elsewhere[:3])}; a "
            "Service only selects pods in its own namespace."
        )
    return hints
