"""Sidecar injection as namespaces and pods show it (istioctl's injection.Analyzer).

A namespace opts into injection with ``istio-injection=enabled`` (or a revision with
``istio.io/rev``); where some namespace carries an injection label (Istio is in use: plain
Kubernetes input labels none), one with neither label is reported as not injected (NS0725),
unless
Istio injects every namespace by default: that is a setting of the sidecar injector's
ConfigMap (istio-sidecar-injector[-revision], ``sidecarInjectorWebhook.
enableNamespacesByDefault``), whose data netsight does not keep, so where such a ConfigMap
exists (or ConfigMaps are not known) that report is not made and the answer says why. A
namespace carrying more than one of istio-injection, istio.io/rev and
istio.io/dataplane-mode is reported (NS0727; as upstream, the last two only count beside an
istio-injection label that is ``enabled``). In a namespace labelled istio-injection=enabled,
a pod without an istio-proxy container (a native sidecar counts) that neither opts out
(``sidecar.istio.io/inject: "false"``, label or annotation) nor runs on the host network is
reported (NS0726). istio-system, Kubernetes' own namespaces (kube-system, ...) and ambient
namespaces are not expected to be injected.
"""

from __future__ import annotations

from collections.abc import Mapping

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import VIRTUAL_SERVICE
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import PodRecord, Record

INJECTION_LABEL = "istio-injection"
REVISION_LABEL = "istio.io/rev"
DATAPLANE_MODE = "istio.io/dataplane-mode"
INJECTION_LABELS = (INJECTION_LABEL, REVISION_LABEL, DATAPLANE_MODE)
INJECT = "sidecar.istio.io/inject"
ISTIO_SYSTEM = "istio-system"
# Kubernetes' own namespaces, which istioctl's analyzers leave alone
# (pkg/config/analysis/analyzers/util SystemNamespaces).
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease",
                               "local-path-storage"})
INJECTOR_CONFIG_MAP = "istio-sidecar-injector"
PROXY = "istio-proxy"
CONFIG_MAP = "ConfigMap"


def injection(ctx: MeshContext) -> None:
    # Only where Istio runs: a cluster that serves its CRDs, or manifests (istioctl analyze
    # reads files as Istio configuration); elsewhere no namespace is expected to be injected.
    if ctx.unknown(VIRTUAL_SERVICE) is not None:
        return
    injected: set[str] = set()
    namespaces = sorted(ctx.view.for_each(Kind.NAMESPACE), key=lambda r: r.name)
    # An unlabelled namespace is news only where some namespace uses injection at all:
    # plain Kubernetes manifests (which analyze_config also reads) label none.
    in_use = any(key in ns.labels for ns in namespaces for key in INJECTION_LABELS)
    by_default = _injects_by_default(ctx) if in_use else None
    for namespace in namespaces:
        if namespace.name == ISTIO_SYSTEM or namespace.name in SYSTEM_NAMESPACES:
            continue
        shown = ctx.namespace is None or namespace.name == ctx.namespace
        labels = namespace.labels
        found = _injection_labels(labels)
        if len(found) > 1 and shown:
            _report_multiple(namespace, found, ctx)
        if labels.get(DATAPLANE_MODE) == "ambient":
            continue
        legacy = labels.get(INJECTION_LABEL, "")
        if not legacy and REVISION_LABEL not in labels:
            if not in_use:
                continue
            if by_default is not None:
                ctx.skip("Namespaces without injection labels", by_default)
            elif shown:
                _report_not_injected(namespace, ctx)
            continue
        if legacy == "enabled":
            injected.add(namespace.name)
    if not injected:
        return
    unknown = ctx.unknown(Kind.POD)
    if unknown is not None:
        ctx.skip("Pods of injected namespaces", unknown)
        return
    for name in sorted(injected):
        if ctx.namespace is not None and name != ctx.namespace:
            continue
        for pod in sorted(ctx.view.for_each(Kind.POD, name), key=lambda r: r.key):
            if isinstance(pod, PodRecord) and _missing_proxy(pod):
                _report_missing_proxy(pod, ctx)


def _injection_labels(labels: Mapping[str, str]) -> list[str]:
    found = []
    legacy = labels.get(INJECTION_LABEL)
    if legacy is not None:
        found.append(f"{INJECTION_LABEL}={legacy}")
    for key in (REVISION_LABEL, DATAPLANE_MODE):
        value = labels.get(key)
        if value is not None and (legacy is None or legacy == "enabled"):
            found.append(f"{key}={value}")
    return found


def _injects_by_default(ctx: MeshContext) -> str | None:
    """Why netsight cannot tell whether Istio injects unlabelled namespaces, or None when it
    knows it does not (no sidecar injector ConfigMap, whose default is off)."""
    unknown = ctx.unknown(CONFIG_MAP)
    if unknown is not None:
        return unknown
    for record in ctx.view.for_each(CONFIG_MAP):
        if record.name == INJECTOR_CONFIG_MAP or \
                record.name.startswith(f"{INJECTOR_CONFIG_MAP}-"):
            return (f"ConfigMap {record.ref} may set sidecarInjectorWebhook."
                    "enableNamespacesByDefault, and netsight does not keep its data")
    return None


def _missing_proxy(pod: PodRecord) -> bool:
    inject = pod.labels.get(INJECT, pod.annotations.get(INJECT, ""))
    if inject.lower() == "false" or pod.host_network:
        return False
    return pod.mesh_proxy != PROXY


def _report_multiple(namespace: Record, found: list[str], ctx: MeshContext) -> None:
    ctx.report(codes.NAMESPACE_MULTIPLE_INJECTION_LABELS.finding(
        ref(namespace), f"Namespace {namespace.name} has several injection labels: "
        f"{', '.join(found)}",
        detail="istio-injection, istio.io/rev and istio.io/dataplane-mode each say how the "
        "namespace's pods join the mesh; with more than one, which wins is easy to mistake "
        "(istio-injection takes precedence over istio.io/rev).",
        suggestion=f"Keep one: kubectl label namespace {namespace.name} {REVISION_LABEL}- or "
        f"kubectl label namespace {namespace.name} {INJECTION_LABEL}-",
        evidence=[evidence(namespace, "metadata.labels", found)],
    ))


def _report_not_injected(namespace: Record, ctx: MeshContext) -> None:
    ctx.report(codes.NAMESPACE_NOT_INJECTED.finding(
        ref(namespace), f"Namespace {namespace.name} is not enabled for sidecar injection",
        detail="It has neither an istio-injection nor an istio.io/rev label, and no sidecar "
        "injector ConfigMap says Istio injects every namespace: its pods get no sidecar.",
        suggestion=f"kubectl label namespace {namespace.name} istio-injection=enabled (or "
        "istio.io/rev=<revision>), if its workloads belong in the mesh.",
        evidence=[evidence(namespace, "metadata.labels", dict(namespace.labels))],
    ))


def _report_missing_proxy(pod: PodRecord, ctx: MeshContext) -> None:
    ctx.report(codes.POD_MISSING_MESH_PROXY.finding(
        ref(pod), f"Pod {pod.ref} runs no istio-proxy although its namespace is labelled "
        "istio-injection=enabled",
        detail="The pod has no istio-proxy container (nor native sidecar), does not opt out "
        "with sidecar.istio.io/inject=false and does not run on the host network: it was "
        "created before injection was enabled, or injection failed.",
        suggestion="Restart its workload (kubectl rollout restart) so that it is injected, "
        "or opt it out with the sidecar.istio.io/inject: \"false\" label.",
        evidence=[evidence(pod, "spec.containers", None)],
    ))
