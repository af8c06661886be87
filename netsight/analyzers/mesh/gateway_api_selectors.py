"""Istio policies that select a Gateway API gateway's pods by label instead of attaching to
the Gateway (istioctl's k8sgateway.SelectorAnalyzer).

Istio deploys the proxies of a Gateway API Gateway itself and labels them
``gateway.networking.k8s.io/gateway-name``; policies for such a gateway are meant to attach
to the Gateway through ``targetRefs``. An AuthorizationPolicy, RequestAuthentication,
Telemetry or WasmPlugin whose ``selector`` matches those pods (in its own namespace), and
that has no targetRef, is reported as upstream does: Istio treats the selector as
ineffective there. A policy with a targetRef (or targetRefs) is left alone, as is one without
a selector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.objects import describe, istio_records, labels_match
from netsight.graph.model import POD_LIKE_KINDS
from netsight.graph.records import GenericRecord, PodRecord, Record, WorkloadRecord
from netsight.graph.selectors import LabelSelector, Operator, Requirement

GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
# (kind id, API group) of the policies istioctl checks, in its order.
POLICY_KINDS: tuple[tuple[str, str], ...] = (
    ("AuthorizationPolicy", "security.istio.io"),
    ("RequestAuthentication", "security.istio.io"),
    ("Telemetry", "telemetry.istio.io"),
    ("WasmPlugin", "extensions.istio.io"),
)
_HAS_GATEWAY_NAME = LabelSelector(requirements=(Requirement(GATEWAY_NAME_LABEL,
                                                          Operator.EXISTS),))


@dataclass(frozen=True, slots=True)
class _GatewayPods:
    gateway: str  # the Gateway API Gateway's name (the label's value)
    records: tuple[Record, ...]


def _selector(record: GenericRecord) -> Mapping[str, str] | None:
    """The policy's matchLabels when it selects by label and attaches by no targetRef;
    None otherwise (or when the selector cannot be read: the schema checks report it)."""
    spec = record.spec
    if not isinstance(spec, Mapping) or spec.get("targetRef") or spec.get("targetRefs"):
        return None
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        return None
    labels = selector.get("matchLabels") or {}
    if not isinstance(labels, Mapping) or not all(isinstance(v, str) for v in labels.values()):
        return None
    return labels


def _gateway_pods(ctx: MeshContext, namespace: str,
                  cache: dict[str, list[tuple[Mapping[str, str], Record]]]
                  ) -> list[tuple[Mapping[str, str], Record]]:
    if namespace not in cache:
        found = []
        for record in ctx.view.matching(namespace, _HAS_GATEWAY_NAME):
            labels = record.pod_labels if isinstance(record, WorkloadRecord) else \
                record.labels
            found.append((labels, record))
        cache[namespace] = found
    return cache[namespace]


def selectors_on_gateway_pods(ctx: MeshContext) -> None:
    policies = [(record, selector) for kind, group in POLICY_KINDS
                for record in istio_records(ctx.view, kind, group=group)
                if ctx.in_scope(record)
                for selector in [_selector(record)] if selector is not None]
    if not policies:
        return
    unknown = ctx.unknown(*POD_LIKE_KINDS)
    if unknown is not None:
        ctx.skip("Istio policies selecting Gateway API gateway pods", unknown)
        return
    cache: dict[str, list[tuple[Mapping[str, str], Record]]] = {}
    for record, selector in policies:
        by_gateway: dict[str, list[Record]] = {}
        for labels, pod in _gateway_pods(ctx, record.namespace, cache):
            if labels_match(selector, labels):
                by_gateway.setdefault(labels[GATEWAY_NAME_LABEL], []).append(pod)
        for gateway, records in sorted(by_gateway.items()):
            pods = [r for r in records if isinstance(r, PodRecord)] or records
            _report(ctx, record, selector, _GatewayPods(gateway, tuple(pods)))


def _report(ctx: MeshContext, record: GenericRecord, selector: Mapping[str, str],
            pods: _GatewayPods) -> None:
    names = ", ".join(describe(r) for r in sorted(pods.records, key=lambda r: r.key)[:5])
    more = f" and {len(pods.records) - 5} more" if len(pods.records) > 5 else ""
    kind = record.kind.partition(".")[0]
    ctx.report(codes.SELECTOR_ON_GATEWAY_API_PODS.finding(
        ref(record), f"{kind} {record.ref} selects the pods of Gateway API Gateway "
        f"{record.namespace}/{pods.gateway} by label; the selector is ineffective there",
        detail=f"Its selector {dict(selector)} matches {names}{more}, which Istio deployed "
        f"for Gateway {record.namespace}/{pods.gateway} (label {GATEWAY_NAME_LABEL}). "
        "Policies for a Gateway API gateway attach to the Gateway with targetRefs; Istio "
        "does not apply this one to those pods (IST0166).",
        suggestion=f"Replace spec.selector with targetRefs: [{{group: "
        f"gateway.networking.k8s.io, kind: Gateway, name: {pods.gateway}}}].",
        evidence=[evidence(record, "spec.selector.matchLabels", dict(selector))],
    ))
