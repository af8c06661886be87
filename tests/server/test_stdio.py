"""``netsight serve --demo --transport stdio`` as a client launches it: a subprocess speaking
MCP on stdin/stdout, logs on stderr."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from netsight.analyzers.core.declarations import DEFAULT_TOOLSETS
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
    assert names == {n for n, t in TOOLS.items() if t.toolset in DEFAULT_TOOLSETS}
    assert cart["metadata"]["source"] == "demo"
    assert cart["metadata"]["clusterName"] == "demo"
    assert "NS0101" in {finding["code"] for finding in cart["findings"]}
    assert error_json(bad)["code"] == "INVALID_INPUT"


MALFORMED = [  # (line, the error code answering it, the id it carries)
    (b"not json", -32700, None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', -32600, 7),
    (b'{"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": "oops"}', -32600, "x"),
    (b"[1, 2]", -32600, None),
    (b'{"id": 8}', -32600, 8),
    (b'"just a string"', -32600, None),
]


async def test_a_malformed_line_gets_a_json_rpc_error_and_serving_goes_on() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "netsight.cli", "serve", "--demo", "--transport", "stdio",
        "--log-level", "warn", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def send(line: bytes) -> None:
        stdin.write(line + b"\n")
        await stdin.drain()

    async def answer() -> dict[str, Any]:
        line = await asyncio.wait_for(stdout.readline(), 30)
        assert line, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    try:
        await send(b"")  # a blank line is no message: nothing answers it
        for line, code, request_id in MALFORMED:
            await send(line)
            reply = await answer()
            assert reply["id"] == request_id, (line, reply)
            assert reply["error"]["code"] == code, (line, reply)
        await send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}).encode())
        assert (await answer())["id"] == 1
        await send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        await send(b"{broken")  # mid-session too
        assert (await answer())["error"]["code"] == -32700
        await send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "diagnose_service", "arguments": {"service": "shop/cart"}}}).encode())
        called = await answer()
    finally:
        stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
    assert called["id"] == 2
    assert called["result"]["structuredContent"]["service"] == "shop/cart"
