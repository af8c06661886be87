"""``netsight serve --demo`` as a user runs it: one command, then a clean stop on SIGTERM
even with an MCP session and a change stream open."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from mcp import Client

from netsight.sim.apiserver import SimServer
from netsight.sim.scenarios import demo
from tests.server.conftest import announced_and_ready, error_json, structured

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


async def test_serve_namespaces_with_a_role_only_token_answers_within_them(
        tmp_path: Path) -> None:
    """``netsight serve --namespaces`` against an API server that enforces RBAC, with a
    token that may read two namespaces only: it gets ready, answers about them over MCP
    with metadata.scope, and refuses a namespace it does not watch."""
    team = "system:serviceaccount:shop:netsight"
    async with SimServer() as sim:
        sim.state.apply(demo())
        sim.access.add_token("team-token", team)
        sim.access.allow(user=team, verbs=("get", "list", "watch"), resources=("*",),
                         namespaces=("shop", "data"))
        sim.access.enforce = True
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig", token="team-token")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "netsight.cli", "serve", "--kubeconfig", str(kubeconfig),
            "--port", "0", "--namespaces", "shop", "--namespace", "data",
            stderr=asyncio.subprocess.PIPE)
        try:
            url = await announced_and_ready(process)
            async with Client(f"{url}/mcp", mode="legacy") as client:
                cart = structured(await client.call_tool("diagnose_service",
                                                         {"service": "shop/cart"}))
                refused = await client.call_tool("diagnose_service",
                                                 {"service": "edge/storefront"})
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{url}/api/graph", params={"namespace": "edge"}) as got:
                    unwatched = (got.status, await got.json())
                async with http.get(f"{url}/api/graph", params={"namespace": "shop"}) as got:
                    shop = await got.json()
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 10)
        log = (await process.stderr.read()).decode() if process.stderr else ""
    assert cart["status"] == "critical"
    assert cart["metadata"]["scope"]["namespaces"] == ["data", "shop"]
    # IngressClasses may not be read; the two Namespaces are got one by one.
    assert "IngressClass" in cart["metadata"]["scope"]["notVisible"]
    assert "Namespace" not in cart["metadata"]["scope"]["notVisible"]
    error = error_json(refused)
    assert error["code"] == "INVALID_INPUT"
    assert error["message"].startswith("service: namespace 'edge' is not watched")
    assert "watching only namespaces data, shop" in log
    # The graph export refuses it too: unknown there is not empty.
    assert unwatched[0] == 400
    assert unwatched[1]["code"] == "INVALID_INPUT"
    assert unwatched[1]["message"].startswith("namespace: namespace 'edge' is not watched")
    assert any(node["id"] == "Service/shop/cart" for node in shop["nodes"])
    assert not any(d.namespace not in ("", "shop", "data") for d in sim.access.decisions
                   if d.user == team)
