"""Where the set evaluation may answer, and what it leaves to the per-pod path.

The sets model NetworkPolicies and the admin tiers only (:mod:`classes` says why each
exception holds): namespaces holding other policy kinds go to the per-pod path, and
Calico policies, unreadable kinds or both admin API versions turn the fast path off.
"""

from __future__ import annotations

from dataclasses import dataclass

from netsight.analyzers.policy import anp, cnp, istio_client_tls, kuma_authz, linkerd_authz
from netsight.analyzers.policy.engine import READS, ROOT_NAMESPACE, UNEVALUATED, PolicyEngine
from netsight.analyzers.policy.universe import Bits, Universe, indexed_universe
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind
from netsight.graph.store.live import GraphView, ProblemKind

# Kinds whose meaning the set evaluation models; any other kind the engine reads is a
# policy kind it does not, found generically (see the docstring of classes.py).
MODELED: frozenset[str] = frozenset({
    Kind.POD, Kind.NAMESPACE, Kind.NETWORK_POLICY, anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND,
    "Node", *POD_LIKE_KINDS,
    # Read only by Istio's layer (a port's protocol, the mesh config), which has no say
    # where no Istio policy is: its kinds send their namespaces to the per-pod path.
    Kind.SERVICE, istio_client_tls.CONFIG_MAP,
    # Scoped apart (istio_client_tls.tls_scopes): a rule concerns its clients and its host.
    istio_client_tls.DESTINATION_RULE,
    # Read by Linkerd's layer for the Servers of their namespace only, which are unmodeled.
    "HTTPRoute", "GRPCRoute"})
# The kinds of policies the engine reads but the set evaluation does not model, besides
# those it lists as unevaluated.
UNMODELED: tuple[str, ...] = tuple(sorted(READS - MODELED - {u.kind for u in UNEVALUATED}))


def _unmodeled_scopes(view: GraphView) -> frozenset[str] | None:
    """Namespaces holding objects of policy kinds the set evaluation does not model (their
    flows go to the per-pod path); None when such an object is cluster-scoped or in the
    mesh root namespace, where it may bear on any flow (the fast path is off)."""
    found: set[str] = set()
    for kind in UNMODELED:
        for record in view.for_each(kind):
            # Istio's root namespace and Kuma's system namespace hold mesh-wide policies.
            if not record.namespace or record.namespace in (ROOT_NAMESPACE,
                                                            *kuma_authz.SYSTEM_NAMESPACES):
                return None
            found.add(record.namespace)
    if linkerd_authz.settings(view).default not in linkerd_authz.PERMISSIVE_DEFAULTS:
        return None  # every meshed pod may refuse some peer
    # Namespaces whose pods Linkerd injects or gives a default policy by annotation.
    found.update(linkerd_authz.annotated_namespaces(view))
    tls = istio_client_tls.tls_scopes(view)
    return None if tls is None else frozenset(found | tls)


def set_scope(engine: PolicyEngine) -> frozenset[str] | None:
    """Where the set evaluation may answer: None when nowhere (a kind it needs is
    unreadable, both admin API versions are in use, Calico policies exist — Calico then
    decides every direction of every pod, ``calico_evaluation.evaluate`` — or an unmodeled policy
    object is cluster-scoped); else the namespaces whose pods it leaves to the per-pod path
    (``_unmodeled_scopes``: Cilium, Istio and other policy objects there, kept with the view
    until one of those kinds changes)."""
    if engine.unreadable() or engine.mixed_versions() or engine.calico_present():
        return None
    scopes: frozenset[str] | None = engine.view.derived(
        "policy.unmodeled scopes", (*UNMODELED, istio_client_tls.DESTINATION_RULE,
                                    Kind.NAMESPACE, istio_client_tls.CONFIG_MAP),
        _unmodeled_scopes)
    uni = indexed_universe(engine.view) if scopes is not None else None
    if scopes is None or uni is None:
        return scopes
    # Pods Linkerd injected carry its label: their namespaces go to the per-pod path, where
    # their annotations (a default policy) are read.
    meshed = uni.derived.get("linkerd namespaces")
    if meshed is None:
        meshed = uni.derived["linkerd namespaces"] = frozenset(
            ns for ns, labels in zip(uni.namespaces, uni.labels, strict=True)
            if linkerd_authz.INJECTED_LABEL in labels)
    return scopes | meshed if meshed else scopes


@dataclass
class Outcome:
    """A direction's answer over peer identities: allowed, denied, or for the per-pod path."""

    allow: Bits = 0
    deny: Bits = 0
    exact: Bits = 0


def scoped_out(uni: Universe, scope: frozenset[str]) -> Bits:
    """The identities of ``scope``'s namespaces (for the per-pod path)."""
    bits = 0
    for namespace in scope:
        bits |= uni.ns_bits.get(namespace, 0)
    return bits


def exact_where(out: Outcome, bits: Bits) -> Outcome:
    """``out`` with the identities of ``bits`` left to the per-pod path."""
    if bits:
        out.allow &= ~bits
        out.deny &= ~bits
        out.exact |= bits
    return out


def unevaluated_anywhere(engine: PolicyEngine) -> bool:
    """Whether ``PolicyEngine.unevaluated`` could have anything to say about any flow: an
    object of a kind it lists, or any object that could not be read. When not, asking it
    per namespace is skipped."""
    view = engine.view
    for kind in UNEVALUATED:
        if kind.kind == anp.CNP_KIND:
            if any(not cnp.evaluated(r) for r in view.for_each(kind.kind)):
                return True
        elif view.count(kind.kind):
            return True
    return engine.mixed_versions() is not None or any(
        p.kind is ProblemKind.MALFORMED for p in view.problems())
