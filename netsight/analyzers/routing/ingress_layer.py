"""The Ingress layer of a request's answer: the Ingress rule that takes it (routing/ingresses.py
decides which), its backend and ready endpoints, and the Ingresses it shadows.
"""

from __future__ import annotations

from netsight.analyzers.routing import ingresses
from netsight.analyzers.routing.references import Shows, ready_endpoints
from netsight.analyzers.routing.request_answers import (
    HIDDEN_ROUTE,
    Answer,
    BackendShare,
    Layer,
    Shadowed,
)
from netsight.analyzers.routing.requests import Request
from netsight.graph.store.live import GraphView


def ingress_layer(full: GraphView, request: Request, answer: Answer, shows: Shows) -> None:
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
