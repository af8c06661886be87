"""Peers grouped by identity, and split on the per-pod facts a verdict can still depend on.

Policies select pods by labels, so pods sharing namespace and labels (an *identity*) share
the verdict, except where one of these tells them apart; an identity is then split on it,
never guessed:

- the pod's IPs, against every ipBlock / ``networks`` CIDR a policy names (the split key is
  which of those blocks the IPs fall in, not the IPs themselves);
- host networking (and then the node, for ANP ``nodes`` peers);
- the pod's container ports, where the peer is the destination (named ports resolve there);
- with Istio policies present, what the mesh reads: the service account (the principal), the
  sidecar container and the annotations that opt a pod in or out of the mesh or its ports.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from netsight.analyzers.core import deadline
from netsight.analyzers.policy import istio_mesh, kuma_authz, linkerd_authz
from netsight.analyzers.policy.endpoints import Endpoint, from_pod, live
from netsight.analyzers.policy.peers import IPBlock, Network
from netsight.analyzers.policy.verdict import Tri
from netsight.graph.model.kinds import WORKLOAD_KINDS, Kind
from netsight.graph.model.records import PodRecord, Record, WorkloadRecord
from netsight.graph.model.selectors import selector_from_map
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


def peer_endpoint(view: GraphView, record: Record, alone: str | None) -> Endpoint | None:
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


# A block as integers: (version, first, last, excepts as (version, first, last)).
Compiled = tuple[int, int, int, tuple[tuple[int, int, int], ...]]


def compile_blocks(blocks: tuple[IPBlock, ...]) -> tuple[Compiled, ...]:
    def span(net: Network) -> tuple[int, int, int]:
        return net.version, int(net.network_address), int(net.broadcast_address)
    return tuple((*span(b.cidr), tuple(span(e) for e in b.excepts)) for b in blocks)


def parse_address(text: str) -> tuple[int, int] | None:
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
    parsed = [a for a in map(parse_address, ips) if a is not None]
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
            (*(istio_mesh.identity_facts(endpoint)[1:] if mesh else ()),
             *linkerd_authz.mesh_facts(endpoint), *kuma_authz.mesh_facts(endpoint)))


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
    # Every pod of the cluster, for some questions: checked in runs, as each is quick.
    for endpoint in deadline.checked(endpoints, every=64):
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
    for g in deadline.checked(groups.values(), every=64):
        g.members.sort(key=lambda e: e.name)
    return sorted(groups.values(), key=lambda g: (g.namespace, g.labels, g.rep.name))


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
