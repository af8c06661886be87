"""Services that disagree about the ports of one mesh workload (istioctl's
deployment.ServiceAssociationAnalyzer).

A sidecar configures its inbound traffic from the Services that select its pod, per port.
Istio requires those Services to agree on each port's protocol (sidecars proxy TCP only:
a port that is TCP for one Service and UDP for another is handled two ways), and
Services selecting one workload with the same targetPort to refer to the same port.

Only workloads in the mesh count, as istioctl decides it (util.inMesh): an istio-proxy
container, else the pod's sidecar.istio.io/inject label, else that annotation, else the
namespace's istio-injection=enabled label (a namespace not in the input injects nothing);
Istio's own waypoints are left out. Beyond istioctl, which reads none of them, a revision
label asks for injection as the injector's webhooks take it: a namespace's istio.io/rev
(when it has no istio-injection label), a pod's istio.io/rev (unless its namespace says
istio-injection=disabled).

From manifests a workload's template stands for its pods (istioctl reads Deployments only;
StatefulSets and DaemonSets are checked too), and a Pod that no template of the input stands
for (a bare Pod, a Job's) for itself, which istioctl does not check. From a cluster, whose
workloads are not watched, the pods running an istio-proxy are checked instead, one per
owner and label set.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from netsight.analyzers.core import codes, deadline
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import PodRecord, Record, ServiceRecord, WorkloadRecord

WORKLOADS = (Kind.DEPLOYMENT, Kind.STATEFUL_SET, Kind.DAEMON_SET)
INJECT = "sidecar.istio.io/inject"
INJECTION_LABEL = "istio-injection"
REVISION_LABEL = "istio.io/rev"
# Waypoints Istio deploys for ambient mode carry this label (gateway.istio.io/managed).
MANAGED = "gateway.istio.io/managed"
WAYPOINT_CONTROLLER = "istio.io-mesh-controller"
# A Deployment's pods are owned by its ReplicaSet "<deployment>-<pod-template-hash>".
POD_TEMPLATE_HASH = "pod-template-hash"

Unit = tuple[Record, Mapping[str, str]]  # a pod or a template standing for pods, its labels


def port_associations(ctx: MeshContext) -> None:
    # Only namespaces where two Services with selectors disagree over a port can hold a
    # clash: the pods and workloads of the others are not looked at (Services are few).
    namespaces = _clash_namespaces(ctx)
    if not namespaces:
        return
    if ctx.unknown(Kind.DEPLOYMENT) is None:
        injection = {ns.name: ns.labels for ns in ctx.view.for_each(Kind.NAMESPACE)}
        units = _workloads(ctx, namespaces, injection) + \
            _bare_pods(ctx, namespaces, injection)
    elif (unknown := ctx.unknown(Kind.POD, Kind.SERVICE)) is None:
        units = _pods(ctx, namespaces)
    else:
        ctx.skip("Services sharing a mesh workload's ports", unknown)
        return
    for record, labels in deadline.checked(units, every=64):
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


def _workloads(ctx: MeshContext, namespaces: set[str],
               labels: Mapping[str, Mapping[str, str]]) -> list[Unit]:
    """From manifests: the mesh workloads, each template standing for its pods."""
    workloads = [w for namespace in sorted(namespaces) for kind in WORKLOADS
                 for w in ctx.view.for_each(kind, namespace)
                 if isinstance(w, WorkloadRecord) and ctx.in_scope(w)]
    return [(w, w.pod_labels) for w in sorted(workloads, key=lambda w: w.key)
            if w.labels.get(MANAGED) != WAYPOINT_CONTROLLER
            and in_mesh(w.mesh_proxy, w.pod_labels, w.pod_annotations,
                        labels.get(w.namespace))]


def _bare_pods(ctx: MeshContext, namespaces: set[str],
               labels: Mapping[str, Mapping[str, str]]) -> list[Unit]:
    """From manifests: the mesh Pods no template of the input stands for, one per owner
    and label set."""
    return _one_per_owner(
        pod for namespace in sorted(namespaces)
        for pod in ctx.view.for_each(Kind.POD, namespace)
        if isinstance(pod, PodRecord) and ctx.in_scope(pod) and not _templated(ctx, pod)
        and pod.labels.get(MANAGED) != WAYPOINT_CONTROLLER
        and in_mesh(pod.mesh_proxy, pod.labels, pod.annotations, labels.get(pod.namespace)))


def _templated(ctx: MeshContext, pod: PodRecord) -> bool:
    """Whether a workload template of the input (checked in the pod's stead) made the pod:
    its owner, or for a ReplicaSet's pod the Deployment owning that ReplicaSet."""
    if pod.owner is None:
        return False
    kind, name = pod.owner
    if kind == Kind.REPLICA_SET:
        replica_set = ctx.view.get(make_key(Kind.REPLICA_SET, pod.namespace, name))
        if replica_set is not None and replica_set.owner is not None:
            kind, name = replica_set.owner
        elif (digest := pod.labels.get(POD_TEMPLATE_HASH)) and name.endswith(f"-{digest}"):
            # The ReplicaSet is not in the input: its name still tells its Deployment.
            kind, name = Kind.DEPLOYMENT, name[:-len(digest) - 1]
    return kind in WORKLOADS and ctx.view.exists(make_key(kind, pod.namespace, name))


def _pods(ctx: MeshContext, namespaces: set[str]) -> list[Unit]:
    """From a cluster (workloads are not watched): the pods running an istio-proxy, one per
    owner and label set (the pods of one ReplicaSet share their Services)."""
    return _one_per_owner(
        pod for namespace in sorted(namespaces)
        for pod in ctx.view.for_each(Kind.POD, namespace)
        if isinstance(pod, PodRecord) and pod.mesh_proxy and ctx.in_scope(pod))


def _one_per_owner(pods: Iterable[PodRecord]) -> list[Unit]:
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], Unit] = {}
    for pod in deadline.checked(pods, every=256):  # every mesh pod of the cluster
        owner = "/".join(pod.owner) if pod.owner else pod.name
        key = (pod.namespace, owner, tuple(sorted(pod.labels.items())))
        if key not in seen or pod.key < seen[key][0].key:
            seen[key] = (pod, pod.labels)
    return [seen[k] for k in sorted(seen)]


def in_mesh(proxy: str | None, labels: Mapping[str, str], annotations: Mapping[str, str],
            namespace: Mapping[str, str] | None) -> bool:
    """Whether pods with these labels and annotations get a sidecar, as istioctl's
    util.inMesh decides it (in its order), with the revision labels it does not read.
    ``namespace``: the namespace's labels, None when it is not in the input."""
    if proxy:
        return True
    for where in (labels, annotations):
        if INJECT in where:
            return where[INJECT] == "true"
    if namespace is None:
        # istioctl: a namespace it cannot find injects nothing. A revision the pod asks
        # for is injected wherever injection is not disabled.
        return bool(labels.get(REVISION_LABEL))
    injection = namespace.get(INJECTION_LABEL)
    if labels.get(REVISION_LABEL) and injection != "disabled":
        return True
    if injection is None:
        # The revision webhooks select namespaces by istio.io/rev where istio-injection
        # is not set.
        return bool(namespace.get(REVISION_LABEL))
    return injection == "enabled"


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
            f"send ports {', '.join(map(str, sorted(ports)))} to targetPort {target}",
            detail=f"Ports {via} of "
            f"the Services selecting this mesh workload's pods all target {target}. Istio "
            "requires Services selecting one workload with the same targetPort to use the "
            "same port; otherwise the sidecar may route traffic for one to the other.",
            suggestion="Give the Services the same port number for this targetPort, or "
            "merge them into one Service.",
            evidence=[evidence(workload, _labels_path(workload), dict(labels))],
        ))
