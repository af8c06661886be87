"""Service health: selector, ports, protocols, endpoints, and the slices behind them.

One inspection per Service, shared by ``diagnose_service`` (one Service in depth),
``list_services`` (health per Service) and the ``services`` check of ``analyze_config``.

Rules follow what Kubernetes itself does: a named targetPort resolves by name *and*
protocol on each pod's containers and restartable init containers (``podutil.FindPort``);
an endpoint with ``ready`` unset counts as ready (EndpointConditions); an ExternalName
Service gets no endpoints and its selector is ignored.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding, Severity
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import (
    EndpointGroup,
    EndpointSliceRecord,
    EndpointsRecord,
    PodRecord,
    ServicePort,
    ServiceRecord,
    WorkloadRecord,
)
from netsight.graph.model.selectors import selector_from_map
from netsight.graph.store.live import GraphView, Source

ENDPOINTSLICE_CONTROLLER = "endpointslice-controller.k8s.io"

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
_TERMINAL_PHASES = ("Succeeded", "Failed")
_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
# <service>.<namespace>.svc[.<cluster domain>]
_IN_CLUSTER_NAME = re.compile(rf"^({_LABEL})\.({_LABEL})\.svc(?:\..*)?$")


@dataclass(frozen=True, slots=True)
class EndpointCounts:
    """Endpoint health; ``source`` says where the figures come from."""

    source: str  # "EndpointSlice", "Endpoints", "pods" (derived, manifests only) or "none"
    ready: int = 0  # ready, terminating or not (publishNotReadyAddresses marks all ready)
    not_ready: int = 0  # not ready and not terminating
    terminating: int = 0  # on their way out (rolling updates), ready or not
    serving_terminating: int = 0  # terminating, not ready, still serving: kube-proxy's fallback
    unknown: int = 0  # pods whose readiness the input does not state
    total: int = 0


@dataclass
class ServiceReport:
    service: ServiceRecord
    pods: list[PodRecord] = field(default_factory=list)
    templates: list[WorkloadRecord] = field(default_factory=list)
    endpoints: EndpointCounts = field(default_factory=lambda: EndpointCounts("none"))
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)

    @property
    def worst(self) -> Severity:
        return min((f.severity for f in self.findings), key=lambda s: s.rank, default=Severity.OK)


def inspect(
    view: GraphView, service: ServiceRecord, ports: Sequence[int] | None = None
) -> ServiceReport:
    """Everything netsight can tell about one Service; ``ports`` narrows to those indexes."""
    report = ServiceReport(service)
    if service.type == "ExternalName":
        _external_name(view, report)
        return report
    if not service.ports and not service.headless:
        report.findings.append(codes.SERVICE_HAS_NO_PORTS.finding(
            ref(service), f"Service {service.ref} defines no ports",
            detail="Only headless (clusterIP: None) and ExternalName Services may omit "
            "spec.ports; the API server rejects this one.",
            suggestion="Add spec.ports, or make the Service headless.",
            evidence=[evidence(service, "spec.ports", [])],
        ))
    pods_unreadable = view.unreadable(Kind.POD)
    if pods_unreadable:
        report.not_evaluated.append(f"pods: {pods_unreadable}")
    if service.selector is not None and not pods_unreadable:
        for record in view.neighbors(service.key, Rel.SELECTS):
            if isinstance(record, PodRecord):
                report.pods.append(record)
            elif isinstance(record, WorkloadRecord):
                report.templates.append(record)
        report.pods.sort(key=lambda p: p.name)
        report.templates.sort(key=lambda w: w.key)
        if not report.pods and (view.source is not Source.MANIFESTS or not report.templates):
            report.findings.append(_selects_nothing(view, report))
    indexes = range(len(service.ports)) if ports is None else ports
    for index in indexes:
        _check_port(report, index, service.ports[index])
    _endpoints(view, report, indexes)
    return report


# --- ExternalName --------------------------------------------------------------------------


def _external_name(view: GraphView, report: ServiceReport) -> None:
    service, findings = report.service, report.findings
    report.not_evaluated.append("endpoints: an ExternalName Service has none (DNS CNAME only)")
    if service.selector:
        findings.append(codes.EXTERNAL_NAME_SELECTOR_IGNORED.finding(
            ref(service), f"selector of ExternalName Service {service.ref} is ignored",
            detail="ExternalName Services are answered by cluster DNS with a CNAME; the "
            "selector selects nothing and no endpoints are created.",
            suggestion="Remove spec.selector, or change the type to ClusterIP to load-balance "
            "to the selected pods.",
            evidence=[evidence(service, "spec.selector", dict(service.selector))],
        ))
    target = service.external_name
    if target is None:
        findings.append(codes.EXTERNAL_NAME_MISSING.finding(
            ref(service), f"ExternalName Service {service.ref} has no externalName",
            detail="type: ExternalName requires spec.externalName, the DNS name the "
            "Service's name becomes a CNAME for.",
            suggestion="Set spec.externalName to a DNS name, e.g. db.example.com.",
            evidence=[evidence(service, "spec.externalName", None)],
        ))
        return
    if _is_ip(target):
        findings.append(codes.EXTERNAL_NAME_IS_IP.finding(
            ref(service), f"externalName of {service.ref} is the IP address {target}",
            detail="Cluster DNS answers with a CNAME to a DNS name made of the IP's "
            "digits, which does not resolve; ExternalName cannot point at an IP.",
            suggestion="Use a Service without selector and an EndpointSlice holding the "
            "IP, or point externalName at a DNS name.",
            evidence=[evidence(service, "spec.externalName", target)],
        ))
        return
    match = _IN_CLUSTER_NAME.match(target.rstrip(".").lower())
    if match:
        name, namespace = match.group(1), match.group(2)
        if view.source is Source.MANIFESTS and namespace not in view.namespaces():
            report.not_evaluated.append(
                f"spec.externalName: namespace {namespace} is not in the input, so whether "
                f"Service {namespace}/{name} exists is unknown")
        elif not view.exists(make_key(Kind.SERVICE, namespace, name)):
            findings.append(codes.EXTERNAL_NAME_TARGET_NOT_FOUND.finding(
                ref(service),
                f"externalName of {service.ref} points at Service {namespace}/{name}, "
                "which does not exist",
                detail=f"{target} is an in-cluster Service name; with no Service "
                f"{namespace}/{name}, the CNAME leads to NXDOMAIN.",
                suggestion=f"Create Service {namespace}/{name}, or fix spec.externalName.",
                evidence=[evidence(service, "spec.externalName", target)],
            ))


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


# --- selector ------------------------------------------------------------------------------


def _selects_nothing(view: GraphView, report: ServiceReport) -> Finding:
    service = report.service
    assert service.selector is not None
    selector = selector_from_map(service.selector)
    described = selector.describe()
    hints = _near_misses(view, service)
    if report.templates:
        names = ", ".join(w.ref for w in report.templates[:3])
        hints.insert(0, f"Workload templates match ({names}) but no pods run: scaled to zero "
                        "or failing to create pods?")
    detail = f"No pod in namespace {service.namespace} has labels {described}."
    if hints:
        detail += " " + " ".join(hints)
    return codes.SERVICE_SELECTS_NO_PODS.finding(
        ref(service), f"selector {described} of Service {service.ref} matches no pods",
        detail=detail,
        suggestion="Make spec.selector equal to the pod template labels of the workload "
        "meant to serve this Service (kubectl get pods -n "
        f"{service.namespace} --show-labels).",
        evidence=[evidence(service, "spec.selector", dict(service.selector))],
    )


def _near_misses(view: GraphView, service: ServiceRecord) -> list[str]:
    """Why nothing matched: pods that miss one label, or matches in other namespaces."""
    assert service.selector is not None
    hints: list[str] = []
    pairs = sorted(service.selector.items())
    if len(pairs) > 1:
        for missing_key, missing_value in pairs:
            rest = selector_from_map({k: v for k, v in pairs if k != missing_key})
            close = list(view.matching(service.namespace, rest))
            if close:
                sample = close[0]
                labels = sample.pod_labels if isinstance(sample, WorkloadRecord) else sample.labels
                actual = labels.get(missing_key)
                have = f"{missing_key}={actual}" if actual is not None else f"no {missing_key}"
                what = "pod" if isinstance(sample, PodRecord) else "pod template"
                count = f"{len(close)} {what}{'s' * (len(close) > 1)}"
                verb = "match" if len(close) > 1 else "matches"
                hints.append(
                    f"{count} {verb} all but {missing_key}={missing_value} "
                    f"({sample.kind} {sample.name} has {have})."
                )
                break
    selector = selector_from_map(service.selector)
    elsewhere = sorted(
        ns for ns in view.namespaces()
        if ns != service.namespace and next(iter(view.matching(ns, selector)), None)
    )
    if elsewhere:
        hints.append(
            f"Pods with these labels exist in namespace(s) {', '.join(elsewhere[:3])}; a "
            "Service only selects pods in its own namespace."
        )
    return hints


# --- ports ---------------------------------------------------------------------------------


def _check_port(report: ServiceReport, index: int, port: ServicePort) -> None:
    service = report.service
    path = f"spec.ports[{index}]"
    _check_app_protocol(report, index, port)
    # Terminal pods (Succeeded, Failed: e.g. Evicted) get no endpoints; their ports do not
    # matter (ShouldPodBeInEndpoints).
    live = [p for p in report.pods if p.phase not in _TERMINAL_PHASES]
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
            f"and protocol; {_names(other_protocol)} declare {name!r} as {actual}, so they "
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
            detail=f"{_names(missing)} declare no container port named {name!r} with "
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


def _names(records: Sequence[PodRecord | WorkloadRecord]) -> str:
    shown = ", ".join(f"{r.kind} {r.name}" for r in records[:3])
    more = f" and {len(records) - 3} more" if len(records) > 3 else ""
    return shown + more


def _ports_path(record: PodRecord | WorkloadRecord) -> str:
    return "spec.containers[*].ports" if isinstance(record, PodRecord) else \
        "spec.template.spec.containers[*].ports"


# --- endpoints -----------------------------------------------------------------------------


def _endpoints(view: GraphView, report: ServiceReport, ports: Sequence[int]) -> None:
    service = report.service
    slices_unreadable = view.unreadable(Kind.ENDPOINT_SLICE)
    if slices_unreadable:
        report.not_evaluated.append(f"endpoints: {slices_unreadable}")
        return
    slices = sorted(
        (r for r in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                   kind=Kind.ENDPOINT_SLICE)),
        key=lambda r: r.name,
    )
    legacy = list(view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                 kind=Kind.ENDPOINTS))
    # NS0101 was reported: no pods and, from manifests, no workload template either.
    selects_nothing = service.selector is not None and not report.pods and (
        view.source is not Source.MANIFESTS or not report.templates
    )
    if slices:
        report.endpoints = _count(
            "EndpointSlice", [s.group for s in slices if isinstance(s, EndpointSliceRecord)]
        )
        _slice_consistency(view, report, [s for s in slices
                                          if isinstance(s, EndpointSliceRecord)], ports)
    elif legacy and isinstance(legacy[0], EndpointsRecord):
        report.endpoints = _count("Endpoints", list(legacy[0].subsets))
    elif service.selector is not None and report.pods and view.source is Source.MANIFESTS:
        report.endpoints = _derive_from_pods(report)
    elif view.source is Source.MANIFESTS and not selects_nothing:
        reason = ("the Service has no selector and the manifests hold no EndpointSlices "
                  "for it" if service.selector is None else
                  "only workload templates match; endpoints exist once pods run")
        report.not_evaluated.append(f"endpoints: {reason}")
        return
    if selects_nothing:
        return  # NS0101 already names the cause
    counts = report.endpoints
    if counts.ready == 0 and counts.unknown == 0:
        fallback = counts.serving_terminating
        if fallback:
            why = f"only {fallback} terminating endpoint(s) still serve"
        elif counts.total:
            why = f"all {counts.total} endpoint(s) are not ready"
        else:
            why = "it has no endpoints" + (" and no selector" if service.selector is None
                                           else "")
        impact = ("kube-proxy falls back to terminating endpoints that still serve, until "
                  "they are gone" if fallback else
                  "Connections to the Service are refused or time out")
        report.findings.append(codes.SERVICE_NO_READY_ENDPOINTS.finding(
            ref(service), f"Service {service.ref} has no ready endpoints: {why}",
            severity=Severity.WARNING if fallback else None,
            detail=f"Endpoints from {counts.source}: {counts.ready} ready, "
            f"{counts.not_ready} not ready, {counts.terminating} terminating "
            f"({counts.serving_terminating} still serving). {impact}.",
            suggestion="Check why the pods are not ready (kubectl describe pod: readiness "
            "probe, crash loops)." if counts.not_ready else
            "Give the Service a selector, or create an EndpointSlice for it.",
            evidence=[evidence(service, "spec.selector",
                               dict(service.selector) if service.selector else None)],
        ))
    elif counts.ready and counts.not_ready:
        report.findings.append(codes.SERVICE_ENDPOINTS_PARTIALLY_READY.finding(
            ref(service),
            f"{counts.not_ready} of {counts.total} endpoints of {service.ref} are not ready "
            "(terminating ones aside)",
            detail=f"Endpoints from {counts.source}: {counts.ready} ready, "
            f"{counts.not_ready} not ready. Traffic goes to the ready ones only.",
            suggestion="Inspect the not-ready pods' readiness probes and events.",
        ))
    elif counts.unknown:
        report.not_evaluated.append(
            f"endpoints: readiness of {counts.unknown} pod(s) is not stated in the input "
            "(no Ready condition)"
        )


def _count(source: str, groups: Sequence[EndpointGroup]) -> EndpointCounts:
    # One endpoint per pod (or address): dual-stack Services list each pod in two slices.
    states: dict[str, tuple[bool, bool, bool]] = {}
    for group in groups:
        for endpoint in group.endpoints:
            identity = endpoint.target_pod or (endpoint.addresses[0] if endpoint.addresses
                                               else None)
            if identity is None:
                continue
            # EndpointConditions: an unset serving reads like ready.
            # EndpointConditions: an unset serving is read as true (as kube-proxy does).
            serving = endpoint.serving is not False
            was = states.get(identity, (False, False, False))
            states[identity] = (was[0] or endpoint.is_ready,
                                was[1] or bool(endpoint.terminating), was[2] or serving)
    return EndpointCounts(
        source=source,
        ready=sum(1 for r, _, _ in states.values() if r),
        not_ready=sum(1 for r, t, _ in states.values() if not r and not t),
        terminating=sum(1 for _, t, _ in states.values() if t),
        serving_terminating=sum(1 for r, t, s in states.values() if t and s and not r),
        total=len(states),
    )


def _derive_from_pods(report: ServiceReport) -> EndpointCounts:
    """What the EndpointSlice controller would publish for these pods (manifests only)."""
    ready = not_ready = unknown = terminating = serving_terminating = total = 0  # counts
    publish_all = report.service.publish_not_ready
    for pod in report.pods:
        if pod.phase in _TERMINAL_PHASES:
            continue
        if pod.phase == "Pending" and not pod.ips:
            continue  # no IP yet (e.g. unschedulable): the controller lists it nowhere
        # podToEndpoint: ready = publishNotReadyAddresses || (serving && !terminating),
        # serving = pod ready, terminating = deletionTimestamp set.
        terminating += int(pod.terminating)
        if publish_all or (pod.ready and not pod.terminating):
            ready += 1
        elif pod.terminating:
            serving_terminating += int(bool(pod.ready))
        elif pod.ready is None:
            unknown += 1
        else:
            not_ready += 1
        total += 1
    return EndpointCounts("pods", ready, not_ready, terminating, serving_terminating,
                          unknown, total)


def _slice_consistency(
    view: GraphView, report: ServiceReport, slices: list[EndpointSliceRecord],
    ports: Sequence[int],
) -> None:
    service = report.service
    if service.selector is None:
        return  # endpoints are managed by hand; nothing to compare with
    # In a cluster the controller labels every slice it manages; hand-written manifests
    # often leave the label out, so there an unlabelled slice counts as the controller's.
    managers = {ENDPOINTSLICE_CONTROLLER} if view.source is not Source.MANIFESTS else \
        {None, ENDPOINTSLICE_CONTROLLER}
    managed = [s for s in slices if s.managed_by in managers]
    selected = {pod.name for pod in report.pods}
    listed: set[str] = set()
    for slice_ in managed:
        for i, endpoint in enumerate(slice_.group.endpoints):
            if endpoint.target_pod is None:
                continue
            listed.add(endpoint.target_pod)
            pod = view.get(make_key(Kind.POD, slice_.namespace, endpoint.target_pod))
            path = f"endpoints[{i}]"
            if pod is None:
                if view.source is not Source.MANIFESTS:
                    report.findings.append(codes.ENDPOINT_TARGET_POD_NOT_FOUND.finding(
                        ref(slice_),
                        f"EndpointSlice {slice_.ref} targets pod {endpoint.target_pod}, "
                        "which does not exist",
                        detail="The slice is stale: its pod is gone. Traffic to "
                        f"{', '.join(endpoint.addresses)} fails until the controller "
                        "catches up.",
                        evidence=[evidence(slice_, f"{path}.targetRef.name",
                                           endpoint.target_pod)],
                    ))
                continue
            assert isinstance(pod, PodRecord)
            if pod.name not in selected:
                report.findings.append(codes.ENDPOINT_TARGETS_UNSELECTED_POD.finding(
                    ref(slice_),
                    f"EndpointSlice {slice_.ref} lists pod {pod.name}, which Service "
                    f"{service.name}'s selector does not match",
                    detail="The EndpointSlice controller only lists pods the selector "
                    "matches; this slice is stale, or was written by hand with the "
                    "controller's label.",
                    evidence=[evidence(slice_, f"{path}.targetRef.name", pod.name)],
                ))
            elif pod.ips and not set(endpoint.addresses) & set(pod.ips):
                report.findings.append(codes.ENDPOINT_ADDRESS_MISMATCH.finding(
                    ref(slice_),
                    f"EndpointSlice {slice_.ref} gives pod {pod.name} address "
                    f"{', '.join(endpoint.addresses)}, the pod has {', '.join(pod.ips)}",
                    detail="Traffic goes to an address the pod does not hold (a stale "
                    "slice after the pod was recreated?).",
                    evidence=[evidence(slice_, f"{path}.addresses", list(endpoint.addresses))],
                ))
    missing = [p for p in report.pods
               if p.ready and p.ips and not p.terminating and p.name not in listed]
    if managed and missing:
        report.findings.append(codes.SELECTED_POD_MISSING_FROM_ENDPOINTS.finding(
            ref(service),
            f"{len(missing)} ready pod(s) selected by {service.ref} are missing from its "
            "EndpointSlices",
            detail=f"{_names(missing)} are ready and match the selector but no slice lists "
            "them, so they receive no traffic. The controller may be lagging or failing.",
            suggestion="Check kube-controller-manager's endpointslice controller logs.",
        ))
    _slice_ports(report, managed, ports)


def _slice_ports(
    report: ServiceReport, slices: list[EndpointSliceRecord], ports: Sequence[int]
) -> None:
    """Service ports (only those at ``ports``, the indexes asked about) each slice lacks."""
    service = report.service
    flagged = {f.evidence[0].field_path for f in report.findings
               if f.code in (codes.NAMED_TARGET_PORT_NOT_FOUND.code,
                             codes.PORT_PROTOCOL_MISMATCH.code) and f.evidence}
    for slice_ in slices:
        if not slice_.group.endpoints:
            continue
        have = {(p.name or "", p.protocol) for p in slice_.group.ports}
        for index in ports:
            port = service.ports[index]
            if any(path.startswith(f"spec.ports[{index}]") for path in flagged):
                continue  # an unresolvable named port explains the gap already
            if (port.name or "", port.protocol) not in have:
                report.findings.append(codes.ENDPOINT_PORTS_MISMATCH.finding(
                    ref(slice_),
                    f"EndpointSlice {slice_.ref} has no port "
                    f"{port.name or port.port}/{port.protocol} of Service {service.name}",
                    detail="Slice ports are matched to Service ports by name and protocol; "
                    "without it, kube-proxy has no backends for that Service port.",
                    evidence=[evidence(slice_, "ports",
                                       [f"{p.name or ''}:{p.port}/{p.protocol}"
                                        for p in slice_.group.ports])],
                ))
