"""Service ports against the pods' container ports: targetPort resolution by name and
protocol (``podutil.FindPort``), headless port remaps, and appProtocol contradictions."""

from __future__ import annotations

from collections.abc import Sequence

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Severity
from netsight.analyzers.services.service_reports import (
    TERMINAL_PHASES,
    ServiceReport,
    some_names,
)
from netsight.graph.model.records import PodRecord, ServicePort, WorkloadRecord

# Istio's port-name convention <protocol>[-<suffix>] and the appProtocol values it reads.
_NAMED_PROTOCOLS = frozenset(
    {"http", "http2", "https", "grpc", "grpc-web", "mongo", "mysql", "redis", "tcp", "tls",
     "udp"}
)
_APP_PROTOCOL_ALIASES = {"kubernetes.io/h2c": "http2", "kubernetes.io/ws": "http",
                         "kubernetes.io/wss": "https", "h2c": "http2"}
_STREAM_APP_PROTOCOLS = _NAMED_PROTOCOLS - {"udp"}
# Values that mean the same wire protocol to a mesh: http2 and gRPC are HTTP; only a jump
# between families (HTTP vs TLS vs opaque TCP vs a database protocol) is a contradiction.
_FAMILY = {"http": "http", "http2": "http", "grpc": "http", "grpc-web": "http",
           "https": "tls", "tls": "tls"}


def check_port(report: ServiceReport, index: int, port: ServicePort) -> None:
    service = report.service
    path = f"spec.ports[{index}]"
    _check_app_protocol(report, index, port)
    # Terminal pods (Succeeded, Failed: e.g. Evicted) get no endpoints; their ports do not
    # matter (ShouldPodBeInEndpoints).
    live = [p for p in report.pods if p.phase not in TERMINAL_PHASES]
    targets: Sequence[PodRecord | WorkloadRecord] = live or report.templates
    if service.headless:
        _check_headless_remap(report, path, port, targets)
    if not targets:
        return
    if isinstance(port.target_port, str):
        _check_named_port(report, path, port, targets)
    else:
        _check_numeric_port(report, path, port, targets)


def _check_headless_remap(
    report: ServiceReport, path: str, port: ServicePort,
    targets: Sequence[PodRecord | WorkloadRecord],
) -> None:
    """Headless: clients dial pod IPs on ``port``; nothing maps it to the targetPort."""
    if isinstance(port.target_port, int):
        numbers = {port.target_port}
    else:  # a named targetPort: the numbers it resolves to on the pods
        numbers = {p.port for t in targets for p in t.ports
                   if p.name == port.target_port and p.protocol == port.protocol}
    numbers.discard(port.port)
    if not numbers:
        return
    service = report.service
    shown = "/".join(str(n) for n in sorted(numbers))
    via = "" if isinstance(port.target_port, int) else f" ({port.target_port!r})"
    report.findings.append(codes.HEADLESS_PORT_REMAP_IGNORED.finding(
        ref(service),
        f"headless Service {service.ref} maps port {port.port} to targetPort {shown}{via}, "
        "which clients never reach",
        detail="A headless Service's DNS name resolves to the pod IPs; clients connect "
        f"to those IPs on port {port.port}. No proxy rewrites it to {shown}.",
        suggestion=f"Set port to {shown} (the port the pods listen on), or give the "
        "Service a cluster IP.",
        evidence=[evidence(service, f"{path}.targetPort", port.target_port)],
    ))


def _check_named_port(
    report: ServiceReport, path: str, port: ServicePort,
    targets: Sequence[PodRecord | WorkloadRecord],
) -> None:
    service, name = report.service, port.target_port
    resolved = [t for t in targets
                if any(p.name == name and p.protocol == port.protocol for p in t.ports)]
    if len(resolved) == len(targets):
        return
    # By identity: records compare field by field, and `in` a list would make this
    # quadratic in the number of pods.
    resolved_ids = {id(t) for t in resolved}
    unresolved = [t for t in targets if id(t) not in resolved_ids]
    other_protocol = [t for t in unresolved if any(p.name == name for p in t.ports)]
    other_ids = {id(t) for t in other_protocol}
    missing = [t for t in unresolved if id(t) not in other_ids]
    severity = Severity.WARNING if resolved else Severity.CRITICAL
    reach = "any" if not resolved else f"{len(unresolved)} of {len(targets)}"
    if other_protocol:
        actual = next(p.protocol for p in other_protocol[0].ports if p.name == name)
        report.findings.append(codes.PORT_PROTOCOL_MISMATCH.finding(
            ref(service),
            f"targetPort {name!r} of {service.ref} is {actual} on the pods, the Service "
            f"port is {port.protocol}",
            severity=severity,
            detail="A named targetPort resolves only to a container port with the same name "
            f"and protocol; {some_names(other_protocol)} declare {name!r} as {actual}, so they "
            f"get no endpoint for port {port.port}/{port.protocol}.",
            suggestion=f"Set protocol: {actual} on the Service port, or fix the container "
            "port's protocol.",
            evidence=[evidence(service, f"{path}.protocol", port.protocol),
                      evidence(other_protocol[0], _ports_path(other_protocol[0]), actual)],
        ))
    if missing:
        declared = sorted({p.name for t in targets for p in t.ports if p.name})
        report.findings.append(codes.NAMED_TARGET_PORT_NOT_FOUND.finding(
            ref(service),
            f"targetPort {name!r} of {service.ref} resolves on {reach} selected pods"
            if resolved else f"targetPort {name!r} of {service.ref} names no container port",
            severity=severity,
            detail=f"{some_names(missing)} declare no container port named {name!r} with "
            f"protocol {port.protocol}; they get no endpoint for this Service port. "
            f"Declared port names: {', '.join(declared) or 'none'}.",
            suggestion=f"Name the container port {name!r}, or set targetPort to one of "
            f"{', '.join(declared) or 'the port number the container listens on'}.",
            evidence=[evidence(service, f"{path}.targetPort", name)],
        ))


def _check_numeric_port(
    report: ServiceReport, path: str, port: ServicePort,
    targets: Sequence[PodRecord | WorkloadRecord],
) -> None:
    service, number = report.service, port.target_port
    declaring = [t for t in targets if t.ports]
    if not declaring:
        report.not_evaluated.append(
            f"{path}.targetPort {number}: the selected pods declare no container ports"
        )
        return
    if any(p.port == number and p.protocol == port.protocol for t in declaring for p in t.ports):
        return
    other = sorted({p.protocol for t in declaring for p in t.ports if p.port == number})
    if other:
        report.findings.append(codes.PORT_PROTOCOL_MISMATCH.finding(
            ref(service),
            f"port {port.port}/{port.protocol} of {service.ref} targets {number}, which the "
            f"pods declare as {'/'.join(other)}",
            detail=f"The containers declare port {number} only with protocol "
            f"{'/'.join(other)}; traffic sent as {port.protocol} finds no listener.",
            suggestion=f"Set protocol: {other[0]} on the Service port, or add a "
            f"{port.protocol} container port.",
            evidence=[evidence(service, f"{path}.protocol", port.protocol)],
        ))
        return
    declared = sorted({f"{p.port}/{p.protocol}" for t in declaring for p in t.ports})
    report.findings.append(codes.TARGET_PORT_NOT_DECLARED.finding(
        ref(service),
        f"targetPort {number} of {service.ref} is declared by none of the selected pods",
        detail=f"The pods declare {', '.join(declared)}. A container can listen on an "
        "undeclared port, so this may work, but it usually means the targetPort is wrong.",
        suggestion=f"Set targetPort to the port the container listens on ({declared[0]}?), "
        "or declare it in the container's ports.",
        evidence=[evidence(service, f"{path}.targetPort", number)],
    ))


def _check_app_protocol(report: ServiceReport, index: int, port: ServicePort) -> None:
    if port.app_protocol is None:
        return
    service = report.service
    app = port.app_protocol.lower()
    app = _APP_PROTOCOL_ALIASES.get(app, app)
    path = f"spec.ports[{index}].appProtocol"
    problem = None
    if port.protocol in ("UDP", "SCTP") and app in _STREAM_APP_PROTOCOLS:
        problem = f"appProtocol {port.app_protocol} needs a stream transport, the port is " \
                  f"{port.protocol}"
    elif port.protocol == "TCP" and app == "udp":
        problem = "appProtocol udp on a TCP port"
    elif port.name:
        prefix = port.name.split("-", 1)[0].lower()
        if port.name.lower().startswith("grpc-web"):
            prefix = "grpc-web"
        if prefix in _NAMED_PROTOCOLS and app in _NAMED_PROTOCOLS and \
                _FAMILY.get(prefix, prefix) != _FAMILY.get(app, app):
            problem = f"port name {port.name!r} says {prefix}, appProtocol says " \
                      f"{port.app_protocol}"
    if problem:
        report.findings.append(codes.APP_PROTOCOL_MISMATCH.finding(
            ref(service), f"{problem} on {service.ref} port {port.port}",
            detail="Meshes and gateways pick the L7 protocol from appProtocol first, then "
            "from the port name; contradicting values usually mean one was not updated.",
            suggestion="Make the port name prefix, appProtocol and protocol agree.",
            evidence=[evidence(service, path, port.app_protocol)],
        ))


def _ports_path(record: PodRecord | WorkloadRecord) -> str:
    return "spec.containers[*].ports" if isinstance(record, PodRecord) else \
        "spec.template.spec.containers[*].ports"
