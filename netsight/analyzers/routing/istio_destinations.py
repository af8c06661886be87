"""Where the rule that takes a request sends it (pilot/pkg/networking/core/route): its
weighted route destinations and mirrors, each resolved to the Service or ServiceEntry
behind its host, the DestinationRule subset a proxy applies, and ready endpoints; or the
redirect or direct response it answers with; or, for a sidecar with no VirtualService for
the host, the default route to the Service.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.core.quoting import spec_text
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import (
    EXPORT_ALL,
    SERVICE_DOMAIN,
    export_scopes,
    service_of,
    to_fqdn,
)
from netsight.analyzers.mesh.istio_objects import DestinationRule, VirtualService
from netsight.analyzers.routing.istio_rules import (
    ROOT_NAMESPACE,
    Destination,
    Resolution,
    Rule,
    Source,
    host_rank,
)
from netsight.analyzers.routing.references import ready_endpoints
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import EndpointSliceRecord, ServiceRecord
from netsight.graph.store.live import GraphView


def take(ctx: MeshContext, answer: Resolution, rule: Rule, *, port: int | None,
          proxy_namespace: str) -> None:
    spec = rule.spec
    answer.filters = _filters(spec)
    redirect = spec.get("redirect")
    direct = spec.get("directResponse")
    if isinstance(redirect, Mapping):
        answer.filters.append(f"redirect {spec_text(redirect)}")
        answer.outcome = "redirect"
        return
    if isinstance(direct, Mapping):
        # A response the rule gives on purpose, not a failure to forward.
        answer.filters.append(f"directResponse {spec_text(direct)}")
        answer.outcome = "direct"  # as a Gateway API DirectResponse filter's
        return
    routes = [r for r in spec.get("route") or () if isinstance(r, Mapping)]
    weights = [_weight(r, len(routes)) for r in routes]
    total = sum(weights)
    for r, weight in zip(routes, weights, strict=True):
        answer.destinations.append(destination(
            ctx, rule.vs, r.get("destination"), weight=weight,
            share=round(100 * weight / total, 1) if total else 0.0, port=port,
            proxy_namespace=proxy_namespace))
    for mirror in _mirrors(spec):
        answer.destinations.append(destination(ctx, rule.vs, mirror, weight=0, share=0.0,
                                                port=port, proxy_namespace=proxy_namespace,
                                                mirror=True))
    answer.outcome = _outcome([d for d in answer.destinations if not d.mirror and d.weight])


def _weight(route: Mapping[str, Any], count: int) -> int:
    weight = route.get("weight")
    if isinstance(weight, int) and not isinstance(weight, bool):
        return weight if count > 1 or weight else 100
    return 100 if count == 1 else 0


def _mirrors(spec: Mapping[str, Any]) -> list[Any]:
    found = [spec["mirror"]] if isinstance(spec.get("mirror"), Mapping) else []
    mirrors = spec.get("mirrors")
    if isinstance(mirrors, list):
        found.extend(m.get("destination") for m in mirrors if isinstance(m, Mapping))
    return found


def _outcome(forwarded: list[Destination]) -> str:
    if not forwarded:
        return "503"  # no destination with weight: Envoy has no cluster to pick
    if all(not d.resolved for d in forwarded):
        return "503"  # unknown host or subset: no cluster (NC) or a blackhole
    if all(d.ready_endpoints == 0 for d in forwarded if d.resolved):
        return "503"
    return "forwarded"


def _filters(spec: Mapping[str, Any]) -> list[str]:
    found = []
    for key in ("rewrite", "headers", "fault", "retries", "timeout", "corsPolicy"):
        value = spec.get(key)
        if value:
            found.append(f"{key} {spec_text(value)}")
    return found


def destination(ctx: MeshContext, vs: VirtualService, raw: Any, *, weight: int = 0,
                share: float = 0.0, port: int | None = None,
                proxy_namespace: str | None = None, mirror: bool = False) -> Destination:
    """One route or mirror destination: the Service or ServiceEntry behind its host, its
    subset (defined by the DestinationRule a proxy of ``proxy_namespace`` applies) and
    ready endpoints."""
    proxy_namespace = proxy_namespace or vs.record.namespace
    spec = raw if isinstance(raw, Mapping) else {}
    host = str(spec.get("host") or "")
    subset = str(spec.get("subset") or "")
    raw_port = spec.get("port")
    number = raw_port.get("number") if isinstance(raw_port, Mapping) else None
    dest_port = number if isinstance(number, int) and not isinstance(number, bool) else None
    fqdn = to_fqdn(vs.record.namespace, host)
    entry = ctx.hosts.lookup(vs.record.namespace, vs.export_to, host)
    namespace, name = service_of(vs.record.namespace, fqdn)
    backend = f"{namespace}/{name}" if fqdn.endswith(f".{SERVICE_DOMAIN}") else fqdn

    def out(resolved: bool, reason: str | None, ready: int | None) -> Destination:
        return Destination(host, fqdn, backend, subset, dest_port, weight, share, resolved,
                           reason, ready, mirror)

    if entry is None:
        return out(False, f"no Service or ServiceEntry {fqdn} visible to {vs.record.ref}",
                   None)
    ports = entry.ports
    if dest_port is None and len(ports) > 1 and port not in ports:
        return out(False, f"{fqdn} has ports {', '.join(map(str, ports))} and the "
                   "destination names none", None)
    if dest_port is not None and ports and dest_port not in ports:
        return out(False, f"{fqdn} has no port {dest_port}", None)
    labels: Mapping[str, str] | None = None
    if subset:
        rule = destination_rule(ctx, fqdn, proxy_namespace)
        labels = next((s.labels for s in rule.subsets if s.name == subset), None) \
            if rule is not None else None
        if rule is None or labels is None:
            where = f"DestinationRule {rule.record.ref}" if rule is not None else \
                "no DestinationRule"
            return out(False, f"subset {subset!r} is not defined ({where} for {fqdn} "
                       f"applies to namespace {proxy_namespace})", None)
    ready = None
    if isinstance(entry.record, ServiceRecord) and not entry.assumed:
        ready = ready_endpoints(ctx.view, entry.record) if labels is None else \
            _ready_in_subset(ctx.view, entry.record, labels)
    return out(True, None, ready)


def _ready_in_subset(view: GraphView, service: ServiceRecord,
                     labels: Mapping[str, str]) -> int | None:
    """Ready endpoints of the Service whose pods carry the subset's labels; None when an
    endpoint names no pod the graph holds (its labels are unknown)."""
    if ready_endpoints(view, service) is None:
        return None
    ready: set[str] = set()
    for record in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                 kind=Kind.ENDPOINT_SLICE):
        if not isinstance(record, EndpointSliceRecord):
            continue
        for endpoint in record.group.endpoints:
            if not endpoint.is_ready or endpoint.terminating:
                continue
            pod = view.get(make_key(Kind.POD, service.namespace, endpoint.target_pod)) \
                if endpoint.target_pod else None
            if pod is None:
                return None
            if all(pod.labels.get(k) == v for k, v in labels.items()):
                ready.add(pod.key)
    return len(ready)


def destination_rule(ctx: MeshContext, fqdn: str, proxy_namespace: str
                     ) -> DestinationRule | None:
    """The DestinationRule a proxy in ``proxy_namespace`` applies to ``fqdn``: looked up in
    the proxy's namespace, then the host's, then the root namespace; an exact host before
    a wildcard; exported to the proxy's namespace (pilot's DestinationRule lookup)."""
    service_namespace = service_of("", fqdn)[0]
    for namespace in dict.fromkeys((proxy_namespace, service_namespace, ROOT_NAMESPACE)):
        found = []
        for rule in ctx.destination_rules:
            home = rule.record.namespace
            if home != namespace or rule.has_workload_selector:
                continue
            scopes = export_scopes(rule.export_to, home)
            if EXPORT_ALL not in scopes and proxy_namespace not in scopes:
                continue
            rank = host_rank(to_fqdn(home, rule.host), fqdn)
            if rank is not None:
                found.append((rank, rule))
        if found:
            return max(found, key=lambda item: item[0])[1]
    return None


def default_route(ctx: MeshContext, answer: Resolution, candidates: list[str],
                   source: Source) -> None:
    """No VirtualService for the host: a sidecar routes a Service's host to the Service."""
    for fqdn in candidates:
        entry = ctx.hosts.lookup(source.namespace, (), fqdn)
        if entry is None or entry.assumed:
            continue
        answer.default_route = True
        answer.default_to = entry.record.key
        service = entry.record if isinstance(entry.record, ServiceRecord) else None
        ready = ready_endpoints(ctx.view, service) if service is not None else None
        full = to_fqdn(source.namespace, fqdn)
        backend = service.ref if service is not None else full
        answer.destinations = [Destination(fqdn, full, backend, "", None, 100, 100.0, True,
                                           None, ready)]
        answer.outcome = _outcome(answer.destinations)
        return
    answer.notes.append((None, f"mesh: no VirtualService exported to {source.namespace} "
                         f"and no Service or ServiceEntry for host {candidates[0]}"))
