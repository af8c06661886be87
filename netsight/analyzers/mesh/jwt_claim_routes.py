"""VirtualServices routing on JWT claims at a gateway no RequestAuthentication covers
(istioctl's virtualservice.JWTClaimRouteAnalyzer).

Istio lets a gateway route on ``@request.auth.claims.<name>`` pseudo-headers (in
``headers`` or ``withoutHeaders`` of an HTTP match), filled from a JWT the gateway has
validated. Validation needs a RequestAuthentication that applies to the gateway pods: one
in their namespace or the root namespace (istio-system) whose selector matches them (no
selector: every pod of its namespace), or, with targetRefs, one naming their Gateway API
Gateway. Without one no claim is ever present: a ``headers`` match on a claim never
holds, a ``withoutHeaders`` one always does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh import defaults
from netsight.analyzers.mesh.context import MeshContext, PodLabels
from netsight.analyzers.mesh.objects import (
    ISTIO_GATEWAY,
    MESH_GATEWAY,
    IstioGateway,
    Unreadable,
    VirtualService,
    labels_match,
    read_gateway,
)
from netsight.graph.model import Kind, api_group, make_key
from netsight.graph.records import GenericRecord, Record, WorkloadRecord
from netsight.graph.scoping import unrestricted
from netsight.graph.selectors import LabelSelector
from netsight.graph.store import GraphView

REQUEST_AUTHENTICATION = "RequestAuthentication"
SECURITY_GROUP = "security.istio.io"
CLAIM_PREFIX = "@request.auth.claims"
ROOT_NAMESPACE = "istio-system"
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"


@dataclass(frozen=True, slots=True)
class _Authentication:
    namespace: str
    selector: Mapping[str, str] | None  # None: every pod of the namespace
    gateways: tuple[str, ...]  # targetRefs to Gateway API Gateways, by name

    def covers(self, pod: PodLabels) -> bool:
        namespace = pod.record.namespace
        if self.gateways:
            return namespace == self.namespace and \
                pod.labels.get(GATEWAY_NAME_LABEL) in self.gateways
        if self.namespace not in (ROOT_NAMESPACE, namespace):
            return False
        return self.selector is None or labels_match(self.selector, pod.labels)


def claim_routes(ctx: MeshContext) -> None:
    routing = [(vs, key) for vs in ctx.virtual_services if ctx.in_scope(vs.record)
               if (key := _claim_key(vs))]
    if not routing:
        return
    unknown = ctx.unknown(REQUEST_AUTHENTICATION, Kind.POD)
    if unknown is not None:
        ctx.skip("JWT claim routes at gateways", unknown)
        return
    # Gateways, their pods and RequestAuthentications are often in namespaces the caller
    # may not read (istio-system): decide on the whole graph, name only what they may see.
    full, shows = unrestricted(ctx.view)
    authentications = _authentications(full)
    stand_in = defaults.assumed_pod(full)
    for vs, key in routing:
        for name in vs.gateways:
            if name == MESH_GATEWAY:
                continue
            namespace, _, short = name.rpartition("/")
            record = full.get(make_key(ISTIO_GATEWAY, namespace or vs.record.namespace, short))
            if not isinstance(record, GenericRecord):
                continue  # missing: reported by the gateway reference check
            try:
                gateway = read_gateway(record)
            except Unreadable:
                continue  # reported where the Gateway is read
            selector = LabelSelector(match_labels=tuple(sorted(gateway.selector.items())))
            pods = [PodLabels(p, _labels_of(p)) for ns in sorted(full.namespaces())
                    for p in full.matching(ns, selector)]
            if not pods and stand_in is not None and selector.matches(stand_in.labels):
                pods = [PodLabels(stand_in, dict(stand_in.labels), assumed=True)]
            uncovered = [p for p in pods if not any(a.covers(p) for a in authentications)]
            if uncovered:
                _report(ctx, vs, key, gateway, uncovered, shows)


def _claim_key(vs: VirtualService) -> str:
    for rule in vs.rules:
        if rule.protocol != "http":
            continue
        for match in rule.matches:
            for field in ("headers", "withoutHeaders"):
                headers = match.get(field)
                if isinstance(headers, Mapping):
                    for key in headers:
                        if isinstance(key, str) and key.startswith(CLAIM_PREFIX):
                            return key
    return ""


def _authentications(view: GraphView) -> list[_Authentication]:
    found = []
    for record in view.for_each(REQUEST_AUTHENTICATION):
        if not isinstance(record, GenericRecord) or \
                api_group(record.api_version) != SECURITY_GROUP:
            continue
        spec: Mapping[str, Any] = record.spec or {}
        raw = spec.get("selector")
        labels = raw.get("matchLabels") if isinstance(raw, Mapping) else None
        selector = {str(k): str(v) for k, v in labels.items()} \
            if isinstance(labels, Mapping) else None
        refs = [spec.get("targetRef"), *(spec.get("targetRefs") or [])]
        gateways = tuple(str(r.get("name")) for r in refs
                         if isinstance(r, Mapping) and r.get("kind") == "Gateway")
        found.append(_Authentication(record.namespace, selector or None, gateways))
    return found


def _report(ctx: MeshContext, vs: VirtualService, key: str, gateway: IstioGateway,
            pods: list[PodLabels], shows: Callable[[str], bool]) -> None:
    record = vs.record
    names = sorted({f"{p.record.namespace}/{p.record.name}" for p in pods
                    if p.assumed or shows(p.record.key)})
    hidden = sum(1 for p in pods if not p.assumed and not shows(p.record.key))
    if hidden:
        names.append(f"{hidden} in namespaces you may not read")
    note = " (istioctl's stand-in ingress gateway, assumed because the manifests define " \
        "none)" if all(p.assumed for p in pods) else ""
    ctx.report(codes.JWT_CLAIM_ROUTE_WITHOUT_REQUEST_AUTHENTICATION.finding(
        ref(record), f"VirtualService {record.ref} routes on {key} at Gateway "
        f"{gateway.record.ref}, whose pods no RequestAuthentication covers",
        detail=f"The gateway pods {', '.join(names)}{note} validate no JWT: no "
        "RequestAuthentication in their namespace or in istio-system selects them, so "
        f"{key} is never set and the matches on it never hold (withoutHeaders ones always "
        "do).",
        suggestion="Apply a RequestAuthentication (issuer, jwksUri) whose selector matches "
        "the gateway pods, in their namespace or in istio-system.",
        evidence=[evidence(record, "spec.gateways", list(vs.gateways))],
    ))


def _labels_of(record: Record) -> dict[str, str]:
    return dict(record.pod_labels if isinstance(record, WorkloadRecord) else record.labels)
