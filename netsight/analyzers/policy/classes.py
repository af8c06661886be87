"""Flows decided for sets of identities at once, instead of one flow per identity.

Every identity of the cluster is a bit (``universe.Universe``); a rule's peers, and the
subjects of a policy, are sets of them, found once through the selector indexes and kept
with the universe. Two evaluations mirror ``PolicyEngine.direction`` over such sets:

- ``FixedEnd`` (:mod:`fixed_end`): the direction taken at one end (ingress at a
  destination) against every identity as the other end; the tiers are walked with set
  operations exactly as ``anp.evaluate`` and ``netpol.evaluate`` walk them for one peer;
- ``TowardFixed`` (:mod:`toward_fixed`): egress at every identity toward one destination.
  Each rule then has one answer (it matches the destination or not) and each policy
  applies to a set, so the identities that share the policies selecting them (their
  egress signature) share the answer without being grouped one by one. Equal rule lists
  in many namespaces (an allow-DNS policy) are answered once; admin-tier answers are kept
  per vector of rule answers, which most destinations share.

``who_can_reach`` (here) combines the two for one destination, ``what_can_reach`` for one
source; ``identity_matrix.reachability`` for every destination identity (grouped by what
its ingress depends on: ingress classes).

Exactness: the fast path decides only True and False. Anything it does not model goes to
the per-pod path (``reach.tally`` over ``PolicyEngine``), whose answer is the reference:

- an unknown answer anywhere (namespace labels not given, a rule netsight cannot read, two
  admin policies at one priority disagreeing): those identities go to the per-pod path,
  which also words the reasons;
- identities with host-network pods or standing-in workloads (``Universe.exact``), the
  fixed end's own identities, pods whose IPs or ports a CIDR or named port tells apart;
- namespaces where ``PolicyEngine.unevaluated`` has anything to say, and every policy kind
  the engine reads besides NetworkPolicy, AdminNetworkPolicy, BaselineAdminNetworkPolicy and
  ClusterNetworkPolicy (Cilium's, Istio's, whatever kinds engine.py evaluates or lists as
  unevaluated now or later): flows with an end in a namespace holding one go to the per-pod
  path, and one that is cluster-scoped (a CiliumClusterwideNetworkPolicy) or in a mesh's
  root namespace turns the fast path off. ``FixedEnd`` and ``TowardFixed`` apply this
  themselves (:func:`set_scope.set_scope`), so no caller can take their answer where it
  does not hold;
- Calico policies anywhere, unreadable kinds, or both admin API versions in use: the fast
  path is off (Calico's tiers decide every direction of every pod once one exists).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.external_regions import Region
from netsight.analyzers.policy.fixed_end import FixedEnd
from netsight.analyzers.policy.peer_groups import Group
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.reach import Tally
from netsight.analyzers.policy.results import (
    MEMBERS_SHOWN,
    PeerOut,
    PodCounts,
    Summary,
    peer_out,
    region_out,
)
from netsight.analyzers.policy.set_scope import Outcome, set_scope, unevaluated_anywhere
from netsight.analyzers.policy.toward_fixed import TowardFixed
from netsight.analyzers.policy.universe import Bits, Labels, Universe, indexed_universe, members
from netsight.analyzers.policy.verdict import Direction
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

# --- who_can_reach's core ---------------------------------------------------------------


@dataclass
class Row:
    """One identity decided by the fast path, for every pod of the fixed end."""

    namespace: str
    labels: Labels
    keys: list[str]
    allowed: int  # pods of the fixed end it reaches
    denied: int

    @property
    def tally(self) -> Tally:
        return Tally(allowed=self.allowed, denied=self.denied)


@dataclass
class Sources:
    rows: list[Row]  # identities allowed with at least one fixed pod
    denied_pods: int  # pods of fast identities denied with every fixed pod
    exact: list[Record]  # pod-likes left to the per-pod path


def who_can_reach(engine: PolicyEngine, fixed: list[tuple[Group, int | None]],
                  protocol: str) -> Sources | None:
    """Every in-cluster source against the fixed end; None when the fast path cannot run
    (then the caller asks the per-pod path about every source)."""
    view = engine.view
    scopes = set_scope(engine)
    if scopes is None:
        return None
    targets: list[tuple[Group, int]] = []
    for target, port in fixed:
        rep = target.rep
        if port is None or rep.external or rep.host_network or rep.namespace in scopes:
            return None
        targets.append((target, port))
    uni = indexed_universe(view)
    if uni is None:
        return None
    exact = 0
    # The fixed end's own identities: a pod and itself is no question (tally counts it).
    for g, _ in targets:
        for m in g.members:
            position = uni.index.get((m.namespace or "", id(m.labels)))
            if position is not None:
                exact |= 1 << position
    quiet = not scopes and not unevaluated_anywhere(engine)
    for namespace, bits in uni.ns_bits.items():
        if quiet:
            break
        probe = Endpoint("", namespace)
        if namespace in scopes or any(engine.unevaluated(probe, g.rep) != ((), ())
                                      for g, _ in targets):
            exact |= bits
    ingress: list[Outcome] = []
    for g, port in targets:
        outcome = FixedEnd(engine, uni, Direction.INGRESS, g.rep, port, protocol).evaluate()
        assert outcome is not None
        exact |= outcome.exact
        ingress.append(outcome)
    allowed = []
    for outcome, (g, port) in zip(ingress, targets, strict=True):
        egress = TowardFixed(engine, uni, g.rep, port, protocol).evaluate()
        assert egress is not None  # (the destination is in scope: checked above)
        # The egress verdict matters only where the ingress allows (False either way).
        exact |= outcome.allow & egress.exact
        allowed.append(outcome.allow & egress.allow)
    return _sources(view, uni, [len(g.members) for g, _ in targets], allowed, exact)


def what_can_reach(engine: PolicyEngine, fixed: list[Group], port: int, protocol: str,
                   blocks: tuple[IPBlock, ...]) -> Sources | None:
    """Every in-cluster destination from the fixed sources on one port: egress at each
    source over every identity (``FixedEnd``), ingress at every identity from it
    (``TowardFixed`` INGRESS). None when the fast path cannot run. Identities the per-pod
    path would split (pods apart under one of ``blocks`` — what it groups by — or in
    their container ports) are left to it, so rows are the identities it would list."""
    view = engine.view
    scopes = set_scope(engine)
    if scopes is None:
        return None
    for g in fixed:
        rep = g.rep
        if rep.external or rep.host_network or rep.namespace in scopes:
            return None
    uni = indexed_universe(view)
    if uni is None:
        return None
    exact = 0
    for g in fixed:  # the sources' own identities: a pod and itself is no question
        for m in g.members:
            position = uni.index.get((m.namespace or "", id(m.labels)))
            if position is not None:
                exact |= 1 << position
    for block in blocks:
        exact |= uni.block(block)[1]
    for position, variants in enumerate(uni.ports):
        if len(variants) > 1:
            exact |= 1 << position
    if scopes or unevaluated_anywhere(engine):
        for namespace, bits in uni.ns_bits.items():
            probe = Endpoint("", namespace)
            if namespace in scopes or any(engine.unevaluated(g.rep, probe) != ((), ())
                                          for g in fixed):
                exact |= bits
    allowed = []
    for g in fixed:
        egress = FixedEnd(engine, uni, Direction.EGRESS, g.rep, port, protocol).evaluate()
        ingress = TowardFixed(engine, uni, g.rep, port, protocol,
                              direction=Direction.INGRESS).evaluate()
        if egress is None or ingress is None:
            return None
        # The ingress verdict matters only where the egress allows (False either way).
        exact |= egress.exact | (egress.allow & ingress.exact)
        allowed.append(egress.allow & ingress.allow)
    return _sources(view, uni, [len(g.members) for g in fixed], allowed, exact)


def _sources(view: GraphView, uni: Universe, fixed_pods: list[int], allowed: list[Bits],
             exact: Bits) -> Sources:
    """Rows for the identities allowed with at least one fixed pod (``allowed``: per
    fixed group), the pods of the rest counted as denied, ``exact`` left to the per-pod
    path."""
    rows: list[Row] = []
    any_allowed = 0
    for bits in allowed:
        any_allowed |= bits
    any_allowed &= ~exact
    row_pods = 0
    every = sum(fixed_pods)
    for position in members(any_allowed):
        reached = every
        if len(fixed_pods) > 1:
            reached = sum(count for count, bits in zip(fixed_pods, allowed, strict=True)
                          if bits >> position & 1)
        keys = uni.keys[position]
        row_pods += len(keys)
        rows.append(Row(uni.namespaces[position], uni.label_keys[position], keys, reached,
                        every - reached))
    exact_pods = 0
    left: list[Record] = []
    get: Callable[[str], Record | None] = view.get
    for position in members(exact & uni.all):
        keys = uni.keys[position]
        exact_pods += len(keys)
        left.extend(r for k in keys if (r := get(k)) is not None)
    left.extend(r for k in uni.exact if (r := get(k)) is not None)
    return Sources(rows, uni.pods - exact_pods - row_pods, left)


def row_out(row: Row, *, several: bool, detail: bool) -> PeerOut:
    """As ``reach.peer_out`` for a group of the identity's pods, never split."""
    tally = row.tally
    return PeerOut(namespace=row.namespace, labels=dict(row.labels), pods=len(row.keys),
                   allowed=tally.verdict,
                   counts=PodCounts(allowed=tally.allowed, denied=tally.denied,
                                    unknown=tally.unknown) if several else None,
                   members=[k.partition("/")[2] for k in row.keys[:MEMBERS_SHOWN]]
                   if detail else None)


Listed = Row | tuple[Group, Tally] | Region  # one peer line of who/what_can_reach


def listing_order(item: Listed) -> tuple[str, Labels, str]:
    """Where a peer line sorts: namespace, labels, then the group's first pod."""
    if isinstance(item, Row):
        return item.namespace, item.labels, ""
    assert isinstance(item, tuple)
    return item[0].namespace, item[0].labels, item[0].rep.name


def listed_out(item: Listed, blocks: tuple[IPBlock, ...], *, several: bool,
               detail: bool) -> PeerOut:
    """A peer line as shown: an identity of the set path, a region outside, or a group."""
    if isinstance(item, Row):
        return row_out(item, several=several, detail=detail)
    if isinstance(item, Region):
        return region_out(item, blocks, several=several)
    return peer_out(item[0], item[1], several=several, detail=detail)


def add_rows(summary: Summary, sources: Sources) -> Summary:
    """``summary`` with the fast path's identities added (as ``reach.summarize`` counts)."""
    allowed = partial = 0
    for row in sources.rows:
        if not row.denied:
            allowed += len(row.keys)
        else:
            partial += len(row.keys)
    return Summary(identities=summary.identities + len(sources.rows),
                   allowed_pods=summary.allowed_pods + allowed,
                   partial_pods=summary.partial_pods + partial,
                   unknown_pods=summary.unknown_pods,
                   denied_pods=summary.denied_pods + sources.denied_pods)
