"""Which Istio VirtualService http rule takes one request, as a sidecar or an Istio Gateway
would route it (diff_routes ``via``).

The VirtualServices and DestinationRules are read by the mesh checks' readers
(mesh/istio_objects.py through MeshContext) and hosts resolved by their rules (mesh/hosts.py).
What follows is pilot's routing (pilot/pkg/networking/core: httproute.go, gateway.go,
route/route.go; pilot/pkg/model: virtualservice.go, push_context.go):

- VirtualServices are taken oldest first (creationTimestamp, then name, then namespace).
- A sidecar (``via: mesh``) uses the VirtualServices bound to ``mesh`` (no ``gateways``, or
  ``mesh`` among them) and exported to the client's namespace. One VirtualService owns a host:
  Envoy picks the exact host before a wildcard (the most specific wildcard first), and of
  VirtualServices claiming the same host the oldest keeps it, the others' virtual host being
  dropped as a duplicate domain. Without one, a Service's host gets the default route to it.
- An Istio Gateway (``via: gateway ns/name``) merges the http rules of every VirtualService
  bound to it for a host its servers serve to the VirtualService's namespace, in that order.
- Within the rules, delegation resolved (routing/istio_delegation.py), the first whose match
  fits takes the request (routing/istio_matches.py); where it goes is
  routing/istio_destinations.py.

Not evaluated, and answered undecided with the reason: ``scheme`` matches, a delegate's
rule that delegates again, a sidecar's ``sourceLabels`` or ``port`` when the request does
not give them, and a gateway's ``sourceLabels``/``sourceNamespace`` (its pods' labels and
namespace).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import EXPORT_ALL, SERVICE_DOMAIN, is_wildcard, to_fqdn
from netsight.analyzers.mesh.hosts import matches as hosts_match
from netsight.analyzers.mesh.istio_objects import (
    ISTIO_GATEWAY,
    MESH_GATEWAY,
    VIRTUAL_SERVICE,
    IstioGateway,
    Unreadable,
    VirtualService,
    read_gateway,
)
from netsight.analyzers.mesh.virtual_services import istio_gateway_hosts
from netsight.analyzers.routing.istio_delegation import delegated
from netsight.analyzers.routing.istio_destinations import default_route, take
from netsight.analyzers.routing.istio_matches import rule_fit
from netsight.analyzers.routing.istio_rules import (
    ROOT_NAMESPACE,
    Resolution,
    Rule,
    Source,
    Via,
    exported_to,
    gateway_name,
    host_rank,
    rules_of,
)
from netsight.analyzers.routing.requests import Request
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import GenericRecord
from netsight.graph.store.live import GraphView

_HTTP_SERVER_PROTOCOLS = ("HTTP", "HTTPS", "HTTP2", "GRPC")


def _order(vs: VirtualService) -> tuple[str, str, str]:
    record = vs.record
    return (record.created or "9999", record.name, record.namespace)


def _best_host(vs: VirtualService, candidates: list[str]) -> tuple[tuple[int, int], str] | None:
    best: tuple[tuple[int, int], str] | None = None
    for host in vs.hosts:
        fqdn_host = to_fqdn(vs.record.namespace, host)
        for fqdn in candidates:
            rank = host_rank(fqdn_host, fqdn)
            if rank is not None and (best is None or rank > best[0]):
                best = (rank, fqdn_host)
    return best


@dataclass(frozen=True, slots=True)
class HostIndex:
    """VirtualServices with hosts by each host they claim (resolved to an FQDN in their
    namespace), so a request reads those that may claim its host, not all of them."""

    by_host: Mapping[str, tuple[VirtualService, ...]]

    def claiming(self, names: list[str]) -> list[VirtualService]:
        """The VirtualServices a host of which is one of ``names`` or a wildcard covering
        one (``*.b.c`` covers ``a.b.c`` and ``x.a.b.c``), oldest first."""
        found: dict[str, VirtualService] = {}
        for name in names:
            keys = [name, "*"]
            labels = name.split(".")
            keys.extend("*." + ".".join(labels[i:]) for i in range(1, len(labels)))
            for key in keys:
                for vs in self.by_host.get(key, ()):
                    found.setdefault(vs.record.key, vs)
        return sorted(found.values(), key=_order)


def host_index(ctx: MeshContext) -> HostIndex:
    """Kept with the graph until a VirtualService changes (rebuilt for an overlay). Read
    through ``ctx`` first, so that VirtualServices Istio's schema would refuse (left out
    of the index) are among its findings."""
    if not ctx.virtual_services:
        return HostIndex({})

    def build(graph: GraphView) -> HostIndex:
        by_host: dict[str, list[VirtualService]] = {}
        for vs in MeshContext(graph, None).virtual_services:
            for host in dict.fromkeys(to_fqdn(vs.record.namespace, h) for h in vs.hosts):
                by_host.setdefault(host, []).append(vs)
        return HostIndex({host: tuple(found) for host, found in by_host.items()})

    return ctx.view.derived(("diff_routes", "virtual_service_hosts"), (VIRTUAL_SERVICE,),
                            build)


def request_fqdns(view: GraphView, host: str, namespace: str | None) -> list[str]:
    """The names a request host stands for: as written, and for a sidecar the short
    forms Envoy's virtual hosts accept for a Service (name, name.ns, name.ns.svc)."""
    found = [host]
    if namespace is None or is_wildcard(host):
        return found
    parts = host.split(".")
    if len(parts) == 1:
        found.append(f"{host}.{namespace}.{SERVICE_DOMAIN}")
    elif len(parts) == 2 and view.exists(make_key(Kind.SERVICE, parts[1], parts[0])):
        found.append(f"{host}.{SERVICE_DOMAIN}")
    elif len(parts) == 3 and parts[2] == "svc":
        found.append(f"{parts[0]}.{parts[1]}.{SERVICE_DOMAIN}")
    return found


def istio_gateway(view: GraphView, via: Via) -> IstioGateway | str | None:
    """The Istio Gateway ``via`` names (None: not found; a string: why it is unreadable)."""
    assert via.gateway is not None
    record = view.get(make_key(ISTIO_GATEWAY, *via.gateway))
    if not isinstance(record, GenericRecord):
        return None
    try:
        return read_gateway(record)
    except Unreadable as exc:
        return str(exc)


def resolve(ctx: MeshContext, via: Via, request: Request, *, authority: str,
            port: int | None, source: Source | None, gateway: IstioGateway | None) -> Resolution:
    """The VirtualService rule that takes the request through ``via`` on ``ctx.view``."""
    view = ctx.view
    answer = Resolution(entry=via.entry, port=port)
    index = host_index(ctx)
    if via.gateway is None:
        assert source is not None
        candidates = request_fqdns(view, request.host, source.namespace)
        claims = [(found, vs) for vs in index.claiming(candidates)
                  if vs.on_mesh and exported_to(vs, source.namespace)
                  and (found := _best_host(vs, candidates)) is not None]
        _sidecar_scope(ctx, answer, source.namespace)
        if not claims:
            default_route(ctx, answer, candidates, source)
            return answer
        best = max(rank for (rank, _), _ in claims)
        owners = [(host, vs) for (rank, host), vs in claims if rank == best]
        owner_host, owner = owners[0]
        answer.owner = owner
        for (rank, _), vs in claims:
            if vs is owner:
                continue
            because = f"the older VirtualService keeps host {owner_host}; a sidecar takes " \
                "one per host" if rank == best else f"host {owner_host} is more specific"
            answer.shadowed.extend((rule, owner, because) for rule in rules_of(vs))
        rules = rules_of(owner)
        proxy_namespace = source.namespace
    else:
        if gateway is None:
            return answer
        served = [s for s in gateway.servers
                  if (port is None or s.port == port)]
        protocols = _server_protocols(gateway)
        served = [s for s in served if protocols.get(s.index, "") in _HTTP_SERVER_PROTOCOLS]
        if not served:
            answer.outcome = "404"
            answer.notes.append((None, f"{via.entry}: no HTTP server"
                                 + (f" on port {port}" if port is not None else "")))
            return answer
        name = "/".join(via.gateway)
        proxy_namespace = via.gateway[0]
        groups: dict[str, list[VirtualService]] = {}
        best_rank: tuple[int, int] | None = None
        for vs in index.claiming([request.host]):
            if not any(gateway_name(g, vs.record.namespace) == name for g in vs.gateways
                       if g != MESH_GATEWAY) or not exported_to(vs, proxy_namespace):
                continue
            allowed = [h for s in served
                       for h in istio_gateway_hosts(gateway.record, vs.record.namespace,
                                                    servers=(s.index,))]
            found = _best_host(vs, [request.host])
            if found is None:
                continue
            if not any(hosts_match(h, found[1]) for h in allowed) \
                    or not any(hosts_match(h, request.host) for h in allowed):
                on_port = f" on port {port}" if port is not None else ""
                answer.notes.append((vs.record.key, f"VirtualService {vs.record.ref} is "
                                     f"bound to {via.entry}, but no server{on_port} serves "
                                     f"{request.host} to namespace {vs.record.namespace}"))
                continue
            groups.setdefault(found[1], []).append(vs)
            if best_rank is None or found[0] > best_rank:
                best_rank = found[0]
        if not groups:
            answer.notes.append((None, f"{via.entry}: no VirtualService bound to it "
                                 f"serves host {request.host}"))
            return answer
        host = max(groups, key=lambda h: host_rank(h, request.host) or (0, 0))
        rules = [rule for vs in groups[host] for rule in rules_of(vs)]
        answer.owner = groups[host][0]
        if proxy_namespace and any(not (not vs.export_to or EXPORT_ALL in vs.export_to)
                                   for vs in groups[host]):
            answer.notes.append((None, f"{via.entry}: VirtualService exportTo is decided "
                                 f"for the Gateway's namespace {proxy_namespace} (its pods' "
                                 "namespace is assumed the same)"))
    rules = delegated(ctx, rules, answer)
    _first_match(ctx, answer, rules, request, authority=authority, via=via, port=port,
                 source=source, proxy_namespace=proxy_namespace)
    return answer


def _sidecar_scope(ctx: MeshContext, answer: Resolution, namespace: str) -> None:
    """A Sidecar of the client's namespace (or the root namespace's default) whose egress
    does not import every host may hide VirtualServices from the client: not evaluated."""
    for sidecar in ctx.sidecars:
        record = sidecar.record
        if record.namespace not in (namespace, ROOT_NAMESPACE):
            continue
        spec = record.spec if isinstance(record.spec, Mapping) else {}
        egress = spec.get("egress")
        hosts = [h for listener in egress if isinstance(listener, Mapping)
                 for h in listener.get("hosts") or ()] if isinstance(egress, list) else []
        if egress is not None and "*/*" not in hosts:
            answer.notes.append((record.key, f"Sidecar {record.ref} limits the hosts its "
                                 f"workloads import ({', '.join(map(str, hosts))}); which "
                                 "VirtualServices the client sees through it is not "
                                 "evaluated"))


def _server_protocols(gateway: IstioGateway) -> dict[int, str]:
    spec = gateway.record.spec
    servers = spec.get("servers") if isinstance(spec, Mapping) else None
    found = {}
    for i, server in enumerate(servers if isinstance(servers, list) else ()):
        port = server.get("port") if isinstance(server, Mapping) else None
        protocol = port.get("protocol") if isinstance(port, Mapping) else None
        found[i] = str(protocol or "").upper()
    return found


def _first_match(ctx: MeshContext, answer: Resolution, rules: list[Rule], request: Request,
                 *, authority: str, via: Via, port: int | None, source: Source | None,
                 proxy_namespace: str) -> None:
    for rule in rules:
        fit, match = rule_fit(rule, request, authority=authority, via=via, port=port,
                              source=source)
        if fit is False:
            continue
        if answer.rule is not None:
            if fit is True:
                answer.shadowed.append((rule, answer.rule, "an earlier rule matches first"))
            continue
        if isinstance(fit, str):
            answer.rule, answer.outcome = rule, "undecided"
            answer.undecided = f"{rule.label}: {fit}"
            return
        if "delegate" in rule.spec:
            answer.rule, answer.match, answer.outcome = rule, match, "undecided"
            answer.undecided = f"{rule.label} delegates again; Istio supports one level " \
                "of delegation and netsight does not follow more"
            return
        answer.rule, answer.match = rule, match
        take(ctx, answer, rule, port=port, proxy_namespace=proxy_namespace)
    if answer.rule is None:
        answer.outcome = "404"
