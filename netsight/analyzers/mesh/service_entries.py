"""ServiceEntry ports that need addresses (istioctl's serviceentry.ProtocolAddressesAnalyzer),
and ServiceEntries that disagree on a host and port's protocol
(serviceentry.ConflictingServiceEntryProtocolAnalyzer).

A sidecar routes plain TCP by destination address and port only (no Host header, no SNI).
A ServiceEntry port of protocol TCP (or none: Istio then treats it as TCP) with no
``addresses`` becomes a listener on 0.0.0.0:<port>, which takes every TCP connection to
that port from the workload, whatever its address, and competes with other ServiceEntries
on the port. Istio can allocate the addresses itself: istiod fills ``status.addresses``
(IP auto-allocation), or the DNS proxy does when the mesh config sets
ISTIO_META_DNS_CAPTURE and ISTIO_META_DNS_AUTO_ALLOCATE in defaultConfig.proxyMetadata.
netsight does not read the mesh config; the finding says so.

Istio keeps one protocol per host and port in a namespace's view of the registry; two
ServiceEntries visible there (by their exportTo) that give it different protocols (an
unset protocol, which Istio sniffs, counts as its own) leave the choice to Istio.
"""

from __future__ import annotations

from collections import defaultdict

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import EXPORT_ALL, EXPORT_LOCAL
from netsight.analyzers.mesh.istio_objects import ServiceEntry


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


def conflicting_protocols(ctx: MeshContext) -> None:
    claims: dict[tuple[str, str, int], list[tuple[str, ServiceEntry]]] = defaultdict(list)
    for entry in ctx.service_entries:
        for scope in _scopes(entry):
            for host in entry.hosts:
                for number, protocol in zip(entry.ports, entry.protocols, strict=True):
                    claims[(scope, host, number)].append((protocol.upper(), entry))
    reported: set[str] = set()
    for (scope, host, number), found in sorted(claims.items(), key=lambda c: c[0]):
        if scope != EXPORT_ALL:
            found = found + claims.get((EXPORT_ALL, host, number), [])
        protocols = sorted({protocol for protocol, _ in found})
        if len(protocols) < 2:
            continue
        entries = {e.record.key: e for _, e in found}
        names = sorted(e.record.ref for e in entries.values())
        for key, entry in sorted(entries.items()):
            if key in reported or not ctx.in_scope(entry.record):
                continue
            reported.add(key)
            _conflict(ctx, entry, host, number, names, protocols)


def _scopes(entry: ServiceEntry) -> set[str]:
    if not entry.export_to or EXPORT_ALL in entry.export_to:
        return {EXPORT_ALL}
    return {entry.record.namespace if s == EXPORT_LOCAL else s for s in entry.export_to}


def _conflict(ctx: MeshContext, entry: ServiceEntry, host: str, number: int,
              names: list[str], protocols: list[str]) -> None:
    record = entry.record
    shown = ", ".join(p or "(unset)" for p in protocols)
    index = next(i for i, n in enumerate(entry.ports) if n == number)
    ctx.report(codes.CONFLICTING_SERVICE_ENTRY_PROTOCOLS.finding(
        ref(record), f"ServiceEntry {record.ref} gives {host}:{number} a protocol other "
        f"ServiceEntries contradict ({shown})",
        detail=f"ServiceEntries {', '.join(names)} are visible in one namespace and define "
        f"host {host!r} port {number} with protocols {shown}. Istio keeps one protocol for "
        "a host and port, so traffic to it is handled (HTTP routing, TLS passthrough, "
        "plain TCP) in a way one of them did not intend.",
        suggestion="Use the same protocol for this port in every ServiceEntry, or keep the "
        "host in one ServiceEntry.",
        evidence=[evidence(record, f"spec.ports[{index}].protocol",
                           entry.protocols[index] or None)],
    ))
