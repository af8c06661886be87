"""Typed list pages: Pods and EndpointSlices validated by msgspec while decoding, built
into records directly.

A 100k-pod list (and its ~15k slices of up to 100 endpoints) is most of an initial sync.
shapes.py decodes it into dicts with ``Any`` leaves, and
:func:`netsight.graph.model.records.to_record` then checks every field in Python, which cost about
half of the CPU spent per pod. Here the page is decoded into Structs whose types are exactly
those the checked path accepts without complaint (strings, ports from 1 to 65535, booleans),
so msgspec's C parser does the checking, and :func:`pod_record` and :func:`slice_record`
read attributes without checking anything.

Whatever does not fit these types — one malformed object, a value of an unusual type
anywhere in the page — makes :func:`decode_typed_page` return None, and the informer decodes
the page the checked way (shapes.py), which reports the bad field. The typed path never has
to reject anything itself, and a record built here equals the one ``to_record`` builds from
the same body (``tests/graph/test_typed_pages_build_the_same_records.py``). Watch events
keep the checked path: one object at a time, their cost is the graph update's rather than
the parsing's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import is_
from sys import intern
from typing import Annotated, Any, Literal

import msgspec

from netsight.graph.model.constructors import builder
from netsight.graph.model.core_records import MESH_PROXY_CONTAINERS
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.field_values import (
    KEPT_ANNOTATION_PREFIXES,
    interned,
    kept_annotations,
    policy_rules,
    share_owner,
    timestamp,
)
from netsight.graph.model.kinds import Kind, ObjectId, kind_id
from netsight.graph.model.records import (
    EMPTY_MAP,
    IANA_SVC_NAME,
    ContainerPort,
    Endpoint,
    EndpointGroup,
    EndpointPort,
    EndpointSliceRecord,
    NamespaceRecord,
    NetworkPolicyRecord,
    PodRecord,
    Record,
    ServicePort,
    ServiceRecord,
)
from netsight.graph.model.selectors import parse_label_selector, shared_labels

Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class OwnerReference(msgspec.Struct, frozen=True, gc=False):
    apiVersion: str | None = None
    kind: str | None = None
    name: str | None = None
    controller: bool | None = None


class ObjectMeta(msgspec.Struct, gc=False):
    name: NonEmpty
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: Any = None  # to_record keeps the networking ones and ignores any other
    ownerReferences: tuple[OwnerReference, ...] | None = None
    creationTimestamp: Any = None
    deletionTimestamp: Any = None


class PodContainerPort(msgspec.Struct, frozen=True, gc=False):
    containerPort: Port
    protocol: NonEmpty | None = None
    name: str | None = None


class PodContainer(msgspec.Struct, frozen=True, gc=False):
    name: str | None = None
    restartPolicy: str | None = None
    ports: tuple[PodContainerPort, ...] | None = None


class PodSpec(msgspec.Struct, gc=False):
    containers: tuple[PodContainer, ...] | None = None
    initContainers: tuple[PodContainer, ...] | None = None
    nodeName: str | None = None
    hostNetwork: bool | None = None
    serviceAccountName: str | None = None
    hostname: str | None = None
    subdomain: str | None = None


class PodIP(msgspec.Struct, gc=False):
    ip: Any = None  # entries without a string ip are skipped, as to_record skips them


class PodCondition(msgspec.Struct, gc=False):
    type: Any = None
    status: Any = None


class PodStatus(msgspec.Struct, gc=False):
    podIP: Any = None
    podIPs: list[PodIP] | None = None
    phase: Any = None
    conditions: list[PodCondition] | None = None


class Pod(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: PodSpec | None = None
    status: PodStatus | None = None


class PodPage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[Pod] | None = None

    def records(self, api_version: str) -> Iterator[Record]:
        for pod in self.items or ():
            yield pod_record(pod)


class EndpointConditions(msgspec.Struct, gc=False):
    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None


class TargetRef(msgspec.Struct, gc=False):
    kind: str | None = None
    name: str | None = None


class SliceEndpoint(msgspec.Struct, gc=False):
    addresses: tuple[str, ...] = ()
    conditions: EndpointConditions | None = None
    targetRef: TargetRef | None = None
    nodeName: str | None = None


class SlicePort(msgspec.Struct, gc=False):
    port: Port | None = None
    protocol: NonEmpty | None = None
    name: str | None = None
    appProtocol: str | None = None


class EndpointSlice(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: dict[str, Any] | None = None  # none in practice; to_record refuses a non-object
    addressType: Any = None
    endpoints: list[SliceEndpoint] | None = None
    ports: list[SlicePort] | None = None


class EndpointSlicePage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[EndpointSlice] | None = None

    def records(self, api_version: str) -> Iterator[Record]:
        for item in self.items or ():
            yield slice_record(item, api_version)


# IntOrString naming a container port, as records._int_or_port_name accepts it.
PortName = Annotated[str, msgspec.Meta(pattern=IANA_SVC_NAME.pattern)]


class ServicePortSpec(msgspec.Struct, gc=False):
    port: Port
    targetPort: Port | PortName | None = None
    protocol: NonEmpty | None = None
    name: str | None = None
    nodePort: Port | None = None
    appProtocol: str | None = None


class ServiceSpec(msgspec.Struct, gc=False):
    type: Literal["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"] | None = None
    ports: list[ServicePortSpec] | None = None
    clusterIP: str | None = None
    clusterIPs: list[str] | None = None
    selector: dict[str, str] | None = None
    externalName: str | None = None
    publishNotReadyAddresses: Any = None  # only true counts


class Service(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: ServiceSpec | None = None


class ServicePage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[Service] | None = None

    def records(self, api_version: str) -> Iterator[Record]:
        for item in self.items or ():
            yield service_record(item, api_version)


class NetworkPolicySpec(msgspec.Struct, gc=False):
    # Read by the checked path's own functions (selectors.parse_label_selector,
    # records._rules), which raise MalformedObject: the page is then read the checked way.
    podSelector: Any = None
    policyTypes: list[Literal["Ingress", "Egress"]] | None = None
    ingress: Any = None
    egress: Any = None


class NetworkPolicy(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: NetworkPolicySpec | None = None


class NetworkPolicyPage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[NetworkPolicy] | None = None

    def records(self, api_version: str) -> Iterator[Record]:
        for item in self.items or ():
            yield network_policy_record(item, api_version)


class Namespace(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: dict[str, Any] | None = None  # unread, but to_record refuses a non-object


class NamespacePage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[Namespace] | None = None

    def records(self, api_version: str) -> Iterator[Record]:
        for item in self.items or ():
            yield namespace_record(item, api_version)


TypedPage = PodPage | EndpointSlicePage | ServicePage | NetworkPolicyPage | NamespacePage
_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    Kind.POD: msgspec.json.Decoder(PodPage),
    Kind.ENDPOINT_SLICE: msgspec.json.Decoder(EndpointSlicePage),
    Kind.SERVICE: msgspec.json.Decoder(ServicePage),
    Kind.NETWORK_POLICY: msgspec.json.Decoder(NetworkPolicyPage),
    Kind.NAMESPACE: msgspec.json.Decoder(NamespacePage),
}


def list_page_records(kind_id: str, body: bytes | memoryview, api_version: str
                      ) -> tuple[Any, list[Record]] | None:
    """A list page's metadata and the records of its items, read typed; None if the kind
    has no typed shape or anything in the page is unusual: then read it the checked way,
    which reports the bad field."""
    page = decode_typed_page(kind_id, body)
    if page is None:
        return None
    try:
        return page.metadata, list(page.records(api_version))
    except MalformedObject:  # a value the checked path's own functions refused
        return None


def decode_typed_page(kind_id: str, body: bytes | memoryview) -> TypedPage | None:
    """A list page as Structs, or None if the kind has no typed shape or anything in the
    page is unusual (or not JSON)."""
    decoder = _DECODERS.get(kind_id)
    if decoder is None:
        return None
    try:
        page: TypedPage = decoder.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return page


def decode_pod_page(body: bytes) -> PodPage | None:
    """A Pod list page as Structs, or None if anything in it is unusual (or not JSON)."""
    page = decode_typed_page(Kind.POD, body)
    assert page is None or isinstance(page, PodPage)
    return page


def _labels(meta: ObjectMeta) -> Mapping[str, str]:
    if not meta.labels:
        return EMPTY_MAP
    # The objects of a template list their labels in the same order: found without sorting
    # them, as shared_labels would to look them up.
    items = tuple(meta.labels.items())
    return _LABELS.get(items) or _share_labels(items, meta.labels)


def slice_record(item: EndpointSlice, api_version: str = "discovery.k8s.io/v1",
                 default_namespace: str = "", *,
                 previous: Record | None = None) -> EndpointSliceRecord:
    """The record ``to_record`` builds from the same EndpointSlice.

    ``previous`` is the slice's record before this version (a watch event): each endpoint
    equal to the one at its position there is taken from there, as ``records._endpoint``
    does. A slice is rewritten whenever one of its ~100 endpoints changes; an unchanged
    endpoint then costs no allocation, and an identity check to compare (upsert, the
    change ring's changed fields)."""
    meta = item.metadata
    labels = _labels(meta)
    endpoints: list[Endpoint] = []
    before: tuple[Endpoint, ...] = ()
    if isinstance(previous, EndpointSliceRecord):
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
    if isinstance(previous, EndpointSliceRecord) and _same_ports(item.ports or (),
                                                                 previous.group.ports):
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
        annotations=_annotations(meta.annotations),
        owner=None if meta.ownerReferences is None else _owner(meta.ownerReferences),
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
_POD_RECORD = builder(PodRecord)
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
        kind=Kind.SERVICE,
        api_version=api_version,
        namespace=intern(meta.namespace or default_namespace),
        name=intern(meta.name),
        labels=_labels(meta),
        annotations=_annotations(meta.annotations),
        owner=None if meta.ownerReferences is None else _owner(meta.ownerReferences),
        created=timestamp(meta.creationTimestamp),
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
        kind=Kind.NETWORK_POLICY,
        api_version=api_version,
        namespace=intern(meta.namespace or default_namespace),
        name=intern(meta.name),
        labels=_labels(meta),
        annotations=_annotations(meta.annotations),
        owner=None if meta.ownerReferences is None else _owner(meta.ownerReferences),
        created=timestamp(meta.creationTimestamp),
        pod_selector=parse_label_selector(spec.podSelector, "spec.podSelector"),
        policy_types=tuple(dict.fromkeys(types)),
        ingress=ingress,
        egress=egress,
    )


_NO_POLICY_SPEC = NetworkPolicySpec()


def namespace_record(item: Namespace, api_version: str = "v1") -> NamespaceRecord:
    """The record ``to_record`` builds from the same Namespace (cluster-scoped: a
    namespace in its metadata is ignored)."""
    meta = item.metadata
    return NamespaceRecord(
        kind=Kind.NAMESPACE,
        api_version=api_version,
        namespace="",
        name=intern(meta.name),
        labels=_labels(meta),
        annotations=_annotations(meta.annotations),
        owner=None if meta.ownerReferences is None else _owner(meta.ownerReferences),
        created=timestamp(meta.creationTimestamp),
    )


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
    ports, mesh_proxy = _containers(spec.containers, spec.initContainers)
    return _POD_RECORD(
        kind=Kind.POD,
        api_version="v1",
        namespace=intern(meta.namespace or default_namespace),
        name=intern(meta.name),
        labels=_labels(meta),
        annotations=_annotations(meta.annotations),
        owner=None if meta.ownerReferences is None else _owner(meta.ownerReferences),
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
    )


def object_id(pod: Pod, default_namespace: str = "") -> ObjectId:
    meta = pod.metadata
    return ObjectId(Kind.POD, intern(meta.namespace or default_namespace), intern(meta.name))


# Label items as listed -> the shared map (selectors.shared_labels). The API server writes
# a label map's keys sorted (a Go map), so each label set has one key here. Bounded in two
# generations: when the current one is full it becomes the previous one, from which a lookup
# takes an entry back; what no object used for a whole generation goes. (Emptied at once
# when full, every label set in use missed again; 100k churning pods carry ~29k label sets,
# more than it holds, and it was emptied every ~400k events.)
_LABELS: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = {}
_LABELS_BEFORE: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = {}
_LABELS_GENERATION = 4096  # entries in each: 8,192 at most in all, as one map held before


def share_label_items(items: tuple[tuple[str, str], ...]) -> Mapping[str, str]:
    """The shared map of label items as listed (another process's records, wire.py),
    through this module's cache: its generations are rebound here, so a module that
    imported ``_LABELS`` itself would keep reading a generation long gone."""
    return _LABELS.get(items) or _share_labels(items, dict(items))


def _share_labels(items: tuple[tuple[str, str], ...], labels: dict[str, str]
                  ) -> Mapping[str, str]:
    global _LABELS, _LABELS_BEFORE  # swapped, not copied: a generation is 4,096 entries
    shared = _LABELS_BEFORE.get(items) or shared_labels(labels, "metadata.labels")
    if len(_LABELS) >= _LABELS_GENERATION:
        _LABELS_BEFORE, _LABELS = _LABELS, {}
    _LABELS[items] = shared
    return shared


_NO_SPEC = PodSpec()
_NO_STATUS = PodStatus()

Containers = tuple[PodContainer, ...] | None
# Pods of one template have equal (hashable) containers: one entry serves all of them.
_CONTAINERS: dict[tuple[Containers, Containers], tuple[tuple[ContainerPort, ...], str | None]] = {}
_CONTAINERS_LIMIT = 8192


def _containers(containers: Containers, init: Containers
                ) -> tuple[tuple[ContainerPort, ...], str | None]:
    """The pod's ports and mesh proxy container, as ``records._pod`` finds them."""
    key = (containers, init)
    found = _CONTAINERS.get(key)
    if found is not None:
        return found
    ports: list[ContainerPort] = []
    mesh_proxy: str | None = None
    for section, sidecars_only in ((containers, False), (init, True)):
        for container in section or ():
            if mesh_proxy is None and container.name in MESH_PROXY_CONTAINERS:
                mesh_proxy = container.name
            # Only restartable init containers (sidecars) keep serving after start-up.
            if sidecars_only and container.restartPolicy != "Always":
                continue
            cname = intern(container.name or "")
            for port in container.ports or ():
                ports.append(ContainerPort(
                    port=port.containerPort,
                    protocol="TCP" if port.protocol is None else intern(port.protocol),
                    name=intern(port.name) if port.name else None,
                    container=cname))
    found = (tuple(ports), mesh_proxy)
    if len(_CONTAINERS) >= _CONTAINERS_LIMIT:
        _CONTAINERS.clear()
    _CONTAINERS[key] = found
    return found


# Annotation key sets none of which netsight keeps (prometheus.io/scrape, ...): most pods'.
_PLAIN_KEYS: set[tuple[str, ...]] = set()
# Owner references -> the owner they name: the pods of one ReplicaSet have equal ones.
_OWNERS: dict[tuple[OwnerReference, ...], tuple[str, str] | None] = {}
_CACHE_LIMIT = 8192


def _annotations(raw: Any) -> Mapping[str, str]:
    """As ``records._kept_annotations``, without looking at each annotation again when
    its keys are a set seen before that holds none worth keeping."""
    if type(raw) is not dict or not raw:
        return kept_annotations(raw)
    keys = tuple(raw)
    if keys in _PLAIN_KEYS:
        return EMPTY_MAP
    kept = kept_annotations(raw)
    if not any(type(k) is str and k.startswith(KEPT_ANNOTATION_PREFIXES) for k in keys):
        if len(_PLAIN_KEYS) >= _CACHE_LIMIT:
            _PLAIN_KEYS.clear()
        _PLAIN_KEYS.add(keys)
    return kept


def _owner(refs: tuple[OwnerReference, ...]) -> tuple[str, str] | None:
    """As ``records._controller_owner``: the controlling owner, else the first named one."""
    owner = _OWNERS.get(refs, _UNSEEN)  # one lookup: hashing refs walks every reference
    if owner is not _UNSEEN:
        return owner  # type: ignore[return-value]  # only owners are stored
    owner = _find_owner(refs)
    if len(_OWNERS) >= _CACHE_LIMIT:
        _OWNERS.clear()
    _OWNERS[refs] = owner
    return owner


_UNSEEN = object()


def _find_owner(refs: tuple[OwnerReference, ...]) -> tuple[str, str] | None:
    chosen: OwnerReference | None
    if len(refs) == 1:
        chosen = refs[0] if refs[0].kind and refs[0].name else None
    else:
        owners = [o for o in refs if o.kind and o.name]
        chosen = next((o for o in owners if o.controller), owners[0] if owners else None)
    if chosen is None:
        return None
    kid = kind_id(chosen.apiVersion or "v1", chosen.kind or "")
    return share_owner((interned(kid), intern(chosen.name or "")))


# --- watch events ---------------------------------------------------------------------------
# A watch event carries one object with its kind, apiVersion and resourceVersion (list items
# come without the first two). Pods and slices are most of a busy cluster's events; decoded
# here straight into records, skipping the dict and to_record's checks (about a third of
# the CPU an event cost). Anything unusual (a bookmark, an ERROR, a malformed object) does
# not fit and goes the checked way, as in a list page.


class WatchedMeta(ObjectMeta, gc=False):
    resourceVersion: str | None = None


class WatchedPod(Pod, gc=False):
    metadata: WatchedMeta
    kind: str | None = None
    apiVersion: str | None = None


class WatchedEndpointSlice(EndpointSlice, gc=False):
    metadata: WatchedMeta
    kind: str | None = None
    apiVersion: str | None = None


class PodEvent(msgspec.Struct, gc=False):
    type: str
    object: WatchedPod


class EndpointSliceEvent(msgspec.Struct, gc=False):
    type: str
    object: WatchedEndpointSlice


class DeletedMeta(msgspec.Struct, gc=False):
    name: NonEmpty
    namespace: str | None = None
    resourceVersion: str | None = None


class DeletedObject(msgspec.Struct, gc=False):
    metadata: DeletedMeta
    kind: str | None = None
    apiVersion: str | None = None


class DeletedEvent(msgspec.Struct, gc=False):
    """A DELETED event: only the object's identity is read (a pod's spec and status, a
    slice's endpoints are skipped by the parser, never built)."""

    type: str
    object: DeletedObject


TypedEvent = PodEvent | EndpointSliceEvent | DeletedEvent
_EVENT_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    Kind.POD: msgspec.json.Decoder(PodEvent),
    Kind.ENDPOINT_SLICE: msgspec.json.Decoder(EndpointSliceEvent),
}
_DELETED_DECODER = msgspec.json.Decoder(DeletedEvent)
# API servers write the type first; a line that starts otherwise is decoded in full.
_DELETED_PREFIX = b'{"type":"DELETED"'


def has_typed_events(kind_id: str) -> bool:
    return kind_id in _EVENT_DECODERS


def decode_typed_event(kind_id: str, line: bytes) -> TypedEvent | None:
    """A watch event as Structs, or None if the kind has no typed shape or the event is
    anything unusual (or not JSON)."""
    decoder = _EVENT_DECODERS.get(kind_id)
    if decoder is None:
        return None
    if line.startswith(_DELETED_PREFIX):
        decoder = _DELETED_DECODER
    try:
        event: TypedEvent = decoder.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return event


def event_record(event: TypedEvent, api_version: str,
                 previous: Record | None = None) -> Record:
    """The record ``to_record`` builds from the event's object; ``previous`` (the object's
    record before this event) lends the slice endpoints that did not change."""
    if isinstance(event, PodEvent):
        return pod_record(event.object)
    if isinstance(event, DeletedEvent):
        raise TypeError("a DELETED event builds no record")
    return slice_record(event.object, api_version, previous=previous)
