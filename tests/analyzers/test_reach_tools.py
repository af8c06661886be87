"""who_can_reach and what_can_reach: bad input named, pages, outside ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView
from tests.conftest import store_from_yaml

CLUSTER = (Path(__file__).parent / "testdata" / "who_can_reach" /
           "networkpolicy-admits-identities" / "cluster.yaml").read_text()


def view() -> GraphView:
    return store_from_yaml(CLUSTER).view()


def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return to_json(call_tool(view(), tool, args), detail=False)


@pytest.mark.parametrize(("tool", "args", "code", "names"), [
    ("who_can_reach", {"destination": "shop/nope", "port": 80}, ErrorCode.NOT_FOUND,
     "destination:"),
    ("who_can_reach", {"destination": "Service/shop/nope", "port": 80}, ErrorCode.NOT_FOUND,
     "destination:"),
    ("who_can_reach", {"destination": "shop", "port": 80}, ErrorCode.INVALID_INPUT,
     "destination:"),
    ("who_can_reach", {"destination": "shop/db-0", "port": 0}, ErrorCode.INVALID_INPUT,
     "port:"),
    ("who_can_reach", {"destination": "shop/db-0"}, ErrorCode.INVALID_INPUT, "port:"),
    ("who_can_reach", {"destination": "shop/db-0", "port": 80, "protocol": "ICMP"},
     ErrorCode.INVALID_INPUT, "protocol:"),
    ("who_can_reach", {"destination": "shop/db-0", "port": 80, "cursor": "nope"},
     ErrorCode.INVALID_INPUT, "cursor:"),
    ("what_can_reach", {"source": "ops/nope"}, ErrorCode.NOT_FOUND, "source:"),
    ("what_can_reach", {"source": "ip:300.1.1.1"}, ErrorCode.INVALID_INPUT, "source:"),
    ("what_can_reach", {"source": "shop/web-1", "port": 65536}, ErrorCode.INVALID_INPUT,
     "port:"),
    ("what_can_reach", {"source": "shop/web-1", "protocol": "HTTP"},
     ErrorCode.INVALID_INPUT, "protocol:"),
    ("what_can_reach", {"source": "shop/web-1", "limit": 0}, ErrorCode.INVALID_INPUT,
     "limit:"),
])
def test_bad_input_names_the_argument(tool: str, args: dict[str, Any], code: ErrorCode,
                                      names: str) -> None:
    with pytest.raises(ToolFailure) as caught:
        call_tool(view(), tool, args)
    assert caught.value.code is code
    assert caught.value.message.startswith(names), caught.value.message


def test_pages_walk_every_peer_once() -> None:
    whole = call("what_can_reach", {"source": "shop/web-1", "port": 8080})
    seen: list[Any] = []
    cursor = None
    while True:
        page = call("what_can_reach", {"source": "shop/web-1", "port": 8080, "limit": 1,
                                       **({"cursor": cursor} if cursor else {})})
        seen += page["peers"]
        cursor = page["page"]["nextCursor"]
        if cursor is None:
            break
    assert seen == whole["peers"]
    assert len(seen) > 2
    with pytest.raises(ToolFailure) as caught:
        call_tool(view(), "what_can_reach", {"source": "shop/web-1", "port": 80,
                                             "cursor": page_cursor()})
    assert caught.value.message.startswith("cursor:")


def page_cursor() -> str:
    first = call("what_can_reach", {"source": "shop/web-1", "port": 8080, "limit": 1})
    cursor = first["page"]["nextCursor"]
    assert isinstance(cursor, str)
    return cursor


def test_an_outside_end_has_only_cluster_peers() -> None:
    who = call("who_can_reach", {"destination": "ip:203.0.113.9", "port": 443})
    assert who["peers"]
    assert all("namespace" in p for p in who["peers"])
    assert who["summary"]["allowedPods"] == 6  # nothing restricts egress here
    what = call("what_can_reach", {"source": "ip:203.0.113.9", "port": 5432})
    # shop denies ingress by default (db admits only pods); ops isolates nothing.
    assert {p["namespace"] + "/" + p["labels"]["app"] for p in what["peers"]} == {"ops/prom"}


def test_a_workload_without_pods_stands_for_them_in_manifests() -> None:
    cluster = CLUSTER + """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: ops}
spec:
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec: {containers: [{name: c}]}
"""
    answer = to_json(call_tool(store_from_yaml(cluster).view(), "who_can_reach",
                               {"destination": "shop/db-0", "port": 5432, "detail": True}),
                     detail=True)
    batch = [p for p in answer["peers"] if p["labels"] == {"app": "batch"}]
    assert batch == [{"namespace": "ops", "labels": {"app": "batch"}, "pods": 1,
                      "allowed": True, "members": ["Deployment/ops/batch"]}]
