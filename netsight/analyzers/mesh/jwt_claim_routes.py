"""VirtualServices that route on JWT claims at a gateway no RequestAuthentication covers
(istioctl's virtualservice.JWTClaimRouteAnalyzer).

A match on the pseudo-header ``@request.auth.claims.<name>`` (in ``headers`` or
``withoutHeaders``) is only supported on gateways, and the claims exist only once a
RequestAuthentication has validated the token on the gateway's pods: without one the
match never sees a claim, so the claim-routed rule does not take the traffic it was
written for. A gateway pod is covered by a RequestAuthentication of the root namespace
(istio-system) or of the pod's namespace whose selector matches the pod's labels (no
selector: every workload of its scope), as upstream decides it; one that attaches by
``targetRefs`` covers the pods of the Gateway API Gateway it names (Istio labels them
``gateway.networking.k8s.io/gateway-name``), where upstream counts it as covering every pod.

Decided on what the caller may read: a gateway, gateway pods or RequestAuthentications
in namespaces outside their view are not taken into account (as if absent). One finding
per VirtualService and gateway lists the uncovered pods, where istioctl reports each pod.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.objects import (
    ISTIO_GATEWAY,
    MESH_GATEWAY,
    Unreadable,
    VirtualService,
    describe,
    istio_records,
    labels_match,
    read_gateway,
)
from netsight.analyzers.policy.istio_mesh import ROOT_NAMESPACE
from netsight.graph.model import POD_LIKE_KINDS, make_key
from netsight.graph.records import GenericRecord, PodRecord, Record, WorkloadRecord
from netsight.graph.selectors import LabelSelector
from netsight.graph.store import GraphView

SECURITY_GROUP = "security.istio.io"
REQUEST_AUTHENTICATION = "RequestAuthentication"
CLAIM_HEADER = "@request.auth.claims"  # pilot's constant.HeaderJWTClaim
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
K8S_GATEWAY_GROUP = "gateway.networking.k8s.io"


@dataclass(frozen=True, slots=True)
class RequestAuthn:
    record: GenericRecord
    selector: Mapping[str, str]  # empty: every workload of its scope
    gateways: tuple[str, ...]  # Gateway API Gateways it targets (targetRefs), by name
    targeted: bool  # attaches by targetRefs rather than by selector

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        if self.record.namespace not in (ROOT_NAMESPACE, namespace):
            return False
        if self.targeted:
            return namespace == self.record.namespace and \
                labels.get(GATEWAY_NAME_LABEL) in self.gateways
        return labels_match(self.selector, labels)


def read_request_authn(record: GenericRecord) -> RequestAuthn:
    spec = record.spec if isinstance(record.spec, Mapping) else {}
    selector = spec.get("selector")
    match_labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
    if match_labels is not None and (not isinstance(match_labels, Mapping) or not all(
            isinstance(v, str) for v in match_labels.values())):
        raise Unreadable("spec.selector.matchLabels", "must map label names to strings")
    refs: list[Any] = []
    if isinstance(spec.get("targetRef"), Mapping):
        refs.append(spec["targetRef"])
    if isinstance(spec.get("targetRefs"), list):
        refs.extend(spec["targetRefs"])
    gateways = tuple(r["name"] for r in refs if isinstance(r, Mapping)
                     and r.get("kind") == "Gateway" and r.get("group") == K8S_GATEWAY_GROUP
                     and isinstance(r.get("name"), str))
    return RequestAuthn(record, dict(match_labels or {}), gateways, bool(refs))


@dataclass(frozen=True, slots=True)
class ClaimRoute:
    key: str  # the first claim header, as upstream reports it
    path: str


def claim_route(vs: VirtualService) -> ClaimRoute | None:
    """The VirtualService's first match on a JWT claim (headers or withoutHeaders)."""
    for rule in vs.rules:
        if rule.protocol != "http":
            continue
        for j, match in enumerate(rule.matches):
            for field in ("headers", "withoutHeaders"):
                entries = match.get(field)
                if not isinstance(entries, Mapping):
                    continue
                for key in entries:
                    if isinstance(key, str) and key.startswith(CLAIM_HEADER):
                        return ClaimRoute(key, f"{rule.path}.match[{j}].{field}")
    return None


@dataclass(frozen=True, slots=True)
class _Workload:
    """Gateway pods sharing a namespace and labels (or the workload templates that stand
    for them in manifests)."""

    namespace: str
    labels: Mapping[str, str]
    records: tuple[Record, ...]
    assumed: bool = False


def _gateway_pods(ctx: MeshContext, selector: Mapping[str, str]) -> Iterator[_Workload]:
    wanted = LabelSelector(match_labels=tuple(sorted(selector.items())))
    for namespace in ctx.namespaces:
        groups: dict[tuple[tuple[str, str], ...], list[Record]] = {}
        for record in ctx.view.matching(namespace, wanted):
            labels = record.pod_labels if isinstance(record, WorkloadRecord) else \
                record.labels
            groups.setdefault(tuple(sorted(labels.items())), []).append(record)
        for label_items, records in groups.items():
            pods = [r for r in records if isinstance(r, PodRecord)]
            yield _Workload(namespace, dict(label_items),
                            tuple(sorted(pods or records, key=lambda r: r.key)))
    stand_in = ctx.stand_in_pod
    if stand_in is not None and wanted.matches(stand_in.labels):
        yield _Workload(stand_in.namespace, dict(stand_in.labels), (stand_in,), assumed=True)


def claim_routes_authenticated(ctx: MeshContext) -> None:
    routed = [(vs, found) for vs in ctx.virtual_services if ctx.in_scope(vs.record)
              for found in [claim_route(vs)] if found is not None]
    if not routed:
        return
    unknown = ctx.unknown(REQUEST_AUTHENTICATION, ISTIO_GATEWAY, *POD_LIKE_KINDS)
    if unknown is not None:
        ctx.skip("VirtualService JWT claim routes", unknown)
        return
    policies, unreadable = _request_authns(ctx.view)
    for vs, found in routed:
        record = vs.record
        for i, name in enumerate(vs.gateways):
            if name == MESH_GATEWAY:
                continue
            namespace, sep, gw_name = name.partition("/")
            if not sep:
                namespace, gw_name = record.namespace, name
            gateway_record = ctx.view.get(make_key(ISTIO_GATEWAY, namespace, gw_name))
            if not isinstance(gateway_record, GenericRecord):
                continue  # a missing Gateway is VirtualServiceGatewayNotFound's finding
            try:
                gateway = read_gateway(gateway_record)
            except Unreadable:
                continue  # reported as MeshConfigNotEvaluated
            bare = [w for w in _gateway_pods(ctx, gateway.selector)
                    if not any(p.covers(w.namespace, w.labels) for p in policies)]
            undecided = sorted({unreadable[ns] for w in bare
                                for ns in (ROOT_NAMESPACE, w.namespace) if ns in unreadable})
            if undecided:
                ctx.skip(f"VirtualService {record.ref} JWT claim route at gateway "
                         f"{namespace}/{gw_name}", "; ".join(undecided))
            elif bare:
                _report(ctx, vs, found, f"{namespace}/{gw_name}", f"spec.gateways[{i}]",
                        bare)


def _request_authns(view: GraphView) -> tuple[list[RequestAuthn], dict[str, str]]:
    """The readable RequestAuthentications, and per namespace why one there cannot be
    read (it might cover the gateway pods: their case stays undecided)."""
    found: list[RequestAuthn] = []
    unreadable: dict[str, str] = {}
    for record in istio_records(view, REQUEST_AUTHENTICATION, group=SECURITY_GROUP):
        try:
            found.append(read_request_authn(record))
        except Unreadable as exc:
            unreadable.setdefault(record.namespace,
                                  f"{describe(record)} cannot be read: {exc}")
    return found, unreadable


def _report(ctx: MeshContext, vs: VirtualService, found: ClaimRoute, gateway: str,
            path: str, bare: list[_Workload]) -> None:
    record = vs.record
    names = [describe(r) for w in bare for r in w.records]
    listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5
                                     else "")
    assumed = " (istioctl's stand-in ingress gateway pod, assumed because the manifests " \
        "define none)" if any(w.assumed for w in bare) else ""
    ctx.report(codes.VIRTUAL_SERVICE_JWT_CLAIM_ROUTE_UNAUTHENTICATED.finding(
        ref(record), f"VirtualService {record.ref} routes on JWT claim {found.key!r} at "
        f"gateway {gateway}, but no RequestAuthentication covers its pods",
        detail=f"Gateway {gateway} pods without a RequestAuthentication (in "
        f"{ROOT_NAMESPACE} or their own namespace, selecting them): {listed}{assumed}. "
        "Claims are available for routing only after a RequestAuthentication has "
        "validated the JWT on the gateway pod, so this match never sees the claim.",
        suggestion="Apply a RequestAuthentication (with the issuer's jwtRules) whose "
        "selector matches the gateway pods, in their namespace or in "
        f"{ROOT_NAMESPACE}.",
        evidence=[evidence(record, found.path, found.key), evidence(record, path, gateway)],
    ))
