"""Istio Gateway checks: the pods and Service ports behind a Gateway, and Gateways that
claim the same port and hosts (istioctl's gateway.IngressGatewayPortAnalyzer and
gateway.ConflictingGatewayAnalyzer)."""

from __future__ import annotations

from collections import defaultdict

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import matches as hosts_match
from netsight.analyzers.mesh.objects import IstioGateway, labels_match
from netsight.graph.model import POD_LIKE_KINDS, Kind
from netsight.graph.records import ServiceRecord


def ingress_ports(ctx: MeshContext) -> None:
    """Each Gateway selects gateway pods, and each server port is a TCP port of a Service
    selecting those pods (any such Service will do)."""
    unknown = ctx.unknown(Kind.SERVICE, *POD_LIKE_KINDS)
    gateways = [g for g in ctx.gateways if ctx.in_scope(g.record)]
    if not gateways:
        return
    if unknown is not None:
        ctx.skip("Istio Gateway pods and ports", unknown)
        return
    pods = list(ctx.pods())
    services = [s for s in ctx.view.for_each(Kind.SERVICE) if isinstance(s, ServiceRecord)]
    if ctx.stand_in is not None:
        services.append(ctx.stand_in[1])  # type: ignore[arg-type]
    for gateway in gateways:
        selected = [p for p in pods if labels_match(gateway.selector, p.labels)]
        if not selected:
            _no_pods(ctx, gateway)
            continue
        ports: dict[int, str] = {}
        for pod in selected:
            for service in services:
                # A Service without a selector counts as selecting every pod of its
                # namespace: apimachinery's empty selector, as istioctl reads it.
                if service.namespace == pod.record.namespace and \
                        labels_match(service.selector or {}, pod.labels):
                    for port in service.ports:
                        if port.protocol == "TCP":
                            ports.setdefault(port.port, service.ref)
        assumed = all(p.assumed for p in selected)
        for server in gateway.servers:
            if server.port is None or server.port in ports:
                continue
            record = gateway.record
            note = " (the only pod selected is istioctl's stand-in ingress gateway, " \
                "assumed because the manifests define none; its Service offers 80, 443, " \
                "31400 and 15443)" if assumed else ""
            ctx.report(codes.ISTIO_GATEWAY_PORT_NOT_ON_SERVICE.finding(
                ref(record), f"Gateway {record.ref} serves port {server.port}, which no "
                f"Service of its gateway pods ({gateway.selector_text}) exposes",
                detail=f"The Services selecting the pods that {gateway.selector_text} "
                f"selects expose TCP ports {sorted(ports) or 'none'}{note}; clients cannot "
                f"reach {server.path} on port {server.port}.",
                suggestion="Add the port to the gateway's Service, or serve on a port it "
                "exposes.",
                evidence=[evidence(record, f"{server.path}.port.number", server.port)],
            ))


def _no_pods(ctx: MeshContext, gateway: IstioGateway) -> None:
    record = gateway.record
    ctx.report(codes.ISTIO_GATEWAY_SELECTS_NO_PODS.finding(
        ref(record), f"Gateway {record.ref} selects no gateway pod "
        f"({gateway.selector_text or 'empty selector'})",
        detail="Istio Gateways are served by the gateway pods their selector matches (in "
        "any namespace); none carries these labels, so no proxy serves this Gateway.",
        suggestion="Set spec.selector to the labels of the ingress (or egress) gateway "
        "pods, e.g. istio: ingressgateway.",
        evidence=[evidence(record, "spec.selector", dict(gateway.selector))],
    ))


def conflicting(ctx: MeshContext) -> None:
    """Gateways with the same selector and a server on the same port whose hosts overlap."""
    claims: dict[tuple[str, int], dict[str, tuple[IstioGateway, tuple[str, ...]]]] = \
        defaultdict(dict)
    for gateway in ctx.gateways:
        for server in gateway.servers:
            if server.port is not None:
                claims[(gateway.selector_text, server.port)][gateway.record.ref] = \
                    (gateway, server.hosts)
    for gateway in ctx.gateways:
        if not ctx.in_scope(gateway.record):
            continue
        for server in gateway.servers:
            if server.port is None:
                continue
            others = [ref_ for ref_, (_, hosts) in
                      claims[(gateway.selector_text, server.port)].items()
                      for host in server.hosts
                      if ref_ != gateway.record.ref and any(hosts_match(host, h)
                                                            for h in hosts)]
            if not others:
                continue
            record = gateway.record
            ctx.report(codes.CONFLICTING_ISTIO_GATEWAYS.finding(
                ref(record), f"Gateway {record.ref} {server.path} conflicts with "
                f"{', '.join(dict.fromkeys(others))} on port {server.port}",
                detail=f"Gateways with selector {gateway.selector_text or '(none)'} share "
                f"port {server.port} with overlapping hosts {list(server.hosts)}; the "
                "gateway can serve only one of them.",
                suggestion="Merge the servers into one Gateway, or give them distinct "
                "hosts or ports.",
                evidence=[evidence(record, f"{server.path}.hosts", list(server.hosts))],
            ))
