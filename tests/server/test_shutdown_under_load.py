"""SIGTERM under load, against a real ``netsight serve --demo``: clients on kept-alive
connections get a clean 503 with a JSON body and ``Connection: close`` for whatever they send
after the signal — never a 500 or a plain-text body — while a call admitted before the signal
is drained and answered. Loopback only, bounded in requests and time."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from netsight.sim.apiserver import SimServer
from tests.server.conftest import announced_and_ready, serving

pytestmark = pytest.mark.anyio

CLIENTS = 6
MAX_REQUESTS = 300  # per client
LOAD_SECONDS = 12.0  # at most, per client
PROTOCOL = "2025-06-18"
MCP_HEADERS = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}


@dataclass
class Outcome:
    sent: float  # time.monotonic() when it was sent
    path: str
    status: int | None = None  # None: the connection was refused or closed
    connection: str = ""
    body: bytes = b""


def call(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "diagnose_service", "arguments": {"service": "shop/cart"}}}


async def open_session(url: str) -> dict[str, str]:
    """A Streamable HTTP session, handshake done: the headers its requests carry."""
    initialize = {"jsonrpc": "2.0", "id": "initialize", "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "load", "version": "0"}}}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/mcp", json=initialize, headers=MCP_HEADERS) as answer:
            assert answer.status == 200, await answer.text()
            session = answer.headers["mcp-session-id"]
        headers = {**MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": PROTOCOL}
        async with http.post(f"{url}/mcp", headers=headers, json={
                "jsonrpc": "2.0", "method": "notifications/initialized"}) as answer:
            assert answer.status == 202
    return headers


async def load(client: int, url: str, mcp: dict[str, str], signalled: list[float],
               outcomes: list[Outcome]) -> None:
    """One client on one kept-alive connection, until the server is gone. Its request ids
    are its own: the clients share one MCP session."""
    connector = aiohttp.TCPConnector(limit=1)
    started = time.monotonic()
    async with aiohttp.ClientSession(connector=connector) as http:
        for n in range(MAX_REQUESTS):
            if time.monotonic() - started > LOAD_SECONDS:
                return
            path, method, body, headers = [
                ("/api/graph/summary", "GET", None, {}),
                ("/mcp", "POST", json.dumps(call(client * MAX_REQUESTS + n + 1)).encode(), mcp),
                ("/healthz", "GET", None, {}),
            ][n % 3]
            outcome = Outcome(time.monotonic(), path)
            outcomes.append(outcome)
            try:
                async with http.request(method, url + path, data=body,
                                        headers=headers) as response:
                    outcome.status = response.status
                    outcome.connection = response.headers.get("Connection", "").lower()
                    outcome.body = await response.read()
            except (TimeoutError, aiohttp.ClientConnectionError):
                if signalled:
                    return  # closed after the signal: what is expected
                raise
            await asyncio.sleep(0.005)


async def test_sigterm_under_load_answers_503_json_and_drains_what_was_admitted() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "netsight.cli", "serve", "--demo", "--port", "0",
        "--log-level", "warn", stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None
    try:
        url = await announced_and_ready(process)
        mcp = await open_session(url)
        rest_of_body = asyncio.Event()

        async def slow_body() -> AsyncIterator[bytes]:
            raw = json.dumps(call(0)).encode()
            yield raw[:10]
            await rest_of_body.wait()
            yield raw[10:]

        async def in_flight() -> tuple[int, bytes]:  # admitted before the signal, answered
            async with aiohttp.ClientSession() as http, http.post(
                    f"{url}/mcp", data=slow_body(), headers=mcp) as response:
                return response.status, await response.read()

        slow = asyncio.create_task(in_flight())
        signalled: list[float] = []
        outcomes: list[Outcome] = []
        clients = [asyncio.create_task(load(client, url, mcp, signalled, outcomes))
                   for client in range(CLIENTS)]
        await asyncio.sleep(0.5)  # under load, the slow call's headers read
        assert not any(c.done() for c in clients), [c.exception() for c in clients if c.done()]
        signalled.append(time.monotonic())  # first: a request sent now counts as after it
        process.send_signal(signal.SIGTERM)
        await asyncio.sleep(1.0)  # the drain waits for the slow call; the clients go on
        rest_of_body.set()
        status, answer = await asyncio.wait_for(slow, 10)
        code = await asyncio.wait_for(process.wait(), 10)
        stopped = time.monotonic() - signalled[0]
        await asyncio.wait_for(asyncio.gather(*clients), 10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    log = (await process.stderr.read()).decode()
    assert code == 0, log
    assert "Traceback" not in log, log
    assert stopped < 8, f"shutdown took {stopped:.1f}s"

    assert status == 200, answer
    assert json.loads(answer)["result"]["structuredContent"]["service"] == "shop/cart"

    for outcome in outcomes:
        outcome.sent -= signalled[0]  # seconds since SIGTERM (negative: before it)
    answered = [o for o in outcomes if o.status is not None]
    assert all(o.status in (200, 202, 503) for o in answered), \
        [(o.path, o.status, o.body[:200]) for o in answered if o.status not in (200, 202, 503)]
    for outcome in answered:
        json.loads(outcome.body)  # every body is JSON, whatever the status
    refused = [o for o in answered if o.status == 503]
    assert refused, "no request was refused after SIGTERM: the drain kept serving"
    for outcome in refused:
        error = json.loads(outcome.body)
        assert error["code"] == "INTERNAL_ERROR"
        assert "shutting down" in error["message"]
        assert outcome.connection == "close"
        assert outcome.sent > -0.1, outcome  # after the signal (or as it was sent)
    # Once the signal is in (a scheduling margin allowed), nothing new is served.
    late = [o for o in answered if o.sent > 0.5]
    assert all(o.status == 503 for o in late), [(o.path, o.sent, o.status) for o in late]


async def test_mcp_after_the_sessions_stopped_is_a_503_not_the_sdks_500(
        sim: SimServer, tmp_path: Path) -> None:
    """A request admitted just before shutdown can reach /mcp after the drain stopped the
    session manager, whose answer would be a 500 "Task group is not initialized"."""
    async with serving(sim, tmp_path) as served:
        mcp = await open_session(served.url)
        await served.http.end_sessions()  # as shutdown does after the drain
        async with aiohttp.ClientSession() as http, http.post(
                served.mcp_url, json=call(1), headers=mcp) as response:
            status, body = response.status, await response.read()
            connection = response.headers.get("Connection", "").lower()
    assert (status, connection) == (503, "close"), body
    assert json.loads(body)["code"] == "INTERNAL_ERROR"
