"""Slim records: the part of each Kubernetes object that networking analysis reads.

A record is built once per object version, when the object arrives from a watch stream or a
manifest, and is immutable afterwards (graph/model/reading.py builds it). Anything analysis
never reads — managedFields, most annotations, env, volumes, Secret data, the images of
pods — is left out, so the graph stays small and never holds credentials.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import ObjectId, make_key
from netsight.graph.model.mesh_settings import MeshSettings
from netsight.graph.model.selectors import LabelSelector

EMPTY_MAP: Mapping[str, str] = MappingProxyType({})


def _empty_map() -> Mapping[str, str]:
    return EMPTY_MAP

PROTOCOLS = frozenset({"TCP", "UDP", "SCTP"})

# IANA_SVC_NAME (RFC 6335) as Kubernetes validates port names.
IANA_SVC_NAME = re.compile(r"^(?=.*[a-z])(?!.*--)[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$")


@dataclass(frozen=True, slots=True)
class Record:
    """Identity and metadata common to every kind."""

    kind: str
    api_version: str
    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=_empty_map)
    annotations: Mapping[str, str] = field(default_factory=_empty_map)
    owner: tuple[str, str] | None = None  # (kind, name) of the controlling owner
    created: str | None = None  # metadata.creationTimestamp, RFC 3339
    # The node key, computed once: the graph code asks for it a dozen times per event.
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", make_key(self.kind, self.namespace, self.name))

    @property
    def id(self) -> ObjectId:
        return ObjectId(self.kind, self.namespace, self.name)

    @property
    def ref(self) -> str:
        """``namespace/name``, or ``name`` for a cluster-scoped object."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class NamespaceRecord(Record):
    pass


@dataclass(frozen=True, slots=True)
class ContainerPort:
    port: int
    protocol: str = "TCP"
    name: str | None = None
    container: str = ""


@dataclass(frozen=True, slots=True)
class PodDNS:
    """A pod's spec.dnsPolicy and spec.dnsConfig, as the kubelet writes its resolv.conf from
    them. Pods of one template share one value (``shared_dns``)."""

    policy: str = "ClusterFirst"
    nameservers: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()
    # (name, value or None) in order, as dnsConfig.options lists them
    options: tuple[tuple[str, str | None], ...] = ()


# The DNS settings pods carry unless they say otherwise (the API server defaults dnsPolicy
# to ClusterFirst): a record then holds None, costing nothing per pod.
DEFAULT_DNS = PodDNS()


# Waiting reasons every container goes through on its way up: not a problem to report.
WAITING_AT_START = frozenset({"ContainerCreating", "PodInitializing"})


@dataclass(frozen=True, slots=True)
class PodRecord(Record):
    ips: tuple[str, ...] = ()
    phase: str | None = None
    # True/False from the Ready condition; None when the object carries no readiness at all.
    ready: bool | None = None
    terminating: bool = False
    ports: tuple[ContainerPort, ...] = ()
    node_name: str | None = None
    host_network: bool = False
    service_account: str = "default"
    hostname: str | None = None
    subdomain: str | None = None
    # A mesh proxy container the pod runs ("istio-proxy"), if any: a live pod's spec shows
    # whether the injector gave it a sidecar, which labels alone cannot tell.
    mesh_proxy: str | None = None
    # None: dnsPolicy ClusterFirst (the default) and no dnsConfig (DEFAULT_DNS).
    dns: PodDNS | None = None
    # Why a container is not running (CrashLoopBackOff, ImagePullBackOff, ...): the first
    # waiting reason but the ordinary start-up ones (WAITING_AT_START); None if none.
    waiting: str | None = None


@dataclass(frozen=True, slots=True)
class Rollout:
    """A controller's status as it reports it (None where a field is absent): the pods it
    wants, those ready, those of its current template, and whether it has seen its latest
    spec (status.observedGeneration against metadata.generation)."""

    desired: int | None = None
    ready: int | None = None
    updated: int | None = None
    available: int | None = None
    observed: bool | None = None


@dataclass(frozen=True, slots=True)
class WorkloadRecord(Record):
    """A controller with a pod template; ``pod_labels`` and ``ports`` come from the template."""

    pod_labels: Mapping[str, str] = field(default_factory=_empty_map)
    ports: tuple[ContainerPort, ...] = ()
    selector: LabelSelector | None = None
    replicas: int | None = None
    service_name: str | None = None  # StatefulSet.spec.serviceName
    host_network: bool = False
    service_account: str = "default"  # the template's spec.serviceAccountName
    pod_annotations: Mapping[str, str] = field(default_factory=_empty_map)  # kept ones
    mesh_proxy: str | None = None  # as on PodRecord, from the template
    # The template's container images (a provider's version is its image tag), and the
    # status its controller reports; None: the object carries no status (a manifest).
    images: tuple[str, ...] = ()
    rollout: Rollout | None = None


@dataclass(frozen=True, slots=True)
class ServicePort:
    port: int
    target_port: int | str
    protocol: str = "TCP"
    name: str | None = None
    node_port: int | None = None
    app_protocol: str | None = None

    def describe(self) -> str:
        label = f"{self.name} " if self.name else ""
        return f"{label}{self.port}/{self.protocol}->{self.target_port}"


@dataclass(frozen=True, slots=True)
class ServiceRecord(Record):
    type: str = "ClusterIP"
    cluster_ips: tuple[str, ...] = ()
    # None: the Service has no selector, and something else manages its endpoints.
    selector: Mapping[str, str] | None = None
    ports: tuple[ServicePort, ...] = ()
    external_name: str | None = None
    publish_not_ready: bool = False

    @property
    def headless(self) -> bool:
        return self.cluster_ips[:1] == ("None",)


@dataclass(frozen=True, slots=True)
class EndpointPort:
    port: int | None  # None in a slice means "all ports"
    protocol: str = "TCP"
    name: str | None = None
    app_protocol: str | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    addresses: tuple[str, ...]
    # EndpointConditions: nil ready is "unknown", which consumers treat as ready.
    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None
    target_pod: str | None = None  # name of the Pod in the slice's namespace
    node_name: str | None = None

    @property
    def is_ready(self) -> bool:
        return self.ready is not False


@dataclass(frozen=True, slots=True)
class EndpointGroup:
    """Endpoints that share one port list: an EndpointSlice, or one subset of Endpoints."""

    endpoints: tuple[Endpoint, ...] = ()
    ports: tuple[EndpointPort, ...] = ()


@dataclass(frozen=True, slots=True)
class EndpointSliceRecord(Record):
    service_name: str | None = None  # label kubernetes.io/service-name
    managed_by: str | None = None  # label endpointslice.kubernetes.io/managed-by
    address_type: str = "IPv4"
    group: EndpointGroup = field(default_factory=EndpointGroup)

    @property
    def groups(self) -> tuple[EndpointGroup, ...]:
        return (self.group,)


@dataclass(frozen=True, slots=True)
class EndpointsRecord(Record):
    subsets: tuple[EndpointGroup, ...] = ()

    @property
    def groups(self) -> tuple[EndpointGroup, ...]:
        return self.subsets


@dataclass(frozen=True, slots=True)
class NetworkPolicyRecord(Record):
    pod_selector: LabelSelector = field(default_factory=LabelSelector)
    policy_types: tuple[str, ...] = ("Ingress",)
    # The rules as the API gives them; the policy engine builds its own model from these.
    ingress: tuple[Mapping[str, Any], ...] = ()
    egress: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class IngressBackend:
    service: str | None = None
    port: int | str | None = None
    resource: tuple[str, str] | None = None  # (kind, name) of a resource backend


@dataclass(frozen=True, slots=True)
class IngressPath:
    path: str | None
    path_type: str
    backend: IngressBackend


@dataclass(frozen=True, slots=True)
class IngressRule:
    host: str | None
    paths: tuple[IngressPath, ...] = ()


@dataclass(frozen=True, slots=True)
class IngressRecord(Record):
    class_name: str | None = None
    class_from_annotation: bool = False
    default_backend: IngressBackend | None = None
    rules: tuple[IngressRule, ...] = ()
    tls: tuple[tuple[tuple[str, ...], str | None], ...] = ()  # (hosts, secretName)

    def backends(self) -> list[IngressBackend]:
        found = [self.default_backend] if self.default_backend else []
        found.extend(p.backend for rule in self.rules for p in rule.paths)
        return found


@dataclass(frozen=True, slots=True)
class IngressClassRecord(Record):
    controller: str | None = None
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class SecretRecord(Record):
    """A Secret: its identity and type, never its data. When a manifest carries the data,
    whether ``tls.crt``/``tls.key`` are a well-formed certificate and key is kept instead
    (graph/model/pem.py); watched Secrets arrive as metadata only, and it stays unknown."""

    type: str | None = None
    tls_checked: bool = False  # the data was at hand and tls_problem decided
    tls_problem: str | None = None  # why the data is not a PEM certificate and key
    # ``type`` as written (JSON) when it is not a string, which the API server rejects: the
    # Secret is kept, its type read as unset, and the value reported (invalid_values).
    invalid_type: str | None = None
    # The data as an Istio gateway credential (graph/model/pem.py istio_credential): why Istio
    # cannot serve it, and its certificate's validity (RFC 3339); only when tls_checked.
    credential_problem: str | None = None
    credential_not_before: str | None = None
    credential_not_after: str | None = None


@dataclass(frozen=True, slots=True)
class ConfigMapRecord(Record):
    """A ConfigMap: its identity, never its data. When a manifest carries the data, whether
    ``ca.crt`` is a PEM certificate bundle is kept instead (graph/model/pem.py); watched
    ConfigMaps arrive as metadata only, and it stays unknown."""

    ca_checked: bool = False  # the data was at hand and ca_problem decided
    ca_problem: str | None = None  # why ca.crt is not a PEM certificate bundle
    # Istio's mesh config (the ``mesh`` key of istiod's ConfigMap), read where the data is at
    # hand: the few fields the mTLS analysis depends on (graph/model/mesh_settings.py).
    mesh_config: MeshSettings | None = None
    # The cluster DNS configuration, kept for the ConfigMaps of DNS_CONFIG_MAPS only: their
    # string values of DNS_CONFIG_KEYS (a Corefile holds no credentials).
    dns_data: Mapping[str, str] | None = None
    # Linkerd's install values (the ``values`` key of ConfigMap ``linkerd-config``), kept for
    # that ConfigMap only: its default inbound policy, cluster networks and trust domain.
    linkerd_values: str | None = None


@dataclass(frozen=True, slots=True)
class CustomResourceDefinitionRecord(Record):
    """A CRD: the group and kind it defines and the versions it serves (its schema, most
    of its size, is dropped)."""

    group: str = ""
    defines: str = ""  # spec.names.kind
    served: tuple[str, ...] = ()
    storage: str | None = None


# The ConfigMaps that configure cluster DNS: CoreDNS's Corefile, and kube-dns's stub
# domains and upstream nameservers (which kubeadm translates for CoreDNS on upgrade).
DNS_CONFIG_MAPS: tuple[tuple[str, str], ...] = (("kube-system", "coredns"),
                                                ("kube-system", "kube-dns"))
DNS_CONFIG_KEYS = frozenset({"Corefile", "stubDomains", "upstreamNameservers"})


@dataclass(frozen=True, slots=True)
class GenericRecord(Record):
    """Any other kind. Networking CRDs keep spec and status for the analyzers of later layers."""

    spec: Mapping[str, Any] | None = None
    status: Mapping[str, Any] | None = None
    # CiliumNetworkPolicy and CiliumClusterwideNetworkPolicy may hold their rules in a list
    # ``specs`` beside (or instead of) ``spec``; each is one rule with its own selector.
    specs: tuple[Mapping[str, Any], ...] | None = None


def invalid_values(record: Record) -> list[MalformedObject]:
    """Fields the record kept as written although the API server would reject them."""
    found: list[MalformedObject] = []

    def protocol(value: str, path: str) -> None:
        found.append(MalformedObject(path, f"{path} is {value!r}, not TCP, UDP or SCTP"))

    # Paths are spelled out only for the rare invalid value: this runs on every apply.
    if isinstance(record, ServiceRecord):
        for i, service_port in enumerate(record.ports):
            if service_port.protocol not in PROTOCOLS:
                protocol(service_port.protocol, f"spec.ports[{i}].protocol")
    elif isinstance(record, PodRecord | WorkloadRecord):
        prefix = "spec" if isinstance(record, PodRecord) else "spec.template.spec"
        for container_port in record.ports:
            if container_port.protocol not in PROTOCOLS:
                protocol(container_port.protocol,
                         f"{prefix}.containers[{container_port.container}].ports"
                         f"[{container_port.port}].protocol")
    elif isinstance(record, EndpointSliceRecord | EndpointsRecord):
        for group in record.groups:
            for endpoint_port in group.ports:
                if endpoint_port.protocol not in PROTOCOLS:
                    protocol(endpoint_port.protocol, "ports[*].protocol")
    elif isinstance(record, SecretRecord) and record.invalid_type is not None:
        found.append(MalformedObject("type", f"type is {record.invalid_type}, not a string: "
                                     "read as no type"))
    return found
