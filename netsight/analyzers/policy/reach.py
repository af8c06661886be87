"""Reach: every peer of one end, grouped by identity, and whether traffic flows between them.

``who_can_reach`` fixes the destination and asks about every source; ``what_can_reach`` fixes
the source and asks about every destination. Peers are evaluated per *identity* (namespace +
label set): policies select pods by labels, so pods sharing both share the verdict. Three
per-pod facts can still tell them apart, and an identity is split on them, never guessed:

- the pod's IPs, against every ipBlock / ``networks`` CIDR a policy names (the split key is
  which of those blocks the IPs fall in, not the IPs themselves);
- host networking (and then the node, for ANP ``nodes`` peers);
- the pod's container ports, where the peer is the destination (named ports resolve there);
- with Istio policies present, what the mesh reads: the service account (the principal), the
  sidecar container and the annotations that opt a pod in or out of the mesh or its ports.

One representative pair per (peer group, fixed group) is evaluated with
:class:`engine.PolicyEngine`, so the answer is exactly the per-pod one; parts of a split
identity that got the same answer are shown as one again. The direction at the fixed end is
evaluated first and, when it denies outright, the other is skipped. When the fixed end's
ingress decides by selectors alone, :func:`narrowed_sources` finds the only sources that can
get anything but a denial through the graph's selector indexes, instead of trying every pod.
Outside the cluster, the address space is cut at every CIDR boundary a policy names; inside
one piece every ipBlock answers alike, so one address stands for it, and the pieces with
the same answer are written back as a CIDR with ``except``.
"""

from __future__ import annotations

import ipaddress
import itertools
import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import Field

from netsight.analyzers.core import deadline
from netsight.analyzers.core.contracts import Model
from netsight.analyzers.policy import istio_authz, istio_mesh, netpol
from netsight.analyzers.policy.endpoints import Endpoint, external, from_pod, live
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.peers import IPBlock, Network, ports_match
from netsight.analyzers.policy.results import DetailAware
from netsight.analyzers.policy.verdict import Direction, DirectionVerdict, Tri, Verdict
from netsight.graph.model.kinds import WORKLOAD_KINDS, Kind
from netsight.graph.model.records import NetworkPolicyRecord, PodRecord, Record, WorkloadRecord
from netsight.graph.model.selectors import LabelSelector, selector_from_map
from netsight.graph.store.live import GraphView, Source

Labels = tuple[tuple[str, str], ...]
Facts = tuple[object, ...]


def cluster_endpoints(view: GraphView, fixed: tuple[Endpoint, ...] = ()
                      ) -> Iterator[Endpoint]:
    """Every live pod; in manifests also each workload without pods, standing for them.
    When the fixed end is one pod, it is left out (a pod and itself: not a policy
    question); of several, each stays a peer of the others."""
    alone = fixed[0].key if len(fixed) == 1 else None
    for record in view.for_each(Kind.POD):
        if isinstance(record, PodRecord) and live(record) and record.key != alone:
            yield from_pod(record)
    if view.source is not Source.MANIFESTS:
        return
    for kind in sorted(WORKLOAD_KINDS):
        for workload in view.for_each(kind):
            if not isinstance(workload, WorkloadRecord):
                continue
            selector = workload.selector or selector_from_map(workload.pod_labels)
            if workload.key != alone and not any(
                    isinstance(r, PodRecord)
                    for r in view.matching(workload.namespace, selector)):
                yield from_pod(workload)


def _peer_endpoint(view: GraphView, record: Record, alone: str | None) -> Endpoint | None:
    """The endpoint a pod-like record stands for as a peer, as cluster_endpoints has it."""
    if record.key == alone:
        return None
    if isinstance(record, PodRecord):
        return from_pod(record) if live(record) else None
    if not isinstance(record, WorkloadRecord) or view.source is not Source.MANIFESTS:
        return None
    selector = record.selector or selector_from_map(record.pod_labels)
    if any(isinstance(r, PodRecord) for r in view.matching(record.namespace, selector)):
        return None
    return from_pod(record)


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
            endpoint = _peer_endpoint(view, record, alone)
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
                     if _peer_endpoint(view, record, alone) is not None)
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
    found.update(dict.fromkeys(engine.cilium_blocks()))
    found.update(dict.fromkeys(engine.calico_blocks()))
    return tuple(found)


# A block as integers: (version, first, last, excepts as (version, first, last)).
Compiled = tuple[int, int, int, tuple[tuple[int, int, int], ...]]


def compile_blocks(blocks: tuple[IPBlock, ...]) -> tuple[Compiled, ...]:
    def span(net: Network) -> tuple[int, int, int]:
        return net.version, int(net.network_address), int(net.broadcast_address)
    return tuple((*span(b.cidr), tuple(span(e) for e in b.excepts)) for b in blocks)


def _address(text: str) -> tuple[int, int] | None:
    """(version, value) of an IP; None if it does not parse (IPBlock.matches then raises
    too, so such a pod never gets here from a graph that holds it)."""
    try:
        return 4, int.from_bytes(socket.inet_pton(socket.AF_INET, text), "big")
    except OSError:
        pass
    try:
        return 6, int(ipaddress.IPv6Address(text))
    except ValueError:
        return None


def ip_facts(ips: tuple[str, ...], blocks: tuple[Compiled, ...]) -> tuple[Tri, ...]:
    """``tuple(b.matches(endpoint) for b in blocks)``, the IPs parsed once."""
    if not ips:
        return (None,) * len(blocks)
    parsed = [a for a in map(_address, ips) if a is not None]
    answers: list[Tri] = []
    for version, first, last, excepts in blocks:
        found = {version == v and first <= value <= last and not any(
            v == ev and ef <= value <= el for ev, ef, el in excepts)
            for v, value in parsed}
        answers.append(found.pop() if len(found) == 1 else None)
    return tuple(answers)


def facts(endpoint: Endpoint, blocks: tuple[Compiled, ...], with_ports: bool,
          mesh: bool = False) -> Facts:
    """What besides namespace and labels the verdict can depend on."""
    return (endpoint.host_network, endpoint.node if endpoint.host_network else None,
            ip_facts(endpoint.ips, blocks) if blocks else (),
            tuple(sorted(endpoint.ports, key=_port_key)) if with_ports else (),
            endpoint.service_account,  # Istio's principal; Cilium and Calico select on it
            istio_mesh.identity_facts(endpoint)[1:] if mesh else ())


def _port_key(port: object) -> tuple[int, str, str]:
    return (getattr(port, "port", 0), getattr(port, "protocol", ""), getattr(port, "name", "")
            or "")


@dataclass
class Group:
    """Pods of one identity that also share every per-pod fact the verdict can depend on."""

    namespace: str
    labels: Labels
    facts: Facts
    members: list[Endpoint] = field(default_factory=list)
    split: str | None = None  # why this identity was split: the facts that differ

    @property
    def rep(self) -> Endpoint:
        return self.members[0]

    def keys(self) -> set[str | None]:
        return {m.key for m in self.members}


_FACT_NAMES = ("host network", "node", "pod IPs against policy CIDRs", "container ports",
               "service account", "mesh membership")


def group(endpoints: Iterable[Endpoint], blocks: tuple[IPBlock, ...], with_ports: bool,
          mesh: bool = False) -> list[Group]:
    """Endpoints grouped by (namespace, labels, facts), sorted; split identities say why."""
    groups: dict[tuple[str, Labels, Facts], Group] = {}
    label_keys: dict[int, Labels] = {}
    compiled = compile_blocks(blocks)
    for endpoint in endpoints:
        assert endpoint.namespace is not None
        labels = label_keys.get(id(endpoint.labels))
        if labels is None:
            labels = label_keys[id(endpoint.labels)] = tuple(sorted(endpoint.labels.items()))
        shown = facts(endpoint, compiled, with_ports, mesh)
        key = (endpoint.namespace, labels, shown)
        found = groups.get(key)
        if found is None:
            found = groups[key] = Group(endpoint.namespace, labels, shown)
        found.members.append(endpoint)
    by_identity: dict[tuple[str, Labels], list[Group]] = {}
    for g in groups.values():
        by_identity.setdefault((g.namespace, g.labels), []).append(g)
    for parts in by_identity.values():
        if len(parts) > 1:
            differ = [name for i, name in enumerate(_FACT_NAMES)
                      if len({p.facts[i] for p in parts}) > 1]
            for part in parts:
                part.split = ", ".join(differ)
    for g in groups.values():
        g.members.sort(key=lambda e: e.name)
    return sorted(groups.values(), key=lambda g: (g.namespace, g.labels, g.rep.name))


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


# --- outside the cluster --------------------------------------------------------------------


@dataclass
class Region:
    """Addresses of one family with the same answer: sorted, disjoint [first, last] pieces."""

    version: int
    pieces: list[tuple[int, int]]
    tally: Tally


def external_regions(blocks: tuple[IPBlock, ...],
                     evaluate: Callable[[Endpoint], Iterable[tuple[Verdict, int]]]
                     ) -> list[Region]:
    """The address space cut at every CIDR boundary the blocks name; each piece evaluated
    once (one address stands for it: every block contains all of a piece or none of it),
    pieces with the same answer gathered into one region."""
    regions: list[Region] = []
    for version, bits in ((4, 32), (6, 128)):
        points = {0, 2 ** bits}
        for block in blocks:
            for net in (block.cidr, *block.excepts):
                if net.version == version:
                    points.add(int(net.network_address))
                    points.add(int(net.broadcast_address) + 1)
        edges = sorted(points)
        by_answer: dict[tuple[int, int, int], Region] = {}
        for start, stop in itertools.pairwise(edges):
            address = str(ipaddress.IPv4Address(start) if version == 4
                          else ipaddress.IPv6Address(start))
            result = Tally()
            for verdict, count in evaluate(external(address)):
                result.add(verdict, count)
            answer = (result.allowed, result.denied, result.unknown)
            region = by_answer.get(answer)
            if region is None:
                region = by_answer[answer] = Region(version, [], result)
                regions.append(region)
            else:
                region.tally.reasons.update(result.reasons)
            if region.pieces and region.pieces[-1][1] + 1 == start:
                region.pieces[-1] = (region.pieces[-1][0], stop - 1)
            else:
                region.pieces.append((start, stop - 1))
    return regions


def describe_region(region: Region, blocks: tuple[IPBlock, ...]) -> tuple[str, list[str]]:
    """(CIDR, except CIDRs), the way ipBlocks are written: the smallest network a policy
    names (or the whole family) that holds the region, and the addresses in it that are
    not part of the region."""
    make: Callable[[int], ipaddress.IPv4Address | ipaddress.IPv6Address] = \
        ipaddress.IPv4Address if region.version == 4 else ipaddress.IPv6Address
    first, last = region.pieces[0][0], region.pieces[-1][1]
    whole: Network = ipaddress.ip_network("0.0.0.0/0" if region.version == 4 else "::/0")
    exact = list(ipaddress.summarize_address_range(make(first), make(last)))
    candidates: list[Network] = [whole, *(n for b in blocks for n in (b.cidr, *b.excepts)
                           if n.version == region.version)]
    if len(exact) == 1:
        candidates.append(ipaddress.ip_network(str(exact[0])))
    cover = min((n for n in candidates
                 if int(n.network_address) <= first and int(n.broadcast_address) >= last),
                key=lambda n: n.num_addresses)
    gaps: list[tuple[int, int]] = []
    position = int(cover.network_address)
    for start, stop in region.pieces:
        if start > position:
            gaps.append((position, start - 1))
        position = stop + 1
    if position <= int(cover.broadcast_address):
        gaps.append((position, int(cover.broadcast_address)))
    excepts = [str(n) for start, stop in gaps
               for n in ipaddress.summarize_address_range(make(start), make(stop))]
    return str(cover), excepts


def within(address: str, cidr: str, excepts: Iterable[str]) -> bool:
    """Whether ``address`` is in ``cidr`` and none of ``excepts`` (for tests and clients)."""
    ip = ipaddress.ip_address(address)
    net = ipaddress.ip_network(cidr)
    return ip.version == net.version and ip in net and not any(
        ip.version == e.version and ip in e for e in map(ipaddress.ip_network, excepts))


# --- the wire form ---------------------------------------------------------------------------

MEMBERS_SHOWN = 50


class PodCounts(Model):
    allowed: int
    denied: int
    unknown: int


class PeerOut(DetailAware):
    namespace: str | None = Field(default=None, description="Null outside the cluster")
    labels: dict[str, str] | None = Field(default=None, description="The identity's labels")
    cidr: str | None = Field(default=None, description="Outside the cluster: the addresses")
    except_: list[str] | None = Field(default=None, alias="except",
                                      description="Addresses inside cidr that are not meant")
    pods: int | None = Field(default=None, description="Pods of this identity (or group)")
    allowed: bool | None = Field(description="true: on every pod pair; false: only some "
                                 "pairs (see counts); null: cannot be decided (see reasons)")
    ports: list[str] | None = Field(default=None, description="Without a port in the "
                                    "query: the destination's declared ports traffic flows to")
    unknown_ports: list[str] | None = Field(default=None, description="Without a port: the "
                                            "declared ports whose verdict is undecided")
    counts: PodCounts | None = Field(default=None, description="When the fixed end has "
                                     "several pods: how many of them each outcome covers")
    split: str | None = Field(default=None, description="Set when this identity's pods were "
                              "evaluated apart: the per-pod facts that differ (pod IPs "
                              "against policy CIDRs, host network, container ports); members "
                              "lists the pods of this part")
    members: list[str] | None = Field(default=None, description=f"Pods of the group (first "
                                      f"{MEMBERS_SHOWN}); always when split, else detail "
                                      "mode only")
    reasons: list[str] | None = Field(default=None, description="Why allowed is null")


class Summary(Model):
    identities: int = Field(description="In-cluster peer groups listed (identities; a split "
                            "one counts per part)")
    allowed_pods: int = Field(description="Peer pods allowed with every pod of the fixed end")
    partial_pods: int = Field(description="Peer pods allowed with some pods of the fixed end "
                              "only")
    unknown_pods: int = Field(description="Peer pods whose verdict cannot be decided")
    denied_pods: int = Field(description="Peer pods denied (not listed)")


def summarize(found: list[tuple[Group, Tally]]) -> Summary:
    counts = {"allowed": 0, "partial": 0, "unknown": 0, "denied": 0}
    for peer, tallied in found:
        verdict = tallied.verdict
        outcome = "allowed" if verdict is True else "unknown" if verdict is None else \
            "partial" if tallied.allowed or tallied.unknown else "denied"
        counts[outcome] += len(peer.members)
    return Summary(identities=sum(1 for _, t in found if t.allowed or t.unknown),
                   allowed_pods=counts["allowed"], partial_pods=counts["partial"],
                   unknown_pods=counts["unknown"], denied_pods=counts["denied"])


def fixed_groups(targets: Iterable[tuple[Endpoint, int | None]], blocks: tuple[IPBlock, ...],
                 mesh: bool = False) -> list[tuple[Group, int | None]]:
    """The fixed end's pods grouped like peers, per port (its IPs and ports matter too)."""
    found: list[tuple[Group, int | None]] = []
    by_port: dict[int | None, list[Endpoint]] = {}
    for endpoint, port in targets:
        if endpoint.external:
            found.append((Group("", (), (), [endpoint]), port))
        else:
            by_port.setdefault(port, []).append(endpoint)
    return found + [(g, port) for port, endpoints in by_port.items()
                    for g in group(endpoints, blocks, True, mesh)]


def peer_out(peer: Group, tallied: Tally, *, several: bool, detail: bool) -> PeerOut:
    members = [m.name for m in peer.members[:MEMBERS_SHOWN]] \
        if peer.split is not None or detail else None
    return PeerOut(namespace=peer.namespace, labels=dict(peer.labels), pods=len(peer.members),
                   allowed=tallied.verdict,
                   counts=PodCounts(allowed=tallied.allowed, denied=tallied.denied,
                                    unknown=tallied.unknown) if several else None,
                   split=peer.split, members=members,
                   reasons=list(tallied.reasons)[:10] or None)


def region_out(region: Region, blocks: tuple[IPBlock, ...], *, several: bool) -> PeerOut:
    cidr, excepts = describe_region(region, blocks)
    tallied = region.tally
    return PeerOut.model_validate({
        "cidr": cidr, "except": excepts or None, "allowed": tallied.verdict,
        "counts": PodCounts(allowed=tallied.allowed, denied=tallied.denied,
                            unknown=tallied.unknown) if several else None,
        "reasons": list(tallied.reasons)[:10] or None})
