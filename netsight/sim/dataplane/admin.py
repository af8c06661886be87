"""Cluster-scoped admin policies, from the network-policy-api specs: AdminNetworkPolicy and
BaselineAdminNetworkPolicy (policy.networking.k8s.io/v1alpha1), and their successor
ClusterNetworkPolicy (v1alpha2, v1beta1) with ``tier: Admin`` or ``Baseline``.

The admin tier runs before NetworkPolicy: its policies in priority order (lower first), and
in each the first rule whose peer and port match decides — Allow/Accept and Deny end the
evaluation, Pass hands the flow to NetworkPolicy. The baseline tier runs only where no
NetworkPolicy isolates the pod, in the same way; nothing matching there means allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from netsight.sim.dataplane.flows import Direction, Flow
from netsight.sim.dataplane.label_selectors import labels_of, matches
from netsight.sim.dataplane.snapshot import (
    ANP,
    BANP,
    CNP,
    Cluster,
    Endpoint,
    in_cidr,
    name_of,
    named_port,
    namespace_of,
)


class Tier(StrEnum):
    ADMIN = "Admin"
    BASELINE = "Baseline"


class Action(StrEnum):
    ALLOW = "Allow"
    DENY = "Deny"
    PASS = "Pass"


_ACTIONS = {"Allow": Action.ALLOW, "Accept": Action.ALLOW, "Deny": Action.DENY,
            "Pass": Action.PASS}
_PROTOCOL_KEYS = {"tcp": "TCP", "udp": "UDP", "sctp": "SCTP"}


@dataclass(frozen=True)
class Match:
    action: Action
    policy: str  # Kind/name
    rule: str


def decide(cluster: Cluster, flow: Flow, direction: Direction, tier: Tier) -> Match | None:
    """The first matching rule of the tier's policies that select the subject; None when no
    rule matches (or the subject is not a pod on the pod network)."""
    subject = flow.subject(direction)
    if not subject.in_pod_network or subject.pod is None:
        return None
    labels = labels_of(subject.pod)
    namespace_labels = cluster.namespace_labels(namespace_of(subject.pod))
    section, peers_key = ("ingress", "from") if direction is Direction.INGRESS else ("egress", "to")
    for kind, policy in _policies(cluster, tier):
        spec = policy.get("spec") or {}
        if not _subject_matches(spec.get("subject") or {}, labels, namespace_labels):
            continue
        for index, rule in enumerate(spec.get(section) or ()):
            action = _ACTIONS.get(str(rule.get("action")))
            if action is None:
                continue
            if not _ports_match(rule, flow):
                continue
            if not any(_peer_matches(cluster, peer, flow.peer(direction))
                       for peer in rule.get(peers_key) or ()):
                continue
            return Match(action, f"{kind}/{name_of(policy)}",
                         str(rule.get("name") or f"{section}[{index}]"))
    return None


def _policies(cluster: Cluster, tier: Tier) -> list[tuple[str, Mapping[str, Any]]]:
    """The tier's policies in the order they apply: priority, then name (the spec leaves
    equal priorities undefined; a name order at least makes the simulation repeatable)."""
    found: list[tuple[int, str, str, Mapping[str, Any]]] = []
    if tier is Tier.ADMIN:
        for policy in cluster.each(ANP):
            found.append((int((policy.get("spec") or {}).get("priority") or 0), name_of(policy),
                          "AdminNetworkPolicy", policy))
    else:
        for policy in cluster.each(BANP):
            found.append((0, name_of(policy), "BaselineAdminNetworkPolicy", policy))
    for policy in cluster.each(CNP):
        spec = policy.get("spec") or {}
        if spec.get("tier") == tier.value:
            found.append((int(spec.get("priority") or 0), name_of(policy),
                          "ClusterNetworkPolicy", policy))
    found.sort(key=lambda entry: (entry[0], entry[1], entry[2]))
    return [(kind, policy) for _, _, kind, policy in found]


def _subject_matches(subject: Mapping[str, Any], labels: Mapping[str, str],
                     namespace_labels: Mapping[str, str]) -> bool:
    if "namespaces" in subject:
        return matches(subject["namespaces"] or {}, namespace_labels)
    pods = subject.get("pods")
    if pods is not None:
        return (matches(pods.get("namespaceSelector") or {}, namespace_labels)
                and matches(pods.get("podSelector") or {}, labels))
    return False


def _peer_matches(cluster: Cluster, peer: Mapping[str, Any], endpoint: Endpoint) -> bool:
    if "networks" in peer:
        return bool(endpoint.ip) and any(in_cidr(endpoint.ip, c) for c in peer["networks"] or ())
    if "nodes" in peer:
        return endpoint.node is not None and matches(peer["nodes"] or {},
                                                     labels_of(endpoint.node))
    if not endpoint.in_pod_network or endpoint.pod is None:
        return False
    namespace_labels = cluster.namespace_labels(namespace_of(endpoint.pod))
    if "namespaces" in peer:
        return matches(peer["namespaces"] or {}, namespace_labels)
    pods = peer.get("pods")
    if pods is not None:
        return (matches(pods.get("namespaceSelector") or {}, namespace_labels)
                and matches(pods.get("podSelector") or {}, labels_of(endpoint.pod)))
    return False


def _ports_match(rule: Mapping[str, Any], flow: Flow) -> bool:
    """v1alpha1 (and early v1alpha2) ``ports``: portNumber, namedPort, portRange; v1alpha2
    and v1beta1 ``protocols``: ``{tcp|udp|sctp: {destinationPort: {number | range}}}`` or
    ``destinationNamedPort``. Neither given: every port."""
    if "protocols" in rule:
        return any(_protocol_matches(entry, flow) for entry in rule["protocols"] or ())
    ports = rule.get("ports")
    if not ports:
        return True
    for entry in ports:
        if "portNumber" in entry:
            number = entry["portNumber"] or {}
            if (number.get("protocol") or "TCP") == flow.protocol \
                    and int(number.get("port") or 0) == flow.port:
                return True
        elif "namedPort" in entry:
            if named_port(flow.dst.pod, str(entry["namedPort"]), flow.protocol) == flow.port:
                return True
        elif "portRange" in entry:
            span = entry["portRange"] or {}
            if (span.get("protocol") or "TCP") == flow.protocol \
                    and int(span.get("start") or 0) <= flow.port <= int(span.get("end") or 0):
                return True
    return False


def _protocol_matches(entry: Mapping[str, Any], flow: Flow) -> bool:
    if "destinationNamedPort" in entry:
        return named_port(flow.dst.pod, str(entry["destinationNamedPort"]),
                          flow.protocol) == flow.port
    for key, protocol in _PROTOCOL_KEYS.items():
        if key not in entry:
            continue
        if protocol != flow.protocol:
            return False
        port = (entry[key] or {}).get("destinationPort")
        if not port:
            return True
        if "number" in port:
            return int(port["number"]) == flow.port
        span = port.get("range") or {}
        return int(span.get("start") or 0) <= flow.port <= int(span.get("end") or 0)
    return False
