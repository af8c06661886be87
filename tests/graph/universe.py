"""Hypothesis strategies over a small universe of Kubernetes networking objects.

Names come from tiny pools so that random event sequences keep hitting the same objects:
adding, modifying and deleting them, referencing objects that do not exist yet, and changing
labels under live selectors. Every object's key is computed here, independently of netsight.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from netsight.graph.store.live import EventType

NAMESPACES = ("alpha", "beta", "gamma")
POD_NAMES = ("p1", "p2", "p3")
SERVICE_NAMES = ("s1", "s2")
WORKLOAD_NAMES = ("w1", "w2")
CLASS_NAMES = ("nginx", "traefik")

GATEWAY_NAMES = ("g1", "g2")
GATEWAY_CLASS_NAMES = ("eg", "kg")

CLUSTER_SCOPED = frozenset({"Namespace", "IngressClass", "GatewayClass"})

Raw = dict[str, Any]


@dataclass(frozen=True)
class Step:
    event: EventType
    raw: Raw
    key: str
    valid: bool  # False: a malformed version the store must refuse


def key_of(kind: str, namespace: str, name: str) -> str:
    return f"{kind}/{name}" if kind in CLUSTER_SCOPED else f"{kind}/{namespace}/{name}"


# --- building blocks -------------------------------------------------------------------------

LABEL_SETS: list[dict[str, str]] = [
    dict(pairs)
    for pairs in (
        (),
        (("app", "a"),),
        (("app", "b"),),
        (("tier", "x"),),
        (("tier", "y"),),
        (("app", "a"), ("tier", "x")),
        (("app", "a"), ("tier", "y")),
        (("app", "b"), ("tier", "x")),
        (("app", "b"), ("tier", "y")),
    )
]
# A fresh dict each time: the store must never depend on the caller keeping its input intact.
labels = st.sampled_from(LABEL_SETS).map(dict)


@functools.cache
@st.composite
def requirements(draw: st.DrawFn) -> Raw:
    key = draw(st.sampled_from(["app", "tier", "zone"]))
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    expr: Raw = {"key": key, "operator": operator}
    if operator in ("In", "NotIn"):
        pool = ["x", "y"] if key == "tier" else ["a", "b"]
        expr["values"] = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))
    return expr


@functools.cache
@st.composite
def label_selectors(draw: st.DrawFn) -> Raw | None:
    """A metav1.LabelSelector: absent, empty, matchLabels, matchExpressions or both."""
    shape = draw(st.sampled_from(["absent", "empty", "labels", "expressions", "both"]))
    if shape == "absent":
        return None
    selector: Raw = {}
    if shape in ("labels", "both"):
        selector["matchLabels"] = draw(labels)
    if shape in ("expressions", "both"):
        selector["matchExpressions"] = draw(st.lists(requirements(), min_size=1, max_size=2))
    return selector


def owner_reference(kind: str, name: str, controller: bool = True) -> Raw:
    api_version = "v1" if kind == "Service" else "apps/v1"
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}",
            "controller": controller}


container_ports = st.lists(
    st.fixed_dictionaries(
        {"containerPort": st.sampled_from([80, 8080, 9090])},
        optional={"name": st.sampled_from(["http", "metrics"]),
                  "protocol": st.sampled_from(["TCP", "UDP"])},
    ),
    max_size=2,
)


@functools.cache
@st.composite
def metadata(draw: st.DrawFn, name: str, namespace: str | None) -> Raw:
    meta: Raw = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    drawn = draw(labels)
    if drawn or draw(st.booleans()):
        meta["labels"] = drawn
    return meta


# --- one strategy per kind: the raw object, given its identity ------------------------------


@functools.cache
@st.composite
def namespace_objects(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": draw(metadata(name, None))}


@functools.cache
@st.composite
def pods(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    meta = draw(metadata(name, namespace))
    owner = draw(st.sampled_from([None, "ReplicaSet", "Deployment"]))
    if owner is not None:
        meta["ownerReferences"] = [owner_reference(owner, draw(st.sampled_from(WORKLOAD_NAMES)))]
        if draw(st.booleans()):
            # Only the controller reference makes an OWNED_BY edge, wherever it is listed.
            other = owner_reference("StatefulSet", draw(st.sampled_from(WORKLOAD_NAMES)),
                                    controller=False)
            meta["ownerReferences"].insert(0, other)
    raw: Raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "main", "ports": draw(container_ports)}]},
    }
    ip = draw(st.sampled_from([None, "10.0.0.1", "10.0.0.2", "10.0.1.7"]))
    if ip is not None:
        raw["status"] = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                         "conditions": [{"type": "Ready",
                                         "status": draw(st.sampled_from(["True", "False"]))}]}
    return raw


def workloads(kind: str) -> Callable[[str, str], st.SearchStrategy[Raw]]:
    @functools.cache
    @st.composite
    def workload(draw: st.DrawFn, namespace: str, name: str) -> Raw:
        meta = draw(metadata(name, namespace))
        template_labels = draw(labels)
        spec: Raw = {
            "replicas": draw(st.integers(0, 3)),
            "selector": {"matchLabels": template_labels},
            "template": {
                "metadata": {"labels": template_labels},
                "spec": {"containers": [{"name": "main", "ports": draw(container_ports)}]},
            },
        }
        if kind == "StatefulSet":
            spec["serviceName"] = draw(st.sampled_from(SERVICE_NAMES))
        if kind == "ReplicaSet" and draw(st.booleans()):
            owner = draw(st.sampled_from(WORKLOAD_NAMES))
            meta["ownerReferences"] = [owner_reference("Deployment", owner)]
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}

    return workload


@functools.cache
@st.composite
def services(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    spec: Raw = {
        "ports": [
            {"name": "web", "port": 80,
             "targetPort": draw(st.sampled_from([80, 8080, "http", "metrics"]))}
        ]
    }
    shape = draw(st.sampled_from(["selector", "selector", "none", "empty", "external"]))
    if shape in ("selector", "external"):
        spec["selector"] = draw(labels)
    elif shape == "empty":
        spec["selector"] = {}
    if shape == "external":
        spec["type"] = "ExternalName"
        spec["externalName"] = "example.com"
    else:
        spec["clusterIP"] = draw(st.sampled_from(["10.96.0.10", "None"]))
    if draw(st.integers(0, 3)) == 0:
        meta = draw(metadata(name, namespace))
    else:
        meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


@functools.cache
@st.composite
def endpoint_slices(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    service = name.split("-")[0]
    meta = draw(metadata(name, namespace))
    if draw(st.integers(0, 4)):
        meta.setdefault("labels", {})["kubernetes.io/service-name"] = service
    if draw(st.booleans()):
        meta["ownerReferences"] = [owner_reference("Service", service)]
    targets = draw(st.lists(st.sampled_from(POD_NAMES), max_size=3))
    endpoints = [
        {"addresses": [f"10.0.0.{i + 1}"], "conditions": {"ready": draw(st.booleans())},
         "targetRef": {"kind": "Pod", "name": pod, "namespace": namespace}}
        for i, pod in enumerate(targets)
    ]
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta,
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "web", "port": 8080, "protocol": "TCP"}],
    }


@functools.cache
@st.composite
def endpoints(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    ready = draw(st.lists(st.sampled_from(POD_NAMES), max_size=2))
    not_ready = draw(st.lists(st.sampled_from(POD_NAMES), max_size=1))
    subsets = []
    if ready or not_ready:
        subsets.append({
            "addresses": [{"ip": f"10.0.2.{i}", "targetRef": {"kind": "Pod", "name": pod}}
                          for i, pod in enumerate(ready)],
            "notReadyAddresses": [{"ip": "10.0.3.1", "targetRef": {"kind": "Pod", "name": pod}}
                                  for pod in not_ready],
            "ports": [{"name": "web", "port": 8080}],
        })
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name,
            "namespace": namespace}, "subsets": subsets}


@functools.cache
@st.composite
def network_policies(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    spec: Raw = {"policyTypes": draw(st.sampled_from([["Ingress"], ["Ingress", "Egress"]]))}
    selector = draw(label_selectors())
    if selector is not None:
        spec["podSelector"] = selector
    if draw(st.integers(0, 3)) == 0:
        spec["ingress"] = [{"from": [{"podSelector": {"matchLabels": draw(labels)}}]}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _backend(service: str, port: int | str) -> Raw:
    ref = {"number": port} if isinstance(port, int) else {"name": port}
    return {"service": {"name": service, "port": ref}}


@functools.cache
@st.composite
def ingresses(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    meta: Raw = {"name": name, "namespace": namespace}
    spec: Raw = {}
    how = draw(st.sampled_from(["field", "annotation", "none"]))
    if how == "field":
        spec["ingressClassName"] = draw(st.sampled_from(CLASS_NAMES))
    elif how == "annotation":
        meta["annotations"] = {"kubernetes.io/ingress.class": draw(st.sampled_from(CLASS_NAMES))}
    port = draw(st.sampled_from([80, "web"]))
    if draw(st.booleans()):
        spec["defaultBackend"] = _backend(draw(st.sampled_from(SERVICE_NAMES)), port)
    paths = [
        {"path": f"/{service}", "pathType": "Prefix", "backend": _backend(service, port)}
        for service in draw(st.lists(st.sampled_from(SERVICE_NAMES), max_size=2))
    ]
    if paths:
        spec["rules"] = [{"host": "shop.example.com", "http": {"paths": paths}}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta,
            "spec": spec}


@functools.cache
@st.composite
def ingress_classes(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    meta: Raw = {"name": name}
    if draw(st.booleans()):
        meta["annotations"] = {"ingressclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta,
            "spec": {"controller": f"example.com/{name}"}}


GATEWAY_API = "gateway.networking.k8s.io"


def gateway_classes(namespace: str, name: str) -> st.SearchStrategy[Raw]:
    return st.just({"apiVersion": f"{GATEWAY_API}/v1", "kind": "GatewayClass",
                    "metadata": {"name": name}, "spec": {"controllerName": f"example.com/{name}"}})


@functools.cache
@st.composite
def gateways(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    return {"apiVersion": f"{GATEWAY_API}/v1", "kind": "Gateway",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"gatewayClassName": draw(st.sampled_from(GATEWAY_CLASS_NAMES)),
                     "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}


@functools.cache
@st.composite
def target_refs(draw: st.DrawFn, kinds: tuple[tuple[str, str, tuple[str, ...]], ...]
                ) -> list[Any]:
    """spec.targetRefs: refs to (group, kind, names), sometimes with a sectionName, sometimes
    one malformed ref that must make no edge."""
    refs: list[Any] = []
    for _ in range(draw(st.integers(0, 2))):
        group, kind, names = draw(st.sampled_from(kinds))
        ref: Raw = {"group": group, "kind": kind, "name": draw(st.sampled_from(names))}
        if draw(st.booleans()):
            ref["sectionName"] = draw(st.sampled_from(["http", "web"]))
        refs.append(ref)
    if draw(st.integers(0, 4)) == 0:
        refs.append(draw(st.sampled_from([{"kind": "Service"}, "s1", {"name": 3}])))
    return refs


@functools.cache
@st.composite
def backend_tls_policies(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    version = draw(st.sampled_from(["v1alpha3", "v1"]))
    return {"apiVersion": f"{GATEWAY_API}/{version}", "kind": "BackendTLSPolicy",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"targetRefs": draw(target_refs((("", "Service", SERVICE_NAMES),))),
                     "validation": {"hostname": "web.example.com",
                                    "caCertificateRefs": [{"group": "", "kind": "ConfigMap",
                                                           "name": "ca"}]}}}


@functools.cache
@st.composite
def client_traffic_policies(draw: st.DrawFn, namespace: str, name: str) -> Raw:
    """An Envoy Gateway policy: targetRefs to Gateways or GatewayClasses, or the older
    singular targetRef."""
    refs = draw(target_refs(((GATEWAY_API, "Gateway", GATEWAY_NAMES),
                             (GATEWAY_API, "GatewayClass", GATEWAY_CLASS_NAMES))))
    spec: Raw = {"targetRefs": refs}
    if refs and isinstance(refs[0], dict) and draw(st.booleans()):
        spec = {"targetRef": refs[0]}
    return {"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "ClientTrafficPolicy",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


# kind -> (names it may take, strategy for its body given namespace and name)
UNIVERSE: dict[str, tuple[tuple[str, ...], Callable[[str, str], st.SearchStrategy[Raw]]]] = {
    "Namespace": (NAMESPACES, namespace_objects),
    "Pod": (POD_NAMES, pods),
    "Deployment": (WORKLOAD_NAMES, workloads("Deployment")),
    "StatefulSet": (WORKLOAD_NAMES, workloads("StatefulSet")),
    "ReplicaSet": (WORKLOAD_NAMES, workloads("ReplicaSet")),
    "Service": (SERVICE_NAMES, services),
    "EndpointSlice": (("s1-abc", "s1-def", "s2-abc"), endpoint_slices),
    "Endpoints": (SERVICE_NAMES, endpoints),
    "NetworkPolicy": (("deny", "allow-web"), network_policies),
    "Ingress": (("web", "api"), ingresses),
    "IngressClass": (CLASS_NAMES, ingress_classes),
    "GatewayClass": (GATEWAY_CLASS_NAMES, gateway_classes),
    "Gateway": (GATEWAY_NAMES, gateways),
    "BackendTLSPolicy": (("tls-a", "tls-b"), backend_tls_policies),
    "ClientTrafficPolicy": (("ctp",), client_traffic_policies),
}
# Pods and the objects that select them come up most often.
KIND_WEIGHTS = ["Pod"] * 3 + ["Service", "NetworkPolicy"] * 2 + sorted(UNIVERSE)

Identity = tuple[str, str, str]  # kind, namespace ("" if cluster-scoped), name


@st.composite
def identities(draw: st.DrawFn) -> Identity:
    kind = draw(st.sampled_from(KIND_WEIGHTS))
    namespace = "" if kind in CLUSTER_SCOPED else draw(st.sampled_from(NAMESPACES))
    return kind, namespace, draw(st.sampled_from(UNIVERSE[kind][0]))


def bodies(identity: Identity) -> st.SearchStrategy[Raw]:
    kind, namespace, name = identity
    return UNIVERSE[kind][1](namespace or NAMESPACES[0], name)


# --- malformed versions ----------------------------------------------------------------------


def corrupt(kind: str, raw: Raw, how: int) -> Raw:
    """A copy of ``raw`` with the same identity and one field netsight must refuse."""
    broken: Raw = {**raw, "metadata": dict(raw["metadata"])}
    if how == 0 or kind not in ("Pod", "Service", "NetworkPolicy"):
        broken["metadata"]["labels"] = {"app": 1}  # not a string
    elif kind == "Pod":
        broken["spec"] = {"containers": {"name": "main"}}
    elif kind == "Service":
        broken["spec"] = {**raw["spec"], "ports": [{"port": 70000}]}
    else:
        broken["spec"] = {"podSelector": {"matchExpressions": [
            {"key": "app", "operator": "Equals", "values": ["a"]}]}}
    return broken


# --- event sequences -------------------------------------------------------------------------


@st.composite
def event_sequences(draw: st.DrawFn, max_size: int = 24) -> list[Step]:
    """Random events; about half revisit an object seen earlier with a new version, a
    malformed version, or its deletion."""
    seen: list[Identity] = []
    sequence: list[Step] = []
    for _ in range(draw(st.integers(1, max_size))):
        if seen and draw(st.booleans()):
            identity = draw(st.sampled_from(seen))
        else:
            identity = draw(identities())
            seen.append(identity)
        raw = draw(bodies(identity))
        event = draw(st.sampled_from([EventType.ADDED, EventType.MODIFIED, EventType.DELETED]))
        valid = event == EventType.DELETED or draw(st.integers(0, 7)) > 0
        if not valid:
            raw = corrupt(identity[0], raw, draw(st.integers(0, 1)))
        sequence.append(Step(event, raw, key_of(*identity), valid))
    return sequence


def final_state(sequence: list[Step]) -> tuple[dict[str, Raw], set[str]]:
    """What a correct store holds after ``sequence``: live objects by key, and problem keys.

    A malformed version never replaces the last valid one; it leaves a problem until a valid
    version or a deletion of the same object.
    """
    live: dict[str, Raw] = {}
    problems: set[str] = set()
    for step in sequence:
        if step.event == EventType.DELETED:
            live.pop(step.key, None)
            problems.discard(step.key)
        elif step.valid:
            live[step.key] = step.raw
            problems.discard(step.key)
        else:
            problems.add(step.key)
    return live, problems
