"""Routes whose Gateway may not reach their backends: the Gateway's own pods are the clients
of every backend a route sends to, and a NetworkPolicy (or admin policy) isolating the
backend pods without admitting them breaks the route though each object looks healthy.

A Gateway's pods are found by the label GEP-1762 gives the resources deployed for a Gateway,
``gateway.networking.k8s.io/gateway-name``, in the Gateway's namespace (Istio and kgateway
label their deployments so). A Gateway whose pods are not found that way (a shared or
external data plane) is not judged: netsight does not guess where its traffic comes from.
Only Service backends are followed; an implementation's own backend kinds (a kgateway
Backend, Istio's Hostname or ServiceEntry) are not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import ref
from netsight.analyzers.core.contracts import Evidence, Finding, ResourceRef, Severity, ToolFailure
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.mesh.istio_objects import GATEWAY_NAME_LABEL as GATEWAY_NAME
from netsight.analyzers.policy.endpoints import Endpoint, Resolved, from_pod, live, port_targets
from netsight.analyzers.policy.engine import READS, PolicyEngine
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.declared import ROUTE_READS
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_GROUP,
    SERVICE,
    is_gateway_api,
)
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import PodRecord, Record, ServiceRecord
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView

NAME = "gateway_backend_access"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Routes whose Gateway's own pods are denied by network policies from "
    "connecting to the route's backend pods on the backend port.",
    reads=ROUTE_READS | READS | {Kind.POD, Kind.SERVICE},
    codes=(codes.GATEWAY_DENIED_TO_BACKEND,),
)

# Pods evaluated per Gateway and per backend: a Deployment's pods share labels, so policies
# decide alike for them; a few cover an ipBlock drawn around some of them.
GATEWAY_PODS = 4
BACKEND_PODS = 50
_PROTOCOL = {"UDPRoute": "UDP"}  # every other route kind is carried over TCP


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    # Gateways whose pods are found first: a route through none of them is not resolved.
    gateway_pods = {(r.namespace, r.name): pods for r in view.for_each(GATEWAY)
                    if is_gateway_api(r) and (pods := _gateway_pods(view, r.namespace, r.name))}
    if not gateway_pods:
        return
    resolver = Resolver(view)
    engine = PolicyEngine(view, explain=False)
    for route in resolver.routes(namespace):
        if not any((p.group, p.kind) == (GATEWAY_GROUP, GATEWAY) and
                   (p.namespace, p.name) in gateway_pods for p in route.parent_refs):
            continue
        result = resolver.resolve(route)
        gateways = sorted({(p.gateway.record.namespace, p.gateway.record.name)
                           for p in result.parents if p.gateway is not None and p.attached}
                          & gateway_pods.keys())
        if not gateways:
            continue
        protocol = _PROTOCOL.get(route.kind, "TCP")
        seen: set[tuple[str, str, int]] = set()
        for backend in result.backends:
            b = backend.ref
            if not backend.ok or (b.group, b.kind) != ("", SERVICE) or b.port is None \
                    or (b.namespace, b.name, b.port) in seen:
                continue
            seen.add((b.namespace, b.name, b.port))
            targets = _targets(view, b.namespace, b.name, b.port, protocol)
            if not targets:
                continue  # no pods or no port: the route findings say so
            for gw in gateways:
                found = _judge(engine, route.record, b.path, gw, f"{b.namespace}/{b.name}",
                               b.port, protocol, gateway_pods[gw], targets)
                if found is not None:
                    yield found


def _gateway_pods(view: GraphView, namespace: str, name: str) -> tuple[Endpoint, ...]:
    selector = LabelSelector(match_labels=((GATEWAY_NAME, name),))
    pods = sorted((r for r in view.matching(namespace, selector)
                   if isinstance(r, PodRecord) and live(r)), key=lambda r: r.name)
    return tuple(from_pod(p) for p in pods[:GATEWAY_PODS])


def _targets(view: GraphView, namespace: str, name: str, port: int,
             protocol: str) -> list[tuple[Endpoint, int]]:
    service = view.get(make_key(Kind.SERVICE, namespace, name))
    if not isinstance(service, ServiceRecord):
        return []
    pods = sorted((r for r in view.neighbors(service.key, Rel.SELECTS)
                   if isinstance(r, PodRecord) and live(r)), key=lambda r: r.name)
    members = tuple(from_pod(p) for p in pods[:BACKEND_PODS])
    if not members:
        return []
    try:
        targets, _ = port_targets(Resolved(service.ref, members, service), port, protocol,
                                  tool=NAME)
    except ToolFailure:
        return []  # the Service has no such port: the route's ResolvedRefs says so
    return targets


def _judge(engine: PolicyEngine, route: Record, path: str, gateway: tuple[str, str],
           service: str, port: int, protocol: str, sources: tuple[Endpoint, ...],
           targets: list[tuple[Endpoint, int]]) -> Finding | None:
    pairs = denied = 0
    blocking: dict[str, Evidence] = {}
    denied_pair = ""
    for src in sources:
        for dst, target in targets:  # at most BACKEND_PODS (_targets)
            verdict = engine.evaluate(src, dst, target, protocol)
            pairs += 1
            if verdict.allowed is not False:
                continue
            denied += 1
            denied_pair = denied_pair or f"{src.name} -> {dst.name}:{target}"
            for part in (verdict.egress, verdict.ingress):
                if part.allowed is False:
                    for policy in part.blocking:
                        blocking.setdefault(str(policy), Evidence(
                            resource=policy, field_path=f"spec.{part.direction.value}"))
    if not denied:
        return None
    gw = f"{gateway[0]}/{gateway[1]}"
    every = denied == pairs
    names = ", ".join(str(e.resource) for e in blocking.values()) or "policy"
    route_ref = ref(route)
    return codes.GATEWAY_DENIED_TO_BACKEND.finding(
        route_ref,
        f"Gateway {gw}'s pods may not connect to {service} port {port} "
        f"({denied} of {pairs} pod pairs denied by {names})",
        detail=f"{route_ref} sends requests through Gateway {gw} to Service {service} port "
        f"{port} ({path}); the Gateway's pods are the clients of those connections, and "
        f"{'every backend pod refuses' if every else 'some backend pods refuse'} them "
        f"(e.g. {denied_pair}).",
        suggestion=f"Admit the Gateway's pods ({GATEWAY_NAME}={gateway[1]} in namespace "
        f"{gateway[0]}) in the ingress rules of {names}; find_blocking_policies shows the "
        "deciding rule.",
        evidence=[Evidence(resource=ResourceRef(kind="Gateway", namespace=gateway[0],
                                                name=gateway[1]),
                           field_path=f"pods labelled {GATEWAY_NAME}"),
                  *blocking.values()],
        severity=None if every else Severity.WARNING,
    )


CHECK = Check(METADATA, check)
