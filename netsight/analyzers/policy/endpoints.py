"""The two ends of a flow: pods, workload templates standing for pods, or outside IPs.

Users name an end as any :class:`ObjectName`: ``ns/pod``, ``Kind/ns/name`` (a Pod, or a
Service, Deployment, StatefulSet or DaemonSet standing for its pods), ``ip:ADDR`` or a
Service's DNS name. In manifests a workload without running pods stands
for the pods its template would create (labels and ports from the template, IP unknown),
as everywhere else in netsight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from netsight.analyzers.core.base import did_you_mean
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.quoting import quoted, shortened
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import (
    EMPTY_MAP,
    ContainerPort,
    PodRecord,
    Record,
    ServiceRecord,
    WorkloadRecord,
)
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView, Source

# Kinds a user may name as an end: a Service or a workload stands for its pods.
NAMED_KINDS = {"Service": Kind.SERVICE, "Deployment": Kind.DEPLOYMENT,
               "StatefulSet": Kind.STATEFUL_SET, "DaemonSet": Kind.DAEMON_SET}
_TERMINAL_PHASES = ("Succeeded", "Failed")
ENDPOINT_FORMS = ("'namespace/pod', 'Kind/namespace/name' (Kind one of Pod, "
         f"{', '.join(NAMED_KINDS)}), 'ip:ADDR' or a Service DNS name ('name.namespace.svc')")


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str  # "ns/pod", "Deployment/ns/name" for a template, "ip:ADDR" for outside
    namespace: str | None = None  # None: outside the cluster
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY_MAP)
    ips: tuple[str, ...] = ()
    ports: tuple[ContainerPort, ...] = ()
    key: str | None = None  # graph key of the pod or workload
    host_network: bool = False
    template: bool = False
    node: str | None = None  # spec.nodeName: a host-network pod answers on this node's IPs
    # spec.serviceAccountName: the identity a mesh proxy certifies, and what Cilium and
    # Calico select on; None for an address outside the cluster, which has none.
    service_account: str | None = None
    annotations: Mapping[str, str] = field(default_factory=lambda: EMPTY_MAP)
    mesh_proxy: str | None = None

    @property
    def external(self) -> bool:
        return self.namespace is None


def from_pod(record: PodRecord | WorkloadRecord) -> Endpoint:
    if isinstance(record, PodRecord):
        return Endpoint(f"{record.namespace}/{record.name}", record.namespace, record.labels,
                        record.ips, record.ports, record.key, record.host_network,
                        node=record.node_name, service_account=record.service_account,
                        annotations=record.annotations, mesh_proxy=record.mesh_proxy)
    return Endpoint(f"{record.kind}/{record.namespace}/{record.name}", record.namespace,
                    record.pod_labels, (), record.ports, record.key, record.host_network,
                    template=True, service_account=record.service_account,
                    annotations=record.pod_annotations, mesh_proxy=record.mesh_proxy)


def external(address: str) -> Endpoint:
    return Endpoint(f"ip:{address}", ips=(address,))


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a user's name stands for: one or more endpoints, and the Service if it was one."""

    text: str
    endpoints: tuple[Endpoint, ...]
    service: ServiceRecord | None = None


def _by_address(view: GraphView, text: str, canonical: str, *,
                fail: Callable[[ErrorCode, str], ToolFailure], argument: str) -> Resolved:
    """An address is outside the cluster unless a pod or a Service's ClusterIP has it: then
    policies see that pod (or the Service's pods after kube-proxy), not an outsider."""
    # The API server writes addresses in canonical form: compare strings, parse nothing.
    pods = [p for p in view.for_each(Kind.POD)
            if isinstance(p, PodRecord) and canonical in p.ips]
    if pods:
        return Resolved(text, tuple(from_pod(p) for p in pods))
    for service in view.for_each(Kind.SERVICE):
        if isinstance(service, ServiceRecord) and canonical in service.cluster_ips:
            if argument == "source":
                raise fail(ErrorCode.INVALID_INPUT,
                           f"{text} is the ClusterIP of Service {service.ref}; traffic never "
                           "comes from a ClusterIP — give the client pod or its address")
            members = _service_members(view, service)
            if not members:
                raise fail(ErrorCode.NOT_FOUND,
                           f"{text} is the ClusterIP of Service {service.ref}, which selects "
                           "no pods; see diagnose_service")
            return Resolved(text, members, service)
    return Resolved(text, (external(canonical),))


def resolve(view: GraphView, given: ObjectName, *, argument: str, tool: str) -> Resolved:
    """The endpoints ``given`` stands for; NOT_FOUND / INVALID_INPUT name ``argument``."""
    def fail(code: ErrorCode, message: str) -> ToolFailure:
        return ToolFailure(code, f"{argument}: {message}", tool=tool)

    text = str(given)
    if given.address is not None:
        return _by_address(view, text, given.address, fail=fail, argument=argument)
    if given.namespace is None:
        raise fail(ErrorCode.INVALID_INPUT,
                   f"{quoted(text)} has no namespace; give {ENDPOINT_FORMS}")
    namespace, name = given.namespace, given.name
    if given.kind == "Pod":
        record = view.get(make_key(Kind.POD, namespace, name))
        if not isinstance(record, PodRecord):
            known = {r.name for r in view.for_each(Kind.POD, namespace)}
            raise fail(ErrorCode.NOT_FOUND, f"Pod {shortened(f'{namespace}/{name}')} not "
                       f"found{did_you_mean(name, known)}")
        return Resolved(text, (from_pod(record),))
    kind_name = given.kind
    if kind_name is None:
        pod = view.get(make_key(Kind.POD, namespace, name))
        if isinstance(pod, PodRecord):
            return Resolved(text, (from_pod(pod),))
        # Not a pod: a Service or workload of that name, if exactly one kind has it.
        found = [(kind, record) for kind, record in
                 ((k, view.get(make_key(v, namespace, name))) for k, v in NAMED_KINDS.items())
                 if record is not None]
        if len(found) > 1:
            kinds = ", ".join(f"{k}/{text}" for k, _ in found)
            raise fail(ErrorCode.INVALID_INPUT,
                       f"{quoted(text)} is no pod and is ambiguous: name one of {kinds}")
        if not found:
            known = {r.name for r in view.for_each(Kind.POD, namespace)}
            raise fail(ErrorCode.NOT_FOUND,
                       f"no pod, Service or workload {quoted(text)}{did_you_mean(name, known)}; "
                       "give 'namespace/pod', 'Kind/namespace/name' or 'ip:ADDR'")
        kind_name = found[0][0]
    kind = NAMED_KINDS.get(kind_name)
    if kind is None:
        raise fail(ErrorCode.INVALID_INPUT,
                   f"kind {quoted(kind_name)} cannot be an end of a flow; use one of Pod, "
                   f"{', '.join(NAMED_KINDS)}, or 'namespace/pod'")
    record = view.get(make_key(kind, namespace, name))
    if record is None:
        known = {r.name for r in view.for_each(kind, namespace)}
        raise fail(ErrorCode.NOT_FOUND,
                   f"{kind_name} {shortened(f'{namespace}/{name}')} not found"
                   f"{did_you_mean(name, known)}")
    if isinstance(record, ServiceRecord):
        members = _service_members(view, record)
        if not members:
            raise fail(ErrorCode.NOT_FOUND,
                       f"Service {namespace}/{name} selects no pods (and no workload "
                       "template), so no traffic reaches it; see diagnose_service")
        return Resolved(text, members, record)
    assert isinstance(record, WorkloadRecord)
    members = _workload_members(view, record)
    if not members:
        raise fail(ErrorCode.NOT_FOUND, f"{kind_name} {namespace}/{name} has no pods")
    return Resolved(text, members)


def live(record: Record) -> bool:
    """Pods that can take part in traffic: not Succeeded or Failed."""
    return not (isinstance(record, PodRecord) and record.phase in _TERMINAL_PHASES)


def _service_members(view: GraphView, service: ServiceRecord) -> tuple[Endpoint, ...]:
    selected = [r for r in view.neighbors(service.key, Rel.SELECTS)
                if isinstance(r, PodRecord | WorkloadRecord) and live(r)]
    pods = [r for r in selected if isinstance(r, PodRecord)]
    chosen: list[PodRecord | WorkloadRecord] = list(pods)
    if not pods and view.source is Source.MANIFESTS:
        chosen = [r for r in selected if isinstance(r, WorkloadRecord)]
    return tuple(from_pod(r) for r in sorted(chosen, key=lambda r: r.key))


def _workload_members(view: GraphView, workload: WorkloadRecord) -> tuple[Endpoint, ...]:
    selector = workload.selector or LabelSelector(
        match_labels=tuple(sorted(workload.pod_labels.items())))
    pods = sorted((r for r in view.matching(workload.namespace, selector)
                   if isinstance(r, PodRecord) and live(r)), key=lambda r: r.name)
    if pods:
        return tuple(from_pod(p) for p in pods)
    if view.source is Source.MANIFESTS:
        return (from_pod(workload),)
    return ()


def port_targets(resolved: Resolved, port: int, protocol: str, *, tool: str
                 ) -> tuple[list[tuple[Endpoint, int]], list[str]]:
    """Destination pods with the port traffic reaches them on (a Service port translated)."""
    service: ServiceRecord | None = resolved.service
    entry = None if service is None else next(
        (p for p in service.ports if p.port == port and p.protocol == protocol), None)
    if service is not None and entry is None and not service.headless:
        # kube-proxy forwards only the Service's own ports: anything else sent to the
        # ClusterIP goes nowhere, whatever the policies say.
        have = ", ".join(p.describe() for p in service.ports) or "none"
        raise ToolFailure(ErrorCode.NOT_FOUND, f"port: Service {service.ref} has no port "
                          f"{port}/{protocol}; its ports: {have} (for a pod port, name the "
                          "pod or workload instead)", tool=tool)
    if entry is None:
        # A pod, a workload, an outside address, or a headless Service (clients reach its
        # pods' addresses directly, on any port).
        return [(e, port) for e in resolved.endpoints], []
    found, notes = [], []
    for endpoint in resolved.endpoints:
        target = entry.target_port
        if isinstance(target, str):
            number = next((p.port for p in endpoint.ports
                           if p.name == target and p.protocol == protocol), None)
            if number is None:
                notes.append(f"targetPort {target!r} does not resolve on {endpoint.name}: "
                             "the Service sends it no traffic")
                continue
            target = number
        found.append((endpoint, target))
    return found, notes
