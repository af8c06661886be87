"""Shutdown drains: a call in flight when SIGTERM arrives still gets its answer; one that
would outlast the drain timeout is cancelled rather than holding the process."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.tools import TOOLS
from netsight.server.config import Responses
from netsight.sim.apiserver import SimServer
from tests.server.conftest import serving, structured

pytestmark = pytest.mark.anyio

DIAGNOSE = TOOLS["diagnose_service"]


async def _nap(view: Any, args: Any) -> Any:
    await asyncio.sleep(0.5)
    return DIAGNOSE.run(view, args)


async def _forever(view: Any, args: Any) -> Any:
    await asyncio.sleep(60)


CATALOG = {**TOOLS,
           "nap": Tool(AnalyzerMetadata("nap", "Answers after half a second", frozenset(), ()),
                       DIAGNOSE.args, DIAGNOSE.result, _nap, toolset=Toolset.CORE),
           "forever": Tool(AnalyzerMetadata("forever", "Never answers", frozenset(), ()),
                           DIAGNOSE.args, DIAGNOSE.result, _forever, toolset=Toolset.CORE)}


@pytest.mark.parametrize("responses", list(Responses))  # the answer: a JSON body, or SSE
async def test_an_in_flight_call_is_answered_before_the_server_stops(
        sim: SimServer, tmp_path: Path, responses: Responses) -> None:
    async with serving(sim, tmp_path, tools=CATALOG, tool_timeout=30.0,
                       responses=responses) as served, \
            Client(served.mcp_url, mode="legacy") as client:
        await client.list_tools()  # else the client lists tools after the call, to validate
        call = asyncio.create_task(client.call_tool("nap", {"service": "shop/cart"}))
        await asyncio.sleep(0.1)
        assert served.service.host.in_flight == 1
        await served.http.stop()
        answer = structured(await call)
    assert answer["service"] == "shop/cart"


async def test_a_call_outlasting_the_drain_is_cancelled(sim: SimServer, tmp_path: Path) -> None:
    async with serving(sim, tmp_path, tools=CATALOG, tool_timeout=30.0,
                       shutdown_timeout=0.5) as served:
        client = Client(served.mcp_url, mode="legacy", read_timeout_seconds=10)
        async with client:
            call = asyncio.create_task(client.call_tool("forever", {"service": "shop/cart"}))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            await served.http.stop()
            stopped = time.monotonic() - started
            assert served.service.host.in_flight == 0
            call.cancel()
    assert stopped < 3, f"stop took {stopped:.1f}s"
