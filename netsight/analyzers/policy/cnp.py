"""ClusterNetworkPolicy (policy.networking.k8s.io v1alpha2, and v1beta1 with the same spec),
the successor of ANP and BANP.

One kind for both tiers: ``spec.tier`` Admin (checked before NetworkPolicy) or Baseline
(after it), ``priority`` 0-1000 within the tier, rules in order with action Accept, Deny
or Pass (skip the rest of this tier). Ports are ``protocols``: one of ``tcp``/``udp``/
``sctp`` with an optional ``destinationPort`` (``number`` or ``range``; absent: every port
of that protocol), or ``destinationNamedPort``. Subjects and peers are those of v1alpha1
(a ``pods`` entry may omit its namespaceSelector: every namespace);
egress ``domainNames`` peers are not evaluated (they need DNS answers netsight lacks).
Built into the same model as ANPs, so one evaluator serves both.

v1alpha2 as first published matched ports as v1alpha1 does, with a rule's ``ports``
(``portNumber``, ``namedPort``, ``portRange``); upstream's conformance manifests of that time
are written so. A v1alpha2 rule is read with either field (not both); v1beta1 has only
``protocols``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.anp import (
    CNP_KIND,
    AdminPolicy,
    Rule,
    parse_peer,
    parse_subject,
    ports_of,
    rules_of,
)
from netsight.analyzers.policy.peers import PortMatch
from netsight.analyzers.policy.spec_reading import Unsupported
from netsight.analyzers.policy.verdict import Action, Direction
from netsight.graph.model.records import GenericRecord, Record

# v1beta1 promoted v1alpha2's spec unchanged (tier, priority, subject, rules, protocols).
V1ALPHA2 = "policy.networking.k8s.io/v1alpha2"
VERSIONS = frozenset({V1ALPHA2, "policy.networking.k8s.io/v1beta1"})


def evaluated(record: Record) -> bool:
    """Whether netsight models this ClusterNetworkPolicy (Antrea's shares the kind name)."""
    return record.api_version in VERSIONS


_ACTIONS = {"Accept": Action.ALLOW, "Deny": Action.DENY, "Pass": Action.PASS}
_TRANSPORTS = {"tcp": "TCP", "udp": "UDP", "sctp": "SCTP"}


def build(record: GenericRecord) -> AdminPolicy:
    assert record.kind == CNP_KIND
    spec: Mapping[str, Any] = record.spec or {}
    tier, priority = spec.get("tier"), spec.get("priority")
    baseline = tier == "Baseline"
    order = priority if isinstance(priority, int) and not isinstance(priority, bool) else 1001
    try:
        if tier not in ("Admin", "Baseline"):
            raise Unsupported("spec.tier", f"must be Admin or Baseline, got {tier!r}")
        if not 0 <= order <= 1000:
            raise Unsupported("spec.priority", f"must be 0-1000, got {priority!r}")
        read.fields(spec, "spec", ("tier", "priority", "subject", "ingress", "egress"))
        namespaces, pods = parse_subject(spec.get("subject"), any_namespace=True)
    except Unsupported as problem:
        return AdminPolicy(record, baseline, order, subject_problem=problem)
    rules, problems = rules_of(spec, _v1alpha2_rule if record.api_version == V1ALPHA2 else _rule)
    return AdminPolicy(record, baseline, order, namespaces, pods,
                       rules[Direction.INGRESS], rules[Direction.EGRESS],
                       ingress_problem=problems.get(Direction.INGRESS),
                       egress_problem=problems.get(Direction.EGRESS))


def _v1alpha2_rule(raw: Any, index: int, direction: Direction) -> Rule:
    return _rule(raw, index, direction, legacy_ports=True)


def _rule(raw: Any, index: int, direction: Direction, *, legacy_ports: bool = False) -> Rule:
    path = f"spec.{direction.value}[{index}]"
    key = direction.peers_field
    rule = read.fields(raw, path, ("name", "action", key, "protocols")
                       + (("ports",) if legacy_ports else ()))
    if "ports" in rule and "protocols" in rule:
        raise Unsupported(path, "either ports (early v1alpha2) or protocols, not both")
    action = _ACTIONS.get(str(rule.get("action")))
    if action is None:
        raise Unsupported(f"{path}.action", f"must be Accept, Deny or Pass, got "
                          f"{rule.get('action')!r}")
    raw_peers = read.items(rule.get(key), f"{path}.{key}")
    if not raw_peers:
        raise Unsupported(f"{path}.{key}", "must list at least one peer")
    peers = tuple(parse_peer(p, f"{path}.{key}[{i}]", direction, any_namespace=True)
                  for i, p in enumerate(raw_peers))
    if "ports" in rule:
        return Rule(index, str(rule.get("name") or ""), action, peers,
                    ports_of(rule["ports"], f"{path}.ports"))
    protocols = read.items(rule.get("protocols"), f"{path}.protocols")
    ports = tuple(_protocol(p, f"{path}.protocols[{i}]") for i, p in enumerate(protocols))
    return Rule(index, str(rule.get("name") or ""), action, peers, ports or None)


def _protocol(raw: Any, path: str) -> PortMatch:
    entry = read.fields(raw, path, ("tcp", "udp", "sctp", "destinationNamedPort"))
    if len(entry) != 1:
        raise Unsupported(path, "exactly one of tcp, udp, sctp, destinationNamedPort")
    if "destinationNamedPort" in entry:
        name = entry["destinationNamedPort"]
        if not isinstance(name, str) or not name:
            raise Unsupported(f"{path}.destinationNamedPort", "must be a port name")
        return PortMatch(None, name=name)  # the container port carries the protocol
    (transport, value), = entry.items()
    attributes = read.fields(value or {}, f"{path}.{transport}", ("destinationPort",))
    port = attributes.get("destinationPort")
    proto = _TRANSPORTS[transport]
    if port is None:
        return PortMatch(proto)
    where = f"{path}.{transport}.destinationPort"
    port = read.fields(port, where, ("number", "range"))
    if len(port) != 1:
        raise Unsupported(where, "exactly one of number, range")
    if "number" in port:
        return PortMatch(proto, read.port_number(port["number"], f"{where}.number"))
    span = read.fields(port["range"], f"{where}.range", ("start", "end"))
    start = read.port_number(span.get("start"), f"{where}.range.start")
    end = read.port_number(span.get("end"), f"{where}.range.end")
    if end < start:
        raise Unsupported(f"{where}.range", "end must not be less than start")
    return PortMatch(proto, start, end)
