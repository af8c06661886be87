"""The simulated network's configuration and faults: what the cluster's objects do not say.

Which CNI runs (its policy enforcement), which declared ports nothing listens on, how
applications answer HTTP, what lies outside the cluster, and faults to inject: nodes that
drop traffic, DNS down. Settable in-process (``SimState.network``) and over HTTP
(``POST /sim/dataplane``, :meth:`Network.configure`). Invisible to the API: only a probe
can find these out, as in a real cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.sim.dataplane.enforcement import Profile


class NetworkConfigError(ValueError):
    """A ``POST /sim/dataplane`` body the simulator cannot apply; says what to fix."""


@dataclass
class Network:
    cni: Profile = Profile.NETPOL
    cluster_domain: str = "cluster.local"
    # pod "namespace/name" -> ports it declares but does not listen on (a missing listener)
    closed_ports: dict[str, set[int]] = field(default_factory=dict)
    # pod "namespace/name" -> ports it listens on without declaring them
    open_ports: dict[str, set[int]] = field(default_factory=dict)
    # pod "namespace/name" -> the HTTP status its application answers (200 otherwise)
    http_status: dict[str, int] = field(default_factory=dict)
    # names outside the cluster the upstream resolver knows, and their addresses; a
    # connection to one of those addresses is answered (the internet, simulated)
    external: dict[str, list[str]] = field(default_factory=lambda: {
        "example.com": ["93.184.215.14"]})
    # faults
    dropping_nodes: set[str] = field(default_factory=set)  # every packet to or from is lost
    dns_down: bool = False  # the cluster DNS answers SERVFAIL
    # simulated latencies, in milliseconds
    hop_ms: float = 0.2  # one packet's way between two pods on one node
    node_hop_ms: float = 0.5  # ... on two nodes
    dns_ms: float = 0.8
    http_ms: float = 2.0
    tls_ms: float = 3.0

    def listens(self, pod_key: str, port: int, declared: bool) -> bool:
        if port in self.open_ports.get(pod_key, ()):
            return True
        return declared and port not in self.closed_ports.get(pod_key, ())

    def close_port(self, pod_key: str, port: int) -> None:
        """Fault: ``pod_key`` declares ``port`` but nothing listens on it."""
        self.closed_ports.setdefault(pod_key, set()).add(port)

    def configure(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Apply a ``POST /sim/dataplane`` body; returns the settings now. Keys: ``cni``,
        ``closePort``/``openPort``/``restorePort`` ``{"pod": "ns/name", "port": n}``,
        ``httpStatus`` ``{"pod": "ns/name", "status": n}`` (status null: back to 200),
        ``dropNode``/``restoreNode`` (a node name), ``dnsDown`` (bool), ``external``
        ``{"name": [ips]}``."""
        if not isinstance(body, Mapping):
            raise NetworkConfigError("the body must be a JSON object")
        try:
            if "cni" in body:
                self.cni = Profile(body["cni"])
            for key, target in (("closePort", self.closed_ports), ("openPort", self.open_ports)):
                if key in body:
                    pod, port = _pod_port(body[key], key)
                    target.setdefault(pod, set()).add(port)
            if "restorePort" in body:
                pod, port = _pod_port(body["restorePort"], "restorePort")
                self.closed_ports.get(pod, set()).discard(port)
                self.open_ports.get(pod, set()).discard(port)
            if "httpStatus" in body:
                entry = body["httpStatus"]
                pod = _pod_key(entry.get("pod"), "httpStatus.pod")
                if entry.get("status") is None:
                    self.http_status.pop(pod, None)
                else:
                    status = int(entry["status"])
                    if not 100 <= status <= 599:
                        raise NetworkConfigError("httpStatus.status must be 100-599")
                    self.http_status[pod] = status
            if "dropNode" in body:
                self.dropping_nodes.add(str(body["dropNode"]))
            if "restoreNode" in body:
                self.dropping_nodes.discard(str(body["restoreNode"]))
            if "dnsDown" in body:
                self.dns_down = bool(body["dnsDown"])
            for name, addresses in (body.get("external") or {}).items():
                self.external[str(name).lower().rstrip(".")] = [str(a) for a in addresses]
        except (TypeError, AttributeError, KeyError) as exc:
            raise NetworkConfigError(f"cannot read the body: {exc}") from None
        except ValueError as exc:
            if isinstance(exc, NetworkConfigError):
                raise
            raise NetworkConfigError(
                f"{exc}; cni must be one of {', '.join(p.value for p in Profile)}") from None
        return self.describe()

    def describe(self) -> dict[str, Any]:
        return {"cni": self.cni.value,
                "closedPorts": {k: sorted(v) for k, v in sorted(self.closed_ports.items()) if v},
                "openPorts": {k: sorted(v) for k, v in sorted(self.open_ports.items()) if v},
                "httpStatus": dict(sorted(self.http_status.items())),
                "droppingNodes": sorted(self.dropping_nodes), "dnsDown": self.dns_down,
                "external": dict(sorted(self.external.items()))}


def _pod_key(value: Any, where: str) -> str:
    if not isinstance(value, str) or value.count("/") != 1 or not all(value.split("/")):
        raise NetworkConfigError(f"{where} must be a pod as namespace/name, got {value!r}")
    return value


def _pod_port(entry: Any, where: str) -> tuple[str, int]:
    if not isinstance(entry, Mapping):
        raise NetworkConfigError(f'{where} must be {{"pod": "namespace/name", "port": n}}')
    port = entry.get("port")
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise NetworkConfigError(f"{where}.port must be a port number 1-65535")
    return _pod_key(entry.get("pod"), f"{where}.pod"), port
