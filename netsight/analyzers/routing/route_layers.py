"""The Gateway API layer of a request's answer: the route rule that takes the request on
one listener, its filters, weighted backends and outcome, and the error finding for a rule
that answers 500 or 503.

A layer follows from the rule and the listener alone, not from the request: it is built
once for every request that rule takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.quoting import spec_text
from netsight.analyzers.routing import kgateway_policies
from netsight.analyzers.routing.attachment import Resolver, RouteResult
from netsight.analyzers.routing.gateway_objects import HTTP_ROUTE, as_list, as_map
from netsight.analyzers.routing.gateways import GatewayState, ListenerState
from netsight.analyzers.routing.kept import Kept
from netsight.analyzers.routing.references import Shows
from netsight.analyzers.routing.report import backend_tls_out
from netsight.analyzers.routing.request_answers import HIDDEN_ROUTE, BackendShare, Layer
from netsight.analyzers.routing.requests import Candidate
from netsight.graph.model.kinds import Kind, make_key


def _filters(rule: dict[str, object]) -> tuple[list[str], str | None]:
    """The filters described, and the outcome of one that answers the request itself:
    "redirect" (RequestRedirect) or "direct" (DirectResponse, which replies with its
    statusCode and never forwards)."""
    described, answer = [], None
    for flt in as_list(rule.get("filters")):
        flt = as_map(flt)
        kind = str(flt.get("type"))
        config = {k: v for k, v in flt.items() if k != "type"}
        described.append(f"{kind} {spec_text(next(iter(config.values()), ''))}".strip())
        if kind == "RequestRedirect":
            answer = "redirect"
        elif kind == "DirectResponse":
            answer = "direct"
    return described, answer


# (route key, rule, match, listener, whether the route is shown, backends not shown)
LayerKey = tuple[str, int, int | None, ListenerState, bool, frozenset[int]]


@dataclass(frozen=True, slots=True)
class Taken:
    """The layer of the rule that takes a request on a listener and, when that rule answers
    500 or 503, its REQUEST_GETS_ERROR finding but for the summary (which names the
    request): both follow from the rule and the listener alone."""

    layer: Layer
    error: Finding | None = None


def rule_layer(resolver: Resolver, state: GatewayState, listener: ListenerState,
               winner: Candidate | None, shows: Shows,
               kept: Kept[LayerKey, RouteResult, Taken]) -> Taken:
    """The layer of ``winner``, the rule that takes the request on ``listener`` (None: no
    rule does, a 404), shown as ``shows`` allows; kept while the route's result is (a
    shared resolver keeps results until what they read changes)."""
    if winner is None:
        return Taken(Layer(entry=f"{state.ref}/{listener.listener.name}",
                           port=listener.listener.port, backends=[], outcome="404"))
    result = resolver.resolve(winner.route)
    named = shows(winner.route.record.key)
    namespace = winner.route.record.namespace
    # Backends in namespaces the caller may not read (a ReferenceGrant lets the route reach
    # them): their share and outcome are shown, their endpoints and TLS are not.
    hidden = frozenset(i for i, b in enumerate(result.backends)
                       if b.ref.rule == winner.rule and b.ref.namespace != namespace
                       and not shows(make_key(Kind.SERVICE, b.ref.namespace, b.ref.name)))
    key = (winner.route.record.key, winner.rule, winner.match, listener, named, hidden)
    return kept.get(key, result,
                    lambda held: _taken(held, state, listener, winner, named, hidden))


def _taken(result: RouteResult, state: GatewayState, listener: ListenerState,
           winner: Candidate, named: bool, hidden: frozenset[int]) -> Taken:
    layer = _new_layer(result, state, listener, winner, named, hidden)
    if layer.outcome not in ("500", "503"):
        return Taken(layer)
    return Taken(layer, codes.REQUEST_GETS_ERROR.finding(
        ref(winner.route.record) if named else None, "",
        detail="Every backendRef of the rule that takes the request has weight 0, so "
        "no request is forwarded." if layer.backends and not any(
            b.weight for b in layer.backends if not b.mirror) else
        "The rule that takes the request has no usable backend: "
        + "; ".join(f"{b.backend} {b.reason or _ready(b.ready_endpoints)}"
                    for b in layer.backends) if layer.backends else
        "The rule that takes the request has no backendRefs." if named else
        "The rule that takes the request has no usable backend.",
        suggestion="Fix the backendRefs (run check_route_resolution) or the "
        "backend Service's endpoints (run diagnose_service)."))


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
    policies = kgateway_policies.effective(route, winner.rule, result.policies, state.ref,
                                           listener.listener.name) if result.policies else []
    return Layer(entry=entry, port=port, route=route.ref, kind=route.kind, rule=winner.rule,
                 match=dict(winner.match_spec) if winner.match is not None else None,
                 filters=filters or None, policies=policies or None, backends=shares,
                 outcome=outcome)


def error_finding(taken: Taken, winner: Candidate, described: str) -> Finding:
    """REQUEST_GETS_ERROR for a layer that answers 500 or 503, its summary naming the
    request."""
    layer = taken.layer
    assert taken.error is not None, "only a layer answering 500 or 503 has one"
    taken_by = HIDDEN_ROUTE if layer.hidden else winner.label
    return taken.error.with_summary(f"{described}: {taken_by} answers {layer.outcome}")


def _ready(count: int | None) -> str:
    # None: not known from the input, or the Service is in a namespace the caller may not read
    return "ready endpoints not shown" if count is None else f"{count} ready"
