"""What the data plane sees of the simulated cluster: the stored objects, indexed lazily.

The data plane reads the simulator's storage as plain dicts keyed ``(group, kind)`` ->
``namespace/name`` (``SimState.objects``) and never imports the state or the API server:
one :class:`Cluster` serves one decision and builds only the indexes that decision needs.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

Obj = dict[str, Any]
Objects = Mapping[tuple[str, str], Mapping[str, Obj]]

POD: Final = ("", "Pod")
SERVICE: Final = ("", "Service")
NAMESPACE: Final = ("", "Namespace")
NODE: Final = ("", "Node")
SLICE: Final = ("discovery.k8s.io", "EndpointSlice")
NETWORK_POLICY: Final = ("networking.k8s.io", "NetworkPolicy")
ANP: Final = ("policy.networking.k8s.io", "AdminNetworkPolicy")
BANP: Final = ("policy.networking.k8s.io", "BaselineAdminNetworkPolicy")
CNP: Final = ("policy.networking.k8s.io", "ClusterNetworkPolicy")
PEER_AUTHENTICATION: Final = ("security.istio.io", "PeerAuthentication")
NAME_LABEL: Final = "kubernetes.io/metadata.name"
MESH_PROXY: Final = "istio-proxy"  # the container Istio's injector adds


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def key_of(obj: Mapping[str, Any]) -> str:
    return f"{namespace_of(obj)}/{name_of(obj)}"


def pod_ips(pod: Mapping[str, Any]) -> list[str]:
    status = pod.get("status") or {}
    ips = [str(e["ip"]) for e in status.get("podIPs") or () if e.get("ip")]
    return ips or ([str(status["podIP"])] if status.get("podIP") else [])


def host_network(pod: Mapping[str, Any]) -> bool:
    return (pod.get("spec") or {}).get("hostNetwork") is True


def has_sidecar(pod: Mapping[str, Any]) -> bool:
    """Whether the pod runs Istio's proxy: a container (or a native sidecar, an init
    container) named istio-proxy. What the injector did, not what labels ask for."""
    spec = pod.get("spec") or {}
    return any(c.get("name") == MESH_PROXY
               for section in ("containers", "initContainers")
               for c in spec.get(section) or ())


def container_ports(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Declared ports of the pod's containers and native sidecars."""
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    return [p for c in [*(spec.get("containers") or ()), *sidecars] for p in c.get("ports") or ()]


def named_port(pod: Mapping[str, Any] | None, name: str, protocol: str) -> int | None:
    """The number a named port has on ``pod`` for ``protocol``; None when it has none."""
    if pod is None:
        return None
    for port in container_ports(pod):
        if port.get("name") == name and (port.get("protocol") or "TCP") == protocol:
            return int(port["containerPort"])
    return None


def in_cidr(ip: str, cidr: str) -> bool:
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False


@dataclass(frozen=True)
class Endpoint:
    """One end of a flow: an IP, and the pod or node that holds it, if any."""

    ip: str
    pod: Obj | None = None
    node: Obj | None = None

    @property
    def in_pod_network(self) -> bool:
        """A pod on the pod network: host-network pods take their node's address and are
        neither subjects nor pod peers of network policies."""
        return self.pod is not None and not host_network(self.pod)

    def describe(self) -> str:
        if self.pod is not None:
            return f"pod {key_of(self.pod)}"
        if self.node is not None:
            return f"node {name_of(self.node)}"
        return self.ip


@dataclass
class Cluster:
    objects: Objects
    _by_ip: dict[str, Obj] | None = field(default=None, init=False, repr=False)
    _node_by_ip: dict[str, Obj] | None = field(default=None, init=False, repr=False)

    def store(self, kind: tuple[str, str]) -> Mapping[str, Obj]:
        return self.objects.get(kind) or {}

    def get(self, kind: tuple[str, str], namespace: str | None, name: str) -> Obj | None:
        return self.store(kind).get(f"{namespace}/{name}" if namespace else name)

    def each(self, kind: tuple[str, str], namespace: str | None = None) -> Iterator[Obj]:
        store = self.store(kind)
        if namespace is None:
            yield from store.values()
            return
        prefix = f"{namespace}/"
        for key, obj in store.items():
            if key.startswith(prefix):
                yield obj

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """A namespace's labels, with the name label the API server sets on every one."""
        obj = self.get(NAMESPACE, None, namespace)
        labels = dict((obj or {}).get("metadata", {}).get("labels") or {})
        labels[NAME_LABEL] = namespace
        return labels

    def pod_at(self, ip: str) -> Obj | None:
        """The running pod that holds ``ip`` on the pod network (host-network pods too)."""
        if self._by_ip is None:
            self._by_ip = {}
            for pod in self.store(POD).values():
                if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    continue  # its IP is free for another pod
                for address in pod_ips(pod):
                    self._by_ip.setdefault(address, pod)
        return self._by_ip.get(ip)

    def node_at(self, ip: str) -> Obj | None:
        if self._node_by_ip is None:
            self._node_by_ip = {a["address"]: node for node in self.store(NODE).values()
                                for a in (node.get("status") or {}).get("addresses") or ()
                                if a.get("address")}
        return self._node_by_ip.get(ip)

    def endpoint(self, ip: str) -> Endpoint:
        pod = self.pod_at(ip)
        node = self.node_at(ip)
        if pod is not None and node is None and host_network(pod):
            node = self.get(NODE, None, (pod.get("spec") or {}).get("nodeName") or "")
        return Endpoint(ip, pod, node)

    def pod_endpoint(self, pod: Obj) -> Endpoint:
        ips = pod_ips(pod)
        return Endpoint(ips[0] if ips else "", pod)
