"""Reach: every peer of one end, grouped by identity, and whether traffic flows between them.

``who_can_reach`` fixes the destination and asks about every source; ``what_can_reach`` fixes
the source and asks about every destination. Peers are evaluated per group of pods alike
(:mod:`peer_groups`): one representative pair per (peer group, fixed group) is evaluated
with :class:`engine.PolicyEngine`, so the answer is exactly the per-pod one; parts of a
split identity that got the same answer are shown as one again. The direction at the fixed
end is evaluated first and, when it denies outright, the other is skipped. When the fixed
end's ingress decides by selectors alone, :func:`narrowed_sources` finds the only sources
that can get anything but a denial through the graph's selector indexes, instead of trying
every pod. Outside the cluster, :mod:`external_regions` stands one address for each piece
of the address space every ipBlock answers alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from netsight.analyzers.core import deadline
from netsight.analyzers.policy import istio_authz, linkerd_authz, netpol
from netsight.analyzers.policy.endpoints import Endpoint, live
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.peer_groups import Group, Labels, peer_endpoint
from netsight.analyzers.policy.peers import IPBlock, ports_match
from netsight.analyzers.policy.verdict import Direction, DirectionVerdict, Tri, Verdict
from netsight.graph.model.kinds import WORKLOAD_KINDS, Kind
from netsight.graph.model.records import NetworkPolicyRecord, PodRecord, Record
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView, Source


def narrowed_sources(engine: PolicyEngine, fixed: list[tuple[Group, int | None]],
                     protocol: str) -> tuple[list[Endpoint], int] | None:
    """The sources whose verdict towards the fixed end is not False for certain, found
    through the selector indexes instead of trying every pod; with the number of all
    sources. None when that cannot be told from the fixed end's ingress alone.

    A source is left out only when, at every fixed pod, no admin-tier rule's peers match it
    and the NetworkPolicies isolating the pod for ingress have selector peers that do not
    match it: the NetworkPolicy tier then denies it, so the flow is False (egress aside).
    Everything that could make that answer unknown widens the set: namespaces whose labels
    are unknown, namespaces with policy kinds netsight does not evaluate, host-network
    pods (undefined for NetworkPolicy). ipBlock peers, rules without peers, a fixed pod
    that no NetworkPolicy isolates, or anything unreadable: None (ask every pod)."""
    view, ns = engine.view, engine.namespaces
    if engine.unreadable() or engine.mixed_versions() or engine.cilium_present() \
            or engine.calico_present():
        return None  # (CNI rules can admit sources the NetworkPolicies do not name)
    peers: list[tuple[LabelSelector | None, LabelSelector | None, str]] = []
    for target, port in fixed:
        d = target.rep
        if d.external or d.host_network or d.namespace is None or port is None:
            return None
        admins, _ = engine.admin_policies_for(d.namespace)
        for policy in admins:
            if not policy.ingress:
                continue
            applies = policy.applies_to(d, ns)
            if applies is False:
                continue
            if applies is None or policy.subject_problem is not None:
                return None
            for admin_rule in policy.ingress:
                if admin_rule.problem is not None:
                    return None
                ports = ports_match(admin_rule.ports, port, protocol, d)
                if ports is None:
                    return None
                if ports is False:
                    continue
                for admin_peer in admin_rule.peers:
                    if admin_peer.networks or admin_peer.nodes is not None \
                            or admin_peer.namespaces is None:
                        return None
                    peers.append((admin_peer.namespaces, admin_peer.pods, ""))
        isolating = [p for p in engine.network_policies(d) if Direction.INGRESS in p.types]
        if not isolating:
            return None
        for netpolicy in isolating:
            for np_rule in netpolicy.ingress:
                if np_rule.problem is not None:
                    return None
                ports = ports_match(np_rule.ports, port, protocol, d)
                if ports is None or (ports and np_rule.peers is None):
                    return None
                if ports is False or np_rule.peers is None:
                    continue
                for np_peer in np_rule.peers:
                    if np_peer.ip_block is not None:
                        return None
                    peers.append((np_peer.namespaces, np_peer.pods,
                                  netpolicy.record.namespace))
    alone = fixed[0][0].rep.key if len(fixed) == 1 and len(fixed[0][0].members) == 1 \
        else None
    chosen: dict[str, Endpoint] = {}

    def take(record: Record) -> None:
        if record.key not in chosen:
            endpoint = peer_endpoint(view, record, alone)
            if endpoint is not None:
                chosen[record.key] = endpoint

    namespaces = sorted(view.namespaces())
    targets = [g.rep for g, _ in fixed]
    for namespace in namespaces:
        probe = Endpoint("", namespace)
        if any(engine.unevaluated(probe, d)[0] for d in targets):
            peers.append((None, None, namespace))  # every pod of it
    seen: set[tuple[LabelSelector | None, LabelSelector | None, str]] = set()
    for namespaces_sel, pods_sel, home in peers:
        if (namespaces_sel, pods_sel, home) in seen:
            continue
        seen.add((namespaces_sel, pods_sel, home))
        spaces = [home] if namespaces_sel is None else \
            [n for n in namespaces if ns.matches(namespaces_sel, n) is not False]
        for namespace in spaces:
            if pods_sel is None:
                for kind in (Kind.POD, *sorted(WORKLOAD_KINDS)):
                    for record in view.for_each(kind, namespace):
                        take(record)
            else:
                for record in view.matching(namespace, pods_sel):
                    take(record)
    total = 0
    for record in view.for_each(Kind.POD):  # host-network pods, and how many there are
        if isinstance(record, PodRecord) and live(record) and record.key != alone:
            total += 1
            if record.host_network:
                take(record)
    if view.source is Source.MANIFESTS:
        total += sum(1 for kind in WORKLOAD_KINDS for record in view.for_each(kind)
                     if peer_endpoint(view, record, alone) is not None)
    return list(chosen.values()), total


def policy_blocks(engine: PolicyEngine, subjects: Iterable[Endpoint] | None = None,
                  direction: Direction | None = None) -> tuple[IPBlock, ...]:
    """Every distinct CIDR matcher of the admin policies, and of the NetworkPolicies: all
    visible ones, or only the ``direction`` rules of those isolating ``subjects`` (the only
    ones that compare the other end's IPs when the subjects are that direction's end)."""
    found: dict[IPBlock, None] = {}
    models: list[netpol.NetPol] = []
    if subjects is None:
        for record in engine.view.for_each(Kind.NETWORK_POLICY):
            if isinstance(record, NetworkPolicyRecord):
                models.append(engine.network_policy(record))
    else:
        for subject in subjects:
            models.extend(engine.network_policies(subject))
    for model in models:
        rules = (*model.ingress, *model.egress) if direction is None else \
            model.rules(direction)
        for rule in rules:
            for peer in rule.peers or ():
                if peer.ip_block is not None:
                    found[peer.ip_block] = None
    found.update(dict.fromkeys(engine.tiers.networks()))
    if subjects is None or direction is Direction.INGRESS:
        # Istio compares the source's address at the destination.
        found.update(dict.fromkeys(istio_authz.cidrs(engine.view)))
        found.update(dict.fromkeys(linkerd_authz.cidrs(engine.view)))
    found.update(dict.fromkeys(engine.cilium_blocks()))
    found.update(dict.fromkeys(engine.calico_blocks()))
    return tuple(found)


def unwatched_peers(view: GraphView) -> str | None:
    """Why the peers listed are not all there are, from a cluster watched in part."""
    watched = view.watched_namespaces
    if watched is None:
        return None
    return (f"peers in namespaces netsight does not watch are not listed (it watches only "
            f"{', '.join(watched)})")


def flow(engine: PolicyEngine, source: Endpoint, destination: Endpoint, port: int,
         protocol: str, first: Direction) -> Verdict:
    """``engine.evaluate``, except that when the ``first`` direction denies outright (and no
    unevaluated policy kind could change that) the other is not evaluated: the verdict is
    False either way. Peers of a fixed end are asked about in bulk, and most are denied."""
    def at(direction: Direction) -> DirectionVerdict:
        if direction is Direction.EGRESS:
            return engine.direction(direction, source, destination, destination, port,
                                    protocol)
        return engine.direction(direction, destination, source, destination, port, protocol)

    undecided, restricting = engine.unevaluated(source, destination)
    undecided += engine.unreadable()
    decided = at(first)
    if decided.allowed is False and not undecided:
        skipped = Direction.INGRESS if first is Direction.EGRESS else Direction.EGRESS
        other = DirectionVerdict(skipped, destination.name if first is Direction.EGRESS
                                 else source.name, None, ())
    else:
        other = at(Direction.INGRESS if first is Direction.EGRESS else Direction.EGRESS)
    egress, ingress = (decided, other) if first is Direction.EGRESS else (other, decided)
    return Verdict(source.name, destination.name, port, protocol, egress, ingress,
                   undecided, restricting)


@dataclass
class Tally:
    """Verdicts of one peer group against every pod of the fixed end."""

    allowed: int = 0
    denied: int = 0
    unknown: int = 0
    reasons: dict[str, None] = field(default_factory=dict)
    ports: dict[str, Tri] = field(default_factory=dict)  # without a port: per port checked

    @property
    def verdict(self) -> Tri:
        return False if self.denied else None if self.unknown else True

    def add(self, verdict: Verdict, count: int) -> None:
        allowed = verdict.allowed
        if allowed is True:
            self.allowed += count
        elif allowed is False:
            self.denied += count
        else:
            self.unknown += count
            self.reasons.update(dict.fromkeys(verdict.reasons()))


def tally(peers: list[Group], fixed: list[tuple[Group, int | None]],
          evaluate: Callable[[Group, int | None, Endpoint], Verdict | None]
          ) -> list[tuple[Group, Tally]]:
    """Each peer group against each fixed group (pods of the fixed group counted)."""
    found = []
    fixed_keys = [(f, f.keys()) for f, _ in fixed]
    every = set().union(*(keys for _, keys in fixed_keys))
    # A peer that is also a pod of the fixed end has one pod fewer to reach: alone in its
    # group, so that each group's counts hold for each of its pods.
    apart: list[Group] = []
    for peer in peers:
        if len(peer.members) > 1 and any(m.key in every for m in peer.members):
            rest = [m for m in peer.members if m.key not in every]
            why = peer.split or "pods of the fixed end itself (one pod fewer to reach)"
            apart += [Group(peer.namespace, peer.labels, peer.facts, [m], why)
                      for m in peer.members if m.key in every]
            if rest:
                apart.append(Group(peer.namespace, peer.labels, peer.facts, rest, why))
        else:
            apart.append(peer)
    for peer in deadline.checked(apart):  # who/what_can_reach's long loop: TOOL_TIMEOUT
        result = Tally()
        for (target, port), (_, keys) in zip(fixed, fixed_keys, strict=True):
            count = len(target.members)
            if len(peer.members) == 1 and peer.rep.key in keys:
                count -= 1  # a pod and itself: not a policy question
                if count == 0:
                    continue
            verdict = evaluate(target, port, peer.rep)
            if verdict is not None:
                result.add(verdict, count)
        if result.allowed or result.denied or result.unknown:
            found.append((peer, result))
    return merge(found)


def merge(found: list[tuple[Group, Tally]]) -> list[tuple[Group, Tally]]:
    """Parts of one identity that got the same answer are shown as one again: an identity
    stays split only where the per-pod facts changed a verdict."""
    parts: dict[tuple[str, Labels], list[tuple[Group, Tally]]] = {}
    for peer, tallied in found:
        parts.setdefault((peer.namespace, peer.labels), []).append((peer, tallied))
    merged: list[tuple[Group, Tally]] = []
    for same in parts.values():
        by_answer: dict[tuple[object, ...], tuple[Group, Tally]] = {}
        for peer, tallied in same:
            answer = (tallied.allowed, tallied.denied, tallied.unknown,
                      tuple(tallied.reasons), tuple(sorted(tallied.ports.items())))
            kept = by_answer.get(answer)
            if kept is None:
                by_answer[answer] = (Group(peer.namespace, peer.labels, peer.facts,
                                           list(peer.members), peer.split), tallied)
            else:
                kept[0].members.extend(peer.members)
        for peer, tallied in by_answer.values():
            if len(by_answer) == 1:
                peer.split = None
            peer.members.sort(key=lambda e: e.name)
            merged.append((peer, tallied))
    merged.sort(key=lambda found: (found[0].namespace, found[0].labels, found[0].rep.name))
    return merged
