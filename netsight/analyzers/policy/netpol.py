"""Kubernetes NetworkPolicy (networking.k8s.io/v1): model and the NetworkPolicy tier.

Semantics per the API reference: a policy isolates the pods its podSelector selects, for
the policyTypes it has (defaulted by the record: Ingress always, Egress iff egress rules).
An isolated pod admits what the union of its policies' rules admits. A rule matches when
one of its peers AND one of its ports match; an absent or empty ``from``/``to``/``ports``
matches everything. A peer's podSelector and namespaceSelector together are an AND;
separate peers are an OR. ipBlock is matched against the other pod's IPs too (as the
upstream e2e tests expect). A named port resolves on the destination pod's container
ports with the same protocol: the subject's for ingress, the peer's for egress.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Evidence, ResourceRef
from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import IPBlock, Namespaces, PortMatch, ports_match
from netsight.analyzers.policy.spec_reading import Unsupported
from netsight.analyzers.policy.verdict import Action, Direction, Layer, Step, Tri, tri_all
from netsight.graph.model.records import NetworkPolicyRecord
from netsight.graph.model.selectors import LabelSelector


@dataclass(frozen=True, slots=True)
class Peer:
    pods: LabelSelector | None = None
    namespaces: LabelSelector | None = None
    ip_block: IPBlock | None = None

    def matches(self, other: Endpoint, policy_namespace: str, ns: Namespaces) -> Tri:
        if self.ip_block is not None:
            return self.ip_block.matches(other)
        if other.external:
            return False
        assert other.namespace is not None
        if other.host_network:
            return None  # NetworkPolicy behaviour for host-network pods is undefined
        in_namespace: Tri = other.namespace == policy_namespace if self.namespaces is None \
            else ns.matches(self.namespaces, other.namespace)
        if in_namespace is False:
            return False
        return tri_all((in_namespace, self.pods is None or self.pods.matches(other.labels)))

    def describe(self) -> str:
        if self.ip_block is not None:
            return f"ipBlock {self.ip_block}"
        parts = []
        if self.namespaces is not None:
            parts.append(f"namespaces {self.namespaces.describe()}")
        if self.pods is not None:
            parts.append(f"pods {self.pods.describe()}")
        return " and ".join(parts)


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    peers: tuple[Peer, ...] | None  # None: every peer
    ports: tuple[PortMatch, ...] | None  # None: every port
    problem: Unsupported | None = None  # a shape not evaluated: the rule decides nothing

    def matches(self, other: Endpoint, destination: Endpoint, port: int, proto: str,
                policy_namespace: str, ns: Namespaces) -> tuple[Tri, Tri]:
        """(peers match, ports match)."""
        ports = ports_match(self.ports, port, proto, destination)
        if self.peers is None:
            return True, ports
        unknown = False
        for peer in self.peers:
            found = peer.matches(other, policy_namespace, ns)
            if found:
                return True, ports
            unknown |= found is None
        return (None if unknown else False), ports


@dataclass(frozen=True, slots=True)
class NetPol:
    record: NetworkPolicyRecord
    types: frozenset[Direction]
    ingress: tuple[Rule, ...] = ()
    egress: tuple[Rule, ...] = ()

    def rules(self, direction: Direction) -> tuple[Rule, ...]:
        return self.ingress if direction is Direction.INGRESS else self.egress

    @property
    def problem(self) -> Unsupported | None:
        """The first rule netsight cannot evaluate, if any."""
        return next((r.problem for r in (*self.ingress, *self.egress) if r.problem), None)


def build(record: NetworkPolicyRecord) -> NetPol:
    types = frozenset(Direction(t.lower()) for t in record.policy_types)
    return NetPol(record, types,
                  tuple(_guarded(r, i, Direction.INGRESS) for i, r in enumerate(record.ingress)),
                  tuple(_guarded(r, i, Direction.EGRESS) for i, r in enumerate(record.egress)))


def _guarded(raw: object, index: int, direction: Direction) -> Rule:
    try:
        return _rule(raw, index, direction)
    except Unsupported as problem:
        return Rule(index, None, None, problem)


def _rule(raw: object, index: int, direction: Direction) -> Rule:
    path = f"spec.{direction.value}[{index}]"
    peers_key = direction.peers_field
    rule = read.fields(raw, path, (peers_key, "ports"))
    peers = read.items(rule.get(peers_key), f"{path}.{peers_key}")
    ports = read.items(rule.get("ports"), f"{path}.ports")
    return Rule(
        index,
        tuple(_peer(p, f"{path}.{peers_key}[{i}]") for i, p in enumerate(peers)) or None,
        tuple(_port(p, f"{path}.ports[{i}]") for i, p in enumerate(ports)) or None,
    )


def _peer(raw: object, path: str) -> Peer:
    peer = read.fields(raw, path, ("podSelector", "namespaceSelector", "ipBlock"))
    if "ipBlock" in peer:
        if len(peer) > 1:
            raise Unsupported(path, "ipBlock cannot be combined with selectors (the API "
                              "server rejects it)")
        block = read.fields(peer["ipBlock"], f"{path}.ipBlock", ("cidr", "except"))
        return Peer(ip_block=IPBlock.parse(block.get("cidr"), block.get("except"),
                                           f"{path}.ipBlock"))
    pods = None if peer.get("podSelector") is None else \
        read.selector(peer["podSelector"], f"{path}.podSelector")
    namespaces = None if peer.get("namespaceSelector") is None else \
        read.selector(peer["namespaceSelector"], f"{path}.namespaceSelector")
    if pods is None and namespaces is None:
        raise Unsupported(path, "a peer must set podSelector, namespaceSelector or ipBlock")
    return Peer(pods=pods, namespaces=namespaces)


def _port(raw: object, path: str) -> PortMatch:
    entry = read.fields(raw, path, ("protocol", "port", "endPort"))
    proto = read.protocol(entry.get("protocol"), f"{path}.protocol")
    port, end = entry.get("port"), entry.get("endPort")
    if isinstance(port, str):
        if end is not None:
            raise Unsupported(f"{path}.endPort", "endPort needs a numeric port")
        number = read.digits(port)
        if number is not None:  # IntOrString written as a string of digits
            return PortMatch(proto, number)
        return PortMatch(proto, name=port)
    if port is None:
        if end is not None:
            raise Unsupported(f"{path}.endPort", "endPort needs port")
        return PortMatch(proto)
    start = read.port_number(port, f"{path}.port")
    if end is None:
        return PortMatch(proto, start)
    stop = read.port_number(end, f"{path}.endPort")
    if stop < start:
        raise Unsupported(f"{path}.endPort", "endPort must not be less than port")
    return PortMatch(proto, start, stop)


@dataclass(frozen=True, slots=True)
class Decision:
    """The NetworkPolicy tier's answer; None from :func:`evaluate` if no policy isolates."""

    step: Step
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()


def evaluate(policies: Iterable[NetPol], direction: Direction, subject: Endpoint,
             other: Endpoint, destination: Endpoint, port: int, proto: str,
             ns: Namespaces, *, explain: bool = True) -> Decision | None:
    """Whether the policies isolating ``subject`` in ``direction`` admit ``other``.

    ``explain=False`` leaves the evidence of a denial out (the rules that did not match):
    the decision is the same, only cheaper when many peers are asked about at once."""
    isolating = sorted((p for p in policies if direction in p.types),
                       key=lambda p: p.record.key)
    if not isolating:
        return None
    unknown: list[str] = []
    misses: list[Evidence] = []
    for policy in isolating:
        record = policy.record
        for rule in policy.rules(direction):
            if rule.problem is not None:
                unknown.append(f"NetworkPolicy {record.ref}: {rule.problem} (not evaluated)")
                continue
            peers, ports = rule.matches(other, destination, port, proto, record.namespace, ns)
            path = f"spec.{direction.value}[{rule.index}]"
            if peers and ports:
                return Decision(Step(
                    Layer.NETWORK_POLICY, Action.ALLOW,
                    f"{record.ref} {path} admits {other.name} on {port}/{proto}",
                    ref(record), rule.index,
                    (evidence(record, path, record.ingress[rule.index]
                              if direction is Direction.INGRESS else record.egress[rule.index]),),
                ))
            if tri_all((peers, ports)) is None:
                unknown.append(f"NetworkPolicy {record.ref} {path}: whether it admits "
                               f"{other.name} depends on {_unknown_part(other, peers)}")
            if explain:
                misses.append(evidence(record, path, {
                    f"{direction.peers_field}Matches": peers, "portsMatch": ports}))
    names = ", ".join(p.record.ref for p in isolating)
    if unknown:
        return Decision(Step(Layer.NETWORK_POLICY, Action.UNKNOWN, "; ".join(unknown)),
                        not_evaluated=tuple(unknown))
    if len(isolating) == 1:
        text = f"{names} selects {subject.name} and has no {direction.value} rule admitting "
    else:
        text = f"{names} select {subject.name} and none has an {direction.value} rule admitting "
    text += f"{other.name} on {port}/{proto}"
    proof = tuple(evidence(p.record, f"spec.{direction.value}",
                           f"{len(p.rules(direction))} rule(s)") for p in isolating) \
        if explain else ()
    return Decision(
        Step(Layer.NETWORK_POLICY, Action.DENY, text, ref(isolating[0].record), None,
             proof + tuple(misses)),
        blocking=tuple(ref(p.record) for p in isolating),
    )


def _unknown_part(other: Endpoint, peers: Tri) -> str:
    if peers is None and other.host_network:
        return f"how the CNI treats host-network pod {other.name} (undefined for NetworkPolicy)"
    if peers is None and not other.ips:
        return f"the IP of {other.name}, which the input does not give"
    if peers is None and len(other.ips) > 1:
        return f"which of {other.name}'s IPs (dual-stack) the traffic uses, or the labels of " \
            f"namespace {other.namespace}"
    if peers is None:
        return f"labels of namespace {other.namespace}, which the input does not give"
    return "the destination's ports"
