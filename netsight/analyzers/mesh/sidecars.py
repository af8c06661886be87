"""Sidecar scoping checks (istioctl's sidecar.SelectorAnalyzer, which in current Istio also
does what sidecar.DefaultSelectorAnalyzer did): a Sidecar whose workloadSelector matches no
pod, pods several Sidecars select, namespaces with several selector-less Sidecars, and
Sidecars that apply to ambient-mode workloads (no sidecar proxy to configure).

A Sidecar only selects pods of its own namespace. Istio picks one Sidecar per proxy: the
one whose selector matches, else the namespace's selector-less one, else the root
namespace's; where two qualify, which one wins is undefined.
"""

from __future__ import annotations

from collections import defaultdict

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.quoting import labels_text
from netsight.analyzers.mesh.context import MeshContext, pods_or_templates
from netsight.analyzers.mesh.istio_objects import Sidecar
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import Record, WorkloadRecord
from netsight.graph.model.selectors import LabelSelector

# Set on a pod by istio-cni when it redirects the pod's traffic to ztunnel (ambient mode).
AMBIENT_REDIRECTION = "ambient.istio.io/redirection"
# A namespace label enrolling its pods in ambient mode, unless injection is asked for too.
DATAPLANE_MODE = "istio.io/dataplane-mode"
INJECTION_LABEL = "istio-injection"
REVISION_LABEL = "istio.io/rev"


def selectors(ctx: MeshContext) -> None:
    sidecars = ctx.sidecars
    if not any(ctx.in_scope(s.record) for s in sidecars):
        return
    ineffective: dict[str, tuple[Sidecar, str]] = {}
    _namespace_defaults(ctx, [s for s in sidecars if s.namespace_wide], ineffective)
    selecting = [s for s in sidecars if not s.namespace_wide]
    if selecting:
        unknown = ctx.unknown(Kind.POD)
        if unknown is not None:
            ctx.skip("Sidecar workload selectors", unknown)
        else:
            _workload_selectors(ctx, selecting, ineffective)
    for sidecar, why in ineffective.values():
        if ctx.in_scope(sidecar.record):
            _ineffective(ctx, sidecar, why)


def _namespace_defaults(ctx: MeshContext, defaults: list[Sidecar],
                        ineffective: dict[str, tuple[Sidecar, str]]) -> None:
    by_namespace: dict[str, list[Sidecar]] = defaultdict(list)
    for sidecar in defaults:
        by_namespace[sidecar.record.namespace].append(sidecar)
    if not by_namespace:
        return
    namespaces_unknown = ctx.unknown(Kind.NAMESPACE)
    if namespaces_unknown is not None:
        ctx.skip("ambient mode of the namespaces of selector-less Sidecars",
                 namespaces_unknown)
    ambient = set() if namespaces_unknown else _ambient_namespaces(ctx)
    for namespace, found in sorted(by_namespace.items()):
        if namespace in ambient:
            for sidecar in found:
                ineffective.setdefault(sidecar.record.key, (
                    sidecar, f"namespace {namespace} is in ambient mode (label "
                    f"{DATAPLANE_MODE}=ambient)"))
            continue
        if len(found) < 2:
            continue
        names = sorted(s.record.name for s in found)
        for sidecar in found:
            if ctx.in_scope(sidecar.record):
                _multiple_defaults(ctx, sidecar, names)


def _ambient_namespaces(ctx: MeshContext) -> set[str]:
    found = set()
    for namespace in ctx.view.for_each(Kind.NAMESPACE):
        labels = namespace.labels
        # A namespace asking for sidecar injection (or a revision) is not ambient.
        if labels.get(INJECTION_LABEL) == "enabled" or labels.get(REVISION_LABEL):
            continue
        if labels.get(DATAPLANE_MODE) == "ambient":
            found.add(namespace.name)
    return found


def _workload_selectors(ctx: MeshContext, selecting: list[Sidecar],
                        ineffective: dict[str, tuple[Sidecar, str]]) -> None:
    by_pod: dict[str, list[Sidecar]] = defaultdict(list)
    pods: dict[str, Record] = {}
    for sidecar in selecting:
        record = sidecar.record
        selector = LabelSelector(match_labels=tuple(sorted(sidecar.selector.items())))
        selected = pods_or_templates(ctx.view.matching(record.namespace, selector))
        if not selected:
            if ctx.in_scope(record):
                _no_pods(ctx, sidecar)
            continue
        for pod in selected:
            by_pod[pod.key].append(sidecar)
            pods[pod.key] = pod
    # One finding per Sidecar and set of Sidecars in conflict, naming the pods they share
    # (istioctl repeats it for every pod).
    conflicts: dict[tuple[str, tuple[str, ...]], tuple[Sidecar, list[str]]] = {}
    for key in sorted(by_pod):
        pod, found = pods[key], by_pod[key]
        if _ambient_pod(pod):
            for sidecar in found:
                ineffective.setdefault(sidecar.record.key, (
                    sidecar, f"the {_pod_like(pod)} it selects is in ambient mode "
                    f"({AMBIENT_REDIRECTION}: enabled)"))
            continue
        if len(found) < 2:
            continue
        names = tuple(sorted(s.record.name for s in found))
        for sidecar in found:
            entry = conflicts.setdefault((sidecar.record.key, names), (sidecar, []))
            entry[1].append(_pod_like(pod))
    for (_, names), (sidecar, shared) in sorted(conflicts.items()):
        if ctx.in_scope(sidecar.record):
            _conflict(ctx, sidecar, list(names), shared)


def _ambient_pod(pod: Record) -> bool:
    annotations = pod.pod_annotations if isinstance(pod, WorkloadRecord) else pod.annotations
    return annotations.get(AMBIENT_REDIRECTION) == "enabled"


def _pod_like(record: Record) -> str:
    return f"{record.kind} {record.name}"


def _no_pods(ctx: MeshContext, sidecar: Sidecar) -> None:
    record = sidecar.record
    ctx.report(codes.SIDECAR_SELECTS_NO_PODS.finding(
        ref(record), f"Sidecar {record.ref} selects no pod ({sidecar.selector_text})",
        detail=f"No pod of namespace {record.namespace} carries the labels "
        f"{labels_text(sidecar.selector)}; a Sidecar only selects pods of its own namespace, so "
        "its settings apply to no proxy.",
        suggestion="Correct spec.workloadSelector.labels to the labels of the pods it is "
        "meant for, or create the Sidecar in their namespace.",
        evidence=[evidence(record, "spec.workloadSelector.labels", dict(sidecar.selector))],
    ))


def _conflict(ctx: MeshContext, sidecar: Sidecar, names: list[str],
              shared: list[str]) -> None:
    record = sidecar.record
    others = [n for n in names if n != record.name]
    ctx.report(codes.CONFLICTING_SIDECAR_SELECTORS.finding(
        ref(record), f"Sidecar {record.ref} selects the same pods as "
        f"{', '.join(others)}: {', '.join(shared)}",
        detail=f"Sidecars {', '.join(names)} of namespace {record.namespace} all select "
        f"{', '.join(shared)}; a proxy takes the configuration of one Sidecar only, and "
        "which one is undefined.",
        suggestion="Narrow the workloadSelectors so that each pod is selected by one "
        "Sidecar, or merge the Sidecars.",
        evidence=[evidence(record, "spec.workloadSelector.labels", dict(sidecar.selector))],
    ))


def _multiple_defaults(ctx: MeshContext, sidecar: Sidecar, names: list[str]) -> None:
    record = sidecar.record
    others = [n for n in names if n != record.name]
    ctx.report(codes.MULTIPLE_DEFAULT_SIDECARS.finding(
        ref(record), f"Sidecar {record.ref} and {', '.join(others)} have no "
        "workloadSelector",
        detail=f"Sidecars {', '.join(names)} of namespace {record.namespace} have no "
        "workloadSelector: each claims to be the default for the namespace's proxies, and "
        "which one they use is undefined.",
        suggestion="Keep one Sidecar without workloadSelector per namespace; give the "
        "others a selector or merge them into it.",
        evidence=[evidence(record, "spec.workloadSelector", None)],
    ))


def _ineffective(ctx: MeshContext, sidecar: Sidecar, why: str) -> None:
    record = sidecar.record
    ctx.report(codes.SIDECAR_INEFFECTIVE_IN_AMBIENT.finding(
        ref(record), f"Sidecar {record.ref} has no effect: {why}",
        detail="Workloads in ambient mode run without a sidecar proxy (ztunnel and "
        "waypoints carry their traffic), so a Sidecar resource configures nothing for "
        "them.",
        suggestion="Delete the Sidecar if the workloads moved to ambient on purpose, or "
        "point it at workloads that still run a sidecar.",
        evidence=[evidence(record, "spec.workloadSelector.labels", dict(sidecar.selector))
                  if sidecar.selector else evidence(record, "metadata.namespace",
                                                    record.namespace)],
    ))
