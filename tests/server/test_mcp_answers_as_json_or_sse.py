"""``--responses``: a POST to /mcp is answered with one JSON body (the default) or an SSE
stream, and clients of both protocol generations get the same answers either way."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from mcp import Client

from netsight.server.config import Responses
from netsight.sim.apiserver import SimServer
from tests.server.conftest import serving, structured

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
ACCEPT_BOTH = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


@pytest.mark.parametrize("responses", list(Responses))
async def test_the_handshake_is_answered_in_the_configured_mode(
        sim: SimServer, tmp_path: Path, responses: Responses) -> None:
    async with serving(sim, tmp_path, responses=responses) as served, \
            aiohttp.ClientSession() as http, \
            http.post(served.mcp_url, json=INITIALIZE, headers=ACCEPT_BOTH) as response:
        assert response.status == 200
        body = await response.text()
    expected = "application/json" if responses is Responses.JSON else "text/event-stream"
    assert response.content_type == expected
    assert '"serverInfo"' in body


@pytest.mark.parametrize("responses", list(Responses))
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tool_calls_answer_alike_in_both_modes(sim: SimServer, tmp_path: Path,
                                                     responses: Responses, mode: str) -> None:
    async with serving(sim, tmp_path, responses=responses) as served, \
            Client(served.mcp_url, mode=mode) as client:
        data = structured(await client.call_tool("diagnose_service",
                                                 {"service": "shop/cart"}))
        tools = await client.list_tools()
    assert data["status"] == "critical"
    assert "find_blocking_policies" in {tool.name for tool in tools.tools}
