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

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh import defaults
from netsight.analyzers.mesh.context import MeshContext, PodLabels
from netsight.analyzers.mesh.istio_objects import (
    GATEWAY_NAME_LABEL,
    ISTIO_GATEWAY,
    MESH_GATEWAY,
    IstioGateway,
    Unreadable,
    VirtualService,
    labels_match,
    read_gateway,
)
from netsight.graph.model.kinds import Kind, api_group, make_key
from netsight.graph.model.records import GenericRecord, PodRecord, Record, WorkloadRecord
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView
from netsight.graph.store.scoped import unrestricted

REQUEST_AUTHENTICATION = "RequestAuthentication"
SECURITY_GROUP = "security.istio.io"
CLAIM_PREFIX = "@request.auth.claims"
ROOT_NAMESPACE = "istio-system"


@dataclass(frozen=True, slots=True)
class _Authentication:
    key: str
    ref: str  # namespace/name
    namespace: str
    selector: Mapping[str, str] | None  # None: every pod of the namespace
    gateways: tuple[str, ...]  # targetRefs to Gateway API Gateways, by name
    problem: str = ""  # why its selector or targetRefs cannot be read (then it covers nothing)

    def may_cover(self, pod: PodLabels) -> bool:
        """Whether it could apply to ``pod`` were it readable (its namespace or the root)."""
        return self.namespace in (ROOT_NAMESPACE, pod.record.namespace)

    def covers(self, pod: PodLabels) -> bool:
        if self.problem:
            return False
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
    namespaces = sorted(full.namespaces())
    judged: dict[str, tuple[list[PodLabels], list[_Authentication]]] = {}
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
            if record.key not in judged:  # many VirtualServices share a few gateways
                judged[record.key] = _uncovered(gateway, full, namespaces, stand_in,
                                                authentications)
            uncovered, unread = judged[record.key]
            if unread:
                # It may be the one that covers them: whether claims are set is not known.
                first = unread[0]
                name = f"RequestAuthentication {first.ref}" \
                    if shows(first.key) else "a RequestAuthentication in a namespace you " \
                    "may not read"
                ctx.skip(f"JWT claim routes of VirtualService {vs.record.ref} at Gateway "
                         f"{gateway.record.ref}", f"{name} cannot be read: {first.problem}")
            elif uncovered:
                _report(ctx, vs, key, gateway, uncovered, shows)


def _uncovered(gateway: IstioGateway, full: GraphView, namespaces: list[str],
               stand_in: PodRecord | None, authentications: list[_Authentication],
               ) -> tuple[list[PodLabels], list[_Authentication]]:
    """The Gateway's pods no RequestAuthentication covers, and the unreadable
    RequestAuthentications that might."""
    selector = LabelSelector(match_labels=tuple(sorted(gateway.selector.items())))
    pods = [PodLabels(p, _labels_of(p)) for ns in namespaces
            for p in full.matching(ns, selector)]
    if not pods and stand_in is not None and selector.matches(stand_in.labels):
        pods = [PodLabels(stand_in, dict(stand_in.labels), assumed=True)]
    uncovered = [p for p in pods if not any(a.covers(p) for a in authentications)]
    unread = [a for a in authentications
              if a.problem and any(a.may_cover(p) for p in uncovered)]
    return uncovered, unread


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
        found.append(_authentication(record))
    return found


def _authentication(record: GenericRecord) -> _Authentication:
    spec: Mapping[str, Any] = record.spec or {}
    raw, many = spec.get("selector"), spec.get("targetRefs")
    labels = raw.get("matchLabels") if isinstance(raw, Mapping) else None
    refs = [spec.get("targetRef"), *(many if isinstance(many, list) else [])]
    problem = ""
    if (raw is not None and not isinstance(raw, Mapping)) or \
            (labels is not None and not isinstance(labels, Mapping)):
        problem = "spec.selector must be an object with matchLabels an object"
    elif (many is not None and not isinstance(many, list)) or \
            any(r is not None and not isinstance(r, Mapping) for r in refs):
        problem = "spec.targetRef must be an object, spec.targetRefs a list of objects"
    selector = {str(k): str(v) for k, v in labels.items()} \
        if isinstance(labels, Mapping) else None
    gateways = tuple(str(r.get("name")) for r in refs
                     if isinstance(r, Mapping) and r.get("kind") == "Gateway")
    return _Authentication(record.key, record.ref, record.namespace, selector or None,
                           gateways, problem)


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
