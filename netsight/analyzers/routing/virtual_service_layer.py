"""The VirtualService layer of a request's answer (diff_routes ``via``): the request routed
as an Istio sidecar or Istio Gateway would (routing/istio_routes.py), decided on the whole
graph and shown as the caller may see it.
"""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import did_you_mean
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import ISTIO_GATEWAY, IstioGateway
from netsight.analyzers.routing import istio_routes
from netsight.analyzers.routing.istio_destinations import destination
from netsight.analyzers.routing.istio_rules import Destination, Resolution, Rule, Source, Via
from netsight.analyzers.routing.references import Shows
from netsight.analyzers.routing.request_answers import (
    HIDDEN_ROUTE,
    Answer,
    Asked,
    BackendShare,
    Layer,
    Shadowed,
    verdict,
)
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.store.live import GraphView


def _entry_gateway(full: GraphView, via: Via, shows: Shows, *, must_exist: bool,
                   tool: str) -> IstioGateway | str | None:
    """The Istio Gateway ``via`` names (NOT_FOUND when missing or not the caller's to
    read, unless ``must_exist`` is off); a string says why it cannot be read."""
    assert via.gateway is not None
    namespace, name = via.gateway
    key = make_key(ISTIO_GATEWAY, namespace, name)
    gateway = istio_routes.istio_gateway(full, via) if shows(key) else None
    if gateway is None and must_exist:
        known = {r.name for r in full.for_each(ISTIO_GATEWAY, namespace) if shows(r.key)}
        raise ToolFailure(ErrorCode.NOT_FOUND, f"via: Istio Gateway {namespace}/{name} not "
                          f"found{did_you_mean(name, known)}", tool=tool)
    return gateway


def resolve_via(full: GraphView, asked: Asked, shows: Shows, *, must_exist: bool) -> Answer:
    """The request through Istio: the VirtualService layer of a sidecar or an Istio
    Gateway, decided on the whole graph and shown as ``shows`` allows."""
    via = asked.via
    assert via is not None
    described = asked.described
    answer = Answer()
    source = None
    gateway: IstioGateway | None = None
    if via.gateway is None:
        namespace = asked.source_namespace
        assert namespace is not None
        if not shows(make_key(Kind.NAMESPACE, "", namespace)):
            raise ToolFailure(ErrorCode.NOT_FOUND, f"source_namespace: namespace "
                              f"{namespace!r} not found", tool=asked.tool)
        source = Source(namespace, asked.source_labels)
    else:
        found = _entry_gateway(full, via, shows, must_exist=must_exist, tool=asked.tool)
        if isinstance(found, str):
            answer.notes.append(f"{via.entry}: cannot be read ({found}); its routing is not "
                                "evaluated")
        gateway = found if isinstance(found, IstioGateway) else None
        if gateway is None and not isinstance(found, str):
            return answer  # gone in a proposal: not an entry any more
    ctx = MeshContext(full, None)
    resolution = istio_routes.resolve(ctx, via, asked.request, authority=asked.authority,
                                      port=asked.port, source=source, gateway=gateway)
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
        if isinstance(winner, Rule):
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
    verdict(answer, asked)
    return answer


def _rule_backends(ctx: MeshContext, rule: Rule) -> list[Destination]:
    routes = rule.spec.get("route")
    return [destination(ctx, rule.vs, r.get("destination"))
            for r in routes if isinstance(r, dict)] if isinstance(routes, list) else []


def _vs_layer(resolution: Resolution, shows: Shows) -> Layer:
    rule = resolution.rule
    owner = rule.vs if rule is not None else resolution.owner
    # The default route to a Service the caller may not read is shown as a hidden route's
    # is: its outcome, not its backends (their endpoints are that namespace's).
    hidden = not shows(owner.record.key) if owner is not None else \
        resolution.default_to is not None and not shows(resolution.default_to)
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


def _root_of(rule: Rule | None, shows: Shows) -> str | None:
    if rule is None or rule.root is None:
        return None
    root = rule.root
    return f"{root.vs.record.ref} http[{root.index}]" if shows(root.vs.record.key) \
        else HIDDEN_ROUTE
