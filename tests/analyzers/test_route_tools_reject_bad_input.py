"""The routing tools: bad arguments name the argument at fault."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml

CLUSTER = (TESTDATA / "check_route_resolution" / "allowed-routes-all-namespaces"
           / "cluster.yaml").read_text()


@pytest.mark.parametrize(("tool", "args", "code", "words"), [
    ("check_route_resolution", {"route": "shop"}, ErrorCode.INVALID_INPUT, "route:"),
    ("check_route_resolution", {"route": "Shop/web"}, ErrorCode.INVALID_INPUT, "route:"),
    ("check_route_resolution", {"namespace": "not_a_ns"}, ErrorCode.INVALID_INPUT, "namespace:"),
    ("check_route_resolution", {"kind": "Ingress"}, ErrorCode.INVALID_INPUT, "kind:"),
    ("check_route_resolution", {"route": "other/apii"}, ErrorCode.NOT_FOUND, "did you mean 'api'"),
    ("check_route_resolution", {"route": "nowhere/api"}, ErrorCode.NOT_FOUND,
     "namespace nowhere has no"),
    ("check_route_resolution", {"route": "other/api", "kind": "GRPCRoute"}, ErrorCode.NOT_FOUND,
     "no GRPCRoute"),
    ("check_route_resolution", {"route": "other/api", "namespace": "shop"},
     ErrorCode.INVALID_INPUT, "namespace:"),
    ("check_route_resolution", {"namespace": "nowhere"}, ErrorCode.NOT_FOUND, "namespace"),
    ("check_gateway_status", {"gateway": "infra/edgee"}, ErrorCode.NOT_FOUND,
     "did you mean 'edge'"),
    ("check_gateway_status", {"gateway": "infra"}, ErrorCode.INVALID_INPUT, "gateway:"),
    ("check_gateway_status", {"gateway": "infra/edge", "namespace": "shop"},
     ErrorCode.INVALID_INPUT, "namespace:"),
    ("check_gateway_status", {"namespace": "nowhere"}, ErrorCode.NOT_FOUND, "namespace"),
    ("check_gateway_status", {"gateways": "infra/edge"}, ErrorCode.INVALID_INPUT,
     "unknown argument"),
    ("diff_routes", {"path": "/"}, ErrorCode.INVALID_INPUT, "host: required"),
    ("diff_routes", {"host": "a.example.com", "path": "api"}, ErrorCode.INVALID_INPUT, "path:"),
    ("diff_routes", {"host": "a.example.com", "port": 0}, ErrorCode.INVALID_INPUT, "port:"),
    ("diff_routes", {"host": "a.example.com", "gateway": "infra/edgee"}, ErrorCode.NOT_FOUND,
     "did you mean 'edge'"),
    ("diff_routes", {"host": "a.example.com", "expected_backend": "web"},
     ErrorCode.INVALID_INPUT, "expected_backend:"),
    ("gateway_get", {}, ErrorCode.INVALID_INPUT, "gateway: required"),
    ("gateway_get", {"gateway": "infra"}, ErrorCode.INVALID_INPUT, "gateway:"),
    ("gateway_get", {"gateway": 7}, ErrorCode.INVALID_INPUT, "gateway:"),
    ("gateway_get", {"gateway": "infra/edgee"}, ErrorCode.NOT_FOUND, "did you mean 'edge'"),
    ("gateway_get", {"gateway": "nowhere/edge"}, ErrorCode.NOT_FOUND,
     "namespace nowhere has no Gateways"),
    ("gateway_get", {"gateway": "infra/edge", "namespace": "infra"}, ErrorCode.INVALID_INPUT,
     "unknown argument"),
    ("gateway_list", {"namespace": "nowhere"}, ErrorCode.NOT_FOUND, "namespace"),
    ("gateway_list", {"namespace": "Not_A_NS"}, ErrorCode.INVALID_INPUT, "namespace:"),
    ("gateway_list", {"limit": 0}, ErrorCode.INVALID_INPUT, "limit:"),
    ("gateway_list", {"cursor": "bogus"}, ErrorCode.INVALID_INPUT, "cursor:"),
    ("gateway_list", {"gateway": "infra/edge"}, ErrorCode.INVALID_INPUT, "unknown argument"),
    ("list_ingresses", {"namespace": "nowhere"}, ErrorCode.NOT_FOUND, "namespace"),
    ("list_ingresses", {"class": "nginx"}, ErrorCode.INVALID_INPUT, "unknown argument"),
])
def test_bad_argument_is_named(tool: str, args: dict[str, Any], code: ErrorCode,
                               words: str) -> None:
    view = store_from_yaml(CLUSTER).view()
    with pytest.raises(ToolFailure) as failure:
        call_tool(view, tool, args)
    assert failure.value.code is code
    assert words in failure.value.message, failure.value.message
