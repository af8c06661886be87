"""Telemetry resources whose workload selector matches no pod, that select the same pods
as another, or that share a namespace with another selector-less one (istioctl's
telemetry.SelectorAnalyzer and telemetry.DefaultSelectorAnalyzer).

Istio applies one Telemetry per workload and scope, so two that apply to the same pods,
or two namespace-wide ones in one namespace, leave which one wins undefined. As upstream:
a selector only looks at pods of the Telemetry's own namespace, and one with empty
matchLabels is left to the namespace-wide rule. A Telemetry that attaches by targetRefs
applies to what it targets, not to the namespace, so it is not counted as namespace-wide
(upstream counts every Telemetry without ``selector``). One finding per Telemetry names
the pods and the other Telemetries, where istioctl reports each pod.
"""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.quoting import labels_text
from netsight.analyzers.mesh.context import MeshContext, pods_or_templates
from netsight.analyzers.mesh.istio_objects import TELEMETRY, Telemetry, describe
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector

__all__ = ["TELEMETRY", "selectors"]


def selectors(ctx: MeshContext) -> None:
    telemetries = ctx.telemetries  # one that cannot be read is reported (NS0650)
    _namespace_wide_conflicts(ctx, telemetries)
    selecting = [(t.record, t.match_labels) for t in telemetries
                 if t.match_labels is not None]
    if not any(ctx.in_scope(r) for r, _ in selecting):
        return
    unknown = ctx.pods_unknown()
    if unknown is not None:
        ctx.skip("Telemetry workload selectors", unknown)
        return
    # pod key -> the Telemetries selecting it; Telemetry key -> the pods it selects.
    by_pod: dict[str, list[Record]] = {}
    pods_of: dict[str, list[Record]] = {}
    for record, labels in selecting:
        wanted = LabelSelector(match_labels=tuple(sorted(labels.items())))
        pods = pods_or_templates(ctx.view.matching(record.namespace, wanted))
        pods_of[record.key] = pods
        for pod in pods:
            by_pod.setdefault(pod.key, []).append(record)
        if not pods and ctx.in_scope(record):
            ctx.report(codes.TELEMETRY_SELECTS_NO_PODS.finding(
                ref(record), f"Telemetry {record.ref} selects no pod",
                detail=f"No pod of namespace {record.namespace} carries the labels "
                f"{labels_text(labels)}; the Telemetry applies to nothing (a selector only "
                "looks at its own namespace).",
                suggestion="Correct spec.selector.matchLabels to the labels of the pods "
                "it is for, or move the Telemetry to their namespace.",
                evidence=[evidence(record, "spec.selector.matchLabels", dict(labels))],
            ))
    for record, labels in selecting:
        if not ctx.in_scope(record):
            continue
        shared = [p for p in pods_of[record.key] if len(by_pod[p.key]) > 1]
        if not shared:
            continue
        others = sorted({o.ref for p in shared for o in by_pod[p.key] if o.key != record.key})
        names = ", ".join(describe(p) for p in shared[:5]) + \
            (f" and {len(shared) - 5} more" if len(shared) > 5 else "")
        ctx.report(codes.CONFLICTING_TELEMETRY_SELECTORS.finding(
            ref(record), f"Telemetry {record.ref} selects the same pods as "
            f"{', '.join(others)}",
            detail=f"It and {', '.join(others)} select {names}; which Telemetry applies "
            "to them is undefined.",
            suggestion="Make the selectors disjoint, or merge the Telemetries into one.",
            evidence=[evidence(record, "spec.selector.matchLabels", dict(labels))],
        ))


def _namespace_wide_conflicts(ctx: MeshContext, telemetries: list[Telemetry]) -> None:
    by_namespace: dict[str, list[Record]] = {}
    for telemetry in telemetries:
        if telemetry.namespace_wide:
            by_namespace.setdefault(telemetry.record.namespace, []).append(telemetry.record)
    for namespace, records in sorted(by_namespace.items()):
        if len(records) < 2:
            continue
        names = [r.ref for r in records]
        for record in records:
            if not ctx.in_scope(record):
                continue
            ctx.report(codes.MULTIPLE_NAMESPACE_WIDE_TELEMETRIES.finding(
                ref(record), f"Telemetry {record.ref} is one of {len(records)} "
                f"Telemetries without selector in namespace {namespace}",
                detail=f"{', '.join(names)} all apply to every workload of {namespace}; "
                "which one takes effect is undefined.",
                suggestion="Keep one Telemetry without selector per namespace and give "
                "the others a selector (or targetRefs), or merge them.",
                evidence=[evidence(record, "metadata.name", record.name)],
            ))
