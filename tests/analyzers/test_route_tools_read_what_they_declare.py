"""The routing tools read exactly the kinds their TOOL declares (across testdata), and
their compact answers about one object stay small."""

from __future__ import annotations

import json

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import (
    call_tool,
    check_gateway_status,
    check_route_resolution,
    diff_routes,
    gateway_get,
    gateway_list,
    list_ingresses,
)
from tests.analyzers.test_testdata import CASES, load_case, run_case
from tests.conftest import store_from_yaml

DECLARED = {module.TOOL.name: module.TOOL.metadata
            for module in (check_route_resolution, check_gateway_status, diff_routes,
                           list_ingresses, gateway_list, gateway_get)}


@pytest.mark.parametrize("tool", sorted(DECLARED))
def test_declared_reads_equal_what_the_tool_reads(tool: str) -> None:
    read: set[str] = set()
    for case in CASES:
        query, _, _ = load_case(case)
        if query["tool"] == tool:
            read |= run_case(case)[1].read
    declared = DECLARED[tool].reads
    assert read <= declared, f"undeclared: {read - declared}"
    assert read == declared, f"never read in testdata: {declared - read}"


@pytest.mark.parametrize(("tool", "args"), [
    ("check_route_resolution", {"route": "infra/denied"}),
    ("check_gateway_status", {"gateway": "infra/edge"}),
    ("gateway_get", {"gateway": "infra/edge"}),
    ("gateway_list", {}),
])
def test_compact_answer_about_one_object_stays_under_500_tokens(tool: str,
                                                                 args: dict[str, str]) -> None:
    case = next(c for c in CASES if c.name == "cross-namespace-backend-reference-grant")
    view = store_from_yaml((case / "cluster.yaml").read_text()).view()
    compact = json.dumps(to_json(call_tool(view, tool, args), detail=False),
                         separators=(",", ":"))
    assert len(compact) / 4 < 500, compact
