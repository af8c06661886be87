"""One HTTP request through the cluster's routing (diff_routes): the Gateway API and
Ingress layers, or the Istio layer with ``via``; what changed on its path since an earlier
answer; and what a proposal would change about it.

Everything is decided on the whole graph behind the caller's view (a route in a namespace
they may not read can take their request on a shared Gateway) and shown as that view
allows. A proposal is resolved on an overlay of the whole graph (graph/store/overlay.py);
nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from netsight.analyzers.core import proposals
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.change_history import ChangeOut, changes, involved
from netsight.analyzers.routing.gateway_objects import GATEWAY
from netsight.analyzers.routing.gateway_requests import (
    KeptParts,
    gateway_layers,
    kept_parts,
    not_routed,
)
from netsight.analyzers.routing.ingress_layer import ingress_layer
from netsight.analyzers.routing.proposal_scope import ProposalScope
from netsight.analyzers.routing.references import Shows
from netsight.analyzers.routing.request_answers import Answer, Asked, verdict
from netsight.analyzers.routing.virtual_service_layer import resolve_via
from netsight.analyzers.routing.what_if import ProposedOut, compare
from netsight.graph.model.kinds import make_key
from netsight.graph.store.live import GraphView
from netsight.graph.store.scoped import unrestricted

NO_MESH_NOTE = "GAMMA mesh routes are not evaluated; Istio VirtualServices are, with via " \
    "('mesh' or 'gateway <namespace>/<name>')"


@dataclass
class RequestReport:
    """All that is answered about one request."""

    live: Answer
    changes: list[ChangeOut] | None = None  # with against
    proposed: ProposedOut | None = None  # with a proposal


def answer_request(view: GraphView, asked: Asked, *, against: int | str | None = None,
                   proposed: str | None = None, ahead: Sequence[Document] | None = None
                   ) -> RequestReport:
    """The request through the whole graph behind ``view``, shown as ``view`` allows; with
    ``against`` the changes on its path since then, with ``proposed`` (YAML or JSON
    objects) the answer with them applied, compared with the live one (``ahead``: its
    documents, read ahead)."""
    full, shows = unrestricted(view)
    parts = kept_parts(view)  # the caller's: what a layer shows depends on their scope
    proposal = None
    if proposed is not None:
        # Read before resolving: a bad proposal fails the call before any work.
        names = ProposalScope(full, shows)
        proposal = proposals.read(full, proposed, tool=asked.tool, shows=shows,
                                  admits=proposals.Admits(record=names.refused), ahead=ahead)
    live = resolve(full, asked, shows, parts,
                   must_exist=proposal is None or asked.gateway is None)
    if proposal is not None and asked.gateway is not None and not live.layers:
        entry = make_key(GATEWAY, *asked.gateway.split("/", 1))
        if not (shows(entry) and proposal.overlay(full).exists(entry)):
            resolve(full, asked, shows, parts)  # raises NOT_FOUND, naming it
    report = RequestReport(live)
    if against is not None:
        report.changes = changes(view, against, involved(live.layers, live.conflicts),
                                 live.notes, tool=asked.tool)
    if proposal is not None:
        after = resolve(proposal.overlay(full), asked, shows, parts.what_if(),
                        must_exist=False)
        report.proposed = compare(live, after, proposal)
    return report


def resolve(full: GraphView, asked: Asked, shows: Shows, parts: KeptParts, *,
            must_exist: bool = True) -> Answer:
    """The request through ``full`` (precedence decided there), shown as ``shows`` (what
    the caller may see) allows; ``parts``: what is kept for that caller."""
    if asked.via is not None:
        return resolve_via(full, asked, shows, must_exist=must_exist)
    resolver = Resolver(full, shared=True)
    answer = Answer(notes=[NO_MESH_NOTE])
    hidden_entries = gateway_layers(full, resolver, asked, answer, shows, parts,
                                    must_exist=must_exist)
    if asked.gateway is None and asked.port in (None, 80, 443):
        ingress_layer(full, asked.request, answer, shows)
    if not answer.layers and not hidden_entries:
        not_routed(full, resolver, asked, answer, shows, parts)
    verdict(answer, asked)
    return answer
