"""What a policy what-if (``proposed`` on the policy tools, diff_reachability) may hold, and
the view it is answered on.

A proposal is read as diff_routes reads one (``core/proposals.py``) and answered on an
overlay of the caller's view (``graph/store/overlay.py``): the engine reads policies through
the view (``for_each``, the ``applies_to`` edges a NetworkPolicy's selector makes), so a
proposed policy is evaluated exactly as the live one would be, and the live graph, its
indexes and the models kept with it are never written (``kept_models``). Only the policy
kinds the engine evaluates may be proposed: a Pod or Namespace changes identities, which
the set evaluation indexes, and a kind the engine does not read would change nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from netsight.analyzers.core import proposals
from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.policy import anp, calico, cilium, cnp, istio_model
from netsight.analyzers.policy.verdict import Tri, Verdict
from netsight.graph.model.kinds import Kind, parse_key
from netsight.graph.store.live import GraphView
from netsight.graph.store.overlay import OverlayView

# kind id -> the apiVersions (a group with "/", or whole versions) the engine evaluates
_SUPPORTED: dict[str, tuple[str, ...]] = {
    Kind.NETWORK_POLICY: ("networking.k8s.io/",),
    anp.ANP_KIND: (anp.GROUP + "/",),
    anp.BANP_KIND: (anp.GROUP + "/",),
    anp.CNP_KIND: tuple(sorted(cnp.VERSIONS)),
    **dict.fromkeys(cilium.KINDS, (cilium.GROUP + "/",)),
    **{kind: tuple(g + "/" for g in calico.GROUPS) for kind in calico.POLICY_KINDS},
    istio_model.AUTHZ_KIND: (istio_model.GROUP + "/",),
    istio_model.PEER_AUTHN_KIND: (istio_model.GROUP + "/",),
}
SUPPORTED_TEXT = ("NetworkPolicy, AdminNetworkPolicy, BaselineAdminNetworkPolicy, "
                  "ClusterNetworkPolicy (policy.networking.k8s.io v1alpha2/v1beta1), "
                  "CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy, Calico NetworkPolicy "
                  "and GlobalNetworkPolicy, Istio AuthorizationPolicy and PeerAuthentication")


def kind_refused(kind: str, api_version: str) -> str | None:
    """Why an object of this kind id and apiVersion may not be proposed, or None."""
    versions = _SUPPORTED.get(kind)
    if versions is not None and any(
            api_version.startswith(v) if v.endswith("/") else api_version == v
            for v in versions):
        return None
    return (f"{api_version} {kind.partition('.')[0]}: not a policy kind the policy tools "
            f"evaluate; a proposal here may hold {SUPPORTED_TEXT}")


ADMITS = proposals.Admits(kind=kind_refused)
PROPOSED_HELP = "What-if policy YAML"


def read_ahead(text: str | None) -> list[Document] | None:
    """A proposal's documents, read without the graph (off a server's event loop)."""
    return None if text is None else proposals.read_ahead(text)


class Proposing(Protocol):
    """The arguments of a policy tool that takes ``proposed``."""

    proposed: str | None
    _ahead: list[Document] | None


def proposes(args: Proposing) -> bool:
    """Whether the call has a proposal to read ahead (``Tool.prepares``)."""
    return args.proposed is not None


def read_into(args: Proposing) -> None:
    """Reads the proposal's YAML off the server's event loop (``Tool.prepare``), as
    diff_routes does."""
    args._ahead = read_ahead(args.proposed)


def proposed_view(view: GraphView, text: str, *, tool: str,
                  ahead: Sequence[Document] | None = None
                  ) -> tuple[OverlayView, proposals.Proposal]:
    """``view`` with the proposal in ``text`` applied, and the proposal; a bad proposal
    fails the call (INVALID_INPUT)."""
    # Unlike routing, policy answers are computed on the caller's own view: an object they
    # propose in a namespace they may not read meets only what they see, as in a cluster
    # without that namespace, so nothing needs refusing (and nothing is learnt).
    proposal = proposals.read(view, text, tool=tool, shows=_anything, admits=ADMITS,
                              ahead=ahead)
    return proposal.overlay(view), proposal


def _anything(key: str) -> bool:
    return True


def described(proposal: proposals.Proposal) -> list[str]:
    """Each proposed object as '<action> Kind/namespace/name'."""
    return [f"{action} {_shown(key)}" for key, action in proposal.actions.items()]


def deciders(proposal: proposals.Proposal, verdicts: Iterable[Verdict]) -> list[str]:
    """The proposed objects among the policies that decided ``verdicts`` (live and with
    the proposal): their steps' policies and the policies blocking them."""
    wanted = {(k.partition(".")[0], ns, name): key
              for key, action in proposal.actions.items() if action != proposals.UNCHANGED
              for k, ns, name in (parse_key(key),)}
    found: dict[str, None] = {}
    for verdict in verdicts:
        for part in (verdict.egress, verdict.ingress):
            refs: list[ResourceRef] = [s.policy for s in part.steps if s.policy is not None]
            for ref in (*refs, *part.blocking):
                key = wanted.get((ref.kind.partition(".")[0], ref.namespace or "", ref.name))
                if key is not None:
                    found[_shown(key)] = None
    return list(found)


def _shown(key: str) -> str:
    kind, namespace, name = parse_key(key)
    kind = kind.partition(".")[0]
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def word(value: Tri) -> str:
    return "allowed" if value is True else "denied" if value is False else "undecided"
