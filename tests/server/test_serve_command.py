"""``netsight serve --demo`` as a user runs it: one command, then a clean stop on SIGTERM
even with an MCP session and a change stream open."""

from __future__ import annotations

import asyncio
import signal
import sys
import time

import aiohttp
import pytest
from mcp import Client

from tests.server.conftest import announced_and_ready, structured

pytestmark = pytest.mark.anyio


async def test_serve_demo_answers_and_stops_cleanly_on_sigterm() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "netsight.cli", "serve", "--demo", "--port", "0",
        stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None
    try:
        url = await announced_and_ready(process)
        async with aiohttp.ClientSession() as http:
            stream = await http.get(f"{url}/api/graph/changes")
            async with Client(f"{url}/mcp", mode="legacy") as client:
                cart = structured(await client.call_tool("diagnose_service",
                                                         {"service": "shop/cart"}))
                assert cart["metadata"]["source"] == "demo"
                started = time.monotonic()
                process.send_signal(signal.SIGTERM)
                code = await asyncio.wait_for(process.wait(), 10)
            stopped = time.monotonic() - started
            stream.close()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    log = (await process.stderr.read()).decode()
    assert code == 0, log
    assert "Traceback" not in log
    assert stopped < 5, f"shutdown took {stopped:.1f}s"
