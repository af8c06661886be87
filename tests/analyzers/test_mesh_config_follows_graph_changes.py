"""check_mesh_config keeps the Istio objects it read and the host map with the store; an
event that adds, changes or deletes a VirtualService, DestinationRule, Service or
ServiceEntry must show in the next answer."""

from __future__ import annotations

from typing import Any

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore
from tests.conftest import store_from_yaml

CLUSTER = """
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec:
  selector: {app: reviews}
  ports: [{name: http, port: 9080}]
---
apiVersion: v1
kind: Pod
metadata: {name: reviews-v1, namespace: shop, labels: {app: reviews, version: v1}}
spec:
  containers: [{name: reviews, image: reviews:v1}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews, subset: v1}
    - destination: {host: payments.example.com}
"""

DESTINATION_RULE: dict[str, Any] = {
    "apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
    "metadata": {"name": "reviews", "namespace": "shop"},
    "spec": {"host": "reviews", "subsets": [{"name": "v1", "labels": {"version": "v1"}}]},
}
SERVICE_ENTRY: dict[str, Any] = {
    "apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
    "metadata": {"name": "payments", "namespace": "shop"},
    "spec": {"hosts": ["payments.example.com"],
             "ports": [{"number": 443, "name": "https", "protocol": "HTTPS"}]},
}


def codes(store: GraphStore) -> list[str]:
    answer = to_json(call_tool(store.view(), "check_mesh_config", {"limit": 500}),
                     detail=False)
    return sorted(f["code"] for f in answer["findings"])


def test_findings_follow_added_modified_and_deleted_objects() -> None:
    store = store_from_yaml(CLUSTER)
    # No DestinationRule defines v1; payments.example.com is nobody's host.
    assert codes(store) == ["NS0601", "NS0604"]

    store.apply("ADDED", DESTINATION_RULE)
    store.apply("ADDED", SERVICE_ENTRY)
    assert codes(store) == []

    modified = {**DESTINATION_RULE, "spec": {
        "host": "reviews", "subsets": [{"name": "v1", "labels": {"version": "v7"}}]}}
    store.apply("MODIFIED", modified)
    assert codes(store) == ["NS0641"]  # the subset's labels now select no pod

    store.apply("DELETED", SERVICE_ENTRY)
    assert codes(store) == ["NS0601", "NS0641"]

    store.apply("DELETED", {"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": "reviews", "namespace": "shop"}})
    # reviews resolves to nothing now; the DestinationRule's host neither.
    assert codes(store) == ["NS0601", "NS0601", "NS0640"]


def test_regex_findings_follow_modified_virtual_services() -> None:
    store = store_from_yaml(CLUSTER)
    store.apply("ADDED", DESTINATION_RULE)
    store.apply("ADDED", SERVICE_ENTRY)
    vs: dict[str, Any] = {
        "apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
        "metadata": {"name": "reviews", "namespace": "shop"},
        "spec": {"hosts": ["reviews"], "http": [
            {"match": [{"uri": {"regex": "/v[1-"}}],
             "route": [{"destination": {"host": "reviews", "subset": "v1"}}]}]},
    }
    store.apply("MODIFIED", vs)
    assert codes(store) == ["NS0700"]  # the RE2 verdicts are kept with the store

    vs["spec"]["http"][0]["match"][0]["uri"]["regex"] = "/v[1-9]"
    store.apply("MODIFIED", vs)
    assert codes(store) == []
