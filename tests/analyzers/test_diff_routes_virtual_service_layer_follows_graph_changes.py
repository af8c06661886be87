"""diff_routes keeps an index of VirtualServices by host with the graph between answers:
after each change to the VirtualServices, a long-lived graph answers a request routed
through Istio exactly as a graph freshly loaded with the same objects."""

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

CLUSTER = TESTDATA / "diff_routes" / "vs-mesh-oldest-virtual-service-keeps-the-host" / \
    "cluster.yaml"
MESH = {"via": "mesh", "source_namespace": "team"}
REQUESTS = [{"host": "cart.shop.svc.cluster.local", "path": "/checkout", **MESH},
            {"host": "cart.shop", "path": "/", **MESH},
            {"host": "cart-next.team.svc.cluster.local", "path": "/", **MESH}]


def objects() -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(CLUSTER.read_text()) if d]
    return {f"{d['kind']}/{d['metadata'].get('namespace', '')}/{d['metadata']['name']}": d
            for d in docs}


def edits() -> list[tuple[EventType, dict[str, Any]]]:
    live = objects()
    older = live["VirtualService/shop/older"]
    newer = copy.deepcopy(live["VirtualService/team/newer"])
    newer["spec"]["hosts"] = ["cart-next"]
    wildcard = copy.deepcopy(live["VirtualService/shop/wildcard"])
    wildcard["spec"]["hosts"] = ["*.team.svc.cluster.local"]
    fresh = copy.deepcopy(older)
    fresh["metadata"] = {"name": "fresh", "namespace": "shop",
                         "creationTimestamp": "2026-01-01T00:00:00Z"}
    return [(EventType.DELETED, older), (EventType.MODIFIED, newer),
            (EventType.MODIFIED, wildcard), (EventType.ADDED, fresh)]


def answer(store: GraphStore, request: dict[str, Any]) -> dict[str, Any]:
    data = to_json(call_tool(store.view(), "diff_routes", request), detail=True)
    data.pop("metadata")
    return data


@pytest.mark.parametrize("steps", range(1, len(edits()) + 1))
def test_a_long_lived_graph_routes_through_istio_as_a_fresh_one(steps: int) -> None:
    store = store_from_yaml(CLUSTER.read_text())
    live = objects()
    for request in REQUESTS:
        answer(store, request)  # warm the kept index
    for event, raw in edits()[:steps]:
        store.apply(event, raw)
        key = f"{raw['kind']}/{raw['metadata'].get('namespace', '')}/{raw['metadata']['name']}"
        if event is EventType.DELETED:
            live.pop(key)
        else:
            live[key] = raw
    fresh = store_from_yaml(yaml.safe_dump_all(list(live.values())))
    for request in REQUESTS:
        assert answer(store, request) == answer(fresh, request), request
