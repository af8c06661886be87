"""Where one HTTP request goes through the Gateway API: the Gateways that take its host,
the listener it lands on at each, and the route rule that takes it there by match
precedence (routing/requests.py), with the rules it shadows.

Entering at every Gateway that serves the host, the routes that can take it come from an
index of routes by hostname (routing/hostindex.py), not from every Gateway's routes. Route
precedence is decided on the whole graph, even for a caller restricted to some namespaces:
a route in a namespace they may not see can still take their request on a shared Gateway,
and the answer says so without naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import did_you_mean, ref
from netsight.analyzers.core.contracts import ErrorCode, ResourceRef, ToolFailure
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.attachment import ParentResult, Resolver, RouteResult
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GRPC_ROUTE,
    HTTP_ROUTE,
    LISTENER_SET_KINDS,
    Route,
    is_gateway_api,
    names_listener_set,
    parent_gateways,
)
from netsight.analyzers.routing.gateways import GatewayState, ListenerState
from netsight.analyzers.routing.hostindex import routes_for_host
from netsight.analyzers.routing.kept import Kept
from netsight.analyzers.routing.references import Shows
from netsight.analyzers.routing.request_answers import (
    HIDDEN_GATEWAY,
    HIDDEN_ROUTE,
    Answer,
    Asked,
    Shadowed,
)
from netsight.analyzers.routing.requests import (
    Candidate,
    Match,
    Request,
    best_hostname,
    candidates,
    compile_matches,
    host_rank,
    is_grpc,
    why_shadowed,
)
from netsight.analyzers.routing.route_layers import LayerKey, Taken, error_finding, rule_layer
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

_HTTP_PROTOCOLS = ("HTTP", "HTTPS")
_KEPT_AS = "routing.gateway_requests"
_ENTRIES_KEPT = 4096
_ROUTES_KEPT = 20_000

# A Gateway's programmed HTTP listeners: (port, its listeners, most specific hostname first)
ByPort = list[tuple[int, list[ListenerState]]]


@dataclass(frozen=True, slots=True)
class KeptParts:
    """What answering requests through the Gateway API derives from the graph and keeps
    across answers, none of it depending on the request: each parsed route's compiled
    matches, each Gateway's HTTP listeners by port, a route's hostnames on a listener, the
    layer of a rule on a listener, and a Gateway's reference in findings."""

    matches: Kept[str, Route, list[Match]] = field(
        default_factory=lambda: Kept(_ROUTES_KEPT))
    listeners: Kept[str, GatewayState, ByPort] = field(
        default_factory=lambda: Kept(_ENTRIES_KEPT))
    hostnames: Kept[tuple[str, ListenerState], Route, list[str] | None] = field(
        default_factory=lambda: Kept(_ENTRIES_KEPT))
    layers: Kept[LayerKey, RouteResult, Taken] = field(
        default_factory=lambda: Kept(_ENTRIES_KEPT))
    refs: Kept[str, Record, ResourceRef] = field(default_factory=lambda: Kept(_ENTRIES_KEPT))

    def what_if(self) -> KeptParts:
        """For one answer on an overlay: reads these, keeps nothing in them."""
        return KeptParts(self.matches.what_if(), self.listeners.what_if(),
                         self.hostnames.what_if(), self.layers.what_if(), self.refs.what_if())


def kept_parts(view: GraphView) -> KeptParts:
    """The parts kept with ``view``, the caller's: per scope for a scoped view (what a layer
    shows depends on it), for one call on an overlay."""
    kept = view.kept()
    parts = kept.get(_KEPT_AS)
    if not isinstance(parts, KeptParts):
        parts = kept[_KEPT_AS] = KeptParts()
    return parts


def gateway_layers(full: GraphView, resolver: Resolver, asked: Asked, answer: Answer,
                   shows: Shows, parts: KeptParts, *, must_exist: bool) -> int:
    """Add a layer for each entry listener the request lands on (at ``asked.gateway``, or
    at every Gateway a route for the host is attached to), and the findings of those that
    do not forward it; return how many of them are on Gateways the caller may not read."""
    host = asked.request.host
    request = asked.request
    described = asked.described
    findings, notes = answer.findings, answer.notes
    attached = _attached_for_host(full, resolver, request, asked.gateway)
    targets = _gateway_targets(full, resolver, asked, attached, shows, must_exist=must_exist)
    hidden_entries = 0  # listeners of Gateways the caller may not read that route it
    for state in targets:
        pairs = attached.get(state.record.key, [])
        visible = shows(state.record.key)
        for listener in entry_listeners(state, host, asked.port, parts.listeners):
            found = _candidates(state, listener, request, pairs, shows,
                                notes if visible else [], resolver, parts)
            winner = found[0] if found else None
            if not visible:
                if winner is None:
                    continue
                # The caller may not read the Gateway, but the request does go through it:
                # the layer is shown, unnamed, with what the caller may read of the rule.
                hidden_entries += 1
                taken = rule_layer(resolver, state, listener, winner, shows, parts.layers)
                layer = taken.layer.model_copy(
                    update={"entry": f"{HIDDEN_GATEWAY} (#{hidden_entries})", "port": None,
                            "entry_hidden": True})
                answer.layers.append(layer)
                if len(found) > 1:
                    _shadowed(answer, winner, found[1:], shows)
                if layer.outcome in ("500", "503"):
                    findings.append(error_finding(taken, winner, described))
                continue
            if winner is None and asked.gateway is None:
                # Without an entry Gateway, only the Gateways that route the request are
                # layers; listeners that take the host matter only if none routes it.
                continue
            taken = rule_layer(resolver, state, listener, winner, shows, parts.layers)
            layer = taken.layer
            answer.layers.append(layer)
            if winner is None:
                findings.append(codes.REQUEST_NOT_ROUTED.finding(
                    _ref(state.record, parts), f"{described}: no route rule on {layer.entry} "
                    "matches (404)",
                    detail=f"Listener {layer.entry} takes the request, but no accepted "
                    "HTTPRoute attached to it has a hostname and rule matching it.",
                    suggestion="Check the route hostnames and matches against the request; "
                    "run check_route_resolution for the routes you expected."))
                continue
            if len(found) > 1:
                _shadowed(answer, winner, found[1:], shows)
            if layer.outcome in ("500", "503"):
                findings.append(error_finding(taken, winner, described))
    if hidden_entries:
        notes.append(f"the request is routed on {hidden_entries} listener(s) of "
                     "Gateways in namespaces you may not read; they are shown without "
                     "their names")
    return hidden_entries


def not_routed(full: GraphView, resolver: Resolver, asked: Asked, answer: Answer,
               shows: Shows, parts: KeptParts) -> None:
    """REQUEST_NOT_ROUTED for a request no layer takes: the listeners that take its host
    without a rule for it, or that no listener serves the host at all."""
    host = asked.request.host
    described = asked.described
    findings = answer.findings
    if asked.gateway is None:
        unmatched = [f"{gw.ref}/{ls.listener.name}"
                     for record in full.for_each(GATEWAY) if shows(record.key)
                     and is_gateway_api(record)
                     and (gw := resolver.gateway(record.namespace, record.name)) is not None
                     for ls in entry_listeners(gw, host, asked.port, parts.listeners)]
        if unmatched:
            findings.append(codes.REQUEST_NOT_ROUTED.finding(
                None, f"{described}: no route rule matches on any listener for the host (404)",
                detail=f"Listeners that take the host: {', '.join(sorted(unmatched))}; no "
                "accepted HTTPRoute attached to them has a hostname and rule matching the "
                "request.",
                suggestion="Check the route hostnames and matches against the request; "
                "run check_route_resolution for the routes you expected."))
    if not findings:
        where = f" on Gateway {asked.gateway}" if asked.gateway else ""
        port = f" port {asked.port}" if asked.port else ""
        findings.append(codes.REQUEST_NOT_ROUTED.finding(
            None, f"{described}: no programmed HTTP/HTTPS listener{where}{port} serves host "
            f"{host}",
            detail="No Gateway listener with protocol HTTP or HTTPS, a matching port and a "
            "hostname covering the request's host is programmed.",
            suggestion="Check the Gateways' listeners with check_gateway_status."))


def entry_listeners(state: GatewayState, host: str, port: int | None,
                    kept: Kept[str, GatewayState, ByPort] | None = None
                    ) -> list[ListenerState]:
    """The listener a request for ``host`` lands on, per port of the Gateway (``port``:
    that one only); ``kept``: where the Gateway's HTTP listeners are kept."""
    by_port = _http_listeners(state) if kept is None else \
        kept.get(state.record.key, state, _http_listeners)
    found = []
    for on, listeners in by_port:
        if port is None or on == port:
            # On one port the most specific listener hostname takes the request (listeners
            # come most specific first).
            for ls in listeners:
                hostname = ls.listener.hostname
                if hostname is None or hostnames.matches(hostname, host):
                    found.append(ls)
                    break
    return found


def _http_listeners(state: GatewayState) -> ByPort:
    """Programmed HTTP/HTTPS listeners of a managed Gateway, by port, the most specific
    hostname first on each port (then in spec order)."""
    by_port: dict[int, list[ListenerState]] = {}
    # The Gateway's listeners, then those of the ListenerSets it takes (GEP-1713): one
    # merged list, where precedence already left conflicted ones unprogrammed.
    merged = state.listeners + [ls for s in state.listener_sets
                                if s.conditions[c.ACCEPTED].ok for ls in s.listeners]
    for ls in merged if state.managed else ():
        listener = ls.listener
        if listener.protocol in _HTTP_PROTOCOLS and listener.port is not None \
                and ls.conditions[c.PROGRAMMED].ok:
            by_port.setdefault(listener.port, []).append(ls)
    return [(port, sorted(listeners, key=lambda ls: host_rank(ls.listener.hostname),
                          reverse=True))
            for port, listeners in sorted(by_port.items())]


_Attached = tuple[RouteResult, ParentResult]


def _attached_for_host(full: GraphView, resolver: Resolver, request: Request,
                       gateway: str | None) -> dict[str, list[_Attached]]:
    """Gateway key -> (route, parent) for every route whose hostnames cover the host (and
    that names ``gateway``, 'namespace/name', when given)."""
    # GRPCRoutes take gRPC requests only; an HTTPRoute can take either (gRPC is HTTP/2).
    kinds = (HTTP_ROUTE, GRPC_ROUTE) if is_grpc(request) else (HTTP_ROUTE,)
    entry = tuple(gateway.split("/", 1)) if gateway is not None else None
    # A route may reach the Gateway through one of its ListenerSets (GEP-1713), which only
    # the ListenerSet names: such routes are resolved, when ListenerSets exist at all.
    through_sets = entry is not None and any(full.count(k) for k in LISTENER_SET_KINDS)
    found: dict[str, list[_Attached]] = {}
    for record in routes_for_host(full, request.host):
        if record.kind not in kinds or (entry is not None
                                        and entry not in parent_gateways(record)
                                        and not (through_sets and names_listener_set(record))):
            continue
        result = resolver.resolve(resolver.route(record))
        for parent in result.parents:
            if parent.gateway is not None and (parent.listeners or parent.undecided):
                found.setdefault(parent.gateway.record.key, []).append((result, parent))
    return found


def _gateway_targets(full: GraphView, resolver: Resolver, asked: Asked,
                     attached: dict[str, list[_Attached]],
                     shows: Shows, *, must_exist: bool) -> list[GatewayState]:
    if asked.gateway is None:
        states = {p.gateway.record.key: p.gateway for pairs in attached.values()
                  for _, p in pairs if p.gateway is not None}
        # By key: "Gateway/namespace/name" sorts as "namespace/name" does. Gateways the
        # caller may not read too: they route the request all the same (never named).
        return [states[key] for key in sorted(states)]
    namespace, _, name = asked.gateway.partition("/")
    state = resolver.gateway(namespace, name)
    if state is None or not shows(state.record.key):
        if not must_exist:
            return []
        known = {r.name for r in full.for_each(GATEWAY, namespace)
                 if is_gateway_api(r) and shows(r.key)}
        raise ToolFailure(ErrorCode.NOT_FOUND, f"gateway: Gateway {asked.gateway!r} not "
                          f"found{did_you_mean(name, known)}", tool=asked.tool)
    return [state]


def _candidates(state: GatewayState, listener: ListenerState, request: Request,
                pairs: list[_Attached], shows: Shows, notes: list[str],
                resolver: Resolver, parts: KeptParts) -> list[Candidate]:
    found: list[Candidate] = []
    seen: set[str] = set()
    for result, parent in pairs:
        route = result.route
        if route.record.key in seen:
            continue  # two parentRefs to one Gateway: one route, considered once
        if listener not in parent.listeners:
            if listener in parent.undecided and shows(route.record.key):
                why = resolver.namespace_labels(route.record.namespace)[1]
                notes.append(f"{route.ref}: whether listener {state.ref}/"
                             f"{listener.listener.name} admits it is undecided (its "
                             "allowedRoutes selector reads labels of namespace "
                             f"{route.record.namespace}: {why})")
            continue
        seen.add(route.record.key)
        # The route's hostnames on the listener, and its compiled matches: kept, as neither
        # depends on the request.
        effective = parts.hostnames.get(
            (route.record.key, listener), route,
            lambda r: hostnames.effective(listener.listener.hostname, r.hostnames))
        fits, hostname = best_hostname(effective, request.host)
        if fits:
            matches = parts.matches.get(route.record.key, route, compile_matches)
            found.extend(candidates(route, hostname, request, result.dropped, matches))
    if len(found) > 1:
        found.sort(key=lambda cand: cand.rank)
    return found


def _ref(record: Record, parts: KeptParts) -> ResourceRef:
    return parts.refs.get(record.key, record, ref)


def _shadowed(answer: Answer, winner: Candidate, others: list[Candidate],
              shows: Shows) -> None:
    named = shows(winner.route.record.key)
    by = f"{winner.route.ref} rule {winner.rule}" if named else HIDDEN_ROUTE
    for other in others:
        if (other.route.ref, other.rule) == (winner.route.ref, winner.rule) \
                or not shows(other.route.record.key):
            continue
        because = why_shadowed(winner, other)
        answer.conflicts.append(Shadowed(route=other.route.ref, kind=other.route.kind,
                                         rule=other.rule, shadowed_by=by, because=because))
        answer.losers.append((winner.label if named else HIDDEN_ROUTE, other.label, because,
                              {b.ref for b in other.route.backend_refs
                               if b.rule == other.rule and b.forwards}))
