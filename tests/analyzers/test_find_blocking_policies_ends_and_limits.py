"""find_blocking_policies never guesses at the edges of its input: a Service port the
Service does not expose, an address that belongs to a pod or a ClusterIP, and more pod pairs
than it evaluates."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool, find_blocking_policies
from tests.conftest import store_from_yaml

CLUSTER = """
apiVersion: v1
kind: Namespace
metadata: {name: a, labels: {kubernetes.io/metadata.name: a}}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: a, labels: {app: client}}
spec: {containers: [{name: c}]}
status: {podIP: 10.0.0.5, phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: client-2, namespace: a, labels: {app: client}}
spec: {containers: [{name: c}]}
status: {podIP: 10.0.0.8, phase: Running}
---
apiVersion: v1
kind: Service
metadata: {name: clients, namespace: a}
spec:
  clusterIP: 10.96.0.11
  selector: {app: client}
  ports: [{port: 9}]
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: a, labels: {app: other}}
spec: {containers: [{name: c}]}
status: {podIP: 10.0.0.6, phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: a, labels: {app: server}}
spec: {containers: [{name: c, ports: [{name: http, containerPort: 8080}]}]}
status: {podIP: 10.0.0.7, phase: Running}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: a}
spec:
  clusterIP: 10.96.0.10
  selector: {app: server}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: direct, namespace: a}
spec:
  clusterIP: None
  selector: {app: server}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: only-client, namespace: a}
spec:
  podSelector: {matchLabels: {app: server}}
  ingress: [{from: [{podSelector: {matchLabels: {app: client}}}]}]
"""


def ask(**args: Any) -> dict[str, Any]:
    view = store_from_yaml(CLUSTER).view()
    return to_json(call_tool(view, "find_blocking_policies", args), detail=False)


def test_a_port_the_service_does_not_expose_is_not_found() -> None:
    with pytest.raises(ToolFailure) as failure:
        ask(source="a/client", destination="Service/a/svc", port=8080)
    assert failure.value.code is ErrorCode.NOT_FOUND
    assert failure.value.message.startswith("port: Service a/svc has no port 8080/TCP")
    assert "80/TCP" in failure.value.message


def test_a_headless_service_is_reached_on_its_pods_ports() -> None:
    assert ask(source="a/client", destination="Service/a/direct", port=8080)["allowed"] is True


def test_an_address_of_a_pod_is_that_pod() -> None:
    by_address = ask(source="ip:10.0.0.5", destination="a/server", port=8080)
    by_name = ask(source="a/client", destination="a/server", port=8080)
    assert by_address["allowed"] is by_name["allowed"] is True
    assert ask(source="ip:10.0.0.6", destination="a/server", port=8080)["allowed"] is False
    # An address no pod has is outside the cluster, which the policy does not admit.
    assert ask(source="ip:203.0.113.9", destination="a/server", port=8080)["allowed"] is False


def test_a_cluster_ip_is_its_service_as_destination_only() -> None:
    assert ask(source="a/client", destination="ip:10.96.0.10", port=80)["allowed"] is True
    with pytest.raises(ToolFailure) as failure:
        ask(source="ip:10.96.0.10", destination="a/server", port=8080)
    assert failure.value.code is ErrorCode.INVALID_INPUT
    assert failure.value.message.startswith("source: ip:10.96.0.10 is the ClusterIP")


def test_pairs_beyond_the_limit_leave_all_allowed_undecided(
        monkeypatch: pytest.MonkeyPatch) -> None:
    both = {"source": "Service/a/clients", "destination": "a/server", "port": 8080}
    assert ask(**both)["allowed"] is True  # two pairs, both admitted
    monkeypatch.setattr(find_blocking_policies, "MAX_PAIRS", 1)
    capped = ask(**both)
    assert capped["allowed"] is None  # one pair evaluated: "all allowed" is not known
    assert any("only the first 1 of" in n for n in capped["notEvaluated"])
    # One denied pair decides "no" even when capped.
    assert ask(source="ip:203.0.113.9", destination="Service/a/direct", port=8080,
               )["allowed"] is False


def test_a_policy_that_could_not_be_read_leaves_the_answer_undecided() -> None:
    """A NetworkPolicy the API would have (`policyTypes: [ingress]`, lowercase) is dropped as
    malformed; answering as if it did not exist would be a guess."""
    broken = CLUSTER + """
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: broken, namespace: a}
spec: {podSelector: {}, policyTypes: [ingress]}
"""
    view = store_from_yaml(broken).view()
    answer = to_json(call_tool(view, "find_blocking_policies", {
        "source": "a/client", "destination": "a/server", "port": 8080}), detail=False)
    assert answer["allowed"] is None
    assert any("NetworkPolicy a/broken could not be read" in n for n in answer["notEvaluated"])
    # In another namespace it governs neither end.
    other = broken.replace("metadata: {name: broken, namespace: a}",
                           "metadata: {name: broken, namespace: b}")
    answer = to_json(call_tool(store_from_yaml(other).view(), "find_blocking_policies", {
        "source": "a/client", "destination": "a/server", "port": 8080}), detail=False)
    assert answer["allowed"] is True
