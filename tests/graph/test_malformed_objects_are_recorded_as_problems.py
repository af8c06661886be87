"""Each malformed object becomes one problem naming the field at fault; nothing raises and
nothing of it reaches the graph."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.graph.model.records import SecretRecord
from netsight.graph.store.live import EventType, GraphStore, ProblemKind
from tests.graph.factories import meta, network_policy, pod, service

Raw = dict[str, Any]


def with_spec(raw: Raw, **spec: Any) -> Raw:
    return {**raw, "spec": {**raw["spec"], **spec}}


def np_expression(**expr: Any) -> Raw:
    return network_policy("np", pod_selector={"matchExpressions": [expr]})


CASES = [
    ("ports as a string", with_spec(service("s"), ports="80"), "spec.ports"),
    ("port above 65535", with_spec(service("s"), ports=[{"port": 70000}]), "spec.ports[0].port"),
    ("port zero", with_spec(service("s"), ports=[{"port": 0}]), "spec.ports[0].port"),
    ("port as YAML true", with_spec(service("s"), ports=[{"port": True}]), "spec.ports[0].port"),
    ("numeric string targetPort", with_spec(service("s"), ports=[{"port": 80,
                                                                  "targetPort": "8080"}]),
     "spec.ports[0].targetPort"),
    ("targetPort name too long", with_spec(service("s"), ports=[{
        "port": 80, "targetPort": "a-very-long-port-name"}]), "spec.ports[0].targetPort"),
    ("protocol as a list", with_spec(service("s"), ports=[{"port": 80, "protocol": ["TCP"]}]),
     "spec.ports[0].protocol"),
    ("unknown Service type", with_spec(service("s"), type="Internal"), "spec.type"),
    ("selector value not a string", with_spec(service("s"), selector={"app": 1}),
     "spec.selector.app"),
    ("label value not a string", pod("p", labels={"version": 2}), "metadata.labels.version"),
    ("labels as a list", {**pod("p"), "metadata": {**meta("p"), "labels": ["app"]}},
     "metadata.labels"),
    ("containers as a map", with_spec(pod("p"), containers={"name": "main"}), "spec.containers"),
    ("containerPort as a name", with_spec(pod("p"), containers=[
        {"name": "main", "ports": [{"containerPort": "http"}]}]),
     "spec.containers[0].ports[0].containerPort"),
    ("spec as a list", {**pod("p"), "spec": []}, "spec"),
    ("bad selector operator", np_expression(key="app", operator="Equals", values=["a"]),
     "spec.podSelector.matchExpressions[0].operator"),
    ("In without values", np_expression(key="app", operator="In"),
     "spec.podSelector.matchExpressions[0].values"),
    ("Exists with values", np_expression(key="app", operator="Exists", values=["a"]),
     "spec.podSelector.matchExpressions[0].values"),
    ("podSelector as a string", network_policy("np", pod_selector="app=a"),
     "spec.podSelector"),
    ("bad policyType", with_spec(network_policy("np"), policyTypes=["Ingress", "Both"]),
     "spec.policyTypes[1]"),
    ("slice address not a string", {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta("s-1"),
        "endpoints": [{"addresses": [10]}]}, "endpoints[0].addresses"),
    ("Ingress backend naming nothing", {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta("i"),
        "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": {}}]}}]}},
     "spec.rules[0].http.paths[0].backend"),
]


@pytest.mark.parametrize("protocol", ["tcp", "HTTP", "HTTPS"])
def test_a_protocol_the_api_rejects_is_kept_as_written_and_reported(protocol: str) -> None:
    """A wrong value of the right shape keeps the object (INVALID_VALUE, not MALFORMED)."""
    store = GraphStore()
    raw = with_spec(service("s"), ports=[{"port": 80, "protocol": protocol}])

    assert store.apply(EventType.ADDED, raw, location="x.yaml:3") is True

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.INVALID_VALUE
    assert problem.field_path == "spec.ports[0].protocol"
    assert repr(protocol) in problem.message
    record = store.view().get("Service/default/s")
    assert record is not None
    assert record.ports[0].protocol == protocol  # type: ignore[attr-defined]
    # A valid version clears the problem; deleting the object clears it too.
    store.apply(EventType.MODIFIED, with_spec(service("s"), ports=[{"port": 80}]))
    assert store.problems == {}
    store.apply(EventType.MODIFIED, raw)
    store.apply(EventType.DELETED, raw)
    assert store.problems == {}


@pytest.mark.parametrize(("raw", "field_path"), [pytest.param(raw, path, id=name)
                                                 for name, raw, path in CASES])
def test_malformed_object_is_a_problem_with_its_field_path(raw: Raw, field_path: str) -> None:
    store = GraphStore()

    assert store.apply(EventType.ADDED, raw, location="x.yaml:3") is False

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.MALFORMED
    assert problem.field_path == field_path
    assert problem.location == "x.yaml:3"
    assert (problem.object_kind, problem.namespace, problem.name) == (
        raw["kind"], "default", raw["metadata"]["name"])
    assert problem.api_version == raw["apiVersion"]
    assert store.state.graph.number_of_nodes() == 0
    assert store.state.by_kind == {}
    assert store.generation == 1  # readers learn of the new problem


@pytest.mark.parametrize(
    ("raw", "field_path"),
    [
        ({"kind": "Pod", "metadata": {"name": "p"}}, "apiVersion"),
        ({"apiVersion": "v1", "kind": "", "metadata": {"name": "p"}}, "kind"),
        ({"apiVersion": "v1", "kind": "Pod"}, "metadata"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}},
         "metadata.name"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": 3}},
         "metadata.namespace"),
    ],
)
def test_object_without_identity_is_not_an_object(raw: Raw, field_path: str) -> None:
    store = GraphStore()

    assert store.apply(EventType.ADDED, raw, location="x.yaml:9") is False

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.NOT_AN_OBJECT
    assert problem.field_path == field_path
    assert problem.location == "x.yaml:9"
    assert store.state.graph.number_of_nodes() == 0


def test_generate_name_gets_a_hint() -> None:
    store = GraphStore()
    store.apply(EventType.ADDED, {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"generateName": "p-"}})

    [problem] = store.problems.values()
    assert "generateName" in problem.message


@pytest.mark.parametrize("written", [5, True, ["kubernetes.io/tls"], {"a": "b"}])
def test_a_secret_type_that_is_not_a_string_keeps_the_secret_and_is_reported(
        written: Any) -> None:
    """One field at fault: the Secret (its identity, its data's verdict) is kept with no
    type, and the value is reported (INVALID_VALUE) until a valid version replaces it."""
    store = GraphStore()
    raw = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("tls"), "type": written,
           "stringData": {"tls.crt": "not a certificate", "tls.key": "not a key"}}

    assert store.apply(EventType.ADDED, raw, location="x.yaml:3") is True

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.INVALID_VALUE
    assert problem.field_path == "type"
    assert problem.location == "x.yaml:3"
    assert "not a string" in problem.message
    record = store.view().get("Secret/default/tls")
    assert isinstance(record, SecretRecord)
    assert record.type is None
    assert record.tls_problem == "tls.crt does not hold a PEM CERTIFICATE block"
    store.apply(EventType.MODIFIED, {**raw, "type": "kubernetes.io/tls"})
    assert store.problems == {}
    record = store.view().get("Secret/default/tls")
    assert isinstance(record, SecretRecord)
    assert record.type == "kubernetes.io/tls"
