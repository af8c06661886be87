"""Records of the core kinds (Pods, Services, EndpointSlices and Endpoints,
NetworkPolicies, Ingresses and IngressClasses, Namespaces), read field by field with the
API server's validation: a value it would refuse raises MalformedObject with its path.
Workloads' records are read in :mod:`netsight.graph.model.workload_records`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.field_values import (
    as_dict,
    as_list,
    int_or_port_name,
    interned,
    optional_str,
    pod_dns,
    policy_rules,
    port_number,
    port_protocol,
)
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import (
    WAITING_AT_START,
    ContainerPort,
    Endpoint,
    EndpointGroup,
    EndpointPort,
    EndpointSliceRecord,
    EndpointsRecord,
    IngressBackend,
    IngressClassRecord,
    IngressPath,
    IngressRecord,
    IngressRule,
    NamespaceRecord,
    NetworkPolicyRecord,
    PodRecord,
    Record,
    ServicePort,
    ServiceRecord,
)
from netsight.graph.model.selectors import (
    parse_label_selector,
    parse_string_map,
)

# Pods of one template declare the same ports: they share one tuple (memory), and a hit
# skips the validation that built it (time). Bounded: cleared when it grows past the limit.
_PORTS: dict[tuple[Any, ...], tuple[ContainerPort, ...]] = {}
_PORTS_LIMIT = 8192


def container_ports(spec: Mapping[str, Any], path: str) -> tuple[ContainerPort, ...]:
    key = _ports_key(spec)
    if key is not None:
        found = _PORTS.get(key)
        if found is not None:
            return found
    ports = _checkedcontainer_ports(spec, path)
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


def _checkedcontainer_ports(spec: Mapping[str, Any], path: str) -> tuple[ContainerPort, ...]:
    ports: list[ContainerPort] = []
    sections = (("containers", False), ("initContainers", True))
    for section, sidecars_only in sections:
        for i, container in enumerate(as_list(spec.get(section), f"{path}.{section}")):
            cpath = f"{path}.{section}[{i}]"
            if not isinstance(container, dict):
                raise MalformedObject(cpath, "must be an object")
            # Only restartable init containers (sidecars) keep serving after start-up.
            if sidecars_only and container.get("restartPolicy") != "Always":
                continue
            cname = interned(str(container.get("name") or ""))
            for j, port in enumerate(as_list(container.get("ports"), f"{cpath}.ports")):
                ppath = f"{cpath}.ports[{j}]"
                if not isinstance(port, dict):
                    raise MalformedObject(ppath, "must be an object")
                number = port_number(port.get("containerPort"), f"{ppath}.containerPort")
                assert number is not None
                ports.append(
                    ContainerPort(
                        port=number,
                        protocol=port_protocol(port.get("protocol"), f"{ppath}.protocol"),
                        name=optional_str(port.get("name"), f"{ppath}.name"),
                        container=cname,
                    )
                )
    return tuple(ports)


def _pod(raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]) -> PodRecord:
    status = raw.get("status")
    if not isinstance(status, dict):
        status = {}
    # Interned: the EndpointSlice entry for this pod then shares the same address string.
    ips = [
        interned(entry["ip"])
        for entry in as_list(status.get("podIPs"), "status.podIPs")
        if isinstance(entry, dict) and isinstance(entry.get("ip"), str)
    ]
    if not ips and isinstance(status.get("podIP"), str) and status["podIP"]:
        ips = [interned(status["podIP"])]
    phase = interned(status["phase"]) if isinstance(status.get("phase"), str) else None
    ready: bool | None = None
    for condition in as_list(status.get("conditions"), "status.conditions"):
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            ready = condition.get("status") == "True"
    if phase in ("Pending", "Succeeded", "Failed"):
        ready = False
    waiting = None
    for section in ("initContainerStatuses", "containerStatuses"):
        for entry in as_list(status.get(section), f"status.{section}"):
            state = entry.get("state") if isinstance(entry, dict) else None
            held = state.get("waiting") if isinstance(state, dict) else None
            reason = held.get("reason") if isinstance(held, dict) else None
            if waiting is None and isinstance(reason, str) and reason \
                    and reason not in WAITING_AT_START:
                waiting = interned(reason)
    meta = raw["metadata"]
    return PodRecord(
        **base,
        ips=tuple(ips),
        phase=phase,
        ready=ready,
        terminating=bool(meta.get("deletionTimestamp")),
        ports=container_ports(spec, "spec"),
        node_name=optional_str(spec.get("nodeName"), "spec.nodeName"),
        host_network=spec.get("hostNetwork") is True,
        service_account=optional_str(spec.get("serviceAccountName"), "spec.serviceAccountName")
        or "default",
        hostname=optional_str(spec.get("hostname"), "spec.hostname"),
        subdomain=optional_str(spec.get("subdomain"), "spec.subdomain"),
        mesh_proxy=mesh_proxy(spec),
        dns=pod_dns(spec, "spec"),
        waiting=waiting,
    )


# Containers that make a pod a member of a service mesh (as the injectors name them).
MESH_PROXY_CONTAINERS = frozenset({"istio-proxy"})


def mesh_proxy(spec: Mapping[str, Any]) -> str | None:
    """The first mesh proxy container of a pod spec (a native sidecar is an init container)."""
    for section in ("containers", "initContainers"):
        containers = spec.get(section)
        if isinstance(containers, list):
            for container in containers:
                name = container.get("name") if isinstance(container, dict) else None
                if isinstance(name, str) and name in MESH_PROXY_CONTAINERS:
                    return name
    return None


def _service(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> ServiceRecord:
    svc_type = spec.get("type") or "ClusterIP"
    if svc_type not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        raise MalformedObject(
            "spec.type",
            f"must be ClusterIP, NodePort, LoadBalancer or ExternalName, got {svc_type!r}",
        )
    ports = []
    for i, port in enumerate(as_list(spec.get("ports"), "spec.ports")):
        path = f"spec.ports[{i}]"
        if not isinstance(port, dict):
            raise MalformedObject(path, "must be an object")
        number = port_number(port.get("port"), f"{path}.port")
        assert number is not None
        target = port.get("targetPort")
        ports.append(
            ServicePort(
                port=number,
                # targetPort defaults to port.
                target_port=number if target is None else int_or_port_name(
                    target, f"{path}.targetPort"
                ),
                protocol=port_protocol(port.get("protocol"), f"{path}.protocol"),
                name=optional_str(port.get("name"), f"{path}.name"),
                node_port=port_number(port.get("nodePort"), f"{path}.nodePort", optional=True),
                app_protocol=optional_str(port.get("appProtocol"), f"{path}.appProtocol"),
            )
        )
    cluster_ips = [ip for ip in as_list(spec.get("clusterIPs"), "spec.clusterIPs") if ip]
    cluster_ip = optional_str(spec.get("clusterIP"), "spec.clusterIP")
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
        external_name=optional_str(spec.get("externalName"), "spec.externalName"),
        publish_not_ready=spec.get("publishNotReadyAddresses") is True,
    )


def _endpoint_ports(raw: object, path: str) -> tuple[EndpointPort, ...]:
    ports = []
    for i, port in enumerate(as_list(raw, path)):
        ppath = f"{path}[{i}]"
        if not isinstance(port, dict):
            raise MalformedObject(ppath, "must be an object")
        ports.append(
            EndpointPort(
                port=port_number(port.get("port"), f"{ppath}.port", optional=True),
                protocol=port_protocol(port.get("protocol"), f"{ppath}.protocol"),
                name=optional_str(port.get("name"), f"{ppath}.name"),
                app_protocol=optional_str(port.get("appProtocol"), f"{ppath}.appProtocol"),
            )
        )
    return tuple(ports)


def _pod_target(raw: object, path: str) -> str | None:
    ref = as_dict(raw, path)
    if ref.get("kind") == "Pod" and isinstance(ref.get("name"), str):
        return interned(ref["name"])  # the same string as the Pod record's name
    return None


def _optional_bool(raw: object) -> bool | None:
    return raw if isinstance(raw, bool) else None


def slice_endpoint(ep: object, i: int, previous: Endpoint | None = None) -> Endpoint:
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
                addresses=tuple(map(interned, addresses)),
                ready=ready,
                serving=serving,
                terminating=terminating,
                target_pod=None if target is None else interned(target),
                node_name=None if node is None else interned(node),
            )
    return checked_slice_endpoint(ep, f"endpoints[{i}]")


def checked_slice_endpoint(ep: object, path: str) -> Endpoint:
    if not isinstance(ep, dict):
        raise MalformedObject(path, "must be an object")
    addresses = as_list(ep.get("addresses"), f"{path}.addresses")
    if not all(isinstance(a, str) for a in addresses):
        raise MalformedObject(f"{path}.addresses", "must be a list of strings")
    conditions = as_dict(ep.get("conditions"), f"{path}.conditions")
    return Endpoint(
        addresses=tuple(interned(a) for a in addresses),
        ready=_optional_bool(conditions.get("ready")),
        serving=_optional_bool(conditions.get("serving")),
        terminating=_optional_bool(conditions.get("terminating")),
        target_pod=_pod_target(ep.get("targetRef"), f"{path}.targetRef"),
        node_name=optional_str(ep.get("nodeName"), f"{path}.nodeName"),
    )


def endpoint_slice_record(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any],
    previous: Record | None = None,
) -> EndpointSliceRecord:
    # EndpointSlice keeps its fields at the top level, not under spec.
    listed = as_list(raw.get("endpoints"), "endpoints")
    if isinstance(previous, EndpointSliceRecord) and previous.group.endpoints:
        before = previous.group.endpoints
        endpoints = [slice_endpoint(ep, i, before[i] if i < len(before) else None)
                     for i, ep in enumerate(listed)]
    else:
        endpoints = [slice_endpoint(ep, i) for i, ep in enumerate(listed)]
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
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> EndpointsRecord:
    subsets = []
    for i, subset in enumerate(as_list(raw.get("subsets"), "subsets")):
        path = f"subsets[{i}]"
        if not isinstance(subset, dict):
            raise MalformedObject(path, "must be an object")
        endpoints = []
        for section, ready in (("addresses", True), ("notReadyAddresses", False)):
            for j, addr in enumerate(as_list(subset.get(section), f"{path}.{section}")):
                apath = f"{path}.{section}[{j}]"
                if not isinstance(addr, dict) or not isinstance(addr.get("ip"), str):
                    raise MalformedObject(apath, "must be an object with an ip")
                endpoints.append(
                    Endpoint(
                        addresses=(addr["ip"],),
                        ready=ready,
                        target_pod=_pod_target(addr.get("targetRef"), f"{apath}.targetRef"),
                        node_name=optional_str(addr.get("nodeName"), f"{apath}.nodeName"),
                    )
                )
        subsets.append(
            EndpointGroup(
                endpoints=tuple(endpoints),
                ports=_endpoint_ports(subset.get("ports"), f"{path}.ports"),
            )
        )
    return EndpointsRecord(**base, subsets=tuple(subsets))


def _network_policy(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> NetworkPolicyRecord:
    ingress = policy_rules(spec.get("ingress"), "spec.ingress")
    egress = policy_rules(spec.get("egress"), "spec.egress")
    types = as_list(spec.get("policyTypes"), "spec.policyTypes")
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
    backend = as_dict(raw, path)
    if "serviceName" in backend:  # extensions/v1beta1 and networking.k8s.io/v1beta1
        port = backend.get("servicePort")
        return IngressBackend(
            service=optional_str(backend.get("serviceName"), f"{path}.serviceName"),
            port=None if port is None else int_or_port_name(port, f"{path}.servicePort"),
        )
    if "resource" in backend:
        resource = as_dict(backend["resource"], f"{path}.resource")
        return IngressBackend(resource=(str(resource.get("kind")), str(resource.get("name"))))
    service = as_dict(backend.get("service"), f"{path}.service")
    if not service:
        raise MalformedObject(path, "must name a service or a resource")
    port = as_dict(service.get("port"), f"{path}.service.port")
    port_ref: int | str | None = None
    if port.get("number") is not None:
        port_ref = port_number(port["number"], f"{path}.service.port.number")
    elif port.get("name") is not None:
        port_ref = int_or_port_name(port["name"], f"{path}.service.port.name")
    return IngressBackend(
        service=optional_str(service.get("name"), f"{path}.service.name"), port=port_ref
    )


def _ingress(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> IngressRecord:
    class_name = optional_str(spec.get("ingressClassName"), "spec.ingressClassName")
    from_annotation = False
    if class_name is None:
        legacy = raw["metadata"].get("annotations") or {}
        if isinstance(legacy, dict) and isinstance(legacy.get("kubernetes.io/ingress.class"), str):
            class_name = legacy["kubernetes.io/ingress.class"]
            from_annotation = True
    default = spec.get("defaultBackend", spec.get("backend"))
    rules = []
    for i, rule in enumerate(as_list(spec.get("rules"), "spec.rules")):
        path = f"spec.rules[{i}]"
        rule = as_dict(rule, path)
        http = as_dict(rule.get("http"), f"{path}.http")
        paths = []
        for j, entry in enumerate(as_list(http.get("paths"), f"{path}.http.paths")):
            ppath = f"{path}.http.paths[{j}]"
            entry = as_dict(entry, ppath)
            paths.append(
                IngressPath(
                    path=optional_str(entry.get("path"), f"{ppath}.path"),
                    path_type=str(entry.get("pathType") or "ImplementationSpecific"),
                    backend=_ingress_backend(entry.get("backend"), f"{ppath}.backend"),
                )
            )
        rules.append(IngressRule(host=optional_str(rule.get("host"), f"{path}.host"),
                                 paths=tuple(paths)))
    tls = []
    for i, entry in enumerate(as_list(spec.get("tls"), "spec.tls")):
        entry = as_dict(entry, f"spec.tls[{i}]")
        hosts = tuple(h for h in as_list(entry.get("hosts"), f"spec.tls[{i}].hosts") if h)
        tls.append((hosts, optional_str(entry.get("secretName"), f"spec.tls[{i}].secretName")))
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
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> IngressClassRecord:
    annotations = raw["metadata"].get("annotations") or {}
    is_default = isinstance(annotations, dict) and (
        annotations.get("ingressclass.kubernetes.io/is-default-class") == "true"
    )
    return IngressClassRecord(
        **base,
        controller=optional_str(spec.get("controller"), "spec.controller"),
        is_default=is_default,
    )


def _namespace(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> NamespaceRecord:
    return NamespaceRecord(**base)


# (raw object, its base fields, its spec) -> its record
Builder = Callable[[Mapping[str, Any], dict[str, Any], dict[str, Any]], Record]

BUILDERS: dict[str, Builder] = {
    Kind.NAMESPACE: _namespace,
    Kind.POD: _pod,
    Kind.SERVICE: _service,
    Kind.ENDPOINT_SLICE: endpoint_slice_record,
    Kind.ENDPOINTS: _endpoints,
    Kind.NETWORK_POLICY: _network_policy,
    Kind.INGRESS: _ingress,
    Kind.INGRESS_CLASS: _ingress_class,
}


def cache_sizes() -> dict[str, int]:
    """Entries in this module's bounded caches (graph/store/footprint.py)."""
    return {"cache_record_ports": len(_PORTS)}
