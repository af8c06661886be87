"""A Service's whole stack, layer by layer, from the engines that decide each part: its pods,
ports and endpoints (services' inspection), the routes and Ingresses sending to it (route
resolution), the policies selecting its pods (the policy engine), its mesh (sidecars or
ambient, PeerAuthentication's mTLS mode, DestinationRules), its DNS names and its recent
Warning Events.

It lives with routing, the engine layer that may read the others. Pods are looked at per
label set, not one by one: a Service's pods share a handful, so a Service with ten thousand
pods costs what one with ten does, apart from counting them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from netsight.analyzers.core.contracts import Finding, Severity
from netsight.analyzers.policy import istio_mesh
from netsight.analyzers.policy.endpoints import from_pod
from netsight.analyzers.policy.engine import READS as POLICY_READS
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.verdict import Direction
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.declared import ROUTE_READS
from netsight.analyzers.routing.gateway_objects import ROUTE_KINDS, is_gateway_api, read_route
from netsight.analyzers.services import cluster_dns
from netsight.analyzers.services.service_reports import ServiceReport
from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.records import PodRecord, Record
from netsight.graph.store.live import GraphView

# Items a layer lists in detail; the rest is counted.
ITEMS = 20
# Which layer a Service finding belongs to, by code (the rest: endpoints).
_PODS = frozenset({"NS0101", "NS0310", "NS0311"})
_PORTS = frozenset({"NS0104", "NS0105", "NS0106", "NS0107", "NS0108"})
_DNS = frozenset({"NS0110", "NS0111", "NS0112", "NS0113", "NS0114"})
DESTINATION_RULE, VIRTUAL_SERVICE = "DestinationRule", "VirtualService"
# What the layers beyond the Service's own inspection read.
READS = frozenset({*ROUTE_READS, Kind.INGRESS, DESTINATION_RULE, VIRTUAL_SERVICE,
                   *POLICY_READS, cluster_dns.CONFIG_MAP_KIND})


@dataclass
class Layer:
    name: str
    status: Severity | None  # None: netsight cannot tell
    summary: str
    items: list[str] = field(default_factory=list)


def layers(view: GraphView, report: ServiceReport) -> list[Layer]:
    """Every layer of ``report``'s Service, in the order traffic meets them backwards:
    what serves, how it is reached, who may reach it."""
    by_layer: dict[str, list[Finding]] = {"pods": [], "ports": [], "endpoints": [], "dns": []}
    for finding in report.findings:
        code = finding.code
        name = "pods" if code in _PODS else "ports" if code in _PORTS else \
            "dns" if code in _DNS else "endpoints"
        by_layer[name].append(finding)
    groups = _label_groups(report.pods)
    found = [_pods(report, by_layer["pods"]), _ports(report, by_layer["ports"]),
             _endpoints(report, by_layer["endpoints"]), _routes(view, report)]
    if report.service.type != "ExternalName":
        found += [_policies(view, groups), _mesh(view, report, groups)]
    found += [_dns(view, report, by_layer["dns"]), _events(view, report)]
    return found


def _worst(findings: Iterable[Finding]) -> Severity:
    return min((f.severity for f in findings), key=lambda s: s.rank, default=Severity.OK)


def _items(lines: Iterable[str], total: int | None = None) -> list[str]:
    listed = list(lines)
    shown = listed[:ITEMS]
    left = (total if total is not None else len(listed)) - len(shown)
    return shown + ([f"... and {left} more"] if left > 0 else [])


def _label_groups(pods: list[PodRecord]) -> list[list[PodRecord]]:
    """The pods by label set (label maps are shared between equal ones: an id is a set)."""
    groups: dict[int, list[PodRecord]] = {}
    for pod in pods:
        groups.setdefault(id(pod.labels), []).append(pod)
    return sorted(groups.values(), key=lambda g: g[0].name)


def _pods(report: ServiceReport, findings: list[Finding]) -> Layer:
    service, pods = report.service, report.pods
    if service.selector is None:
        return Layer("pods", Severity.OK if service.type == "ExternalName" else Severity.INFO,
                     "no selector: endpoints are managed by something else")
    selector = ",".join(f"{k}={v}" for k, v in sorted(service.selector.items()))
    ready = sum(1 for p in pods if p.ready)
    waiting = sum(1 for p in pods if p.waiting is not None)
    summary = f"{selector}: {len(pods)} pod(s), {ready} ready" + \
        (f", {waiting} with a container not running" if waiting else "")
    if report.templates:
        summary += "; templates: " + ", ".join(f"{w.kind}/{w.name}" for w in report.templates)
    items = _items((_pod_line(p) for p in pods[:ITEMS]), len(pods))
    return Layer("pods", _worst(findings), summary, items + [f.summary for f in findings])


def _pod_line(pod: PodRecord) -> str:
    ready = {True: "ready", False: "not ready", None: "readiness unknown"}[pod.ready]
    return f"{pod.name}: {pod.phase or 'phase unknown'}, {ready}" + \
        (f", {pod.waiting}" if pod.waiting else "") + (", terminating" * pod.terminating)


def _ports(report: ServiceReport, findings: list[Finding]) -> Layer:
    ports = [p.describe() for p in report.service.ports]
    return Layer("ports", _worst(findings), ", ".join(ports) or "none",
                 [f.summary for f in findings])


def _endpoints(report: ServiceReport, findings: list[Finding]) -> Layer:
    counts = report.endpoints
    # Counted, not named: a slice's name is generated (the controller's generateName).
    summary = f"{counts.source}: {counts.ready} ready, {counts.not_ready} not ready, " \
        f"{counts.terminating} terminating" + (f" ({len(report.slices)} objects)"
                                               if len(report.slices) > 1 else "")
    unknown = [n for n in report.not_evaluated if n.startswith("endpoints:")]
    status = None if unknown and not findings else _worst(findings)
    return Layer("endpoints", status, summary,
                 [f.summary for f in findings] + unknown)


def _routes(view: GraphView, report: ServiceReport) -> Layer:
    """The routes, Ingresses and VirtualServices sending to the Service, with the conditions
    a conformant controller gives a Gateway API route's parents and this backend."""
    service = report.service
    lines: list[str] = []
    worst = Severity.OK
    resolver: Resolver | None = None
    for record in sorted(view.neighbors(service.key, Rel.ROUTES_TO, incoming=True),
                         key=lambda r: r.key):
        kind = record.kind.partition(".")[0]
        if record.kind in ROUTE_KINDS and is_gateway_api(record):
            resolver = resolver or Resolver(view)
            line, severity = _gateway_route(resolver, record, report)
            lines.append(line)
            worst = min(worst, severity, key=lambda s: s.rank)
        else:
            lines.append(f"{kind} {record.namespace}/{record.name}")
    # Not listed (forbidden, not synced yet): "none sends to it" would be a guess.
    unread = [why for kind in (*ROUTE_KINDS, Kind.INGRESS, VIRTUAL_SERVICE)
              if (why := view.unreadable(kind)) is not None]
    status = None if unread else worst
    if not lines:
        return Layer("routes", status, "; ".join(unread) or
                     "no route, Ingress or VirtualService sends to it")
    return Layer("routes", status, f"{len(lines)} send to it" + (
        "; not all resolve" if worst is not Severity.OK else "") + "".join(
        f"; {why}" for why in unread), _items(lines))


def _gateway_route(resolver: Resolver, record: Record, report: ServiceReport
                   ) -> tuple[str, Severity]:
    service = report.service
    result = resolver.resolve(read_route(record))
    said = []
    worst = Severity.OK
    for parent in result.parents:
        conditions = ", ".join(
            f"{name}={cond.status}" + ("" if cond.ok else f" ({cond.reason})")
            for name, cond in sorted(parent.conditions.items()))
        said.append(f"{parent.ref.parent}: {conditions}")
        if any(not cond.ok for cond in parent.conditions.values()):
            worst = Severity.WARNING
    for backend in result.backends:
        ref = backend.ref
        if (ref.kind, ref.namespace, ref.name) == ("Service", service.namespace, service.name) \
                and not backend.ok:
            said.append(f"backendRef {ref.path}: {backend.reason}")
            worst = Severity.CRITICAL
    kind = record.kind.partition(".")[0]
    return f"{kind} {record.namespace}/{record.name}: " + ("; ".join(said) or
                                                          "no parent"), worst


def _policies(view: GraphView, groups: list[list[PodRecord]]) -> Layer:
    """Which policies select the Service's pods, and whether ingress to them is isolated."""
    if not groups:
        return Layer("policies", Severity.OK, "no pods to select")
    engine = PolicyEngine(view, explain=False)
    unreadable = "; ".join(engine.unreadable())
    lines = []
    isolated = undecided = 0
    for group in groups:
        endpoint = from_pod(group[0])
        names: list[str] = []
        ingress = False
        for policy in engine.network_policies(endpoint):
            names.append(f"NetworkPolicy {policy.record.namespace}/{policy.record.name}")
            ingress |= Direction.INGRESS in policy.types
        admins, baselines, applies = engine.applicable(endpoint)
        for admin in (*admins, *baselines):
            maybe = "?" if applies.get(id(admin)) is None else ""
            names.append(f"{admin.record.kind.partition('.')[0]} {admin.record.name}{maybe}")
        ns = engine.namespaces
        for cnp in engine.cilium_policies(endpoint):
            decided = [cnp.applies_to(spec, endpoint, ns) for spec in cnp.specs]
            if any(d is not False for d in decided):
                maybe = "" if any(decided) else "?"
                names.append(f"{cnp.record.kind.partition('.')[0]} {cnp.record.ref}{maybe}")
                ingress |= any(d and spec.active(Direction.INGRESS)
                               for d, spec in zip(decided, cnp.specs, strict=True))
        for calico in engine.calico_policies(endpoint):
            applied = calico.applies_to(endpoint, ns)
            if applied is not False:
                names.append(f"{calico.label}{'' if applied else '?'}")
                ingress |= bool(applied) and Direction.INGRESS in calico.types
        if endpoint.namespace is not None:
            for authz in engine.istio.authorization_policies(endpoint)[0]:
                names.append(f"AuthorizationPolicy {authz.record.namespace}/"
                             f"{authz.record.name} ({authz.action.value})")
        isolated += ingress * len(group)
        undecided += any(n.endswith("?") for n in names) * len(group)
        label = f"{group[0].name}" + (f" and {len(group) - 1} like it" if len(group) > 1
                                      else "")
        lines.append(f"{label}: " + ("; ".join(names) or "no policy") +
                     (" (ingress isolated)" if ingress else ""))
    total = sum(len(g) for g in groups)
    summary = f"{isolated} of {total} pod(s) ingress-isolated" + (
        f"; {undecided} selected by policies netsight cannot decide (?)" if undecided else "")
    if unreadable:
        summary += f"; {unreadable}"
    return Layer("policies", None if unreadable else Severity.OK, summary, _items(lines))


def _mesh(view: GraphView, report: ServiceReport, groups: list[list[PodRecord]]) -> Layer:
    """Sidecar or ambient per pod, the mTLS mode each target port requires
    (PeerAuthentication), and the DestinationRules and VirtualServices of the Service."""
    service = report.service
    configured = sorted(
        f"{r.kind.partition('.')[0]} {r.namespace}/{r.name}"
        for r in view.neighbors(service.key, Rel.CONFIGURES, incoming=True)
        if r.kind.partition(".")[0] in (DESTINATION_RULE, VIRTUAL_SERVICE))
    if not groups:
        return Layer("mesh", Severity.OK, "no pods" + (f"; {', '.join(configured)}"
                                                       if configured else ""), configured)
    engine = PolicyEngine(view, explain=False)
    counts: dict[str, int] = {}
    lines = []
    undecided = False
    for group in groups:
        endpoint = from_pod(group[0])
        member = engine.istio.membership(endpoint)
        plane = member.dataplane.value if member.dataplane is not None else "unknown"
        undecided |= member.dataplane is None
        counts[plane] = counts.get(plane, 0) + len(group)
        modes = []
        if member.dataplane not in (None, istio_mesh.Dataplane.NONE):
            for port in service.ports:
                target = port.target_port
                if isinstance(target, str):
                    target = next((p.port for p in endpoint.ports if p.name == target), -1)
                if target > 0:
                    server = engine.istio.server_mode(endpoint, target)
                    modes.append(f"{target}: {server.describe()}")
        lines.append(f"{group[0].name}" + (f" and {len(group) - 1} like it" if len(group) > 1
                                           else "") + f": {plane} ({member.why})"
                     + (f"; mTLS {', '.join(modes)}" if modes else ""))
    summary = ", ".join(f"{n} {plane}" for plane, n in sorted(counts.items()))
    if configured:
        summary += "; " + ", ".join(configured)
    return Layer("mesh", None if undecided else Severity.OK, summary,
                 _items(lines) + configured)


def _dns(view: GraphView, report: ServiceReport, findings: list[Finding]) -> Layer:
    service = report.service
    dns = cluster_dns.read(view)
    name = f"{service.name}.{service.namespace}.svc.{dns.domain}"
    if service.type == "ExternalName":
        summary = f"{name}: CNAME {service.external_name or '(none)'}"
    elif service.headless:
        summary = f"{name}: A/AAAA records of its {report.endpoints.ready} ready endpoint(s)"
    else:
        summary = f"{name}: {', '.join(service.cluster_ips) or 'no cluster IP yet'}"
    items = [f"{service.name}.{service.namespace}", f"{service.name} (from {service.namespace})"]
    items += [f"_{p.name}._{p.protocol.lower()}.{name} (SRV)" for p in service.ports if p.name]
    if dns.domain_assumed:
        items.append(f"cluster domain {dns.domain} assumed: no cluster DNS configuration read")
    return Layer("dns", _worst(findings), summary, items + [f.summary for f in findings])


def _events(view: GraphView, report: ServiceReport) -> Layer:
    why = view.events_unknown()
    warnings = report.warnings
    if not warnings:
        return Layer("events", None if why else Severity.OK,
                     why or "no recent Warning about the Service, its slices or its pods")
    reasons: dict[str, int] = {}
    for event in warnings:
        reasons[event.reason] = reasons.get(event.reason, 0) + 1
    summary = f"{len(warnings)} recent Warning(s): " + ", ".join(
        f"{reason} ({n})" for reason, n in sorted(reasons.items()))
    return Layer("events", Severity.WARNING, summary, _items(
        f"{e.kind.partition('.')[0]} {e.name}: {e.reason} ({e.count}x): {e.note}"
        for e in warnings))
