"""Small builders of raw Kubernetes objects and edge queries for the graph tests."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import EventType, GraphStore

Raw = dict[str, Any]


def meta(name: str, namespace: str | None = "default", labels: dict[str, str] | None = None,
         owner: tuple[str, str] | None = None) -> Raw:
    result: Raw = {"name": name}
    if namespace is not None:
        result["namespace"] = namespace
    if labels is not None:
        result["labels"] = labels
    if owner is not None:
        kind, owner_name = owner
        result["ownerReferences"] = [
            {"apiVersion": "v1", "kind": kind, "name": owner_name, "uid": "u", "controller": True}
        ]
    return result


def namespace(name: str, labels: dict[str, str] | None = None) -> Raw:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, None, labels)}


def pod(name: str, ns: str = "default", labels: dict[str, str] | None = None,
        ip: str | None = None) -> Raw:
    raw: Raw = {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, ns, labels),
                "spec": {"containers": [{"name": "main",
                                         "ports": [{"name": "http", "containerPort": 8080}]}]}}
    if ip is not None:
        raw["status"] = {"phase": "Running", "podIP": ip}
    return raw


def deployment(name: str, ns: str = "default", template_labels: dict[str, str] | None = None,
               kind: str = "Deployment") -> Raw:
    labels = template_labels or {}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta(name, ns),
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "main"}]}}}}


def service(name: str, ns: str = "default", selector: dict[str, str] | None = None,
            **spec: Any) -> Raw:
    body: Raw = {"ports": [{"port": 80, "targetPort": 8080}], **spec}
    if selector is not None:
        body["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta(name, ns), "spec": body}


def endpoint_slice(name: str, service_name: str, pods: list[str], ns: str = "default",
                   owned: bool = False) -> Raw:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta(name, ns, {"kubernetes.io/service-name": service_name},
                         ("Service", service_name) if owned else None),
        "addressType": "IPv4",
        "endpoints": [{"addresses": [f"10.0.0.{i + 1}"], "conditions": {"ready": True},
                       "targetRef": {"kind": "Pod", "name": p, "namespace": ns}}
                      for i, p in enumerate(pods)],
        "ports": [{"port": 8080, "protocol": "TCP"}],
    }


def network_policy(name: str, ns: str = "default", pod_selector: Raw | None = None) -> Raw:
    spec: Raw = {"policyTypes": ["Ingress"]}
    if pod_selector is not None:
        spec["podSelector"] = pod_selector
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": meta(name, ns), "spec": spec}


def apply_all(store: GraphStore, *objects: Raw, event: EventType = EventType.ADDED) -> None:
    for raw in objects:
        store.apply(event, raw)


def rels(store: GraphStore, source: str, target: str) -> set[str]:
    """The relationships on the edge source -> target (stored or selector); empty if none."""
    return {rel for rel in Rel if target in targets(store, source, rel)}


def targets(store: GraphStore, source: str, rel: Rel) -> set[str]:
    return {record.key for record in store.view().neighbors(source, rel)}


def sources(store: GraphStore, target: str, rel: Rel) -> set[str]:
    return {record.key for record in store.view().neighbors(target, rel, incoming=True)}
