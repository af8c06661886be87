"""diff_routes: where one HTTP request goes through the Gateway API, and why not elsewhere.

Entering at every Gateway that serves the host, the routes that can take it come from an
index of routes by hostname (routing/hostindex.py), not from every Gateway's routes. Route
precedence is decided on the whole graph, even for a caller restricted to some namespaces:
a route in a namespace they may not see can still take their request on a shared Gateway,
and the answer says so without naming it. With ``proposed``, the request is resolved again
on an overlay of the graph with the proposed objects applied (graph/store/overlay.py), and the
two answers are compared; with ``against``, the change ring says what changed since.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import Field

from netsight.analyzers.core import codes
from netsight.analyzers.core.arguments import Namespace, NamespacedName, PortNumber, ToolArgs
from netsight.analyzers.core.base import AnalyzerMetadata, did_you_mean, metadata, ref
from netsight.analyzers.core.contracts import (
    ErrorCode,
    Finding,
    Model,
    OmitNone,
    ResourceRef,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import (
    DESTINATION_RULE,
    ISTIO_GATEWAY,
    SERVICE_ENTRY,
    SIDECAR,
    VIRTUAL_SERVICE,
    IstioGateway,
)
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import (
    hostnames,
    ingresses,
    istio_destinations,
    istio_routes,
    istio_rules,
    proposals,
)
from netsight.analyzers.routing.attachment import ParentResult, Resolver, RouteResult
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GRPC_ROUTE,
    HTTP_ROUTE,
    LISTENER_SET_KINDS,
    ROUTE_KINDS,
    Route,
    as_list,
    as_map,
    is_gateway_api,
    names_listener_set,
    parent_gateways,
)
from netsight.analyzers.routing.gateways import GatewayState, ListenerState
from netsight.analyzers.routing.hostindex import routes_for_host
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
from netsight.analyzers.tools.check_route_resolution import METADATA as ROUTES_METADATA
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import Change, GraphView
from netsight.graph.store.scoped import unrestricted

NAME = "diff_routes"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Resolve one HTTP request (host, path, method, headers, query) through the "
    "Gateway API as the spec orders it (the listener it lands on, the HTTPRoute rule chosen "
    "by match precedence, the filters that apply, the weighted backends with ready "
    "endpoint counts) and through Ingress (class, host, pathType, default backend); the "
    "rules it shadows; whether it reaches an expected backend; what changed since a "
    "generation or a time; and what proposed objects (YAML) would change, resolved on an "
    "overlay of the live graph. With via ('mesh' or 'gateway <namespace>/<name>'), the "
    "request is routed as an Istio sidecar or Istio Gateway would: the VirtualService and "
    "http rule that take it (first match, VirtualServices oldest first), its weighted "
    "destinations with subsets.",
    # HTTP requests meet HTTPRoutes and GRPCRoutes only (hostindex.KINDS); the shared
    # resolver still asks whether TLS/TCP/UDP routes are listed (its cache key).
    reads=ROUTES_METADATA.reads | {Kind.INGRESS, Kind.INGRESS_CLASS, VIRTUAL_SERVICE,
                                   DESTINATION_RULE, ISTIO_GATEWAY, SERVICE_ENTRY, Kind.POD,
                                   SIDECAR},
    codes=(codes.REQUEST_NOT_ROUTED, codes.REQUEST_GETS_ERROR,
           codes.REQUEST_MISSES_EXPECTED_BACKEND),
)

_HTTP_PROTOCOLS = ("HTTP", "HTTPS")
_Shows = Callable[[str], bool]  # whether the caller may see an object, by key
HIDDEN_ROUTE = "a route in a namespace you may not read"
HIDDEN_GATEWAY = "a Gateway in a namespace you may not read"
NO_MESH_NOTE = "GAMMA mesh routes are not evaluated; Istio VirtualServices are, with via " \
    "('mesh' or 'gateway <namespace>/<name>')"
_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


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
    against: int | str | None = Field(
        default=None, description="Also list what changed since then in the objects the "
        "request goes through: a graph generation (metadata.graphGeneration of an earlier "
        "answer), an RFC 3339 time ('2025-06-01T10:00:00Z') or a duration back from now "
        "('90s', '10m', '2h', '1d', '1h30m')")
    proposed: str | None = Field(
        default=None, description="What-if: YAML or JSON of one or more objects (multi-"
        "document YAML, a List, or a JSON array; at most 100 objects and 1 MiB). Each "
        "replaces the live object of the same kind, namespace and name, or is added; a "
        "document with metadata.annotations 'netsight.io/delete: \"true\"' deletes the "
        "object it names. The request is resolved on an overlay of the live graph with "
        "them applied (nothing is written) and compared with the live answer.")
    via: str | None = Field(
        default=None, description="Route the request as Istio does instead of through the "
        "Gateway API and Ingress: 'mesh' (from a sidecar-injected client; give "
        "source_namespace) or 'gateway <namespace>/<name>' (through that Istio Gateway)")
    source_namespace: Namespace | None = Field(
        default=None, description="With via 'mesh': the client's namespace (VirtualService "
        "exportTo, short hosts and sourceNamespace matches are decided there)")
    source_labels: dict[str, str] | None = Field(
        default=None, description="With via 'mesh': the client pod's labels, for "
        "sourceLabels matches (without them such a match is undecided)")


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
    subset: str | None = None  # a VirtualService destination's DestinationRule subset


class Layer(OmitNone):
    layer: str = Field(default="gateway-api",
                       description='"gateway-api", "ingress" or "virtual-service"')
    entry: str = Field(description='"namespace/gateway/listener", "ingress/<class>", "mesh" '
                       'or "gateway <namespace>/<name>" (via), or an unnamed Gateway the '
                       'caller may not read')
    port: int | None = None
    route: str | None = None
    kind: str | None = None
    rule: int | None = None
    match: dict[str, object] | None = None
    filters: list[str] | None = None
    backends: list[BackendShare]
    outcome: str = Field(description='"forwarded", "redirect", "direct" (a DirectResponse '
                         'filter or a VirtualService directResponse replies), "404", "500", '
                         '"503" or "undecided"')
    hidden: bool | None = Field(
        default=None, description="The rule that takes the request belongs to a route in "
        "a namespace the caller may not read: its name, match and backends are left out")
    entry_hidden: bool | None = Field(
        default=None, description="The entry Gateway is in a namespace the caller may not "
        "read: its name, listener and port are left out")
    undecided: str | None = Field(
        default=None, description="Why netsight cannot decide which rule takes the request "
        "here (outcome 'undecided')")
    delegated_from: str | None = Field(
        default=None, description="The VirtualService rule ('namespace/name http[i]') that "
        "delegates to the one that takes the request (its match and settings merged in)")


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
    at: str = Field(description="When netsight took the change in (RFC 3339, UTC)")


class ProposedObject(Model):
    object: str = Field(description='The object\'s key, e.g. "HTTPRoute/shop/web"')
    action: str = Field(description='"add", "replace", "delete" or "unchanged"')


class EntryChange(Model):
    entry: str = Field(description='"namespace/gateway/listener" or "ingress/<class>"')
    before: str | None = Field(description="What took the request live (None: not routed "
                               "through this entry)")
    after: str | None = Field(description="What would take it with the proposal applied")


class ShareChange(Model):
    entry: str
    backend: str
    port: int | None
    share_before: float | None = Field(description="Percent live (None: not a backend)")
    share_after: float | None = Field(description="Percent with the proposal (None: not "
                                      "a backend)")


class ProposedOut(Model):
    objects: list[ProposedObject]
    changed: bool = Field(description="Whether the answer differs from the live one")
    layers: list[Layer]
    backends: list[BackendShare]
    matches_expected: bool | None = None
    conflicts: list[Shadowed]
    entries_changed: list[EntryChange] = Field(
        description="Entries whose taking rule or outcome differs")
    shares_changed: list[ShareChange] = Field(description="Backend shares that differ")
    findings_appeared: list[Finding]
    findings_disappeared: list[Finding]
    not_evaluated: list[str]
    incomplete: list[str] | None = None


class Result(ToolResult):
    request: str
    layers: list[Layer]
    backends: list[BackendShare] = Field(description="Effective weighted backends reached")
    matches_expected: bool | None = None
    expected_detail: str | None = None
    conflicts: list[Shadowed]
    findings: list[Finding]
    not_evaluated: list[str]
    incomplete: list[str] | None = Field(
        default=None, description="Why the answer is incomplete for this caller: layers in "
        "namespaces they may not read on which the verdict depends")
    changes: list[ChangeOut] | None = Field(
        default=None, description="With against: changes since then to the objects the "
        "request goes through, newest first")
    proposed: ProposedOut | None = Field(
        default=None, description="With proposed: the answer with those objects applied, "
        "and how it differs from the live one")


_CHANGES_LIMIT = 20


# --- against ---------------------------------------------------------------------------------


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _since_time(value: str, now: float) -> float:
    """A time from an RFC 3339 timestamp or a duration back from ``now``."""
    duration = _DURATION.match(value)
    if duration is not None and any(duration.groups()):
        days, hours, minutes, seconds = (int(g or 0) for g in duration.groups())
        return now - (((days * 24 + hours) * 60 + minutes) * 60 + seconds)
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {value!r} is neither a graph "
                          "generation, an RFC 3339 time ('2025-06-01T10:00:00Z') nor a "
                          "duration ('10m', '2h', '1d')", tool=NAME) from None
    if when.tzinfo is None:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {value!r} has no time zone; "
                          "add 'Z' (UTC) or an offset such as '+02:00'", tool=NAME)
    since = when.timestamp()
    if since > now:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {value} is in the future (now "
                          f"is {_iso(now)})", tool=NAME)
    return since


def _held_changes(view: GraphView, against: int | str,
                  notes: list[str]) -> Iterator[Change]:
    """The changes since ``against``, newest first (read lazily: the caller stops after
    a few); a bad ``against`` fails here, before any is read."""
    horizon = view.change_horizon()
    if isinstance(against, int) or against.isdigit():
        generation = int(against)
        if generation < 0:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: generation {generation} is "
                              "negative; give 0 or more", tool=NAME)
        if generation > view.generation:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: generation {generation} is "
                              f"ahead of the graph (now at {view.generation})", tool=NAME)
        if generation < horizon.generation:
            notes.append(f"against: changes up to generation {horizon.generation} are no "
                         "longer held (the change ring keeps the newest); what changed "
                         f"between generation {generation} and then is unknown")
        return view.changes_since(generation, newest_first=True)
    since = _since_time(against, time.time())
    if since < horizon.at:
        notes.append(f"against: changes before {_iso(horizon.at)} (generation "
                     f"{horizon.generation}) are no longer held (the change ring keeps the "
                     f"newest); what changed between {_iso(since)} and then is unknown")
    if since < horizon.started_at:
        notes.append(f"against: netsight's graph starts at {_iso(horizon.started_at)}; what "
                     "changed before is unknown, and what it loaded then is listed as ADDED")
    return view.changes_since(0, at=since, newest_first=True)


def _changes(view: GraphView, against: int | str, involved: set[str],
             notes: list[str]) -> list[ChangeOut]:
    found = []
    for change in _held_changes(view, against, notes):
        # A route matters only if it is on the path itself (taken or shadowed): every route
        # of the entry Gateway is related to it, most without bearing on this request.
        is_route = change.key.partition("/")[0] in ROUTE_KINDS
        around = None if change.key in involved or is_route else \
            next((key for key in change.related if key in involved), None)
        if change.key in involved or around is not None:
            found.append(ChangeOut(generation=change.generation, type=change.type.value,
                                   object=change.key, fields=list(change.fields),
                                   around=around, at=_iso(change.at)))
            if len(found) == _CHANGES_LIMIT:
                break
    return found


# --- one resolution --------------------------------------------------------------------------


@dataclass
class _Answer:
    layers: list[Layer] = field(default_factory=list)
    conflicts: list[Shadowed] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # (winner, loser, deciding criterion, backends the loser would have reached)
    losers: list[tuple[str, str, str, set[str]]] = field(default_factory=list)
    reached: dict[tuple[str, int | None, str | None], BackendShare] = \
        field(default_factory=dict)
    matches_expected: bool | None = None
    expected_detail: str | None = None
    incomplete: list[str] = field(default_factory=list)


def _entry_listeners(state: GatewayState, args: Args, host: str) -> list[ListenerState]:
    """The listener a request for ``host`` lands on, per port of the Gateway."""
    found = []
    for port, listeners in _http_listeners(state):
        if args.port is None or port == args.port:
            # On one port the most specific listener hostname takes the request (listeners
            # come most specific first).
            for ls in listeners:
                hostname = ls.listener.hostname
                if hostname is None or hostnames.matches(hostname, host):
                    found.append(ls)
                    break
    return found


_HTTP_LISTENERS: dict[int, tuple[GatewayState, list[tuple[int, list[ListenerState]]]]] = {}


def _http_listeners(state: GatewayState) -> list[tuple[int, list[ListenerState]]]:
    """Programmed HTTP/HTTPS listeners of a managed Gateway, by port, the most specific
    hostname first on each port (then in spec order); kept while the state is (a shared
    resolver keeps states across answers)."""
    held = _HTTP_LISTENERS.get(id(state))
    if held is not None and held[0] is state:
        return held[1]
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
    found = [(port, sorted(listeners, key=lambda ls: host_rank(ls.listener.hostname),
                           reverse=True))
             for port, listeners in sorted(by_port.items())]
    if len(_HTTP_LISTENERS) > 4096:
        _HTTP_LISTENERS.clear()
    _HTTP_LISTENERS[id(state)] = (state, found)
    return found


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


def _gateway_targets(full: GraphView, resolver: Resolver, args: Args,
                     attached: dict[str, list[_Attached]],
                     shows: _Shows, *, must_exist: bool) -> list[GatewayState]:
    if args.gateway is None:
        states = {p.gateway.record.key: p.gateway for pairs in attached.values()
                  for _, p in pairs if p.gateway is not None}
        # By key: "Gateway/namespace/name" sorts as "namespace/name" does. Gateways the
        # caller may not read too: they route the request all the same (never named).
        return [states[key] for key in sorted(states)]
    namespace, _, name = args.gateway.partition("/")
    state = resolver.gateway(namespace, name)
    if state is None or not shows(state.record.key):
        if not must_exist:
            return []
        known = {r.name for r in full.for_each(GATEWAY, namespace)
                 if is_gateway_api(r) and shows(r.key)}
        raise ToolFailure(ErrorCode.NOT_FOUND, f"gateway: Gateway {args.gateway!r} not "
                          f"found{did_you_mean(name, known)}", tool=NAME)
    return [state]


def _candidates(state: GatewayState, listener: ListenerState, request: Request,
                pairs: list[_Attached], shows: _Shows, notes: list[str],
                resolver: Resolver) -> list[Candidate]:
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
        fits, hostname = best_hostname(_effective(route, listener), request.host)
        if fits:
            found.extend(candidates(route, hostname, request, result.dropped))
    if len(found) > 1:
        found.sort(key=lambda cand: cand.rank)
    return found


_EFFECTIVE: dict[tuple[int, int], tuple[Route, ListenerState, list[str] | None]] = {}


def _effective(route: Route, listener: ListenerState) -> list[str] | None:
    """The route's hostnames on the listener (``hostnames.effective``), kept per parsed route
    and listener state: both are kept with the graph, and neither depends on the request."""
    key = (id(route), id(listener))
    held = _EFFECTIVE.get(key)
    if held is not None and held[0] is route and held[1] is listener:
        return held[2]
    found = hostnames.effective(listener.listener.hostname, route.hostnames)
    if len(_EFFECTIVE) >= _LAYERS_KEPT:
        _EFFECTIVE.clear()
    _EFFECTIVE[key] = (route, listener, found)
    return found


def _filters(rule: dict[str, object]) -> tuple[list[str], str | None]:
    """The filters described, and the outcome of one that answers the request itself:
    "redirect" (RequestRedirect) or "direct" (DirectResponse, which replies with its
    statusCode and never forwards)."""
    described, answer = [], None
    for flt in as_list(rule.get("filters")):
        flt = as_map(flt)
        kind = str(flt.get("type"))
        config = {k: v for k, v in flt.items() if k != "type"}
        described.append(f"{kind} {next(iter(config.values()), '')}".strip())
        if kind == "RequestRedirect":
            answer = "redirect"
        elif kind == "DirectResponse":
            answer = "direct"
    return described, answer


_LAYERS: dict[tuple[int, int, int | None, int, bool, frozenset[int]],
              tuple[RouteResult, ListenerState, Layer]] = {}


def _layer(resolver: Resolver, state: GatewayState, listener: ListenerState,
           winner: Candidate | None, shows: _Shows) -> Layer:
    if winner is None:
        return Layer(entry=f"{state.ref}/{listener.listener.name}",
                     port=listener.listener.port, backends=[], outcome="404")
    # A layer follows from the rule and the listener alone, not from the request: kept
    # while the route's result is (a shared resolver keeps results until what they read
    # changes), it is built once for every request that rule takes.
    result = resolver.resolve(winner.route)
    named = shows(winner.route.record.key)
    namespace = winner.route.record.namespace
    # Backends in namespaces the caller may not read (a ReferenceGrant lets the route reach
    # them): their share and outcome are shown, their endpoints and TLS are not.
    hidden = frozenset(i for i, b in enumerate(result.backends)
                       if b.ref.rule == winner.rule and b.ref.namespace != namespace
                       and not shows(make_key(Kind.SERVICE, b.ref.namespace, b.ref.name)))
    key = (id(result), winner.rule, winner.match, id(listener), named, hidden)
    held = _LAYERS.get(key)
    if held is not None and held[0] is result and held[1] is listener:
        return held[2]
    layer = _new_layer(result, state, listener, winner, named, hidden)
    if len(_LAYERS) >= _LAYERS_KEPT:
        _LAYERS.clear()
    _LAYERS[key] = (result, listener, layer)
    return layer


_LAYERS_KEPT = 4096


def _new_layer(result: RouteResult, state: GatewayState, listener: ListenerState,
               winner: Candidate, named: bool, hidden: frozenset[int]) -> Layer:
    entry = f"{state.ref}/{listener.listener.name}"
    port = listener.listener.port
    route = winner.route
    rule = dict(route.rules[winner.rule])
    filters, answer = _filters(rule)
    # An ExternalAuth filter's service is called, not forwarded to: not a share.
    resolutions = [(i, b) for i, b in enumerate(result.backends)
                   if b.ref.rule == winner.rule and not b.ref.external_auth]
    forwarded = [b for _, b in resolutions if b.ref.forwards]
    total = sum(b.ref.weight for b in forwarded)
    shares = [BackendShare(
        backend=b.ref.ref, port=b.ref.port, weight=b.ref.weight,
        share=round(100 * b.ref.weight / total, 1) if total and not b.ref.mirror else 0.0,
        resolved=b.ok, reason=b.reason,
        ready_endpoints=None if i in hidden else b.ready_endpoints,
        mirror=True if b.ref.mirror else None,
        tls=None if i in hidden else backend_tls_out(b.tls)) for i, b in resolutions]
    if answer is not None:
        outcome = answer
    elif not total and forwarded and route.kind == HTTP_ROUTE:
        # Every backendRef weighs 0: an HTTPRoute answers 500 (conformance
        # HTTPRouteAllBackendsWeightZero); a GRPCRoute UNAVAILABLE, as 503 below.
        outcome = "500"
    elif not total:
        outcome = "503"  # no backendRefs (or all weight 0) and no filter that answers
    elif all(not b.ok for b in forwarded if b.ref.weight):
        outcome = "500"  # HTTPBackendRef: requests to an invalid backend get 500
    elif all(b.ready_endpoints == 0 for b in forwarded if b.ref.weight and b.ok):
        outcome = "503"
    else:
        outcome = "forwarded"
    if not named:
        # What the request gets is the caller's to see; which route gives it is not.
        return Layer(entry=entry, port=port, backends=[], outcome=outcome, hidden=True)
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


def _resolve(full: GraphView, args: Args, request: Request, shows: _Shows, *,
             must_exist: bool = True) -> _Answer:
    """The request through ``full`` (precedence decided there), shown as ``shows`` (what
    the caller may see) allows."""
    host = request.host
    described = f"{args.method} {host}{args.path}"
    if args.via is not None:
        return _resolve_via(full, args, request, shows, must_exist=must_exist)
    resolver = Resolver(full, shared=True)
    answer = _Answer(notes=[NO_MESH_NOTE])
    findings, notes = answer.findings, answer.notes
    attached = _attached_for_host(full, resolver, request, args.gateway)
    targets = _gateway_targets(full, resolver, args, attached, shows, must_exist=must_exist)
    hidden_entries = 0  # listeners of Gateways the caller may not read that route it
    for state in targets:
        pairs = attached.get(state.record.key, [])
        visible = shows(state.record.key)
        for listener in _entry_listeners(state, args, host):
            found = _candidates(state, listener, request, pairs, shows,
                                notes if visible else [], resolver)
            winner = found[0] if found else None
            if not visible:
                if winner is None:
                    continue
                # The caller may not read the Gateway, but the request does go through it:
                # the layer is shown, unnamed, with what the caller may read of the rule.
                hidden_entries += 1
                layer = _layer(resolver, state, listener, winner, shows).model_copy(
                    update={"entry": f"{HIDDEN_GATEWAY} (#{hidden_entries})", "port": None,
                            "entry_hidden": True})
                answer.layers.append(layer)
                if len(found) > 1:
                    _shadowed(answer, winner, found[1:], shows)
                if layer.outcome in ("500", "503"):
                    findings.append(_error_finding(layer, winner, described))
                continue
            if winner is None and args.gateway is None:
                # Without an entry Gateway, only the Gateways that route the request are
                # layers; listeners that take the host matter only if none routes it.
                continue
            layer = _layer(resolver, state, listener, winner, shows)
            answer.layers.append(layer)
            if winner is None:
                findings.append(codes.REQUEST_NOT_ROUTED.finding(
                    _ref(state.record), f"{described}: no route rule on {layer.entry} "
                    "matches (404)",
                    detail=f"Listener {layer.entry} takes the request, but no accepted "
                    "HTTPRoute attached to it has a hostname and rule matching it.",
                    suggestion="Check the route hostnames and matches against the request; "
                    "run check_route_resolution for the routes you expected."))
                continue
            if len(found) > 1:
                _shadowed(answer, winner, found[1:], shows)
            if layer.outcome in ("500", "503"):
                findings.append(_error_finding(layer, winner, described))
    if hidden_entries:
        notes.append(f"the request is routed on {hidden_entries} listener(s) of "
                     "Gateways in namespaces you may not read; they are shown without "
                     "their names")
    if args.gateway is None and args.port in (None, 80, 443):
        _ingress_layer(full, request, answer, shows)
    if not answer.layers and args.gateway is None and not hidden_entries:
        unmatched = [f"{gw.ref}/{ls.listener.name}"
                     for record in full.for_each(GATEWAY) if shows(record.key)
                     and is_gateway_api(record)
                     and (gw := resolver.gateway(record.namespace, record.name)) is not None
                     for ls in _entry_listeners(gw, args, host)]
        if unmatched:
            findings.append(codes.REQUEST_NOT_ROUTED.finding(
                None, f"{described}: no route rule matches on any listener for the host (404)",
                detail=f"Listeners that take the host: {', '.join(sorted(unmatched))}; no "
                "accepted HTTPRoute attached to them has a hostname and rule matching the "
                "request.",
                suggestion="Check the route hostnames and matches against the request; "
                "run check_route_resolution for the routes you expected."))
    if not answer.layers and not findings and not hidden_entries:
        where = f" on Gateway {args.gateway}" if args.gateway else ""
        port = f" port {args.port}" if args.port else ""
        findings.append(codes.REQUEST_NOT_ROUTED.finding(
            None, f"{described}: no programmed HTTP/HTTPS listener{where}{port} serves host "
            f"{host}",
            detail="No Gateway listener with protocol HTTP or HTTPS, a matching port and a "
            "hostname covering the request's host is programmed.",
            suggestion="Check the Gateways' listeners with check_gateway_status."))
    _verdict(answer, args, described)
    return answer


def parse_via(args: Args) -> istio_rules.Via | None:
    """``via`` and the arguments that go with it, checked together."""
    if args.via is None:
        if args.source_namespace is not None or args.source_labels is not None:
            raise ToolFailure(ErrorCode.INVALID_INPUT, "source_namespace, source_labels: "
                              "only with via 'mesh' (the sidecar-injected client they "
                              "describe); add via: 'mesh' or leave them out", tool=NAME)
        return None
    via = istio_rules.parse_via(args.via)
    if isinstance(via, str):
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"via: {via}", tool=NAME)
    if args.gateway is not None:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "gateway: names a Gateway API entry, and "
                          "via routes the request through Istio instead; give one of them",
                          tool=NAME)
    if via.gateway is None and args.source_namespace is None:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "source_namespace: required with via "
                          "'mesh' (the client's namespace, where VirtualService exportTo and "
                          "short hosts are resolved), e.g. 'shop'", tool=NAME)
    if via.gateway is not None and (args.source_namespace is not None
                                    or args.source_labels is not None):
        raise ToolFailure(ErrorCode.INVALID_INPUT, "source_namespace, source_labels: only "
                          "with via 'mesh'; through a gateway the client is the gateway",
                          tool=NAME)
    return via


def _entry_gateway(full: GraphView, via: istio_rules.Via, shows: _Shows, *,
                   must_exist: bool) -> IstioGateway | str | None:
    """The Istio Gateway ``via`` names (NOT_FOUND when missing or not the caller's to
    read, unless ``must_exist`` is off); a string says why it cannot be read."""
    assert via.gateway is not None
    namespace, name = via.gateway
    key = make_key(ISTIO_GATEWAY, namespace, name)
    gateway = istio_routes.istio_gateway(full, via) if shows(key) else None
    if gateway is None and must_exist:
        known = {r.name for r in full.for_each(ISTIO_GATEWAY, namespace) if shows(r.key)}
        raise ToolFailure(ErrorCode.NOT_FOUND, f"via: Istio Gateway {namespace}/{name} not "
                          f"found{did_you_mean(name, known)}", tool=NAME)
    return gateway


def _resolve_via(full: GraphView, args: Args, request: Request, shows: _Shows, *,
                 must_exist: bool) -> _Answer:
    """The request through Istio: the VirtualService layer of a sidecar or an Istio
    Gateway, decided on the whole graph and shown as ``shows`` allows."""
    via = parse_via(args)
    assert via is not None
    described = f"{args.method} {request.host}{args.path}"
    answer = _Answer()
    source = None
    gateway: IstioGateway | None = None
    if via.gateway is None:
        assert args.source_namespace is not None
        if not shows(make_key(Kind.NAMESPACE, "", args.source_namespace)):
            raise ToolFailure(ErrorCode.NOT_FOUND, f"source_namespace: namespace "
                              f"{args.source_namespace!r} not found", tool=NAME)
        source = istio_rules.Source(args.source_namespace, args.source_labels)
    else:
        found = _entry_gateway(full, via, shows, must_exist=must_exist)
        if isinstance(found, str):
            answer.notes.append(f"{via.entry}: cannot be read ({found}); its routing is not "
                                "evaluated")
        gateway = found if isinstance(found, IstioGateway) else None
        if gateway is None and not isinstance(found, str):
            return answer  # gone in a proposal: not an entry any more
    ctx = MeshContext(full, None)
    resolution = istio_routes.resolve(ctx, via, request, authority=args.host.strip().lower(),
                             port=args.port, source=source, gateway=gateway)
    notes = [note for key, note in resolution.notes if key is None or shows(key)]
    answer.notes.extend(notes)
    for unread in ctx.findings:  # objects Istio's schema would refuse: left out, said so
        where = unread.resource
        if where is not None and shows(make_key(where.kind, where.namespace or "", where.name)):
            answer.notes.append(f"{unread.summary}; the routing above leaves it out")
        else:
            answer.notes.append("an Istio object in a namespace you may not read cannot be "
                                "read; the routing above leaves it out")
    layer = _vs_layer(resolution, shows)
    answer.layers.append(layer)
    if layer.undecided is not None:
        answer.notes.append(f"{via.entry}: which rule takes the request is undecided "
                            f"({layer.undecided})")
    rule = resolution.rule
    by = HIDDEN_ROUTE if layer.hidden or rule is None else rule.label
    for loser, winner, because in resolution.shadowed:
        if not shows(loser.vs.record.key):
            continue
        if isinstance(winner, istio_rules.Rule):
            shadowed_by = by
        else:
            shadowed_by = winner.record.ref if shows(winner.record.key) else HIDDEN_ROUTE
        answer.conflicts.append(Shadowed(route=loser.vs.record.ref, kind="VirtualService",
                                         rule=loser.index, shadowed_by=shadowed_by,
                                         because=because))
        answer.losers.append((shadowed_by, loser.label, because,
                              {d.backend for d in _rule_backends(ctx, loser)}))
    if layer.outcome == "404":
        answer.findings.append(codes.REQUEST_NOT_ROUTED.finding(
            None, f"{described}: no VirtualService rule takes it via {via.entry} (404)",
            detail="; ".join(notes) or "No http rule of the VirtualServices "
            f"that apply via {via.entry} matches the request.",
            suggestion="Check the VirtualServices' hosts, gateways, exportTo and matches "
            "against the request; run check_mesh_config for their problems."))
    elif layer.outcome in ("500", "503"):
        what = HIDDEN_ROUTE if layer.hidden else \
            f"VirtualService {layer.route} http[{layer.rule}]" if layer.route else \
            "the default route"
        answer.findings.append(codes.REQUEST_GETS_ERROR.finding(
            None, f"{described}: {what} answers {layer.outcome}",
            detail="The rule that takes the request has no usable destination" +
            (": " + "; ".join(f"{b.backend} {b.reason or f'{b.ready_endpoints} ready'}"
                              for b in layer.backends) if layer.backends else "."),
            suggestion="Fix the destinations (run check_mesh_config) or the backend "
            "Service's endpoints (run diagnose_service)."))
    _verdict(answer, args, described)
    return answer


def _rule_backends(ctx: MeshContext, rule: istio_rules.Rule) -> list[istio_rules.Destination]:
    routes = rule.spec.get("route")
    return [istio_destinations.destination(ctx, rule.vs, r.get("destination"))
            for r in routes if isinstance(r, dict)] if isinstance(routes, list) else []


def _vs_layer(resolution: istio_rules.Resolution, shows: _Shows) -> Layer:
    rule = resolution.rule
    owner = rule.vs if rule is not None else resolution.owner
    hidden = owner is not None and not shows(owner.record.key)
    if hidden:
        return Layer(layer="virtual-service", entry=resolution.entry, port=resolution.port,
                     backends=[], outcome=resolution.outcome, hidden=True,
                     undecided=None if resolution.undecided is None else
                     "the rule that takes the request cannot be evaluated")
    match = None
    if rule is not None and resolution.match is not None:
        matches = rule.spec.get("match")
        match = dict(matches[resolution.match]) if isinstance(matches, list) else None
    backends = [BackendShare(backend=d.backend, port=d.port, weight=d.weight, share=d.share,
                             resolved=d.resolved, reason=d.reason,
                             ready_endpoints=d.ready_endpoints,
                             mirror=True if d.mirror else None, subset=d.subset or None)
                for d in resolution.destinations]
    return Layer(layer="virtual-service", entry=resolution.entry, port=resolution.port,
                 route=owner.record.ref if owner is not None else None,
                 kind="VirtualService" if owner is not None else None,
                 rule=rule.index if rule is not None else None, match=match,
                 filters=resolution.filters or (["default route to the Service"]
                                                if resolution.default_route else None),
                 backends=backends, outcome=resolution.outcome,
                 undecided=resolution.undecided, delegated_from=_root_of(rule, shows))


def _root_of(rule: istio_rules.Rule | None, shows: _Shows) -> str | None:
    if rule is None or rule.root is None:
        return None
    root = rule.root
    return f"{root.vs.record.ref} http[{root.index}]" if shows(root.vs.record.key) \
        else HIDDEN_ROUTE


def _verdict(answer: _Answer, args: Args, described: str) -> None:
    """The backends reached, whether the expected one is among them, and what hidden
    layers leave incomplete."""
    findings = answer.findings
    for layer in answer.layers:
        if layer.outcome in ("forwarded", "503"):
            for b in layer.backends:
                if b.resolved and not b.mirror and b.weight:
                    answer.reached.setdefault((b.backend, b.port, b.subset), b)
    # Hidden layers that may reach backends (a 404 or a redirect reaches none).
    hidden = [layer for layer in answer.layers if layer.hidden
              and layer.outcome in ("forwarded", "503", "undecided")]
    if any(layer.entry_hidden for layer in hidden):
        answer.incomplete.append(f"the request goes through {HIDDEN_GATEWAY}, where "
                                 f"{HIDDEN_ROUTE} takes it: which backends it reaches "
                                 "there is not shown")
    if any(not layer.entry_hidden for layer in hidden):
        answer.incomplete.append(f"{HIDDEN_ROUTE} takes the request on some entry: which "
                                 "backends it reaches there is not shown")
    if args.expected_backend is not None:
        answer.matches_expected = any(b.backend == args.expected_backend
                                      for b in answer.reached.values())
        undecided = [layer.undecided for layer in answer.layers if layer.undecided]
        if not answer.matches_expected and hidden:
            answer.matches_expected = None  # a hidden route's backends are not shown
            answer.expected_detail = f"{HIDDEN_ROUTE} takes the request on some entry; " \
                "whether it reaches the expected backend is not shown"
        elif not answer.matches_expected and undecided:
            answer.matches_expected = None
            answer.expected_detail = f"which rule takes the request is undecided: " \
                f"{undecided[0]}"
        elif not answer.matches_expected:
            answer.expected_detail = _explain_miss(args.expected_backend, answer.layers,
                                                   answer.losers)
            findings.append(codes.REQUEST_MISSES_EXPECTED_BACKEND.finding(
                None, f"{described} does not reach {args.expected_backend}",
                detail=answer.expected_detail,
                suggestion="Make the intended rule more specific (exact path, longer prefix, "
                "method, headers) or remove the rule that takes precedence."))
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))


_ERRORS: dict[int, tuple[Layer, Finding]] = {}


def _error_finding(layer: Layer, winner: Candidate, described: str) -> Finding:
    """REQUEST_GETS_ERROR for a layer that answers 500 or 503. All but the summary follows
    from the layer (kept per rule and listener, see ``_layer``): built once per layer, and
    per request only copied with the request in its summary."""
    held = _ERRORS.get(id(layer))
    if held is None or held[0] is not layer:
        named = not layer.hidden
        template = codes.REQUEST_GETS_ERROR.finding(
            _ref(winner.route.record) if named else None, "",
            detail="Every backendRef of the rule that takes the request has weight 0, so "
            "no request is forwarded." if layer.backends and not any(
                b.weight for b in layer.backends if not b.mirror) else
            "The rule that takes the request has no usable backend: "
            + "; ".join(f"{b.backend} {b.reason or _ready(b.ready_endpoints)}"
                        for b in layer.backends) if layer.backends else
            "The rule that takes the request has no backendRefs." if named else
            "The rule that takes the request has no usable backend.",
            suggestion="Fix the backendRefs (run check_route_resolution) or the "
            "backend Service's endpoints (run diagnose_service).")
        if len(_ERRORS) >= _LAYERS_KEPT:
            _ERRORS.clear()
        held = _ERRORS[id(layer)] = (layer, template)
    taken_by = HIDDEN_ROUTE if layer.hidden else winner.label
    return held[1].with_summary(f"{described}: {taken_by} answers {layer.outcome}")


def _ready(count: int | None) -> str:
    # None: not known from the input, or the Service is in a namespace the caller may not read
    return "ready endpoints not shown" if count is None else f"{count} ready"


_REFS: dict[int, tuple[Record, ResourceRef]] = {}


def _ref(record: Record) -> ResourceRef:
    """``base.ref``, kept per record (frozen either way): a finding per layer otherwise
    builds the same reference on every answer."""
    held = _REFS.get(id(record))
    if held is not None and held[0] is record:
        return held[1]
    if len(_REFS) >= _LAYERS_KEPT:
        _REFS.clear()
    found = ref(record)
    _REFS[id(record)] = (record, found)
    return found


def _shadowed(answer: _Answer, winner: Candidate, others: list[Candidate],
              shows: _Shows) -> None:
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


def analyze(view: GraphView, args: Args) -> Result:
    parse_via(args)  # a bad via fails the call before any work
    host = request_host(args.host)
    request = Request(host, args.path.split("?")[0], args.method, args.headers, args.query)
    full, shows = unrestricted(view)
    proposal = None
    if args.proposed is not None:
        # Read before resolving: a bad proposal fails the call before any work.
        proposal = proposals.read(full, args.proposed, tool=NAME, shows=shows)
    live = _resolve(full, args, request, shows,
                    must_exist=proposal is None or args.gateway is None)
    if proposal is not None and args.gateway is not None and not live.layers:
        entry = make_key(GATEWAY, *args.gateway.split("/", 1))
        if not (shows(entry) and proposal.overlay(full).exists(entry)):
            _resolve(full, args, request, shows)  # raises NOT_FOUND, naming it
    changes = None
    if args.against is not None:
        changes = _changes(view, args.against, _involved(live.layers, live.conflicts),
                           live.notes)
    proposed = None
    if proposal is not None:
        after = _resolve(proposal.overlay(full), args, request, shows, must_exist=False)
        proposed = _compare(live, after, proposal)
    return Result(
        metadata=metadata(view),
        request=f"{args.method} {host}{args.path}",
        layers=live.layers,
        backends=list(live.reached.values()),
        matches_expected=live.matches_expected,
        expected_detail=live.expected_detail,
        conflicts=live.conflicts,
        findings=live.findings,
        not_evaluated=list(dict.fromkeys(live.notes)),
        incomplete=list(dict.fromkeys(live.incomplete)) or None,
        changes=changes,
        proposed=proposed,
    )


# --- proposed --------------------------------------------------------------------------------


def _taken(layer: Layer) -> str:
    if layer.hidden:
        return f"{HIDDEN_ROUTE} ({layer.outcome})"
    if layer.undecided is not None:
        return f"undecided ({layer.undecided})"
    if layer.layer == "virtual-service" and layer.route is None and layer.backends:
        return f"no VirtualService: the default route ({layer.outcome})"
    if layer.route is None:
        return f"no rule ({layer.outcome})"
    if layer.rule is None:
        return f"{layer.kind} {layer.route}, no rule matching ({layer.outcome})"
    return f"{layer.kind} {layer.route} rule {layer.rule} ({layer.outcome})"


def _shares(answer: _Answer) -> dict[tuple[str, str, int | None], float]:
    return {(layer.entry, b.backend + (f" subset {b.subset}" if b.subset else ""), b.port):
            b.share for layer in answer.layers for b in layer.backends if not b.mirror}


def _finding_key(finding: Finding) -> tuple[str, str, str]:
    return finding.code, str(finding.resource or ""), finding.summary


def _compare(live: _Answer, after: _Answer, proposal: proposals.Proposal) -> ProposedOut:
    before_taken = {layer.entry: _taken(layer) for layer in live.layers}
    after_taken = {layer.entry: _taken(layer) for layer in after.layers}
    entries = [EntryChange(entry=entry, before=before_taken.get(entry),
                           after=after_taken.get(entry))
               for entry in dict.fromkeys([*before_taken, *after_taken])
               if before_taken.get(entry) != after_taken.get(entry)]
    old, new = _shares(live), _shares(after)
    shares = [ShareChange(entry=entry, backend=backend, port=port,
                          share_before=old.get(key), share_after=new.get(key))
              for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)
              for entry, backend, port in (key,)]
    was = {_finding_key(f) for f in live.findings}
    now = {_finding_key(f) for f in after.findings}
    appeared = [f for f in after.findings if _finding_key(f) not in was]
    disappeared = [f for f in live.findings if _finding_key(f) not in now]
    changed = bool(entries or shares or appeared or disappeared) \
        or live.layers != after.layers or live.conflicts != after.conflicts
    return ProposedOut(
        objects=[ProposedObject(object=key, action=action)
                 for key, action in proposal.actions.items()],
        changed=changed,
        layers=after.layers,
        backends=list(after.reached.values()),
        matches_expected=after.matches_expected,
        conflicts=after.conflicts,
        entries_changed=entries,
        shares_changed=shares,
        findings_appeared=appeared,
        findings_disappeared=disappeared,
        not_evaluated=list(dict.fromkeys([*after.notes, *proposal.notes])),
        incomplete=list(dict.fromkeys(after.incomplete)) or None,
    )


def _involved(layers: list[Layer], conflicts: list[Shadowed]) -> set[str]:
    """Keys of the objects on the request's path: entries, routes (the rules that took it
    and those they shadow) and backend Services."""
    keys = {make_key(c.kind, *c.route.split("/", 1)) for c in conflicts}
    for layer in layers:
        if layer.layer == "gateway-api" and not layer.entry_hidden:
            namespace, name, _ = layer.entry.split("/", 2)
            keys.add(make_key(GATEWAY, namespace, name))
        if layer.route is not None and layer.kind is not None:
            namespace, _, name = layer.route.partition("/")
            keys.add(make_key(layer.kind, namespace, name))
        for backend in layer.backends:
            namespace, _, name = backend.backend.partition("/")
            keys.add(make_key(Kind.SERVICE, namespace, name))
    return keys


def _ingress_layer(full: GraphView, request: Request, answer: _Answer,
                   shows: _Shows) -> None:
    """The Ingress that takes the request, decided on the whole graph (an older Ingress in
    a namespace the caller may not read takes it all the same), shown as ``shows`` allows."""
    layers, conflicts, losers = answer.layers, answer.conflicts, answer.losers
    found, _ = ingresses.matches(full, request, None)
    answer.notes.extend(m.note for m in found if m.note and shows(m.ingress.key))
    if not found:
        return
    winner = found[0]
    ingress = winner.ingress
    named = shows(ingress.key)
    service, port, problem = ingresses.backend_target(full, ingress, winner.backend)
    ready = ready_endpoints(full, service) if service is not None and problem is None \
        else None
    name = f"{ingress.namespace}/{winner.backend.service or ''}"
    entry = f"ingress/{ingresses.ingress_class(full, ingress)}"
    match: dict[str, object] | None = None
    if winner.rule is not None and winner.path is not None:
        rule = ingress.rules[winner.rule]
        path = rule.paths[winner.path]
        match = {"host": rule.host, "path": path.path, "pathType": path.path_type}
    outcome = "503" if problem is not None or ready == 0 else "forwarded"
    if named:
        layers.append(Layer(
            layer="ingress", entry=entry, route=ingress.ref, kind="Ingress", rule=winner.rule,
            match=match, outcome=outcome,
            backends=[BackendShare(backend=name, port=port, weight=1, share=100.0,
                                   resolved=problem is None, reason=problem,
                                   ready_endpoints=ready)]))
    else:
        layers.append(Layer(layer="ingress", entry=entry, backends=[], outcome=outcome,
                            hidden=True))
    taken_by = winner.label if named else HIDDEN_ROUTE
    for other in found[1:]:
        if not shows(other.ingress.key):
            continue
        because = _ingress_because(winner.rank, other.rank)
        if other.rule is not None:
            conflicts.append(Shadowed(route=other.ingress.ref, kind="Ingress", rule=other.rule,
                                      shadowed_by=taken_by, because=because))
        losers.append((taken_by, other.label, because,
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
    taken = [f"{layer.route} rule {layer.rule} ({layer.outcome})" if layer.rule is not None
             else f"{layer.route}, no rule matching ({layer.outcome})" for layer in layers
             if layer.route]
    if taken:
        return f"the request is taken by {', '.join(taken)}; no matching rule routes to " \
            f"{expected}"
    return f"no rule matches the request, so it reaches no backend, {expected} included"
