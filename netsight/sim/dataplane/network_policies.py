"""NetworkPolicy (networking.k8s.io/v1) for one direction of one flow, from the API's spec.

A pod is isolated in a direction once any policy of its namespace selects it with that
policy type; an isolated pod admits what the union of those policies' rules allows. A rule
matches when one of its peers and one of its ports match (an empty or missing list matches
all). ``policyTypes`` defaults to Ingress, plus Egress when the policy has egress rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.sim.dataplane.flows import Direction, Flow
from netsight.sim.dataplane.label_selectors import labels_of, matches
from netsight.sim.dataplane.snapshot import (
    NETWORK_POLICY,
    Cluster,
    Endpoint,
    in_cidr,
    name_of,
    named_port,
    namespace_of,
)


def policy_types(policy: Mapping[str, Any]) -> list[str]:
    spec = policy.get("spec") or {}
    declared = spec.get("policyTypes")
    if declared:
        return [str(t) for t in declared]
    return ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def decide(cluster: Cluster, flow: Flow, direction: Direction) -> tuple[bool, list[str]] | None:
    """(allowed, the policies that selected the subject) when some NetworkPolicy isolates the
    subject in ``direction``; None when none does (the layer has no say)."""
    subject = flow.subject(direction)
    if not subject.in_pod_network or subject.pod is None:
        return None
    namespace = namespace_of(subject.pod)
    labels = labels_of(subject.pod)
    selecting = [p for p in cluster.each(NETWORK_POLICY, namespace)
                 if direction.value in policy_types(p)
                 and matches((p.get("spec") or {}).get("podSelector") or {}, labels)]
    if not selecting:
        return None
    names = sorted(f"{namespace}/{name_of(p)}" for p in selecting)
    section, peers_key = ("ingress", "from") if direction is Direction.INGRESS else ("egress", "to")
    for policy in selecting:
        for rule in (policy.get("spec") or {}).get(section) or ():
            if _ports_match(rule.get("ports"), flow) and _peers_match(
                    cluster, rule.get(peers_key), flow.peer(direction), namespace_of(policy)):
                return True, [f"{namespace}/{name_of(policy)}"]
    return False, names


def _ports_match(ports: list[Mapping[str, Any]] | None, flow: Flow) -> bool:
    if not ports:
        return True
    for entry in ports:
        if (entry.get("protocol") or "TCP") != flow.protocol:
            continue
        port = entry.get("port")
        if port is None:
            return True
        if isinstance(port, str) and not port.isdigit():
            # A named port names a port of the destination pod (for ingress the subject
            # itself); traffic to anything but a pod cannot match one.
            if named_port(flow.dst.pod, port, flow.protocol) == flow.port:
                return True
            continue
        start = int(port)
        end = int(entry.get("endPort") or start)
        if start <= flow.port <= end:
            return True
    return False


def _peers_match(cluster: Cluster, peers: list[Mapping[str, Any]] | None, peer: Endpoint,
                 policy_namespace: str) -> bool:
    if not peers:
        return True
    return any(_peer_matches(cluster, entry, peer, policy_namespace) for entry in peers)


def _peer_matches(cluster: Cluster, entry: Mapping[str, Any], peer: Endpoint,
                  policy_namespace: str) -> bool:
    block = entry.get("ipBlock")
    if block is not None:
        return bool(peer.ip) and in_cidr(peer.ip, block.get("cidr", "")) and not any(
            in_cidr(peer.ip, cidr) for cidr in block.get("except") or ())
    if not peer.in_pod_network or peer.pod is None:
        return False  # pod and namespace selectors select pods only
    pod_selector = entry.get("podSelector")
    namespace_selector = entry.get("namespaceSelector")
    if pod_selector is None and namespace_selector is None:
        return False  # an empty peer is invalid; the API server refuses it
    namespace = namespace_of(peer.pod)
    if namespace_selector is None:
        if namespace != policy_namespace:
            return False
    elif not matches(namespace_selector, cluster.namespace_labels(namespace)):
        return False
    return pod_selector is None or matches(pod_selector, labels_of(peer.pod))
