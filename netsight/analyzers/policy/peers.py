"""Matchers shared by every policy kind: namespaces, IP blocks and ports, three-valued.

A matcher answers True, False, or None when the input cannot tell (a pod whose IP is not
in the manifests, a namespace whose labels are unknown). Built once per policy version
(:mod:`spec_reading` refuses any shape netsight does not evaluate).
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.verdict import Tri
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView

# Set by the API server on every namespace since Kubernetes 1.22; manifests may omit it.
NAME_LABEL = "kubernetes.io/metadata.name"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def selector_keys(sel: LabelSelector) -> set[str]:
    return {k for k, _ in sel.match_labels} | {r.key for r in sel.requirements}


@dataclass
class Namespaces:
    """Namespace labels, looked up once per query. Unknown namespaces (manifests that leave
    the Namespace object out) have only their name label for certain."""

    view: GraphView
    _labels: dict[str, Mapping[str, str] | None] = field(default_factory=dict)

    def labels(self, namespace: str) -> Mapping[str, str] | None:
        if namespace not in self._labels:
            record: Record | None = self.view.get(make_key(Kind.NAMESPACE, "", namespace))
            self._labels[namespace] = None if record is None else \
                {**record.labels, NAME_LABEL: namespace}
        return self._labels[namespace]

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        record = self.view.get(make_key("Node", "", node))
        return None if record is None else record.labels

    def matches(self, sel: LabelSelector, namespace: str) -> Tri:
        if sel.is_empty:
            return True
        labels = self.labels(namespace)
        if labels is not None:
            return sel.matches(labels)
        if selector_keys(sel) == {NAME_LABEL}:
            return sel.matches({NAME_LABEL: namespace})
        return None


@dataclass(frozen=True, slots=True)
class IPBlock:
    cidr: Network
    excepts: tuple[Network, ...] = ()
    # The block as integers: (version, first, last, excepts as (version, first, last)).
    _ints: tuple[int, int, int, tuple[tuple[int, int, int], ...]] = field(
        init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ints", (
            self.cidr.version, int(self.cidr.network_address),
            int(self.cidr.broadcast_address),
            tuple((e.version, int(e.network_address), int(e.broadcast_address))
                  for e in self.excepts)))

    @classmethod
    def parse(cls, cidr: Any, excepts: Any, path: str) -> IPBlock:
        network = read.network(cidr, f"{path}.cidr")
        rest = tuple(read.network(e, f"{path}.except[{i}]")
                     for i, e in enumerate(read.items(excepts, f"{path}.except")))
        return cls(network, rest)

    def contains(self, address: str) -> bool:
        parsed = _parse(address)
        if parsed is None:  # not in the plain forms inet_pton reads: ipaddress decides
            ip = ipaddress.ip_address(address)
            if ip.version != self.cidr.version or ip not in self.cidr:
                return False
            return not any(ip.version == e.version and ip in e for e in self.excepts)
        version, value = parsed
        own, first, last, excepts = self._ints
        if version != own or not first <= value <= last:
            return False
        return not any(v == version and lo <= value <= hi for v, lo, hi in excepts)

    def matches(self, endpoint: Endpoint) -> Tri:
        """Against the endpoint's IPs; None when they are unknown or the families disagree."""
        ips = endpoint.ips
        if not ips:
            return None
        if len(ips) == 1:
            return self.contains(ips[0])
        answers = {self.contains(ip) for ip in ips}
        return answers.pop() if len(answers) == 1 else None

    def __str__(self) -> str:
        shown = str(self.cidr)
        if self.excepts:
            shown += f" except {', '.join(map(str, self.excepts))}"
        return shown


# The longest plain address text (IPv6 ending in an IPv4 address); inet_pton reads none longer.
_LONGEST_ADDRESS = 45


def _parse(address: str) -> tuple[int, int] | None:
    """(IP version, value) of an address in its plain textual form, else None. Pod IPs are
    compared with one CIDR after another (every admin policy naming a metadata server):
    inet_pton reads one in a fraction of ipaddress.ip_address's time, and it accepts no
    form ip_address refuses (leading zeros, short IPv4 forms); scoped IPv6 addresses and
    anything else it refuses are left to ipaddress. Longer text is no plain address, and
    is not kept in the cache (a caller's or a manifest's value can be megabytes)."""
    return _parse_plain(address) if len(address) <= _LONGEST_ADDRESS else None


@functools.lru_cache(maxsize=4096)  # one flow compares an address with many CIDRs
def _parse_plain(address: str) -> tuple[int, int] | None:
    try:
        return 4, int.from_bytes(socket.inet_pton(socket.AF_INET, address), "big")
    except OSError:
        pass
    try:
        return 6, int.from_bytes(socket.inet_pton(socket.AF_INET6, address), "big")
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class PortMatch:
    """One port entry: a protocol (None: any), and a number range or a name (or neither: all
    ports of the protocol). A name resolves on the *destination* pod's container ports."""

    protocol: str | None = "TCP"
    start: int | None = None
    end: int | None = None
    name: str | None = None

    def matches(self, port: int, proto: str, destination: Endpoint) -> Tri:
        if self.protocol is not None and proto != self.protocol:
            return False
        if self.name is not None:
            # A name refers to a container port; outside the cluster there is none.
            return any(p.name == self.name and p.port == port and p.protocol == proto
                       for p in destination.ports)
        if self.start is None:
            return True
        end = self.start if self.end is None else self.end
        return self.start <= port <= end

    def describe(self) -> str:
        where = self.name or ("any port" if self.start is None else
                              str(self.start) if self.end in (None, self.start)
                              else f"{self.start}-{self.end}")
        return f"{where}/{self.protocol or 'any'}"


def ports_match(ports: tuple[PortMatch, ...] | None, port: int, proto: str,
                destination: Endpoint) -> Tri:
    """None (the field absent): every port; otherwise any entry."""
    if ports is None:
        return True
    unknown = False
    for entry in ports:
        found = entry.matches(port, proto, destination)
        if found:
            return True
        unknown |= found is None
    return None if unknown else False
