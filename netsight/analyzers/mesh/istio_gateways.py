"""Istio Gateway checks: the pods and Service ports behind a Gateway, and Gateways that
claim the same port and hosts (istioctl's gateway.IngressGatewayPortAnalyzer and
gateway.ConflictingGatewayAnalyzer)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import IstioGateway, Server, labels_match
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import ServiceRecord


def ingress_ports(ctx: MeshContext) -> None:
    """Each Gateway selects gateway pods, and each server port is a TCP port of a Service
    selecting those pods (any such Service will do)."""
    unknown = ctx.unknown(Kind.SERVICE) or ctx.pods_unknown()
    gateways = [g for g in ctx.gateways if ctx.in_scope(g.record)]
    if not gateways:
        return
    if unknown is not None:
        ctx.skip("Istio Gateway pods and ports", unknown)
        return
    for gateway in gateways:
        selected = list(ctx.pods_matching(gateway.selector))
        if not selected:
            _no_pods(ctx, gateway)
            continue
        ports: dict[int, str] = {}
        services: dict[str, list[ServiceRecord]] = {}
        # Pods of one workload share their labels: each label set is tested once.
        distinct = {(p.record.namespace, tuple(sorted(p.labels.items()))): p
                    for p in selected}
        for pod in distinct.values():
            namespace = pod.record.namespace
            if namespace not in services:
                services[namespace] = _services(ctx, namespace)
            for service in services[namespace]:
                # A Service without a selector counts as selecting every pod of its
                # namespace: apimachinery's empty selector, as istioctl reads it.
                if service.namespace == pod.record.namespace and \
                        labels_match(service.selector or {}, pod.labels):
                    # A server port names the Service port; istiod makes the proxy
                    # listen on that port's targetPort (gateway port translation).
                    for port in service.ports:
                        if port.protocol == "TCP":
                            ports.setdefault(port.port, service.ref)
        assumed = all(p.assumed for p in selected)
        for server in gateway.servers:
            if server.port is None or server.port in ports:
                continue
            record = gateway.record
            note = "" if not assumed else \
                " (the only pod selected is istioctl's stand-in ingress gateway pod, " \
                "assumed because the manifests define none; " + (
                    "its stand-in Service offers 80, 443, 31400 and 15443)"
                    if ctx.stand_in_service is not None else
                    "it is fronted by the manifests' own Services of its namespace)")
            ctx.report(codes.ISTIO_GATEWAY_PORT_NOT_ON_SERVICE.finding(
                ref(record), f"Gateway {record.ref} serves port {server.port}, which no "
                f"Service of its gateway pods ({gateway.selector_text}) exposes",
                detail=f"The Services selecting the pods that {gateway.selector_text} "
                f"selects expose TCP ports {', '.join(map(str, sorted(ports))) or 'none'}"
                f"{note}. A server port names a port of the gateway's Service (istiod "
                "listens on its targetPort); "
                f"no Service offers {server.port}, so clients cannot reach {server.path}.",
                suggestion="Serve on a port the gateway's Service exposes, or add this port "
                "to the Service.",
                evidence=[evidence(record, f"{server.path}.port.number", server.port)],
            ))


def _services(ctx: MeshContext, namespace: str) -> list[ServiceRecord]:
    found = [s for s in ctx.view.for_each(Kind.SERVICE, namespace)
             if isinstance(s, ServiceRecord)]
    if ctx.stand_in_service is not None and ctx.stand_in_service.namespace == namespace:
        found.append(ctx.stand_in_service)
    return found


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
    """Gateways whose selectors are equal, or nest and select a common pod, with servers on
    one port naming the same host with the same bind address: the gateway keeps only one
    (pilot's MergeGateways, model.CheckDuplicates; hosts compare as strings, so a wildcard
    and a name under it do not conflict). A Gateway without servers whose selector no
    other Gateway with servers shares serves nothing."""
    claims: dict[tuple[str, int], dict[str, dict[str, str]]] = defaultdict(dict)
    selectors: dict[str, Mapping[str, str]] = {}
    for gateway in ctx.gateways:
        selectors[gateway.selector_text] = gateway.selector
        for server in gateway.servers:
            claims[(gateway.selector_text, server.port or 0)][gateway.record.ref] = \
                dict.fromkeys(server.hosts, server.bind)
    for gateway in ctx.gateways:
        if not ctx.in_scope(gateway.record):
            continue
        mine = gateway.selector_text
        hits = []
        for text, port in claims:
            if text == mine or ((text in mine or mine in text) and _share_a_pod(
                    ctx, gateway.selector, selectors[text])):
                hits.append((text, port))
        if mine and not hits:
            _serves_nothing(ctx, gateway)
            continue
        for server in gateway.servers:
            port = server.port or 0
            others = sorted(name for text, p in hits if p == port
                            for name, known in claims[(text, p)].items()
                            if name != gateway.record.ref and
                            any(known.get(h) == server.bind for h in server.hosts
                                if h in known))
            if others:
                _conflict(ctx, gateway, server, port, others)


def _share_a_pod(ctx: MeshContext, a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    """Whether some pod carries the labels of both selectors."""
    if any(b.get(k, v) != v for k, v in a.items()):
        return False  # they require different values of one label
    return next(ctx.pods_matching({**a, **b}), None) is not None


def _conflict(ctx: MeshContext, gateway: IstioGateway, server: Server, port: int,
              others: list[str]) -> None:
    record = gateway.record
    ctx.report(codes.CONFLICTING_ISTIO_GATEWAYS.finding(
        ref(record), f"Gateway {record.ref} {server.path} conflicts with "
        f"{', '.join(dict.fromkeys(others))} on port {port}",
        detail=f"Gateways selecting the same gateway pods ({gateway.selector_text or 'all'}) "
        f"declare port {port} for the same hosts {', '.join(server.hosts)}"
        f"{f' bound to {server.bind}' if server.bind else ''}; the gateway merges them and "
        "keeps only one server for each host.",
        suggestion="Merge the servers into one Gateway, or give them distinct hosts or "
        "ports.",
        evidence=[evidence(record, f"{server.path}.hosts", list(server.hosts))],
    ))


def _serves_nothing(ctx: MeshContext, gateway: IstioGateway) -> None:
    record = gateway.record
    ctx.report(codes.ISTIO_GATEWAY_SERVES_NOTHING.finding(
        ref(record), f"Gateway {record.ref} has no servers, and no Gateway with its "
        f"selector ({gateway.selector_text}) has any",
        detail="A Gateway configures the ports and hosts of the gateway pods it selects "
        "through spec.servers; with none, here or on another Gateway for these pods, they "
        "get no listener from it.",
        suggestion="Add spec.servers (port, hosts) or delete the Gateway.",
        evidence=[evidence(record, "spec.servers", [])],
    ))
