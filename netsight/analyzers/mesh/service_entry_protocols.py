"""ServiceEntries visible in one namespace that give one host and port different protocols
(istioctl's serviceentry.ConflictingServiceEntryProtocolAnalyzer).

Istio keeps one protocol per host and port, so where two ServiceEntries disagree, traffic
gets a protocol its author did not pick. As upstream: each ServiceEntry's (host, port,
protocol) is filed under every scope its exportTo gives (``*`` for all namespaces, the
default), a scope also sees what is filed under ``*``, and a host is compared as written
(no wildcard or short-name resolution); protocols compare case-insensitively and an unset
protocol counts as one of its own. Each ServiceEntry in a conflict is reported once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import EXPORT_ALL, export_scopes
from netsight.analyzers.mesh.objects import SERVICE_ENTRY, istio_records
from netsight.graph.records import GenericRecord


@dataclass(frozen=True, slots=True)
class _Port:
    record: GenericRecord
    protocol: str  # upper case; "" when unset
    path: str  # spec.ports[i]


def _ports(record: GenericRecord) -> list[tuple[str, int, _Port]]:
    """(host, port number, port) of a ServiceEntry; fields of another shape are left out
    (the schema checks report them)."""
    spec: Mapping[str, Any] = record.spec if isinstance(record.spec, Mapping) else {}
    hosts = [h for h in spec.get("hosts") or () if isinstance(h, str)] \
        if isinstance(spec.get("hosts"), list) else []
    found: list[tuple[str, int, _Port]] = []
    ports = spec.get("ports")
    for i, port in enumerate(ports if isinstance(ports, list) else ()):
        if not isinstance(port, Mapping):
            continue
        number, protocol = port.get("number"), port.get("protocol") or ""
        if isinstance(number, bool) or not isinstance(number, int) or \
                not isinstance(protocol, str):
            continue
        entry = _Port(record, protocol.upper(), f"spec.ports[{i}]")
        found.extend((host, number, entry) for host in hosts)
    return found


def _export_to(record: GenericRecord) -> list[str]:
    spec = record.spec if isinstance(record.spec, Mapping) else {}
    raw = spec.get("exportTo")
    return [e for e in raw if isinstance(e, str)] if isinstance(raw, list) else []


def conflicting_protocols(ctx: MeshContext) -> None:
    index: dict[tuple[str, str, int], list[_Port]] = {}
    for record in istio_records(ctx.view, SERVICE_ENTRY):
        ports = _ports(record)
        for scope in export_scopes(_export_to(record), record.namespace):
            for host, number, port in ports:
                index.setdefault((scope, host, number), []).append(port)
    reported: set[str] = set()
    for (scope, host, number), entries in sorted(index.items()):
        if scope != EXPORT_ALL:
            entries = entries + index.get((EXPORT_ALL, host, number), [])
        protocols = sorted({e.protocol for e in entries})
        if len(protocols) < 2:
            continue
        names = sorted({e.record.ref for e in entries})
        for entry in entries:
            record = entry.record
            if record.key in reported or not ctx.in_scope(record):
                continue
            reported.add(record.key)
            others = sorted({e.record.ref for e in entries if e.protocol != entry.protocol})
            shown = ", ".join(p or "(unset)" for p in protocols)
            ctx.report(codes.CONFLICTING_SERVICE_ENTRY_PROTOCOLS.finding(
                ref(record), f"ServiceEntry {record.ref} defines {host}:{number} as "
                f"{entry.protocol or '(unset)'}, which {', '.join(others)} "
                f"define{'s' if len(others) == 1 else ''} with another protocol",
                detail=f"ServiceEntries {', '.join(names)} are visible together"
                f"{'' if scope == EXPORT_ALL else f' in namespace {scope}'} and define host "
                f"{host!r} port {number} with protocols {shown}; Istio uses one protocol "
                "per host and port, so traffic may use one its author did not expect.",
                suggestion="Use the same protocol for this port in every ServiceEntry, or "
                "define the host in one ServiceEntry (exportTo can keep them apart).",
                evidence=[evidence(record, f"{entry.path}.protocol", entry.protocol)],
            ))
