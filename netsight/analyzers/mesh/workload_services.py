"""Services that disagree about the ports of one mesh workload (istioctl's
deployment.ServiceAssociationAnalyzer).

A sidecar configures its inbound traffic from the Services that select its pod, per port.
Istio requires those Services to agree on each port's protocol (sidecars proxy TCP only:
a port that is TCP for one Service and UDP for another is handled two ways), and
Services selecting one workload with the same targetPort to refer to the same port.

Only workloads in the mesh count, as istioctl decides it: an istio-proxy container in the
template, else the template's sidecar.istio.io/inject label or annotation, else the
namespace's istio-injection=enabled label; Istio's own waypoint Deployments are left out.
From manifests a workload's template stands for its pods (istioctl reads Deployments);
from a cluster, whose workloads are not watched, the pods running an istio-proxy are
checked instead, one per owner and label set.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.graph.model import Kind
from netsight.graph.records import PodRecord, Record, ServiceRecord, WorkloadRecord

WORKLOADS = (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
INJECT = "sidecar.istio.io/inject"
INJECTION_LABEL = "istio-injection"
# Waypoints Istio deploys for ambient mode carry this label (gateway.istio.io/managed).
MANAGED = "gateway.istio.io/managed"
WAYPOINT_CONTROLLER = "istio.io-mesh-controller"


def port_associations(ctx: MeshContext) -> None:
    # Only namespaces where two Services with selectors disagree over a port can hold a
    # clash: the pods and workloads of the others are not looked at (Services are few).
    namespaces = _clash_namespaces(ctx)
    if not namespaces:
        return
    if ctx.unknown(Kind.DEPLOYMENT) is None:
        units = _workloads(ctx, namespaces)
    elif (unknown := ctx.unknown(Kind.POD, Kind.SERVICE)) is None:
        units = _pods(ctx, namespaces)
    else:
        ctx.skip("Services sharing a mesh workload's ports", unknown)
        return
    for record, labels in units:
        services = [s for s in ctx.view.for_each(Kind.SERVICE, record.namespace)
                    if isinstance(s, ServiceRecord) and s.selector
                    and all(labels.get(k) == v for k, v in s.selector.items())]
        if len(services) > 1:
            _protocols(ctx, record, labels, services)
            _target_ports(ctx, record, labels, services)


def _clash_namespaces(ctx: MeshContext) -> set[str]:
    """Namespaces where Services with selectors give one port two protocols or send two
    ports to one targetPort (only there can a pod's Services clash)."""
    protocols: dict[tuple[str, int], set[str]] = defaultdict(set)
    targets: dict[tuple[str, str], set[int]] = defaultdict(set)
    for service in ctx.view.for_each(Kind.SERVICE):
        if not isinstance(service, ServiceRecord) or not service.selector:
            continue
        for port in service.ports:
            protocols[(service.namespace, port.port)].add(port.protocol or "TCP")
            target = str(port.target_port)
            targets[(service.namespace, target if target not in ("", "0") else
                     str(port.port))].add(port.port)
    return {ns for (ns, _), found in protocols.items() if len(found) > 1} | \
        {ns for (ns, _), found in targets.items() if len(found) > 1}


def _workloads(ctx: MeshContext, namespaces: set[str]
               ) -> list[tuple[Record, Mapping[str, str]]]:
    """From manifests: the mesh workloads, each template standing for its pods."""
    workloads = [w for namespace in sorted(namespaces) for kind in WORKLOADS
                 for w in ctx.view.for_each(kind, namespace)
                 if isinstance(w, WorkloadRecord) and ctx.in_scope(w)]
    if not workloads:
        return []
    labels = {ns.name: ns.labels for ns in ctx.view.for_each(Kind.NAMESPACE)}
    return [(w, w.pod_labels) for w in sorted(workloads, key=lambda w: w.key)
            if w.labels.get(MANAGED) != WAYPOINT_CONTROLLER and _in_mesh(w, labels)]


def _pods(ctx: MeshContext, namespaces: set[str]) -> list[tuple[Record, Mapping[str, str]]]:
    """From a cluster (workloads are not watched): the pods running an istio-proxy, one per
    owner and label set (the pods of one ReplicaSet share their Services)."""
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[Record, Mapping[str, str]]] = {}
    for namespace in sorted(namespaces):
        for pod in ctx.view.for_each(Kind.POD, namespace):
            if not isinstance(pod, PodRecord) or not pod.mesh_proxy or not ctx.in_scope(pod):
                continue
            owner = "/".join(pod.owner) if pod.owner else pod.name
            key = (pod.namespace, owner, tuple(sorted(pod.labels.items())))
            if key not in seen or pod.key < seen[key][0].key:
                seen[key] = (pod, pod.labels)
    return [seen[k] for k in sorted(seen)]


def _in_mesh(workload: WorkloadRecord, namespaces: Mapping[str, Mapping[str, str]]) -> bool:
    if workload.mesh_proxy:
        return True
    for where in (workload.pod_labels, workload.pod_annotations):
        if INJECT in where:
            return where[INJECT] == "true"
    return namespaces.get(workload.namespace, {}).get(INJECTION_LABEL) == "enabled"


def _subject(record: Record) -> str:
    owner = f" (of {record.owner[0]} {record.owner[1]})" if isinstance(record, PodRecord) \
        and record.owner else ""
    return f"{record.kind} {record.ref}{owner}"


def _labels_path(record: Record) -> str:
    return "spec.template.metadata.labels" if isinstance(record, WorkloadRecord) else \
        "metadata.labels"


def _protocols(ctx: MeshContext, workload: Record, labels: Mapping[str, str],
               services: list[ServiceRecord]) -> None:
    by_port: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for service in services:
        for port in service.ports:
            by_port[port.port][port.protocol or "TCP"].append(service.name)
    for number, protocols in sorted(by_port.items()):
        if len(protocols) < 2:
            continue
        names = sorted(n for found in protocols.values() for n in found)
        text = ", ".join(f"{p} ({', '.join(sorted(n))})" for p, n in sorted(protocols.items()))
        ctx.report(codes.MESH_WORKLOAD_PORT_PROTOCOL_CONFLICT.finding(
            ref(workload), f"{_subject(workload)}: Services {', '.join(names)} "
            f"give port {number} different protocols",
            detail=f"The Services selecting this mesh workload's pods declare port {number} "
            f"as {text}. Istio requires a mesh workload's Services to agree on each "
            "port's protocol: the sidecar configures inbound traffic per port and proxies "
            "only TCP (UDP and SCTP pass it by), so the port is handled one way for one "
            "Service's clients and another way for the other's.",
            suggestion="Use one protocol per port across the Services selecting these "
            "pods, or serve the other protocol on another port.",
            evidence=[evidence(workload, _labels_path(workload), dict(labels))],
        ))


def _target_ports(ctx: MeshContext, workload: Record, labels: Mapping[str, str],
                  services: list[ServiceRecord]) -> None:
    by_target: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for service in services:
        for port in service.ports:
            target = str(port.target_port)
            if target in ("", "0"):
                target = str(port.port)  # an unset targetPort is the port
            by_target[target][port.port].add(service.name)
    for target, ports in sorted(by_target.items()):
        if len(ports) < 2:
            continue
        names = sorted(set().union(*ports.values()))
        via = ", ".join(f"{p} ({', '.join(sorted(n))})" for p, n in sorted(ports.items()))
        ctx.report(codes.MESH_WORKLOAD_TARGET_PORT_CONFLICT.finding(
            ref(workload), f"{_subject(workload)}: Services {', '.join(names)} "
            f"send ports {sorted(ports)} to targetPort {target}",
            detail=f"Ports {via} of "
            f"the Services selecting this mesh workload's pods all target {target}. Istio "
            "requires Services selecting one workload with the same targetPort to use the "
            "same port; otherwise the sidecar may route traffic for one to the other.",
            suggestion="Give the Services the same port number for this targetPort, or "
            "merge them into one Service.",
            evidence=[evidence(workload, _labels_path(workload), dict(labels))],
        ))
