"""The cluster's identities as bit positions, so that a policy peer becomes a set of them.

Set evaluation (``classes.py``) asks "which identities does this peer match?" once per
peer instead of once per flow. An identity here is the graph's (namespace + label map),
numbered; a set of identities is a Python ``int`` used as a bitset (``&``, ``|`` and
``~`` over every identity at once, in C). Each answer is a pair of bitsets
``(true, unknown)``; everything else is False, as in the three-valued matchers.

Only identities whose pods are interchangeable for a policy get a bit: live pods on the pod
network. An identity with a host-network pod, or (in manifests) a workload standing for its
pods, is left to the per-pod path whole (``exact``): the matchers treat those ends apart.
Per-pod facts that still differ inside an identity (IPs against a CIDR, container ports for
a named port) are answered per identity as True when every pod says True, False when every
pod says False, and unknown otherwise, which sends the identity to the per-pod path.

A universe is built from the graph in one pass over the pod-likes and kept while no
pod-like or Namespace changes (``key``); what is derived from policies is cached beside it.
"""

from __future__ import annotations

import bisect
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from netsight.analyzers.policy.endpoints import Endpoint, live
from netsight.analyzers.policy.peer_groups import parse_address, peer_endpoint
from netsight.analyzers.policy.peers import IPBlock, Namespaces, PortMatch, ports_match
from netsight.analyzers.policy.verdict import Tri
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel
from netsight.graph.model.records import ContainerPort, PodRecord
from netsight.graph.model.selectors import LabelSelector, Operator
from netsight.graph.store.live import GraphView, Source

Labels = tuple[tuple[str, str], ...]
Bits = int
Sets = tuple[Bits, Bits]  # (true, unknown); the rest: false
Address = tuple[int, int]  # (IP version, value)


def members(bits: Bits) -> Iterator[int]:
    """The positions set in ``bits``, lowest first."""
    # One pass over the binary digits: stepping bit by bit (bits & -bits) would copy the
    # whole integer at every step.
    digits = bin(bits)[:1:-1]
    at = digits.find("1")
    while at >= 0:
        yield at
        at = digits.find("1", at + 1)


# Named-port answers kept per universe: each is keyed by the port and protocol a caller
# asks about, and holds a bit per identity, so a caller stepping through every port would
# otherwise keep them all until a pod changes.
NAMED_KEPT = 1024


@dataclass(eq=False)
class Universe:
    key: tuple[object, ...]
    namespaces: list[str] = field(default_factory=list)
    labels: list[Mapping[str, str]] = field(default_factory=list)
    label_keys: list[Labels] = field(default_factory=list)
    keys: list[list[str]] = field(default_factory=list)  # member keys, sorted
    # distinct per-pod facts of the members: IP tuples (parsed) and container-port tuples
    # Pods with exactly one IP, by family: (value, identity) sorted, so that a CIDR finds
    # its pods by bisection; the pods of each identity counted. Other pods (no IP, several,
    # unparsable) are kept per identity and checked one by one.
    single: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    single_count: list[int] = field(default_factory=list)
    irregular: dict[int, list[tuple[Address | None, ...]]] = field(default_factory=dict)
    ports: list[dict[int, tuple[ContainerPort, ...]]] = field(default_factory=list)
    selected: list[Mapping[str, Rel]] = field(default_factory=list)  # graph's selected_by
    index: dict[tuple[str, int], int] = field(default_factory=dict)  # (ns, id(labels))
    ns_bits: dict[str, Bits] = field(default_factory=dict)
    all: Bits = 0
    pods: int = 0  # member pods of all identities with a bit
    exact: list[str] = field(default_factory=list)  # pod-likes for the per-pod path
    # Derived, kept with the universe: peer selections, CIDR and named-port answers.
    selections: dict[tuple[object, ...], Sets] = field(default_factory=dict)
    # Label index over the identities (built on first use): (key, value) -> identities,
    # key -> identities having it; and pod selectors answered from it.
    by_label: dict[tuple[str, str], Bits] = field(default_factory=dict)
    by_key: dict[str, Bits] = field(default_factory=dict)
    pod_selections: dict[LabelSelector, Bits] = field(default_factory=dict)
    blocks: dict[IPBlock, Sets] = field(default_factory=dict)
    named: dict[tuple[object, ...], Sets] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict)  # more of the same, by name

    def __len__(self) -> int:
        return len(self.namespaces)

    def pod_count(self, bits: Bits) -> int:
        return sum(len(self.keys[i]) for i in members(bits))

    # --- peers as sets ------------------------------------------------------------------

    def selection(self, view: GraphView, ns: Namespaces, namespaces: LabelSelector | None,
                  pods: LabelSelector | None, home: str | None) -> Sets:
        """Identities matching a selector peer: ``namespaces`` None means ``home`` only (a
        NetworkPolicy peer without namespaceSelector), ``pods`` None every pod there.
        A namespace whose labels are unknown gives unknown for the pods that match."""
        cache_key = (namespaces, pods, home)
        found = self.selections.get(cache_key)
        if found is not None:
            return found
        true = unknown = 0
        if namespaces is None:
            true = self.ns_bits.get(home or "", 0) if home is not None else 0
        else:
            for namespace, bits in self.ns_bits.items():
                inside = ns.matches(namespaces, namespace)
                if inside:
                    true |= bits
                elif inside is None:
                    unknown |= bits
        if pods is not None:
            chosen = self.pod_bits(pods)
            true &= chosen
            unknown &= chosen
        found = self.selections[cache_key] = (true, unknown)
        return found

    def pod_bits(self, selector: LabelSelector) -> Bits:
        """The identities whose labels ``selector`` matches, from a label index over them
        (not a selector test per identity of every namespace, for a peer that names any
        namespace)."""
        found = self.pod_selections.get(selector)
        if found is not None:
            return found
        if not self.by_label:
            for position, labels in enumerate(self.labels):
                bit = 1 << position
                for pair in labels.items():
                    self.by_label[pair] = self.by_label.get(pair, 0) | bit
                    self.by_key[pair[0]] = self.by_key.get(pair[0], 0) | bit
        bits = self.all
        for pair in selector.match_labels:
            bits &= self.by_label.get(pair, 0)
        for requirement in selector.requirements:
            key = requirement.key
            if requirement.operator in (Operator.IN, Operator.NOT_IN):
                having = 0
                for value in requirement.values:
                    having |= self.by_label.get((key, value), 0)
                # NotIn matches identities without the key too (apimachinery semantics).
                bits &= having if requirement.operator is Operator.IN else ~having
            elif requirement.operator is Operator.EXISTS:
                bits &= self.by_key.get(key, 0)
            else:
                bits &= ~self.by_key.get(key, 0)
        found = self.pod_selections[selector] = bits
        return found

    def block(self, block: IPBlock) -> Sets:
        """Identities whose every pod's IPs fall in ``block`` (true), none of them (false);
        mixed, unknown IPs or both families disagreeing: unknown."""
        found = self.blocks.get(block)
        if found is not None:
            return found
        version = block.cidr.version
        first, last = int(block.cidr.network_address), int(block.cidr.broadcast_address)
        excepts = sorted((int(e.network_address), int(e.broadcast_address))
                         for e in block.excepts if e.version == version)

        def inside(address: Address) -> bool:
            v, value = address
            return v == version and first <= value <= last and not any(
                ef <= value <= el for ef, el in excepts)

        # The address ranges of the block minus its excepts, and the pods in them.
        ranges, start = [], first
        for ef, el in excepts:
            if ef > start:
                ranges.append((start, min(ef - 1, last)))
            start = max(start, el + 1)
        if start <= last:
            ranges.append((start, last))
        # The pods in each range counted per identity in C (Counter over a slice), not
        # stepped one by one: a CIDR may hold every pod IP.
        counted: Counter[int] = Counter()
        pods = self.single.get(version, [])
        for low, high in ranges:
            first = bisect.bisect_left(pods, (low, -1))
            after = bisect.bisect_right(pods, (high, sys.maxsize), lo=first)
            counted.update(map(itemgetter(1), pods[first:after]))
        true = unknown = 0
        single_count = self.single_count
        for owner, count in counted.items():
            if count == single_count[owner]:
                true |= 1 << owner
            else:
                unknown |= 1 << owner
        for owner, pod_ips in self.irregular.items():
            answers: set[Tri] = set()
            if single_count[owner]:  # its pods of one IP: all inside, none, or some
                inside_count = counted.get(owner, 0)
                answers.add(True if inside_count == single_count[owner] else
                            False if inside_count == 0 else None)
            for ips in pod_ips:
                if not ips or None in ips:
                    answers.add(None)
                    break
                per_pod = {inside(a) for a in ips if a is not None}
                answers.add(per_pod.pop() if len(per_pod) == 1 else None)
            bit = 1 << owner
            true &= ~bit
            unknown &= ~bit
            if answers == {True}:
                true |= bit
            elif answers != {False}:
                unknown |= bit
        found = self.blocks[block] = (true, unknown)
        return found

    def port_match(self, ports: tuple[PortMatch, ...] | None, port: int, protocol: str
                   ) -> Sets:
        """``ports_match`` with each identity as the destination (named ports resolve on
        its pods' container ports)."""
        if ports is None or not any(p.name is not None for p in ports):
            answer = ports_match(ports, port, protocol, Endpoint(""))
            return (self.all, 0) if answer else (0, self.all) if answer is None else (0, 0)
        cache_key = (ports, port, protocol)
        found = self.named.get(cache_key)
        if found is not None:
            return found
        true = unknown = 0
        for position, variants in enumerate(self.ports):
            answers = {ports_match(ports, port, protocol, Endpoint("", ports=p))
                       for p in variants.values()}
            if answers == {True}:
                true |= 1 << position
            elif answers != {False}:
                unknown |= 1 << position
        if len(self.named) >= NAMED_KEPT:
            self.named.clear()  # what is still asked for is answered again
        found = self.named[cache_key] = (true, unknown)
        return found


def universe_key(view: GraphView) -> tuple[object, ...]:
    return (view.source, view.kind_generation(Kind.NAMESPACE),
            *(view.kind_generation(k) for k in sorted(POD_LIKE_KINDS)))


def universe(view: GraphView) -> Universe:
    """The universe of ``view``, rebuilt only when a pod-like or a Namespace changed."""
    key = universe_key(view)
    derived = view.kept()
    found = derived.get("policy.universe")
    if not isinstance(found, Universe) or found.key != key:
        found = derived["policy.universe"] = build(view, key)
    return found


def build(view: GraphView, key: tuple[object, ...]) -> Universe:
    found = Universe(key)
    manifests = view.source is Source.MANIFESTS
    # Graph identities with equal labels (two maps of one content) are one identity here,
    # as everywhere a user sees identities; any member needing the per-pod path sends the
    # whole of it there.
    gathered: dict[tuple[str, Labels], list[tuple[Mapping[str, str], list[PodRecord],
                                                  Mapping[str, Rel]]]] = {}
    exact: set[tuple[str, Labels]] = set()
    exact_keys: dict[tuple[str, Labels], list[str]] = {}
    for namespace, labels, keys, selected in view.identities():
        content = (namespace, tuple(sorted(labels.items())))
        pods: list[PodRecord] = []
        for member in keys:
            record = view.get(member)
            if isinstance(record, PodRecord):
                if not live(record):
                    continue
                if record.host_network:
                    exact.add(content)
                pods.append(record)
            elif record is not None and manifests and \
                    peer_endpoint(view, record, None) is not None:
                exact.add(content)
                exact_keys.setdefault(content, []).append(member)
        gathered.setdefault(content, []).append((labels, pods, selected))
    for content in sorted(gathered):
        parts = gathered[content]
        if content in exact:
            found.exact.extend(p.key for _, pods, _ in parts for p in pods)
            found.exact.extend(exact_keys.get(content, ()))
            continue
        pods = [p for _, part, _ in parts for p in part]
        if not pods:
            continue
        position = len(found.namespaces)
        namespace, label_key = content
        found.namespaces.append(namespace)
        found.labels.append(parts[0][0])
        found.label_keys.append(label_key)
        found.keys.append(sorted(p.key for p in pods))
        count = 0
        for pod in pods:
            parsed = tuple(parse_address(ip) for ip in pod.ips)
            if len(parsed) == 1 and parsed[0] is not None:
                found.single.setdefault(parsed[0][0], []).append((parsed[0][1], position))
                count += 1
            else:
                found.irregular.setdefault(position, []).append(parsed)
        found.single_count.append(count)
        found.ports.append({id(p.ports): p.ports for p in pods})
        found.selected.append(parts[0][2])
        found.pods += len(pods)
        for labels, _, _ in parts:
            found.index[(namespace, id(labels))] = position
        found.ns_bits[namespace] = found.ns_bits.get(namespace, 0) | 1 << position
        found.all |= 1 << position
    for addresses in found.single.values():
        addresses.sort()
    return found


def indexed_universe(view: GraphView) -> Universe | None:
    """The view's universe; None for a view that keeps no identity index (an overlay)."""
    try:
        return universe(view)
    except NotImplementedError:
        return None
