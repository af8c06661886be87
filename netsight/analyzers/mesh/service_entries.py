"""ServiceEntry ports that need addresses (istioctl's serviceentry.ProtocolAddressesAnalyzer).

A sidecar routes plain TCP by destination address and port only (no Host header, no SNI).
A ServiceEntry port of protocol TCP (or none: Istio then treats it as TCP) with no
``addresses`` becomes a listener on 0.0.0.0:<port>, which takes every TCP connection to
that port from the workload, whatever its address, and competes with other ServiceEntries
on the port. Istio can allocate the addresses itself: istiod fills ``status.addresses``
(IP auto-allocation), or the DNS proxy does when the mesh config sets
ISTIO_META_DNS_CAPTURE and ISTIO_META_DNS_AUTO_ALLOCATE in defaultConfig.proxyMetadata.
netsight does not read the mesh config; the finding says so.
"""

from __future__ import annotations

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.objects import ServiceEntry


def addresses_required(ctx: MeshContext) -> None:
    for entry in ctx.service_entries:
        if not ctx.in_scope(entry.record) or entry.addresses or entry.allocated:
            continue
        for index, (number, protocol) in enumerate(zip(entry.ports, entry.protocols,
                                                       strict=True)):
            if protocol and protocol.upper() != "TCP":
                continue
            _report(ctx, entry, index, number, protocol)


def _report(ctx: MeshContext, entry: ServiceEntry, index: int, number: int,
            protocol: str) -> None:
    record = entry.record
    path = f"spec.ports[{index}]"
    written = f"protocol {protocol}" if protocol else "no protocol (TCP)"
    ctx.report(codes.SERVICE_ENTRY_ADDRESSES_REQUIRED.finding(
        ref(record), f"ServiceEntry {record.ref} port {number} serves TCP without addresses",
        detail=f"{path} has {written} and the entry has no spec.addresses (nor addresses "
        "allocated in its status). Sidecars route plain TCP by destination address and "
        f"port only, so the entry becomes a listener on 0.0.0.0:{number}: it takes every "
        f"TCP connection to port {number}, to any address, and clashes with other entries "
        "on that port. This does not apply if the mesh config turns on DNS capture with "
        "address auto-allocation (ISTIO_META_DNS_CAPTURE and ISTIO_META_DNS_AUTO_ALLOCATE), "
        "which netsight does not read.",
        suggestion="Set spec.addresses (the service's IPs or CIDR, or a virtual IP), enable "
        "Istio's DNS proxying with auto-allocation, or declare the real protocol (TLS or "
        "HTTPS route by SNI, HTTP by Host).",
        evidence=[evidence(record, f"{path}.protocol", protocol or None)],
    ))
