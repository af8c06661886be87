"""AdminNetworkPolicy and BaselineAdminNetworkPolicy (policy.networking.k8s.io/v1alpha1).

Per the network-policy-api types: an ANP applies to its subject's pods (host-network pods
excluded); its rules are checked in order, first match wins, with action Allow, Deny or
Pass (skip the remaining ANP rules, go to NetworkPolicy). ANPs are checked by ``priority``
(0-1000, lower first); two ANPs at one priority that disagree are undefined by the spec,
and netsight says so rather than pick one. The BANP (one, named ``default``) has the same
shape, no priority, and only Allow or Deny; it decides after NetworkPolicy. A rule without
``ports`` matches every port. Peers: ``namespaces``, ``pods`` (never host-network pods),
and for egress ``networks`` (CIDRs, in-cluster pod IPs included) and ``nodes``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import IPBlock, Namespaces, PortMatch, ports_match
from netsight.analyzers.policy.spec_reading import Unsupported
from netsight.analyzers.policy.verdict import Action, Direction, Layer, Step, Tri, tri_all
from netsight.graph.model.records import GenericRecord
from netsight.graph.model.selectors import LabelSelector

ANP_KIND = "AdminNetworkPolicy"
BANP_KIND = "BaselineAdminNetworkPolicy"
GROUP = "policy.networking.k8s.io"
BANP_NAME = "default"  # the API admits exactly one BANP, and only under this name
CNP_KIND = "ClusterNetworkPolicy"


@dataclass(frozen=True, slots=True)
class Peer:
    namespaces: LabelSelector | None = None  # with pods=None: every pod in them
    pods: LabelSelector | None = None
    networks: tuple[IPBlock, ...] = ()
    nodes: LabelSelector | None = None

    def matches(self, other: Endpoint, ns: Namespaces) -> Tri:
        if self.networks:
            found: Tri = False
            for network in self.networks:
                answer = network.matches(other)
                if answer:
                    return True
                if answer is None:
                    found = None
            return found
        if self.nodes is not None:
            if not other.external and not other.host_network:
                return False  # a pod-network pod is no node
            if other.host_network and other.node is not None:
                # A host-network pod answers on its node's IPs: the node is the peer.
                labels = ns.node_labels(other.node)
                return None if labels is None else self.nodes.matches(labels)
            return None  # an outside IP: node addresses are not in the graph
        if other.external or other.host_network:
            return False  # namespaces/pods peers never include host-network pods
        assert other.namespace is not None
        assert self.namespaces is not None
        in_namespace = ns.matches(self.namespaces, other.namespace)
        if in_namespace is False or self.pods is None:
            return in_namespace
        return tri_all((in_namespace, self.pods.matches(other.labels)))


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    name: str
    action: Action
    peers: tuple[Peer, ...]
    ports: tuple[PortMatch, ...] | None
    problem: Unsupported | None = None  # a shape not evaluated: the rule decides nothing
    # Whether a peer can match an address outside the cluster (networks or nodes): a rule
    # of namespace and pod peers only never matches one (Peer.matches), and most do not.
    outside: bool = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "outside", any(
            p.networks or p.nodes is not None for p in self.peers))

    def matches(self, other: Endpoint, destination: Endpoint, port: int, proto: str,
                ns: Namespaces) -> Tri:
        if other.namespace is None and not self.outside:
            return False  # (an outside address: every peer says False)
        ports = ports_match(self.ports, port, proto, destination)
        if ports is False:
            return False
        peers: Tri = False  # True if any peer says True, else None if any says None
        for peer in self.peers:
            answer = peer.matches(other, ns)
            if answer:
                peers = True
                break
            if answer is None:
                peers = None
        return tri_all((peers, ports))


@dataclass(frozen=True, slots=True)
class AdminPolicy:
    record: GenericRecord
    baseline: bool
    priority: int
    subject_namespaces: LabelSelector | None = None
    subject_pods: LabelSelector | None = None
    ingress: tuple[Rule, ...] = ()
    egress: tuple[Rule, ...] = ()
    subject_problem: Unsupported | None = None
    ingress_problem: Unsupported | None = None
    egress_problem: Unsupported | None = None
    # The directions its spec gives rules for ("ingress", "egress"): a policy without rules
    # in a direction takes no part in it (read once: evaluate asks per policy and flow).
    takes: frozenset[str] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        spec = self.record.spec or {}
        object.__setattr__(self, "takes", frozenset(
            d.value for d in Direction if spec.get(d.value)))

    @property
    def layer(self) -> Layer:
        if self.record.kind == CNP_KIND:
            return Layer.CNP_BASELINE if self.baseline else Layer.CNP_ADMIN
        return Layer.BANP if self.baseline else Layer.ANP

    def rules(self, direction: Direction) -> tuple[Rule, ...]:
        return self.ingress if direction is Direction.INGRESS else self.egress

    def applies_to(self, subject: Endpoint, ns: Namespaces) -> Tri:
        if self.subject_problem is not None:
            return None
        if subject.external or subject.host_network:
            return False  # host-network pods are never subjects
        assert subject.namespace is not None
        assert self.subject_namespaces is not None
        in_namespace = ns.matches(self.subject_namespaces, subject.namespace)
        if in_namespace is False or self.subject_pods is None:
            return in_namespace
        return tri_all((in_namespace, self.subject_pods.matches(subject.labels)))


def build(record: GenericRecord) -> AdminPolicy:
    baseline = record.kind == BANP_KIND
    spec: Mapping[str, Any] = record.spec or {}
    priority = spec.get("priority", 0 if baseline else None)
    base = AdminPolicy(record, baseline, priority if isinstance(priority, int) else 1001)
    try:
        if not baseline and (not isinstance(priority, int) or isinstance(priority, bool) \
                    or not 0 <= priority <= 1000):
            raise Unsupported("spec.priority", f"must be 0-1000, got {priority!r}")
        read.fields(spec, "spec", ("subject", "ingress", "egress",
                                   *(() if baseline else ("priority",))))
        namespaces, pods = parse_subject(spec.get("subject"))
    except Unsupported as problem:
        return AdminPolicy(record, baseline, base.priority, subject_problem=problem)
    rules, problems = rules_of(spec, lambda raw, i, d: _rule(raw, i, d, baseline))
    return AdminPolicy(record, baseline, base.priority, namespaces, pods,
                       rules[Direction.INGRESS], rules[Direction.EGRESS],
                       ingress_problem=problems.get(Direction.INGRESS),
                       egress_problem=problems.get(Direction.EGRESS))


def rules_of(spec: Mapping[str, Any], parse: Callable[[Any, int, Direction], Rule]
             ) -> tuple[dict[Direction, tuple[Rule, ...]], dict[Direction, Unsupported]]:
    """Rules per direction, a rule netsight cannot read kept as one that decides nothing;
    with the first problem per direction (for lint)."""
    rules: dict[Direction, tuple[Rule, ...]] = {}
    problems: dict[Direction, Unsupported] = {}
    for direction in Direction:
        path = f"spec.{direction.value}"
        try:
            raw_rules = read.items(spec.get(direction.value), path)
        except Unsupported as problem:
            rules[direction] = (Rule(0, "", Action.UNKNOWN, (), None, problem),)
            problems[direction] = problem
            continue
        parsed = []
        for i, raw in enumerate(raw_rules):
            try:
                parsed.append(parse(raw, i, direction))
            except Unsupported as problem:
                parsed.append(Rule(i, "", Action.UNKNOWN, (), None, problem))
                problems.setdefault(direction, problem)
        rules[direction] = tuple(parsed)
    return rules, problems


def parse_subject(raw: Any, *, any_namespace: bool = False
                  ) -> tuple[LabelSelector, LabelSelector | None]:
    """``any_namespace``: a ``pods`` entry may leave out its namespaceSelector (see
    ``_namespaced_pods``)."""
    subject = read.fields(raw, "spec.subject", ("namespaces", "pods"))
    if len(subject) != 1:
        raise Unsupported("spec.subject", "exactly one of namespaces or pods must be set")
    if "namespaces" in subject:
        return read.selector(subject["namespaces"], "spec.subject.namespaces"), None
    return _namespaced_pods(subject["pods"], "spec.subject.pods", any_namespace)


def _namespaced_pods(raw: Any, path: str, any_namespace: bool
                     ) -> tuple[LabelSelector, LabelSelector]:
    pods = read.fields(raw, path, ("namespaceSelector", "podSelector"))
    if "podSelector" not in pods or ("namespaceSelector" not in pods and not any_namespace):
        raise Unsupported(path, "needs namespaceSelector and podSelector")
    # ClusterNetworkPolicy's NamespacedPod marks namespaceSelector optional, a value (not a
    # pointer) whose zero is the empty selector: "if empty, it selects all Namespaces".
    # v1alpha1's requires it.
    return (read.selector(pods.get("namespaceSelector", {}), f"{path}.namespaceSelector"),
            read.selector(pods["podSelector"], f"{path}.podSelector"))


def _rule(raw: Any, index: int, direction: Direction, baseline: bool) -> Rule:
    path = f"spec.{direction.value}[{index}]"
    key = direction.peers_field
    rule = read.fields(raw, path, ("name", "action", key, "ports"))
    actions = ("Allow", "Deny") if baseline else ("Allow", "Deny", "Pass")
    if rule.get("action") not in actions:
        raise Unsupported(f"{path}.action", f"must be one of {', '.join(actions)}, got "
                          f"{rule.get('action')!r}")
    raw_peers = read.items(rule.get(key), f"{path}.{key}")
    if not raw_peers:
        raise Unsupported(f"{path}.{key}", "must list at least one peer")
    peers = tuple(parse_peer(p, f"{path}.{key}[{i}]", direction) for i, p in enumerate(raw_peers))
    return Rule(index, str(rule.get("name") or ""), Action(rule["action"]), peers,
                ports_of(rule.get("ports"), f"{path}.ports"))


def ports_of(raw: Any, path: str) -> tuple[PortMatch, ...] | None:
    """A rule's ``ports`` (portNumber, namedPort or portRange each); None: every port."""
    if raw is None:
        return None
    ports = tuple(_port(p, f"{path}[{i}]") for i, p in enumerate(read.items(raw, path)))
    if not ports:
        # Absent means every port; an empty list is neither spelled out by the spec
        # nor read alike by implementations.
        raise Unsupported(path, "an empty list (omit it to match every port)")
    return ports


def parse_peer(raw: Any, path: str, direction: Direction, *, any_namespace: bool = False
               ) -> Peer:
    allowed = ("namespaces", "pods") + (("networks", "nodes")
                                         if direction is Direction.EGRESS else ())
    peer = read.fields(raw, path, allowed)
    if len(peer) != 1:
        # The spec says to fail closed on a peer with no field set; an unknown field was
        # rejected above. Either way netsight does not guess what the CNI makes of it.
        raise Unsupported(path, "exactly one of " + ", ".join(allowed) + " must be set")
    if "namespaces" in peer:
        return Peer(namespaces=read.selector(peer["namespaces"], f"{path}.namespaces"))
    if "pods" in peer:
        namespaces, pods = _namespaced_pods(peer["pods"], f"{path}.pods", any_namespace)
        return Peer(namespaces=namespaces, pods=pods)
    if "nodes" in peer:
        return Peer(nodes=read.selector(peer["nodes"], f"{path}.nodes"))
    networks = read.items(peer["networks"], f"{path}.networks")
    if not networks:
        raise Unsupported(f"{path}.networks", "must list at least one CIDR")
    return Peer(networks=tuple(IPBlock.parse(n, None, f"{path}.networks[{i}]")
                               for i, n in enumerate(networks)))


def _port(raw: Any, path: str) -> PortMatch:
    entry = read.fields(raw, path, ("portNumber", "namedPort", "portRange"))
    if len(entry) != 1:
        raise Unsupported(path, "exactly one of portNumber, namedPort, portRange must be set")
    if "namedPort" in entry:
        name = entry["namedPort"]
        if not isinstance(name, str) or not name:
            raise Unsupported(f"{path}.namedPort", "must be a port name")
        # The named container port carries its own protocol.
        return PortMatch(None, name=name)
    if "portNumber" in entry:
        number = read.fields(entry["portNumber"], f"{path}.portNumber", ("protocol", "port"))
        return PortMatch(read.protocol(number.get("protocol"), f"{path}.portNumber.protocol"),
                         read.port_number(number.get("port"), f"{path}.portNumber.port"))
    span = read.fields(entry["portRange"], f"{path}.portRange", ("protocol", "start", "end"))
    start = read.port_number(span.get("start"), f"{path}.portRange.start")
    end = read.port_number(span.get("end"), f"{path}.portRange.end")
    if end < start:
        raise Unsupported(f"{path}.portRange", "end must not be less than start")
    return PortMatch(read.protocol(span.get("protocol"), f"{path}.portRange.protocol"), start, end)


@dataclass(frozen=True, slots=True)
class Decision:
    step: Step
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()


def _where(policy: AdminPolicy, path: str) -> str:
    if policy.baseline and policy.record.kind != CNP_KIND:
        return path
    return f"priority {policy.priority}, {path}"


def evaluate(policies: Iterable[AdminPolicy], direction: Direction, subject: Endpoint,
             other: Endpoint, destination: Endpoint, port: int, proto: str,
             ns: Namespaces, *, applies: Mapping[int, Tri] | None = None
             ) -> Decision | None:
    """The first matching rule by priority then rule order, or None if no rule matches.

    ``policies`` must come sorted by (priority, name). ``applies``, when given, holds
    ``policy.applies_to(subject, ns)`` by ``id(policy)`` for every policy, already known.
    """
    chosen: tuple[AdminPolicy, Rule] | None = None
    taking = direction.value
    for policy in policies:
        if chosen is not None and policy.priority > chosen[0].priority:
            break
        if taking not in policy.takes:
            continue  # no rules in this direction: the policy does not affect it
        problem = policy.subject_problem
        applying = policy.applies_to(subject, ns) if applies is None \
            else applies[id(policy)]
        if applying is False:
            continue
        record = policy.record
        if problem is not None or applying is None:
            layer = policy.layer
            why = f"{record.kind} {record.name}: " + (
                f"{problem} (not evaluated)" if problem is not None else
                f"whether it applies to {subject.name} depends on namespace labels the "
                "input does not give")
            return Decision(Step(layer, Action.UNKNOWN, why, ref(record)),
                            not_evaluated=(why,))
        for rule in policy.rules(direction):
            if rule.problem is not None:
                why = f"{record.kind} {record.name}: {rule.problem} (not evaluated)"
                return Decision(Step(policy.layer, Action.UNKNOWN, why, ref(record), rule.index),
                                not_evaluated=(why,))
            found = rule.matches(other, destination, port, proto, ns)
            if found is None:
                why = (f"{record.kind} {record.name} spec.{direction.value}[{rule.index}]: "
                       f"whether it matches {other.name} depends on what the input does not "
                       "give (an IP, node addresses or namespace labels)")
                return Decision(Step(policy.layer, Action.UNKNOWN, why, ref(record), rule.index),
                                not_evaluated=(why,))
            if found:
                if chosen is not None and chosen[1].action is not rule.action:
                    why = (f"{chosen[0].record.name} and {record.name} share priority "
                           f"{policy.priority} and disagree ({chosen[1].action.value} vs "
                           f"{rule.action.value}); the spec leaves this undefined")
                    return Decision(Step(policy.layer, Action.UNKNOWN, why, ref(record)),
                                    not_evaluated=(why,))
                if chosen is None:
                    chosen = (policy, rule)
                break
    if chosen is None:
        return None
    policy, rule = chosen
    record = policy.record
    path = f"spec.{direction.value}[{rule.index}]"
    named = f" rule '{rule.name}'" if rule.name else ""
    text = f"{record.name}{named} ({_where(policy, path)}) matches {other.name} on " \
           f"{port}/{proto}"
    raw_rules = (record.spec or {}).get(direction.value) or []
    step = Step(policy.layer, rule.action, text, ref(record), rule.index,
                (evidence(record, path, raw_rules[rule.index]
                          if rule.index < len(raw_rules) else None),))
    return Decision(step, blocking=(ref(record),) if rule.action is Action.DENY else ())
