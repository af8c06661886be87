"""CiliumNetworkPolicy and CiliumClusterwideNetworkPolicy (cilium.io/v2) at L3/L4.

Semantics per the Cilium policy language docs and pkg/k8s/apis/cilium.io/utils:

- A policy holds one rule in ``spec`` and/or a list in ``specs``; each selects endpoints with
  ``endpointSelector``. A CNP's endpointSelector always applies in the policy's namespace
  (Cilium adds ``k8s:io.kubernetes.pod.namespace=<ns>``). A CCNP ``nodeSelector`` rule is a
  host policy: netsight does not evaluate host policies, so flows of host-network pods
  (the host) are undecided where one exists.
- Selector keys name a label source: ``k8s:app`` only Kubernetes labels, a bare ``app`` any
  source (``any:``). A pod's identity holds its labels plus ``io.kubernetes.pod.namespace``,
  ``io.cilium.k8s.namespace.labels.<key>`` (its namespace's labels) and
  ``io.cilium.k8s.policy.serviceaccount``. Labels Cilium's default label filter leaves out
  of identities (``pod-template-hash``, ``*.kubernetes.io/...``; configurable) and the
  cluster name leave a selector on them undecided.
- ``fromEndpoints``/``toEndpoints`` in a CNP stay in the policy's namespace unless the
  selector names the namespace label or namespace labels; in a CCNP they select only
  Kubernetes endpoints (a namespace label exists) unless they name the namespace label.
  A selector on a ``reserved:`` label is taken as written.
- ``fromCIDR``/``fromCIDRSet`` (with ``except``) match only peers outside the cluster: "CIDR
  rules do not apply to traffic where both sides of the connection are either managed by
  Cilium or use an IP belonging to a node in the cluster (including host networking pods)".
- Entities: ``all``; ``world`` (outside the cluster); ``cluster`` (every in-cluster endpoint:
  pods, host-network pods, nodes). Pods are taken to be Cilium-managed endpoints past init,
  so ``host``, ``remote-node``, ``health``, ``init``, ``unmanaged``, ``ingress`` and
  ``kube-apiserver`` do not match a pod-network pod; for host-network pods and outside
  addresses they are undecided. Node addresses are not in the graph: an outside address is
  taken as ``world``.
- Within a rule the L3 peers are alternatives (OR), ``toPorts`` must match too; a rule
  with ports only admits every peer; a rule with neither admits nothing. ``toPorts``:
  ``port`` (number, name, or "0" for every port), ``endPort``, ``protocol`` TCP, UDP, SCTP
  or ANY (the default). L7 ``rules`` (http, dns, kafka, ...) are not evaluated: the L4
  answer is given and the L7 restriction is reported.
- ``ingressDeny``/``egressDeny`` take precedence over every allow, of any policy kind.
- A direction is enforced at an endpoint when any rule selecting it has rules (allow or
  deny) in that direction, and ``enableDefaultDeny`` for it is not false (the default is
  true for each direction that has rules). Only non-default-deny rules: everything not
  denied is allowed.

Cilium translates Kubernetes NetworkPolicies into the same per-endpoint policy: an endpoint
a NetworkPolicy isolates is default-deny in that direction, and a flow is allowed when an
allow rule of any NetworkPolicy, CNP or CCNP allows it and no deny rule denies it
(:mod:`cilium_evaluation`). Cilium does not implement AdminNetworkPolicy; netsight keeps
its tiers around this layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import IPBlock, Namespaces, PortMatch, ports_match
from netsight.analyzers.policy.spec_reading import Unsupported
from netsight.analyzers.policy.verdict import Direction, Tri, tri_all, tri_any
from netsight.graph.model.records import GenericRecord

GROUP = "cilium.io"
CNP_KIND = "CiliumNetworkPolicy"
CCNP_KIND = "CiliumClusterwideNetworkPolicy"
KINDS = (CNP_KIND, CCNP_KIND)

NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
NAMESPACE_LABELS_PREFIX = "io.cilium.k8s.namespace.labels."
SERVICE_ACCOUNT_LABEL = "io.cilium.k8s.policy.serviceaccount"
CLUSTER_LABEL = "io.cilium.k8s.policy.cluster"
_SOURCES = ("k8s", "any", "reserved", "cidr", "fqdn", "container", "unspec", "kvstore",
            "cilium-generated", "cilium")
# Cilium's default identity-relevant label filter (pkg/labelsfilter): Kubernetes labels
# matching these are not part of a pod's identity.
_FILTERED = re.compile(r"^(io\.kubernetes|kubernetes\.io|statefulset\.kubernetes\.io/pod-name"
                       r"|apps\.kubernetes\.io/pod-index|batch\.kubernetes\.io/"
                       r"|.*beta\.kubernetes\.io|k8s\.io|pod-template-generation"
                       r"|pod-template-hash|controller-revision-hash|annotation|etcd_node)")
_PROTOCOLS = {"TCP": "TCP", "UDP": "UDP", "SCTP": "SCTP", "ANY": None, "": None}
_ENTITIES = frozenset({"world", "world-ipv4", "world-ipv6", "cluster", "host", "remote-node",
                       "kube-apiserver", "all", "init", "health", "unmanaged", "ingress"})
_L7 = ("rules", "serverNames", "listener", "terminatingTLS", "originatingTLS")
_UNKNOWN = object()  # a label whose value the graph cannot tell


# --- selectors -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Requirement:
    source: str  # "any" when the key names none
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: frozenset[str] = frozenset()
    from_match_labels: bool = False

    def matches(self, value: object) -> Tri:
        if value is _UNKNOWN:
            return None
        match self.operator:
            case "In":
                return value in self.values
            case "NotIn":
                return value not in self.values
            case "Exists":
                return value is not None
            case _:
                return value is None

    def describe(self) -> str:
        key = self.key if self.source == "any" else f"{self.source}:{self.key}"
        if self.operator == "In" and len(self.values) == 1:
            return f"{key}={next(iter(self.values))}"
        if self.operator in ("In", "NotIn"):
            return f"{key} {self.operator.lower()} ({','.join(sorted(self.values))})"
        return key if self.operator == "Exists" else f"!{key}"


@dataclass(frozen=True, slots=True)
class Selector:
    """An EndpointSelector as Cilium extends it: every requirement must hold."""

    requirements: tuple[Requirement, ...]

    def has(self, key: str, sources: tuple[str, ...] = ("k8s", "any")) -> bool:
        return any(r.key == key and r.source in sources for r in self.requirements)

    def has_prefix(self, prefix: str) -> bool:
        return any(r.key.startswith(prefix) and r.source in ("k8s", "any")
                   for r in self.requirements)

    def with_requirement(self, requirement: Requirement) -> Selector:
        return Selector((*self.requirements, requirement))

    def matches(self, endpoint: Endpoint, ns: Namespaces) -> Tri:
        """Against the identity of ``endpoint``."""
        return tri_all(r.matches(_label(endpoint, r, ns)) for r in self.requirements)

    def describe(self) -> str:
        return ",".join(r.describe() for r in self.requirements) or "<all>"


def _label(endpoint: Endpoint, requirement: Requirement, ns: Namespaces) -> object:
    """The value of one identity label of ``endpoint`` (None: absent)."""
    source, key = requirement.source, requirement.key
    if endpoint.external:
        # The world identity: reserved:world, plus cidr: labels netsight does not model.
        if source in ("reserved", "any") and key == "world":
            return ""
        if source in ("k8s", "container", "unspec", "kvstore") or (
                source == "any" and not key.startswith(("world", "cidr"))):
            return None
        return _UNKNOWN
    if endpoint.host_network:
        # The host or remote-node identity: reserved labels (and node labels in recent
        # releases), never a pod namespace.
        return None if key == NAMESPACE_LABEL and source in ("k8s", "any") else _UNKNOWN
    if source not in ("k8s", "any"):
        return None  # a Kubernetes pod's identity has only k8s: labels
    assert endpoint.namespace is not None
    if key == NAMESPACE_LABEL:
        return endpoint.namespace
    if key.startswith(NAMESPACE_LABELS_PREFIX):
        labels = ns.labels(endpoint.namespace)
        name = key[len(NAMESPACE_LABELS_PREFIX):]
        if labels is None:
            return endpoint.namespace if name == "kubernetes.io/metadata.name" else _UNKNOWN
        return labels.get(name)
    if key == SERVICE_ACCOUNT_LABEL:
        return _UNKNOWN if endpoint.service_account is None else endpoint.service_account
    if key == CLUSTER_LABEL or key.startswith("io.cilium.k8s.policy.") or _FILTERED.match(key):
        return _UNKNOWN  # the cluster name; labels the (configurable) label filter drops
    return endpoint.labels.get(key)


def parse_selector(raw: Any, path: str) -> Selector:
    if raw is None:
        raw = {}
    selector = read.fields(raw, path, ("matchLabels", "matchExpressions"))
    requirements: list[Requirement] = []
    labels = selector.get("matchLabels") or {}
    if not isinstance(labels, dict):
        raise Unsupported(f"{path}.matchLabels", "must be a map of strings")
    for key, value in labels.items():
        if not isinstance(value, str):
            raise Unsupported(f"{path}.matchLabels.{key}", "must be a string")
        requirements.append(_requirement(key, "In", [value], f"{path}.matchLabels.{key}",
                                         from_match_labels=True))
    for i, raw_expr in enumerate(read.items(selector.get("matchExpressions"),
                                            f"{path}.matchExpressions")):
        where = f"{path}.matchExpressions[{i}]"
        expr = read.fields(raw_expr, where, ("key", "operator", "values"))
        key, operator = expr.get("key"), expr.get("operator")
        values = read.items(expr.get("values"), f"{where}.values")
        if not isinstance(key, str) or not key:
            raise Unsupported(f"{where}.key", "must be a label key")
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise Unsupported(f"{where}.operator",
                              f"must be In, NotIn, Exists or DoesNotExist, got {operator!r}")
        if (operator in ("In", "NotIn")) != bool(values):
            raise Unsupported(f"{where}.values", "In and NotIn need values; Exists and "
                              "DoesNotExist take none")
        requirements.append(_requirement(key, operator, values, where))
    return Selector(tuple(requirements))


def _requirement(key: str, operator: str, values: list[Any], path: str, *,
                 from_match_labels: bool = False) -> Requirement:
    source, sep, rest = key.partition(":")
    if not sep or source not in _SOURCES:
        source, rest = "any", key
    if not all(isinstance(v, str) for v in values):
        raise Unsupported(path, "values must be strings")
    return Requirement(source, rest, operator, frozenset(values), from_match_labels)


def _in_policy_namespace(subject: Selector) -> Selector:
    """A CNP's endpointSelector as Cilium applies it: its matchLabels entry
    k8s:io.kubernetes.pod.namespace is overwritten with the policy's namespace (which
    applies_to checks), so a different one written there is dropped, not ANDed."""
    return Selector(tuple(r for r in subject.requirements
                          if not (r.from_match_labels and r.source == "k8s"
                                  and r.key == NAMESPACE_LABEL)))


def _namespaced(selector: Selector, namespace: str | None) -> Selector:
    """A peer selector as Cilium scopes it (getEndpointSelector)."""
    if any(r.source == "reserved" for r in selector.requirements):
        return selector  # reserved identities: no namespace is added
    if selector.has(NAMESPACE_LABEL):
        return selector
    if namespace is None:
        if selector.has("init", ("reserved",)):
            return selector
        return selector.with_requirement(Requirement("k8s", NAMESPACE_LABEL, "Exists"))
    if selector.has_prefix(NAMESPACE_LABELS_PREFIX):
        return selector
    return selector.with_requirement(
        Requirement("k8s", NAMESPACE_LABEL, "In", frozenset({namespace})))


# --- rules ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Peer:
    """One L3 alternative of a rule."""

    selector: Selector | None = None
    block: IPBlock | None = None
    entity: str | None = None

    def matches(self, other: Endpoint, subject: Endpoint, ns: Namespaces) -> Tri:
        if self.block is not None:
            # Only traffic with the world: pods and nodes are matched by labels/entities.
            if not other.external:
                return False
            return self.block.matches(other)
        if self.entity is not None:
            return _entity(self.entity, other, subject)
        assert self.selector is not None
        return self.selector.matches(other, ns)

    def describe(self) -> str:
        if self.block is not None:
            return f"CIDR {self.block}"
        if self.entity is not None:
            return f"entity {self.entity}"
        assert self.selector is not None
        return f"endpoints {self.selector.describe()}"


def _entity(entity: str, other: Endpoint, subject: Endpoint) -> Tri:
    if entity == "all":
        return True
    if other.external:
        if entity in ("world", "world-ipv4", "world-ipv6"):
            if entity == "world":
                return True
            families = {":" in ip for ip in other.ips}
            if len(families) != 1:
                return None
            return families.pop() == entity.endswith("6")
        return False if entity == "cluster" else None
    if other.host_network:
        if entity in ("world", "world-ipv4", "world-ipv6"):
            return False
        # host or remote-node, by the nodes of both ends: left undecided, as are the
        # other reserved identities a node address may carry.
        return entity == "cluster" or None
    # A Cilium-managed pod past init: only its own identity, part of the cluster.
    return entity == "cluster"


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    deny: bool
    peers: tuple[Peer, ...] | None  # None: every peer (a rule with ports only)
    ports: tuple[PortMatch, ...] | None  # None: every port
    l7: str | None = None  # what L7 restriction applies where the ports match
    problem: Unsupported | None = None
    never: str | None = None  # why it matches no TCP/UDP/SCTP flow (icmps only)

    def matches(self, other: Endpoint, subject: Endpoint, destination: Endpoint, port: int,
                proto: str, ns: Namespaces) -> Tri:
        if self.problem is not None:
            return None
        if self.never is not None:
            return False
        ports = ports_match(self.ports, port, proto, destination)
        if ports is False:
            return False
        if self.peers is None:
            return ports
        return tri_all((ports, tri_any(p.matches(other, subject, ns) for p in self.peers)))


@dataclass(frozen=True, slots=True)
class Spec:
    """One rule block (``spec`` or ``specs[i]``): a subject and its rules."""

    path: str  # "spec" or "specs[i]"
    subject: Selector | None  # None: a nodeSelector (host policy) or unreadable
    host_policy: bool
    ingress: tuple[Rule, ...]
    egress: tuple[Rule, ...]
    ingress_deny: tuple[Rule, ...]
    egress_deny: tuple[Rule, ...]
    default_deny: Mapping[Direction, bool]
    problem: Unsupported | None = None

    def allows(self, direction: Direction) -> tuple[Rule, ...]:
        return self.ingress if direction is Direction.INGRESS else self.egress

    def denies(self, direction: Direction) -> tuple[Rule, ...]:
        return self.ingress_deny if direction is Direction.INGRESS else self.egress_deny

    def active(self, direction: Direction) -> bool:
        return bool(self.allows(direction) or self.denies(direction))

    def rule_path(self, rule: Rule, direction: Direction) -> str:
        name = direction.value + ("Deny" if rule.deny else "")
        return f"{self.path}.{name}[{rule.index}]"


@dataclass(frozen=True, slots=True)
class CiliumPolicy:
    record: GenericRecord
    specs: tuple[Spec, ...]
    problem: Unsupported | None = None  # the whole object cannot be read

    @property
    def namespace(self) -> str | None:
        return self.record.namespace if self.record.kind == CNP_KIND else None

    def blocks(self) -> Iterable[IPBlock]:
        for spec in self.specs:
            for rule in (*spec.ingress, *spec.egress, *spec.ingress_deny, *spec.egress_deny):
                for peer in rule.peers or ():
                    if peer.block is not None:
                        yield peer.block

    @property
    def label(self) -> str:
        return f"{self.record.kind} {self.record.ref}"

    def applies_to(self, spec: Spec, subject: Endpoint, ns: Namespaces) -> Tri:
        if spec.problem is not None:
            return None
        if spec.host_policy:
            # Host policies govern the node, and with it host-network pods.
            return None if subject.host_network else False
        if subject.external or subject.host_network:
            return False  # host-network pods are no Cilium endpoints
        if self.namespace is not None and subject.namespace != self.namespace:
            return False
        assert spec.subject is not None
        return spec.subject.matches(subject, ns)


def build(record: GenericRecord) -> CiliumPolicy:
    namespace = record.namespace if record.kind == CNP_KIND else None
    raw_specs: list[tuple[str, Any]] = []
    if record.spec is not None:
        raw_specs.append(("spec", record.spec))
    for i, raw in enumerate(record.specs or ()):
        raw_specs.append((f"specs[{i}]", raw))
    if not raw_specs:
        return CiliumPolicy(record, (), Unsupported("spec", "neither spec nor specs is set"))
    return CiliumPolicy(record, tuple(_spec(raw, path, namespace, record.kind)
                                      for path, raw in raw_specs))


_SPEC_FIELDS = ("endpointSelector", "nodeSelector", "ingress", "ingressDeny", "egress",
                "egressDeny", "enableDefaultDeny", "labels", "description", "log")


def _spec(raw: Any, path: str, namespace: str | None, kind: str) -> Spec:
    try:
        spec = read.fields(raw, path, _SPEC_FIELDS)
        has_ep, has_node = spec.get("endpointSelector") is not None, \
            spec.get("nodeSelector") is not None
        if has_ep == has_node:
            raise Unsupported(path, "exactly one of endpointSelector and nodeSelector must "
                              "be set (Cilium rejects the rule)")
        if has_node and kind == CNP_KIND:
            raise Unsupported(f"{path}.nodeSelector", "only a "
                              "CiliumClusterwideNetworkPolicy may select nodes")
        subject = None if has_node else \
            parse_selector(spec["endpointSelector"], f"{path}.endpointSelector")
        if subject is not None and kind == CNP_KIND:
            subject = _in_policy_namespace(subject)
        lists = {name: read.items(spec.get(name), f"{path}.{name}")
                 for name in ("ingress", "ingressDeny", "egress", "egressDeny")}
        default_deny = _default_deny(spec.get("enableDefaultDeny"), lists, path)
    except Unsupported as problem:
        return Spec(path, None, False, (), (), (), (), {}, problem)
    rules = {name: tuple(_guarded(r, i, name, f"{path}.{name}[{i}]", namespace)
                         for i, r in enumerate(raw_rules))
             for name, raw_rules in lists.items()}
    return Spec(path, subject, has_node, rules["ingress"], rules["egress"],
                rules["ingressDeny"], rules["egressDeny"], default_deny)


def _default_deny(raw: Any, lists: Mapping[str, list[Any]], path: str
                  ) -> dict[Direction, bool]:
    """Per direction: True unless enableDefaultDeny says false; the default is true for a
    direction that has rules (and irrelevant for one that has none)."""
    given = read.fields(raw or {}, f"{path}.enableDefaultDeny", ("ingress", "egress"))
    found = {}
    for direction in Direction:
        value = given.get(direction.value)
        if value is not None and not isinstance(value, bool):
            raise Unsupported(f"{path}.enableDefaultDeny.{direction.value}",
                              "must be true or false")
        found[direction] = True if value is None else value
    return found


def _guarded(raw: Any, index: int, name: str, path: str, namespace: str | None) -> Rule:
    deny = name.endswith("Deny")
    try:
        return _rule(raw, index, name, path, namespace)
    except Unsupported as problem:
        return Rule(index, deny, None, None, problem=problem)


_PEER_FIELDS = {
    "ingress": ("fromEndpoints", "fromCIDR", "fromCIDRSet", "fromEntities"),
    "egress": ("toEndpoints", "toCIDR", "toCIDRSet", "toEntities"),
}
_NOT_EVALUATED = {
    "ingress": ("fromRequires", "fromGroups", "fromNodes"),
    "egress": ("toRequires", "toGroups", "toNodes", "toServices", "toFQDNs"),
}


def _rule(raw: Any, index: int, name: str, path: str, namespace: str | None) -> Rule:
    deny = name.endswith("Deny")
    direction = name.removesuffix("Deny")
    peer_fields = _PEER_FIELDS[direction]
    extra = ("icmps", "authentication") if not deny else ("icmps",)
    rule = read.fields(raw, path, (*peer_fields, *_NOT_EVALUATED[direction], "toPorts", *extra))
    for key in (*_NOT_EVALUATED[direction], "authentication"):
        if rule.get(key):
            raise Unsupported(f"{path}.{key}", "not evaluated by netsight")
    endpoints_key, cidr_key, set_key, entities_key = peer_fields
    peers: list[Peer] = []
    for i, sel in enumerate(read.items(rule.get(endpoints_key), f"{path}.{endpoints_key}")):
        peers.append(Peer(selector=_namespaced(
            parse_selector(sel, f"{path}.{endpoints_key}[{i}]"), namespace)))
    for i, cidr in enumerate(read.items(rule.get(cidr_key), f"{path}.{cidr_key}")):
        peers.append(Peer(block=IPBlock.parse(cidr, None, f"{path}.{cidr_key}[{i}]")))
    for i, entry in enumerate(read.items(rule.get(set_key), f"{path}.{set_key}")):
        where = f"{path}.{set_key}[{i}]"
        entry = read.fields(entry, where, ("cidr", "except", "cidrGroupRef", "cidrGroupSelector"))
        if "cidr" not in entry:
            raise Unsupported(where, "CIDR groups (cidrGroupRef, cidrGroupSelector) are not "
                              "evaluated by netsight")
        peers.append(Peer(block=IPBlock.parse(entry["cidr"], entry.get("except"), where)))
    for i, entity in enumerate(read.items(rule.get(entities_key), f"{path}.{entities_key}")):
        if not isinstance(entity, str) or entity not in _ENTITIES:
            raise Unsupported(f"{path}.{entities_key}[{i}]", f"unknown entity {entity!r}")
        peers.append(Peer(entity=entity))
    has_peers = any(rule.get(k) is not None and rule.get(k) != [] for k in peer_fields)
    ports, l7 = _ports(rule.get("toPorts"), f"{path}.toPorts", deny)
    never = None
    if rule.get("icmps"):
        if rule.get("toPorts"):
            raise Unsupported(f"{path}.icmps", "icmps and toPorts together")
        never = "it matches ICMP only"
    if not has_peers:
        # Ports alone: every peer; neither peers nor ports: nothing.
        return Rule(index, deny, None if ports is not None else (), ports, l7, never=never)
    return Rule(index, deny, tuple(peers), ports, l7, never=never)


def _ports(raw: Any, path: str, deny: bool) -> tuple[tuple[PortMatch, ...] | None,
                                                   str | None]:
    entries = read.items(raw, path)
    if not entries:
        return None, None
    found: list[PortMatch] = []
    l7: list[str] = []
    for i, entry in enumerate(entries):
        where = f"{path}[{i}]"
        rule = read.fields(entry, where, ("ports",) if deny else ("ports", *_L7))
        for key in _L7:
            value = rule.get(key)
            if value:
                kinds = ", ".join(sorted(value)) if isinstance(value, dict) else key
                l7.append(f"{where}.{key} ({kinds})")
        ports = read.items(rule.get("ports"), f"{where}.ports")
        if not ports:
            found.append(PortMatch(None))  # every port and protocol
        for j, port in enumerate(ports):
            found.append(_port(port, f"{where}.ports[{j}]"))
    return tuple(found), ("; ".join(l7) or None)


def _port(raw: Any, path: str) -> PortMatch:
    entry = read.fields(raw, path, ("port", "endPort", "protocol"))
    proto_raw = entry.get("protocol") or "ANY"
    if not isinstance(proto_raw, str) or proto_raw not in _PROTOCOLS:
        raise Unsupported(f"{path}.protocol", f"{proto_raw!r} is not TCP, UDP, SCTP or ANY")
    proto = _PROTOCOLS[proto_raw]
    port, end = entry.get("port"), entry.get("endPort")
    if isinstance(port, str) and read.digits(port) is not None:
        port = read.digits(port)
    if port is None or port == 0:
        if end:
            raise Unsupported(f"{path}.endPort", "endPort needs a port")
        return PortMatch(proto)  # "0" or absent: every port
    if isinstance(port, str):
        if end:
            raise Unsupported(f"{path}.endPort", "endPort needs a numeric port")
        return PortMatch(proto, name=port)
    start = read.port_number(port, f"{path}.port")
    if not end:
        return PortMatch(proto, start)
    stop = read.port_number(end, f"{path}.endPort")
    if stop < start:
        raise Unsupported(f"{path}.endPort", "endPort must not be less than port")
    return PortMatch(proto, start, stop)
