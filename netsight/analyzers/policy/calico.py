"""Calico NetworkPolicy and GlobalNetworkPolicy (projectcalico.org/v3, and the crd. CRDs).

Semantics per the Calico policy reference and "Get started with policy tiers":

- Tiers are sorted by ``order``, lowest first (a tier without one last). The default tier
  (order 1,000,000) holds policies without ``tier`` and every Kubernetes NetworkPolicy, as
  a policy of order 1000 (``knp.default.<name>``); the ``adminnetworkpolicy``/``kube-admin``
  tier (order 1000, default action Pass) holds the AdminNetworkPolicies and the
  ``baselineadminnetworkpolicy``/``kube-baseline`` tier (order 10,000,000, Pass) the BANP.
- A tier processes a packet when one of its policies applies to the endpoint (its
  ``selector`` — and a GlobalNetworkPolicy's ``namespaceSelector``, any
  ``serviceAccountSelector`` — selects it; a namespaced policy only in its namespace; for
  the direction's type). Within it policies go by ``order`` (none: last) then name, rules
  in order; the first rule that matches decides: Allow, Deny, or Pass (to the next tier);
  Log goes on. A tier that applies but takes no action drops the packet, unless its
  ``defaultAction`` is Pass. After the last tier, the Kubernetes profiles allow.
- ``types`` defaults to Ingress, plus Egress when there are egress rules (Egress alone when
  there are only egress rules).
- A rule matches when its protocol (and ``notProtocol``), ``ipVersion`` and both ends match.
  An end (``source``/``destination``) holds ``nets``/``notNets``, ``selector``/
  ``notSelector``, ``namespaceSelector``, ``ports``/``notPorts`` (numbers, "from:to"
  ranges, names resolved on the destination), ``serviceAccounts``; all given must match.
  A rule ``selector`` without ``namespaceSelector`` selects in the policy's namespace (a
  namespaced policy) or anywhere (a global one).
- A pod's labels for selectors: its own, ``projectcalico.org/namespace``,
  ``projectcalico.org/orchestrator`` (k8s), ``projectcalico.org/serviceaccount``, and the
  profile labels ``pcns.<key>`` (its namespace's labels) and ``pcsa.<key>``.

Not evaluated, so answered undecided: ``http`` matches, source ports, ``services``,
service-account label selectors beyond ``projectcalico.org/name``, ``applyOnForward``,
``preDNAT``, ``doNotTrack``, host endpoints (host-network pods), and whether an outside
address is in a (Global)NetworkSet a selector picks. ICMP rules match no TCP/UDP/SCTP flow.
The tiers are walked for one flow in :mod:`calico_evaluation`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.policy import calico_selectors as sel
from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import IPBlock, Namespaces, PortMatch, ports_match
from netsight.analyzers.policy.spec_reading import Unsupported
from netsight.analyzers.policy.verdict import Action, Direction, Tri, tri_all, tri_any
from netsight.graph.model.records import GenericRecord

GROUPS = ("crd.projectcalico.org", "projectcalico.org")
NP_KINDS = ("NetworkPolicy.crd.projectcalico.org", "NetworkPolicy.projectcalico.org")
GNP_KIND = "GlobalNetworkPolicy"
TIER_KIND = "Tier"
POLICY_KINDS = (*NP_KINDS, GNP_KIND)
# Objects selectors can pick besides pods: outside addresses or hosts may be among them.
NON_POD_KINDS = ("NetworkSet", "GlobalNetworkSet", "HostEndpoint")
DEFAULT_TIER = "default"
DEFAULT_TIER_ORDER = 1_000_000.0
K8S_POLICY_ORDER = 1000.0
ADMIN_TIERS = {"adminnetworkpolicy": 1000.0, "kube-admin": 1000.0}
BASELINE_TIERS = {"baselineadminnetworkpolicy": 10_000_000.0, "kube-baseline": 10_000_000.0}
_PROTOCOLS = {"TCP": "TCP", "UDP": "UDP", "SCTP": "SCTP", 6: "TCP", 17: "UDP", 132: "SCTP",
              "ICMP": "ICMP", "ICMPv6": "ICMPv6", "UDPLite": "UDPLite", 1: "ICMP",
              58: "ICMPv6", 136: "UDPLite"}
_ACTIONS = {"Allow": Action.ALLOW, "Deny": Action.DENY, "Pass": Action.PASS, "Log": None}


def is_calico(record: GenericRecord) -> bool:
    return record.api_version.partition("/")[0] in GROUPS


# --- what a selector sees ----------------------------------------------------------------


def pod_labels(endpoint: Endpoint, ns: Namespaces) -> sel.Lookup:
    """The labels a workload endpoint carries for Calico selectors."""
    assert endpoint.namespace is not None
    namespace = endpoint.namespace

    def lookup(key: str) -> object:
        if key == "projectcalico.org/namespace":
            return namespace
        if key == "projectcalico.org/orchestrator":
            return "k8s"
        if key == "projectcalico.org/serviceaccount":
            return sel.UNKNOWN if endpoint.service_account is None else endpoint.service_account
        if key.startswith("pcns."):
            return namespace_labels(namespace, ns)(key[5:])
        if key.startswith("pcsa."):
            return service_account_labels(endpoint)(key[5:])
        return endpoint.labels.get(key)
    return lookup


def namespace_labels(namespace: str, ns: Namespaces) -> sel.Lookup:
    labels = ns.labels(namespace)

    def lookup(key: str) -> object:
        if key == "projectcalico.org/name":
            return namespace
        if labels is None:
            return namespace if key == "kubernetes.io/metadata.name" else sel.UNKNOWN
        return labels.get(key)
    return lookup


def service_account_labels(endpoint: Endpoint) -> sel.Lookup:
    """Only the name is known: ServiceAccount labels are not in the graph."""
    def lookup(key: str) -> object:
        if key == "projectcalico.org/name" and endpoint.service_account is not None:
            return endpoint.service_account
        return sel.UNKNOWN
    return lookup


# --- the model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Selector:
    text: str
    node: sel.Node

    def matches(self, lookup: sel.Lookup) -> Tri:
        return self.node.matches(lookup)


def parse_selector(raw: Any, path: str) -> Selector:
    if not isinstance(raw, str):
        raise Unsupported(path, f"must be a selector string, got {type(raw).__name__}")
    try:
        return Selector(raw, sel.parse(raw))
    except sel.SelectorError as error:
        raise Unsupported(path, str(error)) from None


@dataclass(frozen=True, slots=True)
class End:
    """A rule's source or destination."""

    nets: tuple[IPBlock, ...] | None = None
    not_nets: tuple[IPBlock, ...] | None = None
    selector: Selector | None = None
    not_selector: Selector | None = None
    namespace_selector: Selector | None = None
    ports: tuple[PortMatch, ...] | None = None
    not_ports: tuple[PortMatch, ...] | None = None
    account_names: frozenset[str] | None = None
    account_selector: Selector | None = None

    def matches(self, endpoint: Endpoint, *, policy_namespace: str | None, port: int,
                proto: str, ns: Namespaces, non_pods: bool) -> Tri:
        answers: list[Tri] = []
        if self.nets is not None:
            answers.append(tri_any(b.matches(endpoint) for b in self.nets))
        if self.not_nets is not None:
            found = tri_any(b.matches(endpoint) for b in self.not_nets)
            answers.append(None if found is None else not found)
        if self.ports is not None:
            answers.append(ports_match(self.ports, port, proto, endpoint))
        if self.not_ports is not None:
            found = ports_match(self.not_ports, port, proto, endpoint)
            answers.append(None if found is None else not found)
        if False in answers:
            return False
        if self.selector is not None or self.namespace_selector is not None \
                or self.account_names is not None or self.account_selector is not None:
            answers.append(self._selected(endpoint, policy_namespace, ns, non_pods))
        if self.not_selector is not None:
            found = self._labels_match(self.not_selector, endpoint, ns, non_pods)
            answers.append(None if found is None else not found)
        return tri_all(answers)

    def _selected(self, endpoint: Endpoint, policy_namespace: str | None, ns: Namespaces,
                  non_pods: bool) -> Tri:
        if endpoint.external or endpoint.host_network:
            # An outside address may be in a network set, a host in a host endpoint.
            return None if non_pods or endpoint.host_network else False
        assert endpoint.namespace is not None
        answers: list[Tri] = []
        if self.namespace_selector is not None:
            answers.append(self.namespace_selector.node.matches(
                namespace_labels(endpoint.namespace, ns)))
        elif policy_namespace is not None:
            answers.append(endpoint.namespace == policy_namespace)
        if self.selector is not None:
            answers.append(self.selector.matches(pod_labels(endpoint, ns)))
        if self.account_names is not None:
            answers.append(None if endpoint.service_account is None
                           else endpoint.service_account in self.account_names)
        if self.account_selector is not None:
            answers.append(self.account_selector.matches(service_account_labels(endpoint)))
        return tri_all(answers)

    @staticmethod
    def _labels_match(selector: Selector, endpoint: Endpoint, ns: Namespaces,
                      non_pods: bool) -> Tri:
        if endpoint.external or endpoint.host_network:
            return None if non_pods or endpoint.host_network else False
        return selector.matches(pod_labels(endpoint, ns))


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    action: Action | None  # None: Log
    protocol: str | None = None
    not_protocol: str | None = None
    ip_version: int | None = None
    source: End = End()
    destination: End = End()
    problem: Unsupported | None = None

    def matches(self, source: Endpoint, destination: Endpoint, *, port: int, proto: str,
                policy_namespace: str | None, ns: Namespaces, non_pods: bool) -> Tri:
        if self.problem is not None:
            return None
        if self.protocol is not None and self.protocol != proto:
            return False
        if self.not_protocol is not None and self.not_protocol == proto:
            return False
        if self.ip_version is not None:
            families = {6 if ":" in ip else 4 for e in (source, destination) for ip in e.ips}
            if families == {10 - self.ip_version}:
                return False
            if families != {self.ip_version}:
                return None
        # Ports are the flow's destination port: on the source end they would be the
        # client's (ephemeral) port, refused when the rule is built.
        found = self.destination.matches(destination, policy_namespace=policy_namespace,
                                         port=port, proto=proto, ns=ns, non_pods=non_pods)
        if found is False:
            return False
        return tri_all((found, self.source.matches(
            source, policy_namespace=policy_namespace, port=port, proto=proto, ns=ns,
            non_pods=non_pods)))


@dataclass(frozen=True, slots=True)
class CalicoPolicy:
    record: GenericRecord
    tier: str
    order: float  # math.inf when not set
    types: frozenset[Direction]
    selector: Selector | None = None
    namespace_selector: Selector | None = None  # GlobalNetworkPolicy only
    account_selector: Selector | None = None
    ingress: tuple[Rule, ...] = ()
    egress: tuple[Rule, ...] = ()
    problem: Unsupported | None = None  # the policy cannot be read: it decides nothing

    @property
    def namespace(self) -> str | None:
        return None if self.record.kind == GNP_KIND else self.record.namespace

    @property
    def label(self) -> str:
        return f"{self.record.kind.partition('.')[0]} {self.record.ref}"

    def rules(self, direction: Direction) -> tuple[Rule, ...]:
        return self.ingress if direction is Direction.INGRESS else self.egress

    def applies_to(self, subject: Endpoint, ns: Namespaces) -> Tri:
        if subject.external or subject.host_network:
            return False  # workload policy: host endpoints are another matter
        if self.problem is not None:
            return None
        assert subject.namespace is not None
        assert self.selector is not None
        if self.namespace is not None and subject.namespace != self.namespace:
            return False
        answers = [self.selector.matches(pod_labels(subject, ns))]
        if self.namespace_selector is not None:
            answers.append(self.namespace_selector.matches(
                namespace_labels(subject.namespace, ns)))
        if self.account_selector is not None:
            answers.append(self.account_selector.matches(service_account_labels(subject)))
        return tri_all(answers)


_SPEC_FIELDS = ("order", "tier", "selector", "namespaceSelector", "serviceAccountSelector",
                "types", "ingress", "egress", "applyOnForward", "preDNAT", "doNotTrack",
                "performanceHints")


def build(record: GenericRecord) -> CalicoPolicy:
    spec: Mapping[str, Any] = record.spec or {}
    tier = spec.get("tier") or DEFAULT_TIER
    raw_order = spec.get("order")
    order = float(raw_order) if isinstance(raw_order, int | float) \
        and not isinstance(raw_order, bool) else math.inf
    try:
        if not isinstance(tier, str):
            raise Unsupported("spec.tier", "must be a tier name")
        if raw_order is not None and order is math.inf:
            raise Unsupported("spec.order", f"must be a number, got {raw_order!r}")
        read.fields(spec, "spec", _SPEC_FIELDS if record.kind == GNP_KIND else
                    tuple(f for f in _SPEC_FIELDS if f != "namespaceSelector"))
        for flag in ("applyOnForward", "preDNAT", "doNotTrack"):
            if spec.get(flag):
                raise Unsupported(f"spec.{flag}", "host-endpoint policy options are not "
                                  "evaluated by netsight")
        selector = parse_selector(spec.get("selector", "all()") or "all()", "spec.selector")
        namespaces = None if spec.get("namespaceSelector") in (None, "") else \
            parse_selector(spec["namespaceSelector"], "spec.namespaceSelector")
        accounts = None if spec.get("serviceAccountSelector") in (None, "") else \
            parse_selector(spec["serviceAccountSelector"], "spec.serviceAccountSelector")
        raw_rules = {d: read.items(spec.get(d.value), f"spec.{d.value}") for d in Direction}
        types = _types(spec.get("types"), raw_rules)
    except Unsupported as problem:
        return CalicoPolicy(record, str(tier), order, frozenset(), problem=problem)
    rules = {d: tuple(_guarded(r, i, f"spec.{d.value}[{i}]") for i, r in enumerate(raw))
             for d, raw in raw_rules.items()}
    return CalicoPolicy(record, tier, order, types, selector, namespaces, accounts,
                        rules[Direction.INGRESS], rules[Direction.EGRESS])


def _types(raw: Any, rules: Mapping[Direction, list[Any]]) -> frozenset[Direction]:
    if raw is None:
        if rules[Direction.EGRESS] and not rules[Direction.INGRESS]:
            return frozenset({Direction.EGRESS})
        if rules[Direction.EGRESS]:
            return frozenset(Direction)
        return frozenset({Direction.INGRESS})
    found = set()
    for i, value in enumerate(read.items(raw, "spec.types")):
        if value not in ("Ingress", "Egress"):
            raise Unsupported(f"spec.types[{i}]", f"must be Ingress or Egress, got {value!r}")
        found.add(Direction(value.lower()))
    return frozenset(found)


def _guarded(raw: Any, index: int, path: str) -> Rule:
    try:
        return _rule(raw, index, path)
    except Unsupported as problem:
        return Rule(index, Action.UNKNOWN, problem=problem)


def _rule(raw: Any, index: int, path: str) -> Rule:
    rule = read.fields(raw, path, ("action", "protocol", "notProtocol", "icmp", "notICMP",
                                   "ipVersion", "source", "destination", "http", "metadata"))
    if not isinstance(rule.get("action"), str) or rule["action"] not in _ACTIONS:
        raise Unsupported(f"{path}.action", f"must be Allow, Deny, Pass or Log, got "
                          f"{rule.get('action')!r}")
    if rule.get("http"):
        raise Unsupported(f"{path}.http", "HTTP matches are not evaluated by netsight")
    protocol = _protocol(rule.get("protocol"), f"{path}.protocol")
    not_protocol = _protocol(rule.get("notProtocol"), f"{path}.notProtocol")
    if rule.get("notICMP") and protocol not in ("ICMP", "ICMPv6"):
        raise Unsupported(f"{path}.notICMP", "needs protocol ICMP or ICMPv6")
    version = rule.get("ipVersion")
    if version not in (None, 4, 6):
        raise Unsupported(f"{path}.ipVersion", f"must be 4 or 6, got {version!r}")
    source = _end(rule.get("source"), f"{path}.source", protocol, source=True)
    destination = _end(rule.get("destination"), f"{path}.destination", protocol,
                       source=False)
    return Rule(index, _ACTIONS[rule["action"]], protocol, not_protocol, version, source,
                destination)


def _protocol(raw: Any, path: str) -> str | None:
    if raw is None:
        return None
    found = _PROTOCOLS.get(raw)
    if found is None:
        if isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 255:
            return f"protocol {raw}"  # never a TCP, UDP or SCTP flow
        raise Unsupported(path, f"{raw!r} is not a protocol name or number 1-255")
    return found


_END_FIELDS = ("nets", "notNets", "selector", "notSelector", "namespaceSelector", "ports",
               "notPorts", "serviceAccounts", "services")


def _end(raw: Any, path: str, protocol: str | None, *, source: bool) -> End:
    end = read.fields(raw or {}, path, _END_FIELDS)
    if end.get("services"):
        raise Unsupported(f"{path}.services", "Service matches are not evaluated by netsight")
    for key in ("ports", "notPorts"):
        if end.get(key) is None:
            continue
        if source:
            raise Unsupported(f"{path}.{key}", "source ports (the client's) are not "
                              "evaluated by netsight")
        if protocol not in ("TCP", "UDP", "SCTP"):
            raise Unsupported(f"{path}.{key}", "ports need protocol TCP, UDP or SCTP "
                              "(Calico rejects the rule)")

    def nets(key: str) -> tuple[IPBlock, ...] | None:
        if end.get(key) is None:
            return None
        return tuple(IPBlock.parse(n, None, f"{path}.{key}[{i}]")
                     for i, n in enumerate(read.items(end[key], f"{path}.{key}")))

    def ports(key: str) -> tuple[PortMatch, ...] | None:
        if end.get(key) is None:
            return None
        return tuple(_port(p, protocol, f"{path}.{key}[{i}]")
                     for i, p in enumerate(read.items(end[key], f"{path}.{key}")))

    def selector(key: str) -> Selector | None:
        return None if end.get(key) in (None, "") else parse_selector(end[key],
                                                                      f"{path}.{key}")

    names = None
    account_selector = None
    if end.get("serviceAccounts") is not None:
        accounts = read.fields(end["serviceAccounts"], f"{path}.serviceAccounts",
                               ("names", "selector"))
        if accounts.get("names") is not None:
            names = frozenset(str(n) for n in read.items(accounts["names"],
                                                         f"{path}.serviceAccounts.names"))
        if accounts.get("selector") not in (None, ""):
            account_selector = parse_selector(accounts["selector"],
                                              f"{path}.serviceAccounts.selector")
    return End(nets("nets"), nets("notNets"), selector("selector"), selector("notSelector"),
               selector("namespaceSelector"), ports("ports"), ports("notPorts"), names,
               account_selector)


def _port(raw: Any, protocol: str | None, path: str) -> PortMatch:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return PortMatch(protocol, read.port_number(raw, path))
    if not isinstance(raw, str) or not raw:
        raise Unsupported(path, f"must be a port, a range 'from:to' or a name, got {raw!r}")
    number = read.digits(raw)
    if number is not None:
        return PortMatch(protocol, read.port_number(number, path))
    start, sep, stop = raw.partition(":")
    if sep:
        first, last = read.digits(start), read.digits(stop)
        if first is None or last is None:
            raise Unsupported(path, f"range {raw!r} must be 'from:to' with numbers")
        first, last = read.port_number(first, path), read.port_number(last, path)
        if last < first:
            raise Unsupported(path, f"range {raw!r} ends before it starts")
        return PortMatch(protocol, first, last)
    return PortMatch(protocol, name=raw)


# --- tiers -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    order: float
    pass_at_end: bool  # defaultAction Pass; otherwise the end of the tier denies
    problem: str | None = None


def tiers(records: Iterable[GenericRecord]) -> dict[str, Tier]:
    """The Tier objects by name, with the tiers Calico creates itself."""
    found = {DEFAULT_TIER: Tier(DEFAULT_TIER, DEFAULT_TIER_ORDER, False),
             **{name: Tier(name, order, True) for name, order in ADMIN_TIERS.items()},
             **{name: Tier(name, order, True) for name, order in BASELINE_TIERS.items()}}
    for record in records:
        if record.name in found and record.name != DEFAULT_TIER:
            continue  # the fixed tiers keep their fixed order and action
        spec = record.spec or {}
        order, action = spec.get("order"), spec.get("defaultAction", "Deny")
        problem = None
        if order is not None and (not isinstance(order, int | float) or
                                  isinstance(order, bool)):
            problem = f"Tier {record.name} spec.order {order!r} is not a number"
        if action not in ("Deny", "Pass"):
            problem = f"Tier {record.name} spec.defaultAction {action!r} is not Deny or Pass"
        value = DEFAULT_TIER_ORDER if record.name == DEFAULT_TIER else \
            (float(order) if isinstance(order, int | float) else math.inf)
        found[record.name] = Tier(record.name, value, action == "Pass", problem)
    return found
