"""``--responses``: a POST to /mcp is answered with one JSON body (the default) or an SSE
stream, and clients of both protocol generations get the same answers either way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest
from mcp import Client

from netsight.server.config import Responses
from tests.server.conftest import Served, demo_sim, left_unchanged, serving, structured

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
ACCEPT_BOTH = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


@pytest.fixture(scope="module", params=list(Responses), ids=str)
def responses(request: pytest.FixtureRequest) -> Responses:
    mode: Responses = request.param
    return mode


@pytest.fixture(scope="module")
async def module_served_answering(responses: Responses,
                                  tmp_path_factory: pytest.TempPathFactory
                                  ) -> AsyncIterator[Served]:
    async with demo_sim() as sim, serving(sim, tmp_path_factory.mktemp("served"),
                                          responses=responses) as served:
        yield served


@pytest.fixture
def answering(module_served_answering: Served) -> Iterator[Served]:
    """The demo served with ``--responses`` json, then sse: one server per mode for the
    module's tests, which only read."""
    with left_unchanged(module_served_answering) as served:
        yield served


async def test_the_handshake_is_answered_in_the_configured_mode(
        answering: Served, responses: Responses) -> None:
    async with aiohttp.ClientSession() as http, \
            http.post(answering.mcp_url, json=INITIALIZE, headers=ACCEPT_BOTH) as response:
        assert response.status == 200
        body = await response.text()
    expected = "application/json" if responses is Responses.JSON else "text/event-stream"
    assert response.content_type == expected
    assert '"serverInfo"' in body


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tool_calls_answer_alike_in_both_modes(answering: Served, mode: str) -> None:
    async with Client(answering.mcp_url, mode=mode) as client:
        data = structured(await client.call_tool("diagnose_service",
                                                 {"service": "shop/cart"}))
        tools = await client.list_tools()
    assert data["status"] == "critical"
    assert "find_blocking_policies" in {tool.name for tool in tools.tools}
