"""diff_routes: where one HTTP request goes through the Gateway API, and why not elsewhere."""

from __future__ import annotations

from pydantic import Field

from netsight.analyzers import codes
from netsight.analyzers.arguments import NamespacedName, PortNumber, ToolArgs
from netsight.analyzers.base import AnalyzerMetadata, did_you_mean, metadata, ref
from netsight.analyzers.check_route_resolution import METADATA as ROUTES_METADATA
from netsight.analyzers.contracts import (
    ErrorCode,
    Finding,
    Model,
    OmitNone,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import hostnames, ingresses, rules
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.gateways import GatewayState, ListenerState
from netsight.analyzers.routing.objects import (
    GATEWAY,
    GRPC_ROUTE,
    HTTP_ROUTE,
    ROUTE_KINDS,
    as_list,
    as_map,
    is_gateway_api,
    raw_hostnames,
)
from netsight.analyzers.routing.references import ready_endpoints
from netsight.analyzers.routing.report import BackendTLSOut, backend_tls_out
from netsight.analyzers.routing.requests import (
    Candidate,
    Request,
    best_hostname,
    candidates,
    host_rank,
    is_grpc,
    why_shadowed,
)
from netsight.graph.model import Kind, make_key
from netsight.graph.store import GraphView

NAME = "diff_routes"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Resolve one HTTP request (host, path, method, headers, query) through the "
    "Gateway API as the spec orders it (the listener it lands on, the HTTPRoute rule chosen "
    "by match precedence, the filters that apply, the weighted backends with ready "
    "endpoint counts) and through Ingress (class, host, pathType, default backend); the "
    "rules it shadows; whether it reaches an expected backend.",
    reads=ROUTES_METADATA.reads | {Kind.INGRESS, Kind.INGRESS_CLASS},
    codes=(codes.REQUEST_NOT_ROUTED, codes.REQUEST_GETS_ERROR,
           codes.REQUEST_MISSES_EXPECTED_BACKEND),
)

_HTTP_PROTOCOLS = ("HTTP", "HTTPS")


class Args(ToolArgs):
    host: str = Field(min_length=1, max_length=253,
                      description="Host header, e.g. shop.example.com")
    path: str = Field(default="/", pattern=r"^/", description="Request path, starting with /")
    method: str = Field(default="GET", pattern=r"^[A-Z]+$", description="HTTP method")
    headers: dict[str, str] = Field(default_factory=dict, description="Request headers")
    query: dict[str, str] = Field(default_factory=dict, description="Query parameters")
    gateway: NamespacedName | None = Field(
        default=None, description="Enter at this Gateway ('namespace/name'); default: every "
        "Gateway with a listener for the host")
    port: PortNumber | None = Field(default=None, description="Only listeners on this port")
    expected_backend: NamespacedName | None = Field(
        default=None, description="The Service ('namespace/name') the request should reach")
    against: int | None = Field(
        default=None, ge=0, description="A graph generation (metadata.graphGeneration of an "
        "earlier answer): also list what changed since then in the objects the request "
        "goes through")


class BackendShare(OmitNone):
    backend: str
    port: int | None = None
    weight: int
    share: float = Field(description="Percent of the rule's requests")
    resolved: bool
    reason: str | None = None
    ready_endpoints: int | None = None
    mirror: bool | None = None
    tls: BackendTLSOut | None = None  # backend TLS (BackendTLSPolicy)


class Layer(OmitNone):
    layer: str = "gateway-api"
    entry: str = Field(description='"namespace/gateway/listener"')
    port: int | None = None
    route: str | None = None
    kind: str | None = None
    rule: int | None = None
    match: dict[str, object] | None = None
    filters: list[str] | None = None
    backends: list[BackendShare]
    outcome: str = Field(description='"forwarded", "redirect", "404", "500" or "503"')


class Shadowed(Model):
    route: str
    kind: str
    rule: int
    shadowed_by: str
    because: str = Field(description="The precedence criterion that decided")


class ChangeOut(Model):
    generation: int
    type: str = Field(description="ADDED, MODIFIED or DELETED")
    object: str = Field(description='The object\'s key, e.g. "HTTPRoute/shop/web"')
    fields: list[str] = Field(description="Record fields that changed (MODIFIED)")
    around: str | None = Field(default=None, description="The object of the request's path "
                               "it relates to, when it is not one itself (a pod of a backend)")


class Result(ToolResult):
    request: str
    layers: list[Layer]
    backends: list[BackendShare] = Field(description="Effective weighted backends reached")
    matches_expected: bool | None = None
    expected_detail: str | None = None
    conflicts: list[Shadowed]
    findings: list[Finding]
    not_evaluated: list[str]
    changes: list[ChangeOut] | None = Field(
        default=None, description="With against: changes since that generation to the "
        "objects the request goes through, newest first")


_CHANGES_LIMIT = 20


def _changes(view: GraphView, against: int, involved: set[str],
             notes: list[str]) -> list[ChangeOut]:
    if against > view.generation:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: generation {against} is ahead "
                          f"of the graph (now at {view.generation})", tool=NAME)
    held = list(view.changes_since(against))
    if held and held[0].generation > against + 1:
        notes.append(f"against: the change ring starts at generation {held[0].generation}; "
                     "earlier changes are no longer held")
    found = []
    for change in reversed(held):
        # A route matters only if it is on the path itself (taken or shadowed): every route
        # of the entry Gateway is related to it, most without bearing on this request.
        is_route = change.key.partition("/")[0] in ROUTE_KINDS
        around = None if change.key in involved or is_route else \
            next((key for key in change.related if key in involved), None)
        if change.key in involved or around is not None:
            found.append(ChangeOut(generation=change.generation, type=change.type.value,
                                   object=change.key, fields=list(change.fields),
                                   around=around))
    return found[:_CHANGES_LIMIT]


def _entries(view: GraphView, resolver: Resolver, args: Args,
             host: str) -> list[tuple[GatewayState, ListenerState]]:
    if args.gateway is not None:
        namespace, _, name = args.gateway.partition("/")
        state = resolver.gateway(namespace, name)
        if state is None:
            known = {r.name for r in view.for_each(GATEWAY, namespace) if is_gateway_api(r)}
            raise ToolFailure(ErrorCode.NOT_FOUND, f"gateway: Gateway {args.gateway!r} not "
                              f"found{did_you_mean(name, known)}", tool=NAME)
        states = [state]
    else:
        states = sorted((s for s in (resolver.gateway(r.namespace, r.name)
                                     for r in view.for_each(GATEWAY) if is_gateway_api(r))
                         if s is not None), key=lambda s: s.ref)
    entries = []
    for state in states:
        by_port: dict[int, list[ListenerState]] = {}
        for ls in state.listeners:
            listener = ls.listener
            if listener.protocol not in _HTTP_PROTOCOLS or listener.port is None \
                    or (args.port is not None and listener.port != args.port) \
                    or not ls.conditions[c.PROGRAMMED].ok or not state.managed:
                continue
            if listener.hostname is None or hostnames.matches(listener.hostname, host):
                by_port.setdefault(listener.port, []).append(ls)
        for port in sorted(by_port):
            # On one port the most specific listener hostname takes the request.
            best = max(by_port[port], key=lambda ls: host_rank(ls.listener.hostname))
            entries.append((state, best))
    return entries


def _candidates(resolver: Resolver, state: GatewayState, listener: ListenerState,
                request: Request) -> list[Candidate]:
    found: list[Candidate] = []
    # GRPCRoutes take gRPC requests only; an HTTPRoute can take either (gRPC is HTTP/2).
    kinds = (HTTP_ROUTE, GRPC_ROUTE) if is_grpc(request) else (HTTP_ROUTE,)
    for record in resolver.route_records_of(state):
        if record.kind not in kinds:
            continue
        named = raw_hostnames(record)
        if named and not any(hostnames.matches(h, request.host) for h in named):
            continue  # cheap pre-filter: a route none of whose hostnames covers the host
        route = resolver.route(record)
        result = resolver.resolve(route)
        if not any(p.gateway is state and p.accepted and listener in p.listeners
                   for p in result.parents):
            continue
        effective = hostnames.effective(listener.listener.hostname, route.hostnames)
        fits, hostname = best_hostname(effective, request.host)
        if fits:
            found.extend(candidates(route, hostname, request,
                                    set(rules.invalid_rules(route))))
    found.sort(key=lambda cand: cand.rank)
    return found


def _filters(rule: dict[str, object]) -> tuple[list[str], str | None]:
    described, redirect = [], None
    for flt in as_list(rule.get("filters")):
        flt = as_map(flt)
        kind = str(flt.get("type"))
        config = {k: v for k, v in flt.items() if k != "type"}
        described.append(f"{kind} {next(iter(config.values()), '')}".strip())
        if kind == "RequestRedirect":
            redirect = str(as_map(flt.get("requestRedirect")).get("statusCode") or 302)
    return described, redirect


def _layer(resolver: Resolver, state: GatewayState, listener: ListenerState,
           winner: Candidate | None) -> Layer:
    entry = f"{state.ref}/{listener.listener.name}"
    port = listener.listener.port
    if winner is None:
        return Layer(entry=entry, port=port, backends=[], outcome="404")
    route = winner.route
    rule = dict(route.rules[winner.rule])
    filters, redirect = _filters(rule)
    resolutions = [b for b in resolver.resolve(route).backends if b.ref.rule == winner.rule]
    forwarded = [b for b in resolutions if not b.ref.mirror]
    total = sum(b.ref.weight for b in forwarded)
    shares = [BackendShare(
        backend=b.ref.ref, port=b.ref.port, weight=b.ref.weight,
        share=round(100 * b.ref.weight / total, 1) if total and not b.ref.mirror else 0.0,
        resolved=b.ok, reason=b.reason, ready_endpoints=b.ready_endpoints,
        mirror=True if b.ref.mirror else None,
        tls=backend_tls_out(b.tls)) for b in resolutions]
    if redirect is not None:
        outcome = "redirect"
    elif not total:
        outcome = "503"  # no backendRefs (or all weight 0) and no filter that answers
    elif all(not b.ok for b in forwarded if b.ref.weight):
        outcome = "500"  # HTTPBackendRef: requests to an invalid backend get 500
    elif all(b.ready_endpoints == 0 for b in forwarded if b.ref.weight and b.ok):
        outcome = "503"
    else:
        outcome = "forwarded"
    return Layer(entry=entry, port=port, route=route.ref, kind=route.kind, rule=winner.rule,
                 match=dict(winner.match_spec) if winner.match is not None else None,
                 filters=filters or None, backends=shares, outcome=outcome)


def request_host(value: str) -> str:
    """The host a request names, without its port: ``shop.example.com:8443`` ->
    ``shop.example.com``, ``[2001:db8::1]:80`` -> ``2001:db8::1`` (an IPv6 literal keeps its
    colons), lowercased as DNS names compare."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.index("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def analyze(view: GraphView, args: Args) -> Result:
    host = request_host(args.host)
    request = Request(host, args.path.split("?")[0], args.method, args.headers, args.query)
    described = f"{args.method} {host}{args.path}"
    resolver = Resolver(view)
    notes = ["mesh routing layers (GAMMA, VirtualService) are not evaluated yet"]
    layers: list[Layer] = []
    conflicts: list[Shadowed] = []
    findings: list[Finding] = []
    # (winner, loser, deciding criterion, backends the loser would have reached)
    losers: list[tuple[str, str, str, set[str]]] = []
    unmatched: list[str] = []
    for state, listener in _entries(view, resolver, args, host):
        found = _candidates(resolver, state, listener, request)
        winner = found[0] if found else None
        layer = _layer(resolver, state, listener, winner)
        if winner is None and args.gateway is None:
            # Without an entry Gateway, only the Gateways that route the request are layers;
            # listeners that take the host but route nothing matter only if none routes it.
            unmatched.append(layer.entry)
            continue
        layers.append(layer)
        if winner is None:
            findings.append(codes.REQUEST_NOT_ROUTED.finding(
                ref(state.record), f"{described}: no route rule on {layer.entry} matches (404)",
                detail=f"Listener {layer.entry} takes the request, but no accepted HTTPRoute "
                "attached to it has a hostname and rule matching it.",
                suggestion="Check the route hostnames and matches against the request; "
                "run check_route_resolution for the routes you expected."))
            continue
        for other in found[1:]:
            if (other.route.ref, other.rule) == (winner.route.ref, winner.rule):
                continue
            because = why_shadowed(winner, other)
            conflicts.append(Shadowed(route=other.route.ref, kind=other.route.kind,
                                      rule=other.rule,
                                      shadowed_by=f"{winner.route.ref} rule {winner.rule}",
                                      because=because))
            losers.append((winner.label, other.label, because,
                           {b.ref for b in other.route.backend_refs
                            if b.rule == other.rule and not b.mirror}))
        if layer.outcome in ("500", "503"):
            findings.append(codes.REQUEST_GETS_ERROR.finding(
                ref(winner.route.record), f"{described}: {winner.label} answers {layer.outcome}",
                detail="The rule that takes the request has no usable backend: "
                + "; ".join(f"{b.backend} {b.reason or f'{b.ready_endpoints} ready'}"
                            for b in layer.backends) if layer.backends else
                "The rule that takes the request has no backendRefs.",
                suggestion="Fix the backendRefs (run check_route_resolution) or the "
                "backend Service's endpoints (run diagnose_service)."))
    if args.gateway is None and args.port in (None, 80, 443):
        _ingress_layer(view, request, layers, conflicts, losers, notes)
    if not layers and unmatched:
        findings.append(codes.REQUEST_NOT_ROUTED.finding(
            None, f"{described}: no route rule matches on any listener for the host (404)",
            detail=f"Listeners that take the host: {', '.join(unmatched)}; no accepted "
            "HTTPRoute attached to them has a hostname and rule matching the request.",
            suggestion="Check the route hostnames and matches against the request; "
            "run check_route_resolution for the routes you expected."))
    elif not layers:
        where = f" on Gateway {args.gateway}" if args.gateway else ""
        port = f" port {args.port}" if args.port else ""
        findings.append(codes.REQUEST_NOT_ROUTED.finding(
            None, f"{described}: no programmed HTTP/HTTPS listener{where}{port} serves host "
            f"{host}",
            detail="No Gateway listener with protocol HTTP or HTTPS, a matching port and a "
            "hostname covering the request's host is programmed.",
            suggestion="Check the Gateways' listeners with check_gateway_status."))
    reached: dict[tuple[str, int | None], BackendShare] = {}
    for layer in layers:
        if layer.outcome in ("forwarded", "503"):
            for b in layer.backends:
                if b.resolved and not b.mirror and b.weight:
                    reached.setdefault((b.backend, b.port), b)
    matches_expected, expected_detail = None, None
    if args.expected_backend is not None:
        matches_expected = any(b.backend == args.expected_backend for b in reached.values())
        if not matches_expected:
            expected_detail = _explain_miss(args.expected_backend, layers, losers)
            findings.append(codes.REQUEST_MISSES_EXPECTED_BACKEND.finding(
                None, f"{described} does not reach {args.expected_backend}",
                detail=expected_detail,
                suggestion="Make the intended rule more specific (exact path, longer prefix, "
                "method, headers) or remove the rule that takes precedence."))
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    changes = None
    if args.against is not None:
        changes = _changes(view, args.against, _involved(layers, conflicts), notes)
    return Result(
        metadata=metadata(view),
        request=described,
        layers=layers,
        backends=list(reached.values()),
        matches_expected=matches_expected,
        expected_detail=expected_detail,
        conflicts=conflicts,
        findings=findings,
        not_evaluated=list(dict.fromkeys(notes)),
        changes=changes,
    )


def _involved(layers: list[Layer], conflicts: list[Shadowed]) -> set[str]:
    """Keys of the objects on the request's path: entries, routes (the rules that took it
    and those they shadow) and backend Services."""
    keys = {make_key(c.kind, *c.route.split("/", 1)) for c in conflicts}
    for layer in layers:
        if layer.layer == "gateway-api":
            namespace, name, _ = layer.entry.split("/", 2)
            keys.add(make_key(GATEWAY, namespace, name))
        if layer.route is not None and layer.kind is not None:
            namespace, _, name = layer.route.partition("/")
            keys.add(make_key(layer.kind, namespace, name))
        for backend in layer.backends:
            namespace, _, name = backend.backend.partition("/")
            keys.add(make_key(Kind.SERVICE, namespace, name))
    return keys


def _ingress_layer(view: GraphView, request: Request, layers: list[Layer],
                   conflicts: list[Shadowed], losers: list[tuple[str, str, str, set[str]]],
                   notes: list[str]) -> None:
    found, more = ingresses.matches(view, request, None)
    notes.extend(more)
    if not found:
        return
    winner = found[0]
    ingress = winner.ingress
    service, port, problem = ingresses.backend_target(view, ingress, winner.backend)
    ready = ready_endpoints(view, service) if service is not None and problem is None \
        else None
    name = f"{ingress.namespace}/{winner.backend.service or ''}"
    entry = f"ingress/{ingresses.ingress_class(view, ingress)}"
    match: dict[str, object] | None = None
    if winner.rule is not None and winner.path is not None:
        rule = ingress.rules[winner.rule]
        path = rule.paths[winner.path]
        match = {"host": rule.host, "path": path.path, "pathType": path.path_type}
    outcome = "503" if problem is not None or ready == 0 else "forwarded"
    layers.append(Layer(
        layer="ingress", entry=entry, route=ingress.ref, kind="Ingress", rule=winner.rule,
        match=match, outcome=outcome,
        backends=[BackendShare(backend=name, port=port, weight=1, share=100.0,
                               resolved=problem is None, reason=problem,
                               ready_endpoints=ready)]))
    for other in found[1:]:
        because = _ingress_because(winner.rank, other.rank)
        if other.rule is not None:
            conflicts.append(Shadowed(route=other.ingress.ref, kind="Ingress", rule=other.rule,
                                      shadowed_by=winner.label, because=because))
        losers.append((winner.label, other.label, because,
                       {f"{other.ingress.namespace}/{other.backend.service}"}))


def _ingress_because(winner: tuple[object, ...], loser: tuple[object, ...]) -> str:
    if loser[0] == 1:  # the rank of a defaultBackend (see ingresses.matches)
        return "a matching rule comes before a default backend"
    names = ("host specificity", "path length", "Exact before Prefix", "older Ingress",
             "Ingress name order", "rule order", "path order")
    for name, a, b in zip(names, winner, loser, strict=True):
        if a != b:
            return name
    return "identical"


def _explain_miss(expected: str, layers: list[Layer],
                  losers: list[tuple[str, str, str, set[str]]]) -> str:
    for winner, loser, because, backends in losers:
        if expected in backends:
            return f"{loser} routes to {expected} but {winner} takes precedence ({because})"
    taken = [f"{layer.route} rule {layer.rule} ({layer.outcome})" for layer in layers
             if layer.route]
    if taken:
        return f"the request is taken by {', '.join(taken)}; no matching rule routes to " \
            f"{expected}"
    return f"no rule matches the request, so it reaches no backend, {expected} included"
