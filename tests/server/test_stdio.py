"""``netsight serve --demo --transport stdio`` as a client launches it: a subprocess speaking
MCP on stdin/stdout, logs on stderr."""

from __future__ import annotations

import sys

import pytest
from mcp import Client, StdioServerParameters

from netsight.analyzers.tools import TOOLS
from tests.server.conftest import error_json, structured

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_stdio_client_lists_and_calls_tools(mode: str) -> None:
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "netsight.cli", "serve", "--demo", "--transport", "stdio",
              "--log-level", "warn"])
    async with Client(command, mode=mode, read_timeout_seconds=30) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        cart = structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        bad = await client.call_tool("diagnose_service", {"service": 42})
    assert names == set(TOOLS)
    assert cart["metadata"]["source"] == "demo"
    assert cart["metadata"]["clusterName"] == "demo"
    assert "NS0101" in {finding["code"] for finding in cart["findings"]}
    assert error_json(bad)["code"] == "INVALID_INPUT"
