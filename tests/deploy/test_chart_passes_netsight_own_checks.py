"""netsight's own analyzers, run on the rendered chart: its Service finds its pods' port, and
its NetworkPolicy admits the peers the values list and nobody else."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from tests.conftest import store_from_yaml
from tests.deploy.conftest import RELEASE_NAMESPACE, Render, only

# Where callers run: full-values.yaml admits namespace ai-agents (and ingress-nginx's
# controller pods); shop is any other namespace.
CALLERS = """
apiVersion: v1
kind: Namespace
metadata: {name: netsight, labels: {kubernetes.io/metadata.name: netsight}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ai-agents, labels: {kubernetes.io/metadata.name: ai-agents}}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubernetes.io/metadata.name: shop}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: ai-agents}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "agent:1"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cart, namespace: shop}
spec:
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec: {containers: [{name: cart, image: "cart:1"}]}
"""


def ask(objects: list[dict[str, Any]], tool: str, **args: Any) -> dict[str, Any]:
    store = store_from_yaml(yaml.safe_dump_all(objects) + "---\n" + CALLERS)
    return to_json(call_tool(store.view(), tool, args), detail=False)


@pytest.mark.parametrize("values_file", ["default-values.yaml", "full-values.yaml"])
def test_the_service_reaches_the_deployments_port(render: Render, values_file: str) -> None:
    objects = render(values_file)
    service = only(objects, "Service")["metadata"]["name"]
    answer = ask(objects, "diagnose_service", service=f"{RELEASE_NAMESPACE}/{service}")
    assert answer["status"] == "ok"
    assert answer["findings"] == []
    assert answer["workloads"] == [f"Deployment/{service}"]


def test_the_network_policy_admits_the_listed_peers_only(render: Render) -> None:
    objects = render("full-values.yaml")
    service = f"Service/{RELEASE_NAMESPACE}/{only(objects, 'Service')['metadata']['name']}"
    port = only(objects, "Service")["spec"]["ports"][0]["port"]
    admitted = ask(objects, "find_blocking_policies", source="Deployment/ai-agents/agent",
                   destination=service, port=port)
    assert admitted["allowed"] is True
    refused = ask(objects, "find_blocking_policies", source="Deployment/shop/cart",
                  destination=service, port=port)
    assert refused["allowed"] is False
    assert [p["name"] for p in refused["blockingPolicies"]] == [
        only(objects, "NetworkPolicy")["metadata"]["name"]]


def test_without_peers_the_network_policy_admits_nobody(render: Render) -> None:
    assert not [o for o in render("default-values.yaml") if o["kind"] == "NetworkPolicy"]
    objects = render("default-values.yaml", "networkPolicy.enabled=true")
    assert only(objects, "NetworkPolicy")["spec"]["ingress"] == []
    service = f"Service/{RELEASE_NAMESPACE}/{only(objects, 'Service')['metadata']['name']}"
    answer = ask(objects, "find_blocking_policies", source="Deployment/ai-agents/agent",
                 destination=service, port=8080)
    assert answer["allowed"] is False
