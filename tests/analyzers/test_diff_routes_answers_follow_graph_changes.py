"""diff_routes keeps Gateway states, parsed routes, route results and layers with the graph
between answers: after each change to the graph, a long-lived graph answers exactly as a
graph freshly loaded with the same objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType, GraphStore
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml

CLUSTER = (TESTDATA / "diff_routes" / "weighted-backends-filters-and-mirror" / "cluster.yaml")
REQUESTS = [{"host": "split.example.com", "path": "/checkout"},
            {"host": "shop.example.com", "path": "/"},
            {"host": "new.example.com", "path": "/x"},
            {"host": "shop.example.com", "path": "/", "gateway": "infra/edge"}]


def objects() -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(CLUSTER.read_text()) if d]
    return {f"{d['kind']}/{d['metadata'].get('namespace', '')}/{d['metadata']['name']}": d
            for d in docs}


def edits() -> list[tuple[EventType, dict[str, Any]]]:
    live = objects()
    split = copy.deepcopy(live["HTTPRoute/shop/split"])
    split["spec"]["rules"][0]["backendRefs"][0]["weight"] = 10
    exact = live["HTTPRoute/shop/exact"]
    renamed = copy.deepcopy(live["HTTPRoute/shop/wild"])
    renamed["spec"]["hostnames"] = ["new.example.com"]
    fresh = copy.deepcopy(exact)
    fresh["metadata"] = {"name": "fresh", "namespace": "shop"}
    fresh["spec"]["hostnames"] = ["new.example.com"]
    slice_down = copy.deepcopy(live["EndpointSlice/shop/exact-1"])
    slice_down["endpoints"][0]["conditions"]["ready"] = False
    gateway = copy.deepcopy(live["Gateway/infra/edge"])
    gateway["spec"]["listeners"][0]["hostname"] = "*.example.com"
    return [(EventType.MODIFIED, split), (EventType.DELETED, exact),
            (EventType.MODIFIED, renamed), (EventType.ADDED, fresh),
            (EventType.ADDED, exact), (EventType.MODIFIED, slice_down),
            (EventType.MODIFIED, gateway), (EventType.DELETED, live["Service/shop/wild"])]


def answer(store: GraphStore, request: dict[str, Any]) -> dict[str, Any]:
    data = to_json(call_tool(store.view(), "diff_routes", request), detail=True)
    data.pop("metadata")
    return data


@pytest.mark.parametrize("steps", range(1, len(edits()) + 1))
def test_a_long_lived_graph_answers_as_a_fresh_one(steps: int) -> None:
    store = store_from_yaml(CLUSTER.read_text(), source=GraphStore().source)
    live = objects()
    for request in REQUESTS:
        answer(store, request)  # warm every kept structure
    for event, raw in edits()[:steps]:
        store.apply(event, raw)
        key = f"{raw['kind']}/{raw['metadata'].get('namespace', '')}/{raw['metadata']['name']}"
        if event is EventType.DELETED:
            live.pop(key)
        else:
            live[key] = raw
        for request in REQUESTS:
            answer(store, request)
    fresh = store_from_yaml(yaml.safe_dump_all(list(live.values())))
    for request in REQUESTS:
        assert answer(store, request) == answer(fresh, request), request


KGATEWAY = TESTDATA / "diff_routes" / "kgateway-traffic-policies-in-the-layer" / "cluster.yaml"


def test_a_kept_layer_follows_kgateway_policies_and_backends() -> None:
    """A TrafficPolicy added, changed or deleted, and a Backend changed, reach the layer of a
    long-lived graph (route results are kept across answers until what they read changes)."""
    docs = [d for d in yaml.safe_load_all(KGATEWAY.read_text()) if d]
    store = store_from_yaml(KGATEWAY.read_text(), source=GraphStore().source)
    request = {"host": "example.com", "path": "/"}
    answer(store, request)
    timeout = next(d for d in docs if d["metadata"]["name"] == "route-timeout")
    longer = copy.deepcopy(timeout)
    longer["spec"]["timeouts"] = {"request": "30s"}
    retry = {"apiVersion": "gateway.kgateway.dev/v1alpha1", "kind": "TrafficPolicy",
             "metadata": {"name": "route-retry", "namespace": "default"},
             "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io",
                                      "kind": "HTTPRoute", "name": "to-static"}],
                      "retry": {"attempts": 1, "retryOn": ["reset"]}}}
    backend = copy.deepcopy(next(d for d in docs if d["kind"] == "Backend"
                                 and d["apiVersion"].startswith("gateway.kgateway.dev")))
    backend["spec"]["static"]["hosts"] = [{"host": "elsewhere.example.net", "port": 80}]
    live = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    for event, raw in [(EventType.MODIFIED, longer), (EventType.ADDED, retry),
                       (EventType.DELETED, longer), (EventType.MODIFIED, backend)]:
        store.apply(event, raw)
        key = (raw["kind"], raw["metadata"]["name"])
        if event is EventType.DELETED:
            live.pop(key)
        else:
            live[key] = raw
        fresh = store_from_yaml(yaml.safe_dump_all(list(live.values())))
        assert answer(store, request) == answer(fresh, request), (event, key)
    layer = next(la for la in answer(store, request)["layers"] if la["route"] ==
                 "default/to-static")
    assert layer["policies"][0].startswith("retry attempts=1 on reset")
