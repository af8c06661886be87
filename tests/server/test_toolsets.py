"""``--toolsets``: a server offers only the tools of the groups it is given, and within them,
as always, only the tools whose provider's CRDs the cluster serves."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from netsight.analyzers.core.declarations import Toolset
from netsight.analyzers.tools import TOOLS
from netsight.sim.apiserver import SimConfig, SimServer
from tests.server.conftest import error_json, serving

pytestmark = pytest.mark.anyio

ROUTING = {name for name, tool in TOOLS.items() if tool.toolset is Toolset.ROUTING}


async def listed(url: str) -> set[str]:
    async with Client(url) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


async def test_only_the_given_toolsets_are_offered(sim: SimServer, tmp_path: Path) -> None:
    toolsets = frozenset({Toolset.CORE, Toolset.ROUTING})
    async with serving(sim, tmp_path, toolsets=toolsets) as served:
        names = await listed(served.mcp_url)
        async with Client(served.mcp_url) as client:
            refused = await client.call_tool("find_blocking_policies", {
                "source": "shop/a", "destination": "data/b", "port": 5432})
    assert names == {name for name, tool in TOOLS.items() if tool.toolset in toolsets}
    assert names >= ROUTING  # the demo serves the Gateway API CRDs
    error = error_json(refused)
    assert error["code"] == "INVALID_INPUT"
    assert "unknown tool 'find_blocking_policies'" in error["message"]


async def test_a_toolset_still_hides_the_tools_of_absent_providers(tmp_path: Path) -> None:
    sim = SimServer(config=SimConfig(bookmark_interval=0.1))
    sim.state.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}])
    async with sim, serving(sim, tmp_path, toolsets=frozenset({Toolset.ROUTING})) as served:
        names = await listed(served.mcp_url)
    assert names == {name for name in ROUTING if TOOLS[name].provider is None}
    assert names == {"diff_routes", "list_ingresses"}
