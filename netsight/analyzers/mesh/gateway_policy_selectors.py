"""Istio policies that select a Gateway API Gateway's pods by label (istioctl's
k8sgateway.SelectorAnalyzer).

The pods Istio deploys for a Gateway API Gateway carry
``gateway.networking.k8s.io/gateway-name``. An AuthorizationPolicy,
RequestAuthentication, Telemetry or WasmPlugin meant for such a Gateway attaches to it
with ``targetRef(s)``; one that selects its pods with a workload ``selector`` is not
applied to them (istio.io, IST0166: "use the TargetRef field instead"), so the access
rules, JWT validation, telemetry or plugin the author expects at the gateway are missing.
"""

from __future__ import annotations

from collections.abc import Mapping

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import GATEWAY_NAME_LABEL
from netsight.graph.model.kinds import Kind, api_group
from netsight.graph.model.records import GenericRecord, PodRecord

# (kind, API group) of the Istio policies that select workloads.
POLICY_KINDS = (("AuthorizationPolicy", "security.istio.io"),
                ("RequestAuthentication", "security.istio.io"),
                ("Telemetry", "telemetry.istio.io"),
                ("WasmPlugin", "extensions.istio.io"))


def selectors(ctx: MeshContext) -> None:
    policies = [(record, selector) for kind, group in POLICY_KINDS
                for record in ctx.view.for_each(kind)
                if isinstance(record, GenericRecord) and api_group(record.api_version) == group
                and ctx.in_scope(record) and (selector := _selector(record)) is not None]
    if not policies:
        return
    unknown = ctx.unknown(Kind.POD)
    if unknown is not None:
        ctx.skip("Istio policy selectors on Gateway API Gateway pods", unknown)
        return
    gateway_pods: dict[str, list[PodRecord]] = {}
    for record, selector in sorted(policies, key=lambda p: p[0].key):
        namespace = record.namespace
        if namespace not in gateway_pods:
            gateway_pods[namespace] = [
                p for p in ctx.view.for_each(Kind.POD, namespace)
                if isinstance(p, PodRecord) and GATEWAY_NAME_LABEL in p.labels]
        hit: dict[str, list[str]] = {}
        for pod in gateway_pods[namespace]:
            if all(pod.labels.get(k) == v for k, v in selector.items()):
                hit.setdefault(pod.labels[GATEWAY_NAME_LABEL], []).append(pod.name)
        for gateway, pods in sorted(hit.items()):
            _report(ctx, record, selector, gateway, pods)


def _selector(record: GenericRecord) -> Mapping[str, str] | None:
    """The policy's selector.matchLabels, or None where it has none or uses targetRefs."""
    spec = record.spec or {}
    if spec.get("targetRef") or spec.get("targetRefs"):
        return None
    raw = spec.get("selector")
    if not isinstance(raw, Mapping):
        return None
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        return None
    return {str(k): str(v) for k, v in labels.items()}


def _report(ctx: MeshContext, record: GenericRecord, selector: Mapping[str, str],
            gateway: str, pods: list[str]) -> None:
    kind = record.kind.partition(".")[0]
    ctx.report(codes.POLICY_SELECTOR_ON_KUBERNETES_GATEWAY.finding(
        ref(record), f"{kind} {record.ref} selects the pods of Gateway API Gateway "
        f"{record.namespace}/{gateway} by label, which Istio does not apply there",
        detail=f"spec.selector {dict(selector)} matches {', '.join(sorted(pods))}, pods of "
        f"the Gateway API Gateway {gateway!r} ({GATEWAY_NAME_LABEL}). Istio attaches "
        "policies to such a Gateway through targetRefs only, so this one does not take "
        "effect at the gateway.",
        suggestion=f"Replace spec.selector with targetRefs: [{{group: "
        f"gateway.networking.k8s.io, kind: Gateway, name: {gateway}}}].",
        evidence=[evidence(record, "spec.selector.matchLabels", dict(selector))],
    ))
