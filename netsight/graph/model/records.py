"""Slim records: the part of each Kubernetes object that networking analysis reads.

A record is built once per object version, when the object arrives from a watch stream or a
manifest, and is immutable afterwards. Anything analysis never reads — managedFields,
most annotations, container images, env, volumes, Secret data — is dropped here, so the
graph stays small at 100k pods and never holds credentials.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import orjson

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import (
    WORKLOAD_KINDS,
    Kind,
    ObjectId,
    api_group,
    is_cluster_scoped,
    kind_id,
    make_key,
)
from netsight.graph.model.pem import ca_bundle_problem, istio_credential, tls_data_problem
from netsight.graph.model.selectors import (
    LabelSelector,
    parse_label_selector,
    parse_string_map,
    shared_labels,
)

EMPTY_MAP: Mapping[str, str] = MappingProxyType({})


def _empty_map() -> Mapping[str, str]:
    return EMPTY_MAP

PROTOCOLS = frozenset({"TCP", "UDP", "SCTP"})

# API groups whose objects keep spec and status on their generic records: the mesh, CNI and
# gateway CRDs that later analyzers read. Other unknown kinds keep identity and labels only.
NETWORKING_GROUPS = frozenset(
    {
        "gateway.networking.k8s.io",
        "gateway.networking.x-k8s.io",
        "policy.networking.k8s.io",
        "networking.istio.io",
        "security.istio.io",
        "telemetry.istio.io",
        "extensions.istio.io",
        "cilium.io",
        "crd.projectcalico.org",
        "projectcalico.org",
        "policy.linkerd.io",
        "linkerd.io",
        "kuma.io",
        "gateway.kgateway.dev",
        "gateway.solo.io",
        "gateway.envoyproxy.io",
    }
)

# Annotations that change networking behaviour; every other annotation is dropped.
KEPT_ANNOTATION_PREFIXES = (
    "kubernetes.io/ingress.class",
    "ingressclass.kubernetes.io/",
    "service.kubernetes.io/",
    "service.beta.kubernetes.io/",
    "networking.istio.io/",
    "sidecar.istio.io/",
    "istio.io/",
    "ambient.istio.io/",
    "traffic.sidecar.istio.io/",
    "linkerd.io/",
    "config.linkerd.io/",
    "kuma.io/",
    "policy.cilium.io/",
    "io.cilium/",
)

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


@dataclass(frozen=True, slots=True)
class GenericRecord(Record):
    """Any other kind. Networking CRDs keep spec and status for the analyzers of later layers."""

    spec: Mapping[str, Any] | None = None
    status: Mapping[str, Any] | None = None
    # CiliumNetworkPolicy and CiliumClusterwideNetworkPolicy may hold their rules in a list
    # ``specs`` beside (or instead of) ``spec``; each is one rule with its own selector.
    specs: tuple[Mapping[str, Any], ...] | None = None


# --- building records from raw objects ---------------------------------------------------


def object_id(raw: Mapping[str, Any], default_namespace: str = "default") -> ObjectId:
    """The identity of a raw object, validating only what identity needs."""
    api_version = raw.get("apiVersion")
    kind = raw.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise MalformedObject("apiVersion", "required: a non-empty string such as 'v1'")
    if not isinstance(kind, str) or not kind:
        raise MalformedObject("kind", "required: a non-empty string such as 'Service'")
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        raise MalformedObject("metadata", "required: an object with at least a name")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        hint = " (generateName objects get their name from the API server)" * bool(
            meta.get("generateName")
        )
        raise MalformedObject("metadata.name", f"required: a non-empty string{hint}")
    kid = kind_id(api_version, kind)
    namespace = meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise MalformedObject("metadata.namespace", "must be a string")
    if is_cluster_scoped(kid):
        namespace = ""
    elif not namespace:
        namespace = default_namespace
    # Interned: thousands of records share a handful of namespace and kind strings.
    return ObjectId(_intern(kid), _intern(namespace), _intern(name))


def _intern(value: str) -> str:
    # Kind members are already singletons, and sys.intern takes exact str only.
    return sys.intern(value) if type(value) is str else value


def to_record(raw: Mapping[str, Any], default_namespace: str = "default", *,
              oid: ObjectId | None = None, previous: Record | None = None) -> Record:
    """Build the slim record of a raw API object; raises MalformedObject with a field path.

    ``oid`` is the object's :func:`object_id` when the caller has computed it already;
    ``previous`` the record of the object's version before this one, whose unchanged parts
    may be reused (the result is equal either way).
    """
    if oid is None:
        oid = object_id(raw, default_namespace)
    meta = raw["metadata"]
    base: dict[str, Any] = {
        "kind": oid.kind,
        "api_version": raw["apiVersion"],
        "namespace": oid.namespace,
        "name": oid.name,
        "labels": shared_labels(meta.get("labels"), "metadata.labels") or EMPTY_MAP,
        "annotations": _kept_annotations(meta.get("annotations")),
        "owner": _controller_owner(meta.get("ownerReferences")),
        "created": _timestamp(meta.get("creationTimestamp")),
    }
    builder = _BUILDERS.get(oid.kind)
    if builder is None and oid.kind in WORKLOAD_KINDS:
        builder = _workload
    if builder is None:
        data_kind = _DATA_KINDS.get(oid.kind)
        return data_kind(raw, base) if data_kind is not None else _generic(raw, base)
    spec = raw.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise MalformedObject("spec", f"must be an object, got {type(spec).__name__}")
    status = raw.get("status")
    if not isinstance(status, dict):
        status = {}
    if builder is _endpoint_slice:
        return _endpoint_slice(raw, base, spec, status, previous)
    return builder(raw, base, spec, status)


def _timestamp(raw: object) -> str | None:
    # YAML reads an unquoted RFC 3339 timestamp as a datetime; keep the API's string form.
    if isinstance(raw, datetime):
        return raw.strftime("%Y-%m-%dT%H:%M:%SZ")
    return raw if isinstance(raw, str) and raw else None


def _frozen_copy(raw: Any, path: str) -> Any:
    """A deep copy of JSON-like data, so a record never shares the caller's containers."""
    try:
        return orjson.loads(orjson.dumps(raw, default=str))
    except orjson.JSONEncodeError as exc:
        # YAML allows keys JSON does not (`80: x`), and nesting beyond orjson's limit.
        raise MalformedObject(path, f"is not JSON-compatible data ({exc})") from None


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


def _kept_annotations(raw: object) -> Mapping[str, str]:
    if not isinstance(raw, dict):
        return EMPTY_MAP
    kept = {
        k: v
        for k, v in raw.items()
        if isinstance(k, str) and isinstance(v, str) and k.startswith(KEPT_ANNOTATION_PREFIXES)
    }
    return kept or EMPTY_MAP


def _controller_owner(raw: object) -> tuple[str, str] | None:
    """(kind id, name) of the controlling owner, or of the first owner if none controls."""
    if not isinstance(raw, list):
        return None
    if len(raw) == 1:  # the usual case: one owner, controlling or not
        chosen = raw[0]
        if not isinstance(chosen, dict) or not chosen.get("kind") or not chosen.get("name"):
            return None
    else:
        owners = [o for o in raw if isinstance(o, dict) and o.get("kind") and o.get("name")]
        chosen = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
        if chosen is None:
            return None
    # The kind as keys spell it: apps/v1 ReplicaSet -> ReplicaSet, an Istio Gateway owner
    # -> Gateway.networking.istio.io.
    kid = kind_id(str(chosen.get("apiVersion") or "v1"), str(chosen["kind"]))
    return share_owner((_intern(kid), _intern(str(chosen["name"]))))


def share_owner(owner: tuple[str, str]) -> tuple[str, str]:
    """One tuple for every record naming the same owner: the pods of one ReplicaSet."""
    shared = _OWNERS.get(owner)
    if shared is None:
        if len(_OWNERS) >= _OWNERS_LIMIT:
            _OWNERS.clear()
        shared = _OWNERS[owner] = owner
    return shared


_OWNERS: dict[tuple[str, str], tuple[str, str]] = {}
_OWNERS_LIMIT = 65536


def _as_list(raw: object, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise MalformedObject(path, f"must be a list, got {type(raw).__name__}")
    return raw


def _as_dict(raw: object, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise MalformedObject(path, f"must be an object, got {type(raw).__name__}")
    return raw


def _port_number(raw: object, path: str, *, optional: bool = False) -> int | None:
    if raw is None and optional:
        return None
    # bool is an int subclass in Python; YAML `true` is never a port.
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= 65535:
        raise MalformedObject(path, f"must be a port number from 1 to 65535, got {raw!r}")
    return raw


def _protocol(raw: object, path: str) -> str:
    """A protocol as written. A string outside TCP/UDP/SCTP is kept (and reported by
    :func:`invalid_values`): dropping the whole object would hide more than it shows."""
    if raw is None:
        return "TCP"
    if not isinstance(raw, str) or not raw:
        raise MalformedObject(path, f"must be TCP, UDP or SCTP, got {raw!r}")
    return _intern(raw)


def _optional_str(raw: object, path: str) -> str | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise MalformedObject(path, f"must be a string, got {type(raw).__name__}")
    # Port, node, container and account names repeat across thousands of objects.
    return _intern(raw)


def _int_or_port_name(raw: object, path: str) -> int | str:
    """An IntOrString port reference: a number, or an IANA_SVC_NAME naming a container port."""
    if isinstance(raw, str):
        if not IANA_SVC_NAME.match(raw):
            raise MalformedObject(
                path,
                f"{raw!r} is neither a port number nor a valid port name (IANA_SVC_NAME: "
                "lowercase letters, digits and '-', at least one letter, at most 15 characters)",
            )
        return raw
    number = _port_number(raw, path)
    assert number is not None
    return number


# Pods of one template declare the same ports: they share one tuple (memory), and a hit
# skips the validation that built it (time). Bounded: cleared when it grows past the limit.
_PORTS: dict[tuple[Any, ...], tuple[ContainerPort, ...]] = {}
_PORTS_LIMIT = 8192


def _container_ports(spec: Mapping[str, Any], path: str) -> tuple[ContainerPort, ...]:
    key = _ports_key(spec)
    if key is not None:
        found = _PORTS.get(key)
        if found is not None:
            return found
    ports = _checked_container_ports(spec, path)
    if key is not None:
        if len(_PORTS) >= _PORTS_LIMIT:
            _PORTS.clear()
        _PORTS[key] = ports
    return ports


def _ports_key(spec: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What the container ports depend on, as a hashable value; None when a field has an
    unusual type (then the full validation runs and reports it).

    Only values that validated once are ever stored under a key, and a key can equal a
    stored one only with the same strings and exact ints, so a hit is always valid input.
    """
    parts: list[Any] = []
    for section in ("containers", "initContainers"):
        containers = spec.get(section)
        if containers is None:
            continue
        if type(containers) is not list:
            return None
        for container in containers:
            if type(container) is not dict:
                return None
            ports = container.get("ports")
            if ports is None:
                continue
            if type(ports) is not list:
                return None
            entries = []
            for port in ports:
                if type(port) is not dict:
                    return None
                number, protocol, name = (port.get("containerPort"), port.get("protocol"),
                                          port.get("name"))
                # Exact types: 80.0 and True compare equal to 80 and 1 but are invalid.
                if type(number) is not int or (protocol is not None and type(protocol) is not
                                               str) or (name is not None and type(name) is not str):
                    return None
                entries.append((number, protocol, name))
            cname, restart = container.get("name"), container.get("restartPolicy")
            if not isinstance(cname, str | None) or not isinstance(restart, str | None):
                return None
            parts.append((section, cname, restart, tuple(entries)))
    return tuple(parts)


def _checked_container_ports(spec: Mapping[str, Any], path: str) -> tuple[ContainerPort, ...]:
    ports: list[ContainerPort] = []
    sections = (("containers", False), ("initContainers", True))
    for section, sidecars_only in sections:
        for i, container in enumerate(_as_list(spec.get(section), f"{path}.{section}")):
            cpath = f"{path}.{section}[{i}]"
            if not isinstance(container, dict):
                raise MalformedObject(cpath, "must be an object")
            # Only restartable init containers (sidecars) keep serving after start-up.
            if sidecars_only and container.get("restartPolicy") != "Always":
                continue
            cname = _intern(str(container.get("name") or ""))
            for j, port in enumerate(_as_list(container.get("ports"), f"{cpath}.ports")):
                ppath = f"{cpath}.ports[{j}]"
                if not isinstance(port, dict):
                    raise MalformedObject(ppath, "must be an object")
                number = _port_number(port.get("containerPort"), f"{ppath}.containerPort")
                assert number is not None
                ports.append(
                    ContainerPort(
                        port=number,
                        protocol=_protocol(port.get("protocol"), f"{ppath}.protocol"),
                        name=_optional_str(port.get("name"), f"{ppath}.name"),
                        container=cname,
                    )
                )
    return tuple(ports)


def _pod(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> PodRecord:
    # Interned: the EndpointSlice entry for this pod then shares the same address string.
    ips = [
        _intern(entry["ip"])
        for entry in _as_list(status.get("podIPs"), "status.podIPs")
        if isinstance(entry, dict) and isinstance(entry.get("ip"), str)
    ]
    if not ips and isinstance(status.get("podIP"), str) and status["podIP"]:
        ips = [_intern(status["podIP"])]
    phase = _intern(status["phase"]) if isinstance(status.get("phase"), str) else None
    ready: bool | None = None
    for condition in _as_list(status.get("conditions"), "status.conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            ready = condition.get("status") == "True"
    if phase in ("Pending", "Succeeded", "Failed"):
        ready = False
    meta = raw["metadata"]
    return PodRecord(
        **base,
        ips=tuple(ips),
        phase=phase,
        ready=ready,
        terminating=bool(meta.get("deletionTimestamp")),
        ports=_container_ports(spec, "spec"),
        node_name=_optional_str(spec.get("nodeName"), "spec.nodeName"),
        host_network=spec.get("hostNetwork") is True,
        service_account=_optional_str(spec.get("serviceAccountName"), "spec.serviceAccountName")
        or "default",
        hostname=_optional_str(spec.get("hostname"), "spec.hostname"),
        subdomain=_optional_str(spec.get("subdomain"), "spec.subdomain"),
        mesh_proxy=_mesh_proxy(spec),
    )


# Containers that make a pod a member of a service mesh (as the injectors name them).
MESH_PROXY_CONTAINERS = frozenset({"istio-proxy"})


def _mesh_proxy(spec: Mapping[str, Any]) -> str | None:
    """The first mesh proxy container of a pod spec (a native sidecar is an init container)."""
    for section in ("containers", "initContainers"):
        containers = spec.get(section)
        if isinstance(containers, list):
            for container in containers:
                name = container.get("name") if isinstance(container, dict) else None
                if isinstance(name, str) and name in MESH_PROXY_CONTAINERS:
                    return name
    return None


def _workload(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> WorkloadRecord:
    path = "spec"
    if base["kind"] == Kind.CRON_JOB:
        spec = _as_dict(_as_dict(spec.get("jobTemplate"), "spec.jobTemplate").get("spec"),
                        "spec.jobTemplate.spec")
        path = "spec.jobTemplate.spec"
    template = _as_dict(spec.get("template"), f"{path}.template")
    tmeta = _as_dict(template.get("metadata"), f"{path}.template.metadata")
    tspec = _as_dict(template.get("spec"), f"{path}.template.spec")
    raw_selector = spec.get("selector")
    selector: LabelSelector | None = None
    if raw_selector is not None:
        if base["kind"] == Kind.REPLICATION_CONTROLLER:
            selector = parse_label_selector(
                {"matchLabels": raw_selector}, f"{path}.selector"
            )
        else:
            selector = parse_label_selector(raw_selector, f"{path}.selector")
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or isinstance(replicas, bool)):
        raise MalformedObject(f"{path}.replicas", "must be an integer")
    return WorkloadRecord(
        **base,
        pod_labels=shared_labels(tmeta.get("labels"), f"{path}.template.metadata.labels")
        or EMPTY_MAP,
        ports=_container_ports(tspec, f"{path}.template.spec"),
        selector=selector,
        replicas=replicas,
        service_name=_optional_str(spec.get("serviceName"), f"{path}.serviceName"),
        host_network=tspec.get("hostNetwork") is True,
        service_account=_optional_str(tspec.get("serviceAccountName"),
                                      f"{path}.template.spec.serviceAccountName") or "default",
        pod_annotations=_kept_annotations(tmeta.get("annotations")),
        mesh_proxy=_mesh_proxy(tspec),
    )


def _service(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> ServiceRecord:
    svc_type = spec.get("type") or "ClusterIP"
    if svc_type not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        raise MalformedObject(
            "spec.type",
            f"must be ClusterIP, NodePort, LoadBalancer or ExternalName, got {svc_type!r}",
        )
    ports = []
    for i, port in enumerate(_as_list(spec.get("ports"), "spec.ports")):
        path = f"spec.ports[{i}]"
        if not isinstance(port, dict):
            raise MalformedObject(path, "must be an object")
        number = _port_number(port.get("port"), f"{path}.port")
        assert number is not None
        target = port.get("targetPort")
        ports.append(
            ServicePort(
                port=number,
                # targetPort defaults to port.
                target_port=number if target is None else _int_or_port_name(
                    target, f"{path}.targetPort"
                ),
                protocol=_protocol(port.get("protocol"), f"{path}.protocol"),
                name=_optional_str(port.get("name"), f"{path}.name"),
                node_port=_port_number(port.get("nodePort"), f"{path}.nodePort", optional=True),
                app_protocol=_optional_str(port.get("appProtocol"), f"{path}.appProtocol"),
            )
        )
    cluster_ips = [ip for ip in _as_list(spec.get("clusterIPs"), "spec.clusterIPs") if ip]
    cluster_ip = _optional_str(spec.get("clusterIP"), "spec.clusterIP")
    if not cluster_ips and cluster_ip:
        cluster_ips = [cluster_ip]
    # An empty selector map means "no selector": endpoints are managed by something else.
    selector = parse_string_map(spec.get("selector"), "spec.selector") or None
    return ServiceRecord(
        **base,
        type=svc_type,
        cluster_ips=tuple(str(ip) for ip in cluster_ips),
        selector=selector,
        ports=tuple(ports),
        external_name=_optional_str(spec.get("externalName"), "spec.externalName"),
        publish_not_ready=spec.get("publishNotReadyAddresses") is True,
    )


def _endpoint_ports(raw: object, path: str) -> tuple[EndpointPort, ...]:
    ports = []
    for i, port in enumerate(_as_list(raw, path)):
        ppath = f"{path}[{i}]"
        if not isinstance(port, dict):
            raise MalformedObject(ppath, "must be an object")
        ports.append(
            EndpointPort(
                port=_port_number(port.get("port"), f"{ppath}.port", optional=True),
                protocol=_protocol(port.get("protocol"), f"{ppath}.protocol"),
                name=_optional_str(port.get("name"), f"{ppath}.name"),
                app_protocol=_optional_str(port.get("appProtocol"), f"{ppath}.appProtocol"),
            )
        )
    return tuple(ports)


def _pod_target(raw: object, path: str) -> str | None:
    ref = _as_dict(raw, path)
    if ref.get("kind") == "Pod" and isinstance(ref.get("name"), str):
        return _intern(ref["name"])  # the same string as the Pod record's name
    return None


def _optional_bool(raw: object) -> bool | None:
    return raw if isinstance(raw, bool) else None


def _endpoint(ep: object, i: int, previous: Endpoint | None = None) -> Endpoint:
    """One EndpointSlice endpoint. A slice carries up to 100 and is rewritten whenever one
    changes, so the usual shapes take a path without per-field checks; anything unusual
    goes through the checked path, which names the bad field.

    ``previous`` is the endpoint at the same position in the slice's previous version: if
    nothing about it changed, that very object is returned, so comparing the two versions
    (upsert, the change ring's changed fields) is an identity check per endpoint."""
    if type(ep) is dict:
        addresses, conditions = ep.get("addresses"), ep.get("conditions")
        ref, node = ep.get("targetRef"), ep.get("nodeName")
        if type(addresses) is list and all(type(a) is str for a in addresses) \
                and type(conditions) is dict and (ref is None or type(ref) is dict) \
                and (node is None or type(node) is str):
            target = ref.get("name") if ref is not None and ref.get("kind") == "Pod" else None
            if type(target) is not str:
                target = None
            ready, serving, terminating = (conditions.get("ready"), conditions.get("serving"),
                                           conditions.get("terminating"))
            ready = ready if type(ready) is bool else None
            serving = serving if type(serving) is bool else None
            terminating = terminating if type(terminating) is bool else None
            node = node or None
            if previous is not None and previous.ready is ready \
                    and previous.serving is serving and previous.terminating is terminating \
                    and previous.target_pod == target and previous.node_name == node \
                    and previous.addresses == tuple(addresses):
                return previous
            return Endpoint(
                addresses=tuple(map(_intern, addresses)),
                ready=ready,
                serving=serving,
                terminating=terminating,
                target_pod=None if target is None else _intern(target),
                node_name=None if node is None else _intern(node),
            )
    return _checked_endpoint(ep, f"endpoints[{i}]")


def _checked_endpoint(ep: object, path: str) -> Endpoint:
    if not isinstance(ep, dict):
        raise MalformedObject(path, "must be an object")
    addresses = _as_list(ep.get("addresses"), f"{path}.addresses")
    if not all(isinstance(a, str) for a in addresses):
        raise MalformedObject(f"{path}.addresses", "must be a list of strings")
    conditions = _as_dict(ep.get("conditions"), f"{path}.conditions")
    return Endpoint(
        addresses=tuple(_intern(a) for a in addresses),
        ready=_optional_bool(conditions.get("ready")),
        serving=_optional_bool(conditions.get("serving")),
        terminating=_optional_bool(conditions.get("terminating")),
        target_pod=_pod_target(ep.get("targetRef"), f"{path}.targetRef"),
        node_name=_optional_str(ep.get("nodeName"), f"{path}.nodeName"),
    )


def _endpoint_slice(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any],
    previous: Record | None = None,
) -> EndpointSliceRecord:
    # EndpointSlice keeps its fields at the top level, not under spec.
    listed = _as_list(raw.get("endpoints"), "endpoints")
    if isinstance(previous, EndpointSliceRecord) and previous.group.endpoints:
        before = previous.group.endpoints
        endpoints = [_endpoint(ep, i, before[i] if i < len(before) else None)
                     for i, ep in enumerate(listed)]
    else:
        endpoints = [_endpoint(ep, i) for i, ep in enumerate(listed)]
    labels = base["labels"]
    return EndpointSliceRecord(
        **base,
        service_name=labels.get("kubernetes.io/service-name"),
        managed_by=labels.get("endpointslice.kubernetes.io/managed-by"),
        address_type=str(raw.get("addressType") or "IPv4"),
        group=EndpointGroup(
            endpoints=tuple(endpoints), ports=_endpoint_ports(raw.get("ports"), "ports")
        ),
    )


def _endpoints(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> EndpointsRecord:
    subsets = []
    for i, subset in enumerate(_as_list(raw.get("subsets"), "subsets")):
        path = f"subsets[{i}]"
        if not isinstance(subset, dict):
            raise MalformedObject(path, "must be an object")
        endpoints = []
        for section, ready in (("addresses", True), ("notReadyAddresses", False)):
            for j, addr in enumerate(_as_list(subset.get(section), f"{path}.{section}")):
                apath = f"{path}.{section}[{j}]"
                if not isinstance(addr, dict) or not isinstance(addr.get("ip"), str):
                    raise MalformedObject(apath, "must be an object with an ip")
                endpoints.append(
                    Endpoint(
                        addresses=(addr["ip"],),
                        ready=ready,
                        target_pod=_pod_target(addr.get("targetRef"), f"{apath}.targetRef"),
                        node_name=_optional_str(addr.get("nodeName"), f"{apath}.nodeName"),
                    )
                )
        subsets.append(
            EndpointGroup(
                endpoints=tuple(endpoints),
                ports=_endpoint_ports(subset.get("ports"), f"{path}.ports"),
            )
        )
    return EndpointsRecord(**base, subsets=tuple(subsets))


def _rules(raw: object, path: str) -> tuple[Mapping[str, Any], ...]:
    rules = _as_list(raw, path)
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise MalformedObject(f"{path}[{i}]", "must be an object")
    return tuple(_frozen_copy(rules, path))


def _network_policy(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> NetworkPolicyRecord:
    ingress = _rules(spec.get("ingress"), "spec.ingress")
    egress = _rules(spec.get("egress"), "spec.egress")
    types = _as_list(spec.get("policyTypes"), "spec.policyTypes")
    for i, value in enumerate(types):
        if value not in ("Ingress", "Egress"):
            raise MalformedObject(
                f"spec.policyTypes[{i}]", f"must be Ingress or Egress, got {value!r}"
            )
    if not types:
        # Default per the API: Ingress always, Egress when the policy has egress rules.
        types = ["Ingress", "Egress"] if egress else ["Ingress"]
    return NetworkPolicyRecord(
        **base,
        pod_selector=parse_label_selector(spec.get("podSelector"), "spec.podSelector"),
        policy_types=tuple(dict.fromkeys(types)),
        ingress=ingress,
        egress=egress,
    )


def _ingress_backend(raw: object, path: str) -> IngressBackend:
    backend = _as_dict(raw, path)
    if "serviceName" in backend:  # extensions/v1beta1 and networking.k8s.io/v1beta1
        port = backend.get("servicePort")
        return IngressBackend(
            service=_optional_str(backend.get("serviceName"), f"{path}.serviceName"),
            port=None if port is None else _int_or_port_name(port, f"{path}.servicePort"),
        )
    if "resource" in backend:
        resource = _as_dict(backend["resource"], f"{path}.resource")
        return IngressBackend(resource=(str(resource.get("kind")), str(resource.get("name"))))
    service = _as_dict(backend.get("service"), f"{path}.service")
    if not service:
        raise MalformedObject(path, "must name a service or a resource")
    port = _as_dict(service.get("port"), f"{path}.service.port")
    port_ref: int | str | None = None
    if port.get("number") is not None:
        port_ref = _port_number(port["number"], f"{path}.service.port.number")
    elif port.get("name") is not None:
        port_ref = _int_or_port_name(port["name"], f"{path}.service.port.name")
    return IngressBackend(
        service=_optional_str(service.get("name"), f"{path}.service.name"), port=port_ref
    )


def _ingress(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> IngressRecord:
    class_name = _optional_str(spec.get("ingressClassName"), "spec.ingressClassName")
    from_annotation = False
    if class_name is None:
        legacy = raw["metadata"].get("annotations") or {}
        if isinstance(legacy, dict) and isinstance(legacy.get("kubernetes.io/ingress.class"), str):
            class_name = legacy["kubernetes.io/ingress.class"]
            from_annotation = True
    default = spec.get("defaultBackend", spec.get("backend"))
    rules = []
    for i, rule in enumerate(_as_list(spec.get("rules"), "spec.rules")):
        path = f"spec.rules[{i}]"
        rule = _as_dict(rule, path)
        http = _as_dict(rule.get("http"), f"{path}.http")
        paths = []
        for j, entry in enumerate(_as_list(http.get("paths"), f"{path}.http.paths")):
            ppath = f"{path}.http.paths[{j}]"
            entry = _as_dict(entry, ppath)
            paths.append(
                IngressPath(
                    path=_optional_str(entry.get("path"), f"{ppath}.path"),
                    path_type=str(entry.get("pathType") or "ImplementationSpecific"),
                    backend=_ingress_backend(entry.get("backend"), f"{ppath}.backend"),
                )
            )
        rules.append(IngressRule(host=_optional_str(rule.get("host"), f"{path}.host"),
                                 paths=tuple(paths)))
    tls = []
    for i, entry in enumerate(_as_list(spec.get("tls"), "spec.tls")):
        entry = _as_dict(entry, f"spec.tls[{i}]")
        hosts = tuple(h for h in _as_list(entry.get("hosts"), f"spec.tls[{i}].hosts") if h)
        tls.append((hosts, _optional_str(entry.get("secretName"), f"spec.tls[{i}].secretName")))
    return IngressRecord(
        **base,
        class_name=class_name,
        class_from_annotation=from_annotation,
        default_backend=None
        if default is None
        else _ingress_backend(default, "spec.defaultBackend"),
        rules=tuple(rules),
        tls=tuple(tls),
    )


def _ingress_class(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> IngressClassRecord:
    annotations = raw["metadata"].get("annotations") or {}
    is_default = isinstance(annotations, dict) and (
        annotations.get("ingressclass.kubernetes.io/is-default-class") == "true"
    )
    return IngressClassRecord(
        **base,
        controller=_optional_str(spec.get("controller"), "spec.controller"),
        is_default=is_default,
    )


def _namespace(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> NamespaceRecord:
    return NamespaceRecord(**base)


def _secret(raw: Mapping[str, Any], base: dict[str, Any]) -> Record:
    if api_group(base["api_version"]) != "":
        return _generic(raw, base)  # a custom kind named Secret
    data, string_data = raw.get("data"), raw.get("stringData")
    checked = isinstance(data, dict) or isinstance(string_data, dict)
    written = raw.get("type")
    # A type that is not a string is one field at fault: the Secret (its identity, which
    # references resolve by, and its data's verdict) is kept and the value reported.
    invalid = None if written is None or isinstance(written, str) else \
        orjson.dumps(written, default=repr).decode()[:100]
    type_ = None if invalid else _optional_str(written, "type")
    if not checked:
        return SecretRecord(**base, type=type_, invalid_type=invalid)
    credential = istio_credential(data, string_data)
    return SecretRecord(**base, type=type_, invalid_type=invalid,
                        tls_checked=True, tls_problem=tls_data_problem(data, string_data),
                        credential_problem=credential.problem,
                        credential_not_before=credential.not_before,
                        credential_not_after=credential.not_after)


def _config_map(raw: Mapping[str, Any], base: dict[str, Any]) -> Record:
    if api_group(base["api_version"]) != "":
        return _generic(raw, base)  # a custom kind named ConfigMap
    data, binary = raw.get("data"), raw.get("binaryData")
    checked = isinstance(data, dict) or isinstance(binary, dict)
    return ConfigMapRecord(**base, ca_checked=checked,
                           ca_problem=ca_bundle_problem(data, binary) if checked else None)


# What the mesh checks read of an Istio EnvoyFilter (analyzers/mesh/envoy_filters.py):
# its configPatches carry whole Envoy configuration (Lua code, clusters, TLS contexts) of
# which only the patch's operation, target and name matter there. A key maps to the shape
# kept below it (True: the value as written); a list shape applies to every item.
ENVOY_FILTER_KEPT: Mapping[str, Any] = MappingProxyType({
    "priority": True,
    "configPatches": [{
        "applyTo": True,
        "match": {"proxy": {"proxyVersion": True},
                  "listener": {"filterChain": {"filter": {"name": True}}}},
        "patch": {"operation": True, "value": {"name": True}},
    }],
})


def kept_fields(raw: Any, shape: Any) -> Any:
    """``raw`` reduced to the fields ``shape`` names. A value of another shape than
    expected (a string where an object belongs) is kept as written, so the reader reports
    it instead of meeting an object that looks empty."""
    if shape is True:
        return raw
    if isinstance(shape, list):
        return [kept_fields(item, shape[0]) for item in raw] if isinstance(raw, list) else raw
    if not isinstance(raw, Mapping):
        return raw
    return {key: kept_fields(raw[key], sub) for key, sub in shape.items() if key in raw}


# Networking kinds whose spec is kept only in part: kind id -> the fields kept.
_SLIM_SPECS: dict[str, Mapping[str, Any]] = {"EnvoyFilter": ENVOY_FILTER_KEPT}


def _generic(raw: Mapping[str, Any], base: dict[str, Any]) -> GenericRecord:
    if api_group(base["api_version"]) not in NETWORKING_GROUPS:
        return GenericRecord(**base)
    spec, status, specs = raw.get("spec"), raw.get("status"), raw.get("specs")
    kept = _SLIM_SPECS.get(base["kind"])
    if kept is not None and isinstance(spec, dict):
        spec = kept_fields(spec, kept)
    return GenericRecord(
        **base,
        spec=_frozen_copy(spec, "spec") if isinstance(spec, dict) else None,
        status=_frozen_copy(status, "status") if isinstance(status, dict) else None,
        # Kept as written (a non-object item too): the policy model reports bad shapes.
        specs=tuple(_frozen_copy(specs, "specs")) if isinstance(specs, list) else None,
    )


Builder = Callable[[Mapping[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]], Record]

# Core kinds whose data is judged, then dropped (graph/model/pem.py).
_DATA_KINDS: dict[str, Callable[[Mapping[str, Any], dict[str, Any]], Record]] = {
    "Secret": _secret,
    "ConfigMap": _config_map,
}

_BUILDERS: dict[str, Builder] = {
    Kind.NAMESPACE: _namespace,
    Kind.POD: _pod,
    Kind.SERVICE: _service,
    Kind.ENDPOINT_SLICE: _endpoint_slice,
    Kind.ENDPOINTS: _endpoints,
    Kind.NETWORK_POLICY: _network_policy,
    Kind.INGRESS: _ingress,
    Kind.INGRESS_CLASS: _ingress_class,
}
