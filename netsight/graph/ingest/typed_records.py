"""Records built straight from the typed objects of api_objects.py, without checking.

The Structs' types are exactly those the checked path accepts without complaint, so msgspec's
parser has done the checking and these functions only read attributes. Each builds the
record :func:`netsight.graph.model.reading.to_record` builds from the same object
(``tests/graph/test_typed_pages_build_the_same_records.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from sys import intern
from typing import Any

from netsight.graph.ingest.api_objects import (
    EndpointConditions,
    EndpointSlice,
    Namespace,
    NetworkPolicy,
    NetworkPolicySpec,
    ObjectMeta,
    Pod,
    PodSpec,
    PodStatus,
    Service,
    ServiceSpec,
    SlicePort,
)
from netsight.graph.ingest.shared_parts import (
    annotations_of,
    container_ports,
    labels_of,
    owner_of,
)
from netsight.graph.model.constructors import builder
from netsight.graph.model.field_values import policy_rules, shared_dns, timestamp
from netsight.graph.model.kinds import Kind, ObjectId
from netsight.graph.model.records import (
    WAITING_AT_START,
    Endpoint,
    EndpointGroup,
    EndpointPort,
    EndpointSliceRecord,
    NamespaceRecord,
    NetworkPolicyRecord,
    PodDNS,
    PodRecord,
    ServicePort,
    ServiceRecord,
)
from netsight.graph.model.selectors import parse_label_selector


def slice_record(item: EndpointSlice, api_version: str = "discovery.k8s.io/v1",
                 default_namespace: str = "", *,
                 previous: EndpointSliceRecord | None = None) -> EndpointSliceRecord:
    """The record ``to_record`` builds from the same EndpointSlice.

    ``previous`` is the slice's record before this version (a watch event): each endpoint
    equal to the one at its position there is taken from there, as
    ``core_records.slice_endpoint`` does. A slice is rewritten whenever one of its (up to
    100) endpoints changes; an unchanged endpoint then costs no allocation, and an identity
    check to compare (upsert, the change ring's changed fields)."""
    meta = item.metadata
    labels = labels_of(meta)
    endpoints: list[Endpoint] = []
    before: tuple[Endpoint, ...] = ()
    if previous is not None:
        before = previous.group.endpoints
    for i, ep in enumerate(item.endpoints or ()):
        conditions, ref = ep.conditions or _NO_CONDITIONS, ep.targetRef
        if i < len(before):
            old = before[i]
            if old.ready is conditions.ready and old.serving is conditions.serving \
                    and old.terminating is conditions.terminating \
                    and old.target_pod == (ref.name if ref is not None and ref.kind == "Pod"
                                           else None) \
                    and old.node_name == (ep.nodeName or None) \
                    and old.addresses == ep.addresses:
                endpoints.append(old)
                continue
        endpoints.append(_ENDPOINT(
            addresses=tuple(map(intern, ep.addresses)),
            ready=conditions.ready,
            serving=conditions.serving,
            terminating=conditions.terminating,
            target_pod=intern(ref.name) if ref is not None and ref.kind == "Pod"
            and ref.name is not None else None,
            node_name=intern(ep.nodeName) if ep.nodeName else None,
        ))
    group: EndpointGroup | None = None
    if previous is not None and _same_ports(item.ports or (), previous.group.ports):
        # Unchanged endpoints and ports (most updates change one endpoint, or none):
        # the previous group itself, which compares by identity.
        old_group = previous.group
        ports = old_group.ports
        if len(endpoints) == len(before) and all(map(is_, endpoints, before)):
            group = old_group
    else:
        ports = tuple(EndpointPort(
            port=port.port,
            protocol="TCP" if port.protocol is None else intern(port.protocol),
            name=intern(port.name) if port.name else None,
            app_protocol=intern(port.appProtocol) if port.appProtocol else None,
        ) for port in item.ports or ())
    return _SLICE_RECORD(
        kind=Kind.ENDPOINT_SLICE,
        api_version=api_version,
        namespace=intern(meta.namespace or default_namespace),
        name=intern(meta.name),
        labels=labels,
        annotations=annotations_of(meta.annotations),
        owner=None if meta.ownerReferences is None else owner_of(meta.ownerReferences),
        created=timestamp(meta.creationTimestamp),
        service_name=labels.get("kubernetes.io/service-name"),
        managed_by=labels.get("endpointslice.kubernetes.io/managed-by"),
        address_type=str(item.addressType or "IPv4"),
        group=group or EndpointGroup(endpoints=tuple(endpoints), ports=ports),
    )


def _same_ports(ports: Sequence[SlicePort], held: tuple[EndpointPort, ...]) -> bool:
    """Whether a slice's ports read as ``held``, the ports of its previous version (the
    ports ``slice_record`` would build, compared without building them)."""
    if len(ports) != len(held):
        return False
    for port, old in zip(ports, held, strict=True):
        if old.port != port.port \
                or old.protocol != ("TCP" if port.protocol is None else port.protocol) \
                or old.name != (port.name or None) \
                or old.app_protocol != (port.appProtocol or None):
            return False
    return True


_NO_CONDITIONS = EndpointConditions()
# The records of most of a list: constructors that skip the frozen __init__'s setattr calls.
POD_RECORD = builder(PodRecord)
_ENDPOINT = builder(Endpoint)
_SLICE_RECORD = builder(EndpointSliceRecord)


def service_record(item: Service, api_version: str = "v1",
                   default_namespace: str = "") -> ServiceRecord:
    """The record ``to_record`` builds from the same Service."""
    meta = item.metadata
    spec = item.spec or _NO_SERVICE_SPEC
    ports = tuple(ServicePort(
        port=port.port,
        target_port=port.port if port.targetPort is None else port.targetPort,
        protocol="TCP" if port.protocol is None else intern(port.protocol),
        name=intern(port.name) if port.name else None,
        node_port=port.nodePort,
        app_protocol=intern(port.appProtocol) if port.appProtocol else None,
    ) for port in spec.ports or ())
    cluster_ips = [ip for ip in spec.clusterIPs or () if ip]
    if not cluster_ips and spec.clusterIP:
        cluster_ips = [intern(spec.clusterIP)]
    return ServiceRecord(
        **_base(meta, Kind.SERVICE, api_version, meta.namespace or default_namespace),
        type=spec.type or "ClusterIP",
        cluster_ips=tuple(cluster_ips),
        selector=spec.selector or None,
        ports=ports,
        external_name=intern(spec.externalName) if spec.externalName else None,
        publish_not_ready=spec.publishNotReadyAddresses is True,
    )


_NO_SERVICE_SPEC = ServiceSpec()


def network_policy_record(item: NetworkPolicy, api_version: str = "networking.k8s.io/v1",
                          default_namespace: str = "") -> NetworkPolicyRecord:
    """The record ``to_record`` builds from the same NetworkPolicy; MalformedObject where
    that raises it."""
    meta = item.metadata
    spec = item.spec or _NO_POLICY_SPEC
    ingress = policy_rules(spec.ingress, "spec.ingress")
    egress = policy_rules(spec.egress, "spec.egress")
    # Default per the API: Ingress always, Egress when the policy has egress rules.
    types = spec.policyTypes or (["Ingress", "Egress"] if egress else ["Ingress"])
    return NetworkPolicyRecord(
        **_base(meta, Kind.NETWORK_POLICY, api_version, meta.namespace or default_namespace),
        pod_selector=parse_label_selector(spec.podSelector, "spec.podSelector"),
        policy_types=tuple(dict.fromkeys(types)),
        ingress=ingress,
        egress=egress,
    )


_NO_POLICY_SPEC = NetworkPolicySpec()


def namespace_record(item: Namespace, api_version: str = "v1") -> NamespaceRecord:
    """The record ``to_record`` builds from the same Namespace (cluster-scoped: a
    namespace in its metadata is ignored)."""
    return NamespaceRecord(**_base(item.metadata, Kind.NAMESPACE, api_version, ""))


def _base(meta: ObjectMeta, kind: str, api_version: str, namespace: str) -> dict[str, Any]:
    """The fields every record has, for the kinds listed by the hundred rather than by the
    hundred thousand (a pod's and a slice's are passed one by one)."""
    return {"kind": kind, "api_version": api_version, "namespace": intern(namespace),
            "name": intern(meta.name), "labels": labels_of(meta),
            "annotations": annotations_of(meta.annotations),
            "owner": None if meta.ownerReferences is None else owner_of(meta.ownerReferences),
            "created": timestamp(meta.creationTimestamp)}


def pod_record(pod: Pod, default_namespace: str = "") -> PodRecord:
    """The record ``to_record`` builds from the same Pod (listed: v1, kind Pod)."""
    meta = pod.metadata
    spec = pod.spec or _NO_SPEC
    status = pod.status or _NO_STATUS
    ips: list[str] = []
    if status.podIPs is not None:
        ips = [intern(entry.ip) for entry in status.podIPs if type(entry.ip) is str]
    if not ips and type(status.podIP) is str and status.podIP:
        ips = [intern(status.podIP)]
    phase = intern(status.phase) if type(status.phase) is str else None
    ready: bool | None = None
    if status.conditions is not None:
        for condition in status.conditions:
            if condition.type == "Ready":
                ready = condition.status == "True"
    if phase in ("Pending", "Succeeded", "Failed"):
        ready = False
    waiting = None
    for statuses in (status.initContainerStatuses, status.containerStatuses):
        for entry in statuses or ():
            held = entry.state.waiting if entry.state is not None else None
            reason = held.reason if held is not None else None
            if waiting is None and type(reason) is str and reason \
                    and reason not in WAITING_AT_START:
                waiting = intern(reason)
    ports, mesh_proxy = container_ports(spec.containers, spec.initContainers)
    return POD_RECORD(
        kind=Kind.POD,
        api_version="v1",
        namespace=intern(meta.namespace or default_namespace),
        name=intern(meta.name),
        labels=labels_of(meta),
        annotations=annotations_of(meta.annotations),
        owner=None if meta.ownerReferences is None else owner_of(meta.ownerReferences),
        created=timestamp(meta.creationTimestamp),
        ips=tuple(ips),
        phase=phase,
        ready=ready,
        terminating=bool(meta.deletionTimestamp),
        ports=ports,
        node_name=intern(spec.nodeName) if spec.nodeName else None,
        host_network=spec.hostNetwork is True,
        service_account=intern(spec.serviceAccountName) if spec.serviceAccountName
        else "default",
        hostname=intern(spec.hostname) if spec.hostname else None,
        subdomain=intern(spec.subdomain) if spec.subdomain else None,
        mesh_proxy=mesh_proxy,
        dns=None if spec.dnsPolicy is None and spec.dnsConfig is None else _dns(spec),
        waiting=waiting,
    )


def _dns(spec: PodSpec) -> PodDNS | None:
    """pod_dns (the checked path) of the same spec."""
    config = spec.dnsConfig
    if config is None:
        return shared_dns(spec.dnsPolicy, (), (), ())
    return shared_dns(spec.dnsPolicy, config.nameservers or (), config.searches or (),
                      tuple((o.name, o.value or None) for o in config.options or ()
                            if o.name))


def object_id(pod: Pod, default_namespace: str = "") -> ObjectId:
    meta = pod.metadata
    return ObjectId(Kind.POD, intern(meta.namespace or default_namespace), intern(meta.name))


_NO_SPEC = PodSpec()
_NO_STATUS = PodStatus()
