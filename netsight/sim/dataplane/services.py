"""kube-proxy (iptables mode): a Service's ClusterIP and port to one of its ready endpoints.

It reads EndpointSlices, as kube-proxy does: an endpoint serves when its ``ready``
condition is not false; where a Service has none ready it falls back to endpoints both
serving and terminating (KEP-1669). A Service port whose slices hold no endpoint gets a
REJECT rule: the client's connection is refused at once. A port the Service does not
define matches no rule: the packet goes its way to an address nobody holds and is lost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from netsight.sim.dataplane.snapshot import SERVICE, SLICE, Cluster, key_of, namespace_of


@dataclass(frozen=True)
class Backend:
    ip: str
    port: int


@dataclass(frozen=True)
class Routed:
    """Where kube-proxy sends a connection to a Service: ``backend``, or why nowhere."""

    service: Mapping[str, Any]
    backend: Backend | None
    refused: bool  # REJECT: no ready endpoint
    reason: str


def service_at(cluster: Cluster, ip: str) -> Mapping[str, Any] | None:
    for service in cluster.each(SERVICE):
        spec = service.get("spec") or {}
        if ip == spec.get("clusterIP") or ip in (spec.get("clusterIPs") or ()):
            return service
    return None


def route(cluster: Cluster, service: Mapping[str, Any], port: int, protocol: str,
          chooser: str) -> Routed | None:
    """The connection's fate; None when no Service port matches (nothing intercepts it).
    ``chooser`` seeds the pick among endpoints (kube-proxy's is random; this is repeatable)."""
    spec = service.get("spec") or {}
    entry = next((p for p in spec.get("ports") or ()
                  if int(p.get("port") or 0) == port and (p.get("protocol") or "TCP") == protocol),
                 None)
    if entry is None:
        return None
    name = entry.get("name") or ""
    meta = service.get("metadata") or {}
    candidates: list[tuple[str, int, bool]] = []  # (address, port, ready)
    fallback: list[tuple[str, int, bool]] = []
    for slice_ in cluster.each(SLICE, namespace_of(service)):
        labels = (slice_.get("metadata") or {}).get("labels") or {}
        if labels.get("kubernetes.io/service-name") != meta.get("name"):
            continue
        number = next((int(p["port"]) for p in slice_.get("ports") or ()
                       if (p.get("name") or "") == name
                       and (p.get("protocol") or "TCP") == protocol and p.get("port")), None)
        if number is None:
            continue
        for endpoint in slice_.get("endpoints") or ():
            conditions = endpoint.get("conditions") or {}
            for address in (endpoint.get("addresses") or ())[:1]:
                if conditions.get("ready") is not False:
                    candidates.append((str(address), number, True))
                elif conditions.get("serving") and conditions.get("terminating"):
                    fallback.append((str(address), number, False))
    chosen = sorted(candidates or fallback)
    if not chosen:
        return Routed(service, None, True, f"Service {key_of(service)} has no ready endpoint "
                      f"for port {port}: kube-proxy rejects the connection")
    digest = hashlib.sha256(f"{chooser}/{key_of(service)}/{port}".encode()).digest()
    address, number, _ = chosen[int.from_bytes(digest[:4], "big") % len(chosen)]
    return Routed(service, Backend(address, number), False,
                  f"Service {key_of(service)} port {port} -> {address}:{number}")
