"""diff_routes with proposed=<YAML>: the request resolved with the objects applied to an
overlay of the live graph, which stays as it was; a proposal that cannot be read fails the
call naming ``proposed`` and where."""

from __future__ import annotations

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import Source
from netsight.graph.store.scoped import ScopedView
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml
from tests.graph.snapshots import snapshot

CLUSTER = (TESTDATA / "diff_routes" / "weighted-backends-filters-and-mirror" / "cluster.yaml")
REQUEST = {"host": "split.example.com", "path": "/checkout"}
CANARY = """
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: canary, namespace: shop}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  hostnames: [split.example.com]
  rules:
  - matches: [{path: {type: Exact, value: /checkout}}]
    backendRefs: [{name: next, port: 80}]
"""


def refused(view: object, proposed: str) -> ToolFailure:
    with pytest.raises(ToolFailure) as failure:
        call_tool(view, "diff_routes", {**REQUEST, "proposed": proposed})  # type: ignore[arg-type]
    assert failure.value.code is ErrorCode.INVALID_INPUT
    assert failure.value.message.startswith("proposed: "), failure.value.message
    return failure.value


def test_the_live_graph_is_left_as_it_was() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    before, generation = snapshot(store.state), store.generation

    answer = to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "proposed": CANARY}),
                     detail=False)

    assert answer["proposed"]["layers"][0]["route"] == "shop/canary"
    assert answer["layers"][0]["route"] == "shop/split"
    assert snapshot(store.state) == before
    assert store.generation == generation
    again = to_json(call_tool(store.view(), "diff_routes", REQUEST), detail=False)
    assert again["layers"][0]["route"] == "shop/split"


def test_a_proposal_that_changes_nothing_says_so() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    unrelated = CANARY.replace("split.example.com", "elsewhere.example.com")
    answer = to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "proposed": unrelated}),
                     detail=False)
    assert answer["proposed"]["changed"] is False
    assert answer["proposed"]["layers"] == answer["layers"]


def test_more_than_a_mebibyte_is_refused_before_parsing() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    failure = refused(store.view(), "#" * (1 << 20) + "\n" + CANARY)
    assert "at most 1048576 (1 MiB)" in failure.message


def test_text_without_objects_is_refused() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    assert "no object found" in refused(store.view(), "# only a comment\n---\n").message


def test_a_malformed_object_names_its_document_and_field() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    failure = refused(store.view(), CANARY + "---\napiVersion: v1\nkind: Service\n"
                      "metadata: {namespace: shop}\n")
    assert failure.message.startswith("proposed: document 2 (line 12): metadata.name")


def test_the_same_object_twice_is_refused() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    failure = refused(store.view(), CANARY + "---\n" + CANARY)
    assert "HTTPRoute/shop/canary is already proposed by document 1" in failure.message


def test_a_caller_cannot_propose_into_a_namespace_they_may_not_read() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    scoped = ScopedView(store.view(), {"infra"})
    failure = refused(scoped, CANARY)
    assert failure.message.endswith("HTTPRoute/shop/canary is in a namespace you may not read")


def test_a_proposed_gateway_can_be_the_entry() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    gateway = """
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge2, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
"""
    answer = to_json(call_tool(store.view(), "diff_routes",
                               {**REQUEST, "gateway": "infra/edge2", "proposed": gateway}),
                     detail=False)
    assert answer["layers"] == []
    # No route names edge2 yet: the request lands on its listener and finds no rule.
    assert [(layer["entry"], layer["outcome"]) for layer in answer["proposed"]["layers"]] \
        == [("infra/edge2/http", "404")]
    with pytest.raises(ToolFailure) as failure:
        call_tool(store.view(), "diff_routes", {**REQUEST, "gateway": "infra/edge2"})
    assert failure.value.code is ErrorCode.NOT_FOUND


def test_a_hidden_entry_gateway_is_not_found_with_a_proposal_too() -> None:
    store = store_from_yaml(CLUSTER.read_text())
    scoped = ScopedView(store.view(), {"shop"})
    with pytest.raises(ToolFailure) as failure:
        call_tool(scoped, "diff_routes", {**REQUEST, "gateway": "infra/edge",
                                          "proposed": CANARY})
    assert failure.value.code is ErrorCode.NOT_FOUND


def test_a_proposed_backend_service_with_endpoints_fixes_a_500() -> None:
    store = store_from_yaml(CLUSTER.read_text(), Source.CLUSTER)
    request = {"host": "broken.example.com", "path": "/"}
    missing = """
apiVersion: v1
kind: Service
metadata: {name: missing, namespace: shop}
spec: {selector: {app: missing}, ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: missing-1, namespace: shop, labels: {kubernetes.io/service-name: missing}}
addressType: IPv4
endpoints: [{addresses: [10.1.2.3], conditions: {ready: true}}]
"""
    answer = to_json(call_tool(store.view(), "diff_routes", {**request, "proposed": missing}),
                     detail=False)

    assert answer["layers"][0]["outcome"] == "500"
    after = answer["proposed"]["layers"][0]
    assert after["outcome"] == "forwarded"
    assert after["backends"][0]["readyEndpoints"] == 1
    assert [f["code"] for f in answer["proposed"]["findingsDisappeared"]] == ["NS0515"]


def test_a_proposed_namespace_label_admits_its_routes() -> None:
    cluster = CLUSTER.read_text().replace(
        "    allowedRoutes:\n      namespaces: {from: All}",
        "    allowedRoutes:\n      namespaces: {from: Selector, selector: {matchLabels: "
        "{gateway: edge}}}")
    store = store_from_yaml(cluster)
    labelled = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {gateway: edge}}\n"
    answer = to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "proposed": labelled}),
                     detail=False)

    assert answer["layers"] == []
    assert answer["proposed"]["objects"] == [{"object": "Namespace/shop", "action": "replace"}]
    assert [layer["route"] for layer in answer["proposed"]["layers"]] == ["shop/split"]
