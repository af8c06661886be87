"""find_blocking_policies and reachability_matrix: bad input named, declared reads, size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool, find_blocking_policies, reachability_matrix
from netsight.graph.model.kinds import Kind
from tests.analyzers.test_testdata import CASES, run_case
from tests.conftest import store_from_yaml

TESTDATA = Path(__file__).parent / "testdata"
CLUSTER = (TESTDATA / "find_blocking_policies" / "workload-pods-some-denied" /
           "cluster.yaml").read_text() + """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: y}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: y}
spec:
  selector: {app: db}
  ports: [{port: 5432}]
"""


def _fail(tool: str, args: dict[str, Any]) -> ToolFailure:
    view = store_from_yaml(CLUSTER).view()
    with pytest.raises(ToolFailure) as caught:
        call_tool(view, tool, args)
    return caught.value


FLOW = {"source": "x/a", "destination": "y/b", "port": 80}


@pytest.mark.parametrize(("args", "code", "names"), [
    ({**FLOW, "source": "x/nope"}, ErrorCode.NOT_FOUND, "source:"),
    ({**FLOW, "destination": "Service/y/nope"}, ErrorCode.NOT_FOUND, "destination:"),
    ({**FLOW, "destination": "y/db"}, ErrorCode.INVALID_INPUT, "destination:"),
    ({**FLOW, "destination": "Secret/y/b"}, ErrorCode.INVALID_INPUT, "destination:"),
    ({**FLOW, "source": "ip:10.0.0.300"}, ErrorCode.INVALID_INPUT, "source:"),
    ({**FLOW, "source": "a"}, ErrorCode.INVALID_INPUT, "source:"),
    ({**FLOW, "port": 0}, ErrorCode.INVALID_INPUT, "port:"),
    ({**FLOW, "port": 65536}, ErrorCode.INVALID_INPUT, "port:"),
    ({**FLOW, "port": "8 0"}, ErrorCode.INVALID_INPUT, "port:"),
    ({**FLOW, "port": "nosuch"}, ErrorCode.NOT_FOUND, "port:"),
    ({**FLOW, "port": True}, ErrorCode.INVALID_INPUT, "port:"),
    ({**FLOW, "protocol": "ICMP"}, ErrorCode.INVALID_INPUT, "protocol:"),
    ({**FLOW, "destination": "x/a"}, ErrorCode.INVALID_INPUT, "destination:"),
    ({**FLOW, "source": "ip:192.0.2.1", "destination": "ip:192.0.2.2"},
     ErrorCode.INVALID_INPUT, "destination:"),
    ({**FLOW, "destination": "Service/y/db", "port": 5432, "protocol": "UDP", "detail": True,
      "extra": 1}, ErrorCode.INVALID_INPUT, "extra:"),
    # HTTP attributes, read by Istio AuthorizationPolicy rules only
    ({**FLOW, "method": "get"}, ErrorCode.INVALID_INPUT, "method:"),
    ({**FLOW, "method": "GET /"}, ErrorCode.INVALID_INPUT, "method:"),
    ({**FLOW, "method": ""}, ErrorCode.INVALID_INPUT, "method:"),
    ({**FLOW, "path": "api/items"}, ErrorCode.INVALID_INPUT, "path:"),
    ({**FLOW, "path": "/a b"}, ErrorCode.INVALID_INPUT, "path:"),
    ({**FLOW, "host": "http://reviews"}, ErrorCode.INVALID_INPUT, "host:"),
    ({**FLOW, "host": "reviews:"}, ErrorCode.INVALID_INPUT, "host:"),
    ({**FLOW, "host": 7}, ErrorCode.INVALID_INPUT, "host:"),
])
def test_find_blocking_policies_names_the_bad_argument(
        args: dict[str, Any], code: ErrorCode, names: str) -> None:
    failure = _fail("find_blocking_policies", args)
    assert failure.code is code
    assert failure.message.startswith(names) or f"; {names}" in failure.message, \
        failure.message


def test_a_lowercase_method_is_refused_with_the_likely_one() -> None:
    failure = _fail("find_blocking_policies", {**FLOW, "method": "get"})
    assert "did you mean 'GET'" in failure.message, failure.message


def test_good_http_attributes_are_accepted() -> None:
    view = store_from_yaml(CLUSTER).view()
    answer = to_json(call_tool(view, "find_blocking_policies", {
        **FLOW, "method": "PATCH", "path": "/api/v1/items?page=2",
        "host": "b.y.svc.cluster.local:80"}), detail=False)
    assert answer["port"] == 80


@pytest.mark.parametrize(("args", "code", "names"), [
    ({"ports": [80], "namespaces": ["nope"]}, ErrorCode.NOT_FOUND, "namespace 'nope'"),
    ({"ports": [80], "pods": ["x/nope"]}, ErrorCode.NOT_FOUND, "pods[0]:"),
    ({"ports": []}, ErrorCode.INVALID_INPUT, "ports:"),
    ({"ports": [70000]}, ErrorCode.INVALID_INPUT, "ports.0:"),
    ({"ports": [80], "protocols": ["HTTP"]}, ErrorCode.INVALID_INPUT, "protocols.0:"),
    ({"ports": [80], "cursor": "garbage"}, ErrorCode.INVALID_INPUT, "cursor:"),
])
def test_reachability_matrix_names_the_bad_argument(
        args: dict[str, Any], code: ErrorCode, names: str) -> None:
    failure = _fail("reachability_matrix", args)
    assert failure.code is code
    assert names in failure.message, failure.message


def test_a_service_port_reaches_its_pods() -> None:
    view = store_from_yaml(CLUSTER).view()
    answer = to_json(call_tool(view, "find_blocking_policies",
                               {"source": "x/a", "destination": "Service/y/db", "port": 5432}),
                     detail=False)
    assert answer["allowed"] is False
    assert answer["pairs"]["deniedPairs"] == ["x/a -> y/db-1"]


def test_matrix_pages_cover_every_pair_once() -> None:
    view = store_from_yaml(CLUSTER).view()
    seen: list[tuple[str, str, int, str]] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"ports": [80, 81], "protocols": ["TCP", "SCTP"], "limit": 7}
        if cursor:
            args["cursor"] = cursor
        answer = to_json(call_tool(view, "reachability_matrix", args), detail=False)
        seen += [(e["from"], e["to"], e["port"], e["protocol"]) for e in answer["entries"]]
        cursor = answer["page"].get("nextCursor")
        if cursor is None:
            break
    pods = answer["pods"]
    assert len(seen) == len(set(seen)) == pods * (pods - 1) * 4
    assert all(src != dst for src, dst, _, _ in seen)


POLICY_CASES = [c for c in CASES if c.parent.name in ("find_blocking_policies",
                                                      "reachability_matrix")]


def test_policy_tools_read_only_what_they_declare() -> None:
    read: dict[str, set[str]] = {"find_blocking_policies": set(), "reachability_matrix": set()}
    for case in POLICY_CASES:
        _, view = run_case(case)
        read[case.parent.name] |= view.read
    for module in (find_blocking_policies, reachability_matrix):
        name, declared = module.TOOL.name, module.TOOL.metadata.reads
        assert read[name] <= declared, read[name] - declared
        assert {Kind.POD, Kind.NAMESPACE, Kind.NETWORK_POLICY, "AdminNetworkPolicy",
                "BaselineAdminNetworkPolicy"} <= read[name]
    assert Kind.SERVICE in read["find_blocking_policies"]


@pytest.mark.parametrize("case", [c for c in POLICY_CASES
                                  if c.parent.name == "find_blocking_policies"],
                         ids=lambda c: c.name)
def test_compact_answers_stay_under_500_tokens(case: Path) -> None:
    query = json.loads((case / "query.json").read_text())
    view = store_from_yaml((case / "cluster.yaml").read_text()).view()
    compact = json.dumps(to_json(call_tool(view, query["tool"], query["args"]), detail=False),
                         separators=(",", ":"))
    assert len(compact) / 4 < 500, len(compact)
