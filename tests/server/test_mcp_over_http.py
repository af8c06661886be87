"""An MCP client over real HTTP: tools listed from the catalog, answers identical to
``netsight call``, errors as ToolError JSON, and cluster changes in the next answer —
for both protocol generations (the initialize handshake, and 2026-07-28 without it)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from mcp import Client

from netsight.analyzers.core.declarations import DEFAULT_TOOLSETS
from netsight.analyzers.tools import TOOLS
from netsight.cli import main
from netsight.graph.model.kinds import kind_id
from netsight.sim.demo import load_demo
from netsight.sim.state import SimState
from tests.server.conftest import Served, error_json, eventually, structured, without_metadata

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]  # auto negotiates 2026-07-28 with this server


def cli_call(tmp_path: Path, kinds: list[str], tool: str, args: dict[str, Any]
             ) -> dict[str, Any]:
    """``netsight call`` on the demo's objects of the kinds the informers watch."""
    state = SimState()
    load_demo(state)  # the objects as the simulator serves them, EndpointSlices included
    objects = [o for store in state.objects.values() for o in store.values()
               if kind_id(o["apiVersion"], o["kind"]) in kinds]
    manifests = tmp_path / "demo.json"  # JSON: PyYAML takes seconds for the demo
    manifests.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    out = io.StringIO()
    assert main(["call", tool, "-f", str(manifests), "--args", json.dumps(args)],
                stdout=out) == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def codes(data: dict[str, Any]) -> set[str]:
    return {finding["code"] for finding in data["findings"]}


@pytest.mark.parametrize("mode", MODES)
async def test_every_catalog_tool_is_listed_with_its_schemas(shared: Served, mode: str) -> None:
    async with Client(shared.mcp_url, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed
    # Every tool but the notes toolset's, which is offered only when asked for.
    assert set(listed) == {n for n, t in TOOLS.items() if t.toolset in DEFAULT_TOOLSETS}
    assert "record_fix_note" not in listed
    for name, spec in TOOLS.items():
        if name not in listed:
            continue
        tool = listed[name]
        assert tool.description == spec.description
        assert tool.input_schema == spec.input_schema()
        assert tool.output_schema == spec.output_schema()
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        properties = tool.input_schema["properties"]
        assert "detail" in properties
        assert all(p.get("description") for p in properties.values()), name


@pytest.mark.parametrize("mode", MODES)
async def test_diagnose_service_answers_as_netsight_call_does(shared: Served, tmp_path: Path,
                                                             mode: str) -> None:
    args = {"service": "shop/cart", "detail": True}
    async with Client(shared.mcp_url, mode=mode) as client:
        result = await client.call_tool("diagnose_service", args)
    data = structured(result)
    assert data["status"] == "critical"
    assert data["metadata"]["source"] == "cluster"
    assert data["metadata"]["clusterName"] == "sim"
    kinds = shared.graph.store.view().kinds()
    assert without_metadata(data) == without_metadata(
        cli_call(tmp_path, kinds, "diagnose_service", args))
    text = result.content[0].text  # type: ignore[union-attr]
    assert "[CRITICAL]" in text
    assert "shop/cart" in text


@pytest.mark.parametrize(("tool", "args", "check"), [
    ("find_blocking_policies",
     {"source": "shop/frontend-6f7c-a", "destination": "data/postgres-0", "port": 5432},
     lambda data: data["allowed"] is False
     and any(p["name"] == "deny-all" for p in data["blockingPolicies"])),
    ("check_route_resolution", {"namespace": "edge"},
     lambda data: any(r["route"] == "edge/storefront" for r in data["routes"])),
])
async def test_policy_and_route_tools_answer_over_http_as_netsight_call_does(
        shared: Served, tmp_path: Path, tool: str, args: dict[str, Any],
        check: Any) -> None:
    """The live graph over MCP gives the same answers the offline CLI gives for the same
    objects: the demo's deny-all policy blocks the frontend from postgres, and its routes
    resolve (the demo serves the Gateway API CRDs, so the route tools are offered)."""
    async with Client(shared.mcp_url) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert tool in listed
        data = structured(await client.call_tool(tool, args))
    assert check(data), data
    kinds = shared.graph.store.view().kinds()
    assert without_metadata(data) == without_metadata(cli_call(tmp_path, kinds, tool, args))


@pytest.mark.parametrize("mode", MODES)
async def test_bad_arguments_are_a_tool_error_with_invalid_input(shared: Served,
                                                                 mode: str) -> None:
    async with Client(shared.mcp_url, mode=mode) as client:
        bad = await client.call_tool("diagnose_service", {"service": "cart", "colour": "red"})
        unknown = await client.call_tool("diagnose_servic", {"service": "shop/cart"})
        missing = await client.call_tool("diagnose_service", {"service": "shop/nope"})
    error = error_json(bad)
    assert error["code"] == "INVALID_INPUT"
    assert error["tool"] == "diagnose_service"
    assert "service: 'cart' has no namespace: give 'namespace/name'" in error["message"]
    assert "colour: unknown argument" in error["message"]
    assert "Traceback" not in bad.content[0].text  # type: ignore[union-attr]
    assert error_json(unknown)["code"] == "INVALID_INPUT"
    assert "did you mean 'diagnose_service'" in error_json(unknown)["message"]
    assert error_json(missing)["code"] == "NOT_FOUND"


@pytest.mark.parametrize("mode", MODES)
async def test_a_cluster_change_is_in_the_next_answer(served: Served, mode: str) -> None:
    async with Client(served.mcp_url, mode=mode) as client:
        before = structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        assert "NS0101" in codes(before)  # selects no pods
        # Fix the fault through the simulator's API: the selector asks for version v1,
        # the pods run v2.
        async with aiohttp.ClientSession() as http, http.patch(
                f"{served.sim.url}/api/v1/namespaces/shop/services/cart",
                data=json.dumps({"spec": {"selector": {"version": None}}}),
                headers={"Content-Type": "application/merge-patch+json"}) as response:
            assert response.status == 200, await response.text()
        generation = before["metadata"]["graphGeneration"]
        await eventually(lambda: served.graph.store.generation > generation)
        after = structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
    assert after["selector"] == "app=cart"
    assert "NS0101" not in codes(after)
    assert after["pods"]["selected"] == 2
    assert after["metadata"]["graphGeneration"] > generation
