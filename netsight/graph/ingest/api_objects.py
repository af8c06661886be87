"""The fields each core kind's record reads, declared once, as msgspec Structs.

Each Struct names the fields of an API object that :func:`netsight.graph.model.reading.to_record`
reads, typed as a well-formed object has them: strings, ports from 1 to 65535, booleans;
``Any`` where the checked path accepts any value and decides itself. Everything else about
the object (managedFields, images, env, volumes, container statuses) is skipped by msgspec's
parser without being built.

The typed list pages and watch events (typed_pages.py, typed_events.py) decode into these
Structs; the shapes of the checked path (decoding.py) are derived from them; and
``tests/graph/test_fields_are_declared_once.py`` checks them against what the checked path
reads. A field a record starts reading is added here, and nowhere else.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import IANA_SVC_NAME

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


class PodDNSConfigOption(msgspec.Struct, frozen=True, gc=False):
    name: str | None = None
    value: str | None = None


class PodDNSConfig(msgspec.Struct, frozen=True, gc=False):
    nameservers: tuple[str, ...] | None = None
    searches: tuple[str, ...] | None = None
    options: tuple[PodDNSConfigOption, ...] | None = None


class PodSpec(msgspec.Struct, gc=False):
    containers: tuple[PodContainer, ...] | None = None
    initContainers: tuple[PodContainer, ...] | None = None
    nodeName: str | None = None
    hostNetwork: bool | None = None
    serviceAccountName: str | None = None
    hostname: str | None = None
    subdomain: str | None = None
    dnsPolicy: str | None = None
    dnsConfig: PodDNSConfig | None = None


class PodIP(msgspec.Struct, gc=False):
    ip: Any = None  # entries without a string ip are skipped, as to_record skips them


class PodCondition(msgspec.Struct, gc=False):
    type: Any = None
    status: Any = None


class ContainerWaiting(msgspec.Struct, gc=False):
    reason: Any = None


class ContainerState(msgspec.Struct, gc=False):
    waiting: ContainerWaiting | None = None


class ContainerStatus(msgspec.Struct, gc=False):
    state: ContainerState | None = None


class PodStatus(msgspec.Struct, gc=False):
    podIP: Any = None
    podIPs: list[PodIP] | None = None
    phase: Any = None
    conditions: list[PodCondition] | None = None
    initContainerStatuses: list[ContainerStatus] | None = None
    containerStatuses: list[ContainerStatus] | None = None


class Pod(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: PodSpec | None = None
    status: PodStatus | None = None


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


# IntOrString naming a container port, as field_values.int_or_port_name accepts it.
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


class NetworkPolicySpec(msgspec.Struct, gc=False):
    # Read by the checked path's own functions (selectors.parse_label_selector,
    # field_values.policy_rules), which raise MalformedObject: the page is then read the
    # checked way.
    podSelector: Any = None
    policyTypes: list[Literal["Ingress", "Egress"]] | None = None
    ingress: Any = None
    egress: Any = None


class NetworkPolicy(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: NetworkPolicySpec | None = None


class Namespace(msgspec.Struct, gc=False):
    metadata: ObjectMeta
    spec: dict[str, Any] | None = None  # unread, but to_record refuses a non-object


# Kind id -> the Struct of one listed object: the kinds whose fields are declared here.
DECLARED: dict[str, type[msgspec.Struct]] = {
    Kind.POD: Pod,
    Kind.ENDPOINT_SLICE: EndpointSlice,
    Kind.SERVICE: Service,
    Kind.NETWORK_POLICY: NetworkPolicy,
    Kind.NAMESPACE: Namespace,
}
