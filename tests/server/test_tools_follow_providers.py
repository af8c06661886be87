"""Provider tools appear with their CRDs and go with them, and clients hear about it: the
legacy ``notifications/tools/list_changed`` on the session's stream, and ``ToolsListChanged``
on a 2026-07-28 ``subscriptions/listen`` stream. Plus the per-call timeout, in-process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ToolsListChanged
from mcp_types import ServerNotification, ToolListChangedNotification

from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.tools import TOOLS
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.scenarios import GATEWAY_API_CRDS
from tests.server.conftest import Served, error_json, eventually, serving, structured

pytestmark = pytest.mark.anyio


DIAGNOSE = TOOLS["diagnose_service"]
ROUTE_TOOL = Tool(AnalyzerMetadata("route_probe", "A Gateway API tool", frozenset(), ()),
                  args=DIAGNOSE.args, result=DIAGNOSE.result, run=DIAGNOSE.run,
                  toolset=Toolset.ROUTING, provider="gateway-api")


async def _slow(view: Any, args: Any) -> Any:
    await asyncio.sleep(30)


def _broken(view: Any, args: Any) -> Any:
    raise KeyError("a bug in an analyzer")


BROKEN_TOOL = Tool(AnalyzerMetadata("broken", "Has a bug", frozenset(), ()),
                   args=DIAGNOSE.args, result=DIAGNOSE.result, run=_broken,
                   toolset=Toolset.CORE)
SLOW_TOOL = Tool(AnalyzerMetadata("slow", "Never answers in time", frozenset(), ()),
                 args=DIAGNOSE.args, result=DIAGNOSE.result, run=_slow,
                 toolset=Toolset.CORE)
CATALOG = {**TOOLS, ROUTE_TOOL.name: ROUTE_TOOL, SLOW_TOOL.name: SLOW_TOOL,
           BROKEN_TOOL.name: BROKEN_TOOL}


@pytest.fixture
async def bare(tmp_path: Path) -> AsyncIterator[Served]:
    sim = SimServer(config=SimConfig(bookmark_interval=0.1))
    sim.state.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}])
    async with sim, serving(sim, tmp_path, tools=CATALOG, tool_timeout=0.3) as running:
        yield running


def crd_type(served: Served) -> Any:
    rtype = served.sim.state.registry.for_kind("apiextensions.k8s.io/v1",
                                               "CustomResourceDefinition")
    assert rtype is not None
    return rtype


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}


async def test_legacy_clients_get_tools_list_changed(bare: Served) -> None:
    heard: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ServerNotification):
            heard.append(message)

    async with Client(bare.mcp_url, mode="legacy", message_handler=on_message) as client:
        assert "route_probe" not in await tool_names(client)
        unavailable = await client.call_tool("route_probe", {"service": "x/y"})
        assert error_json(unavailable)["code"] == "CRD_NOT_AVAILABLE"
        await eventually(lambda: bare.service.notifier.legacy_sessions == 1)
        await asyncio.sleep(0.3)  # the client opens its GET stream after the handshake

        bare.sim.state.apply(GATEWAY_API_CRDS)
        await eventually(lambda: any(isinstance(n, ToolListChangedNotification)
                                     for n in heard))
        assert "route_probe" in await tool_names(client)

        heard.clear()
        for crd in GATEWAY_API_CRDS:
            bare.sim.state.delete(crd_type(bare), None, crd["metadata"]["name"])
        await eventually(lambda: any(isinstance(n, ToolListChangedNotification)
                                     for n in heard))
        assert "route_probe" not in await tool_names(client)
    await eventually(lambda: bare.service.notifier.legacy_sessions == 0)  # forgotten on close


async def test_modern_clients_hear_it_on_their_listen_stream(bare: Served) -> None:
    async with Client(bare.mcp_url) as client, client.listen(tools_list_changed=True) as sub:
        assert client.protocol_version >= "2026"
        assert "route_probe" not in await tool_names(client)
        events = aiter(sub)
        bare.sim.state.apply(GATEWAY_API_CRDS)
        with anyio.fail_after(10):
            assert isinstance(await anext(events), ToolsListChanged)
        assert "route_probe" in await tool_names(client)


async def test_shutdown_ends_listen_streams_gracefully(bare: Served) -> None:
    async with Client(bare.mcp_url) as client, client.listen(tools_list_changed=True) as sub:
        stopping = asyncio.create_task(bare.http.stop())
        with anyio.fail_after(5):
            remaining = [event async for event in sub]  # ends; SubscriptionLost if abrupt
        await stopping
    assert remaining == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_in_process_calls_and_the_tool_timeout(bare: Served, mode: str) -> None:
    async with Client(bare.service.mcp, mode=mode) as client:
        assert {"diagnose_service", "slow"} <= await tool_names(client)
        missing = await client.call_tool("diagnose_service", {"service": "x/none"})
        assert error_json(missing)["code"] == "NOT_FOUND"
        slow = await client.call_tool("slow", {"service": "x/none"})
        broken = await client.call_tool("broken", {"service": "x/none"})
    error = error_json(slow)
    assert error["code"] == "INTERNAL_ERROR"
    assert "TOOL_TIMEOUT" in error["message"]
    bug = error_json(broken)
    assert (bug["code"], bug["tool"]) == ("INTERNAL_ERROR", "broken")
    assert "KeyError" in bug["message"]
    assert "Traceback" not in broken.content[0].text  # type: ignore[union-attr]
    assert bare.service.host.in_flight == 0


async def test_answers_in_process_match_answers_over_http(served: Served) -> None:
    args = {"service": "shop/checkout"}
    async with Client(served.service.mcp) as local, Client(served.mcp_url) as remote:
        here = structured(await local.call_tool("diagnose_service", args))
        there = structured(await remote.call_tool("diagnose_service", args))
    assert here["findings"] == there["findings"]
    assert here["findings"], "the demo's checkout targets an undeclared port"
