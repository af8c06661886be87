"""A caller sees the namespaces it may list pods in, and nothing of the others: the graph
export, its change stream and every MCP answer come from a scoped view, and an object in a
hidden namespace is answered exactly as one that does not exist."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from netsight.server.auth import ACCESS_REVIEWS
from netsight.sim.apiserver import SimServer
from tests.server.authenticated import (
    ADMIN,
    ALICE,
    NOBODY,
    bearer,
    grant_demo_callers,
    mcp_client,
    serving_with_auth,
)
from tests.server.conftest import Served, announced_and_ready, error_json, structured

pytestmark = pytest.mark.anyio

HIDDEN = "payments"  # alice may list services there, but not pods: hidden all the same


@pytest.fixture
async def served(sim: SimServer, tmp_path: Path) -> Any:
    grant_demo_callers(sim)
    async with serving_with_auth(sim, tmp_path) as running:
        yield running


async def get(served: Served, path: str, token: str) -> tuple[int, dict[str, str], bytes]:
    async with aiohttp.ClientSession() as http, \
            http.get(served.url + path, headers=bearer(token)) as response:
        headers = {k.lower(): v for k, v in response.headers.items()}
        return response.status, headers, await response.read()


async def graph(served: Served, token: str, query: str = "") -> dict[str, Any]:
    status, _, raw = await get(served, f"/api/graph{query}", token)
    assert status == 200, raw
    data: dict[str, Any] = orjson.loads(raw)
    return data


async def test_the_graph_export_holds_only_the_callers_namespaces(shared_auth: Served) -> None:
    everything = await graph(shared_auth, ADMIN)
    assert {n["namespace"] for n in everything["nodes"]} >= {"shop", HIDDEN, "data", "edge"}

    mine = await graph(shared_auth, ALICE)
    assert {n["namespace"] for n in mine["nodes"]} == {"shop", None}
    assert {n["name"] for n in mine["nodes"] if n["kind"] == "Namespace"} == {"shop"}
    assert {n["kind"] for n in mine["nodes"] if n["namespace"] is None} >= {"IngressClass",
                                                                            "GatewayClass"}
    ids = {n["id"] for n in mine["nodes"]}
    assert all(link["source"] in ids and link["target"] in ids for link in mine["links"])
    _, _, raw = await get(shared_auth, "/api/graph", ALICE)
    assert HIDDEN.encode() not in raw

    nobody = await graph(shared_auth, NOBODY)
    assert {n["namespace"] for n in nobody["nodes"]} == {None}


async def test_a_hidden_namespace_exports_like_a_missing_one(shared_auth: Served) -> None:
    assert (await graph(shared_auth, ALICE, f"?namespace={HIDDEN}"))["nodes"] == []
    assert (await graph(shared_auth, ALICE, "?namespace=nowhere"))["nodes"] == []
    hidden = await get(shared_auth, f"/api/graph?around=Service/{HIDDEN}/web", ALICE)
    missing = await get(shared_auth, "/api/graph?around=Service/nowhere/web", ALICE)
    assert hidden[0] == missing[0] == 404
    assert hidden[2].replace(HIDDEN.encode(), b"nowhere") == missing[2]
    assert (await get(shared_auth, f"/api/graph?around=Service/{HIDDEN}/web", ADMIN))[0] == 200


async def test_each_scope_has_its_own_etag(shared_auth: Served) -> None:
    admin = (await get(shared_auth, "/api/graph", ADMIN))[1]["etag"]
    alice = (await get(shared_auth, "/api/graph", ALICE))[1]["etag"]
    assert admin != alice
    async with aiohttp.ClientSession() as http, http.get(
            shared_auth.url + "/api/graph", headers={**bearer(ALICE), "If-None-Match": admin}
            ) as response:
        assert response.status == 200


async def test_mcp_answers_hold_only_the_callers_namespaces(shared_auth: Served) -> None:
    async with mcp_client(shared_auth.mcp_url, ADMIN) as client:
        everything = structured(await client.call_tool("list_services", {"limit": 200}))
    assert HIDDEN in {s["service"].split("/")[0] for s in everything["services"]}

    async with mcp_client(shared_auth.mcp_url, ALICE, mode="auto") as client:
        mine = structured(await client.call_tool("list_services", {"limit": 200}))
        assert {s["service"].split("/")[0] for s in mine["services"]} == {"shop"}
        config = structured(await client.call_tool("analyze_config", {}))
        assert HIDDEN not in orjson.dumps(config).decode()


@pytest.mark.parametrize(("tool", "hidden", "missing"), [
    ("diagnose_service", {"service": f"{HIDDEN}/web"}, {"service": "nowhere/web"}),
    ("list_services", {"namespace": HIDDEN}, {"namespace": "nowhere"}),
    ("analyze_config", {"namespace": HIDDEN}, {"namespace": "nowhere"}),
])
async def test_a_hidden_object_is_not_found_like_a_missing_one(
        shared_auth: Served, tool: str, hidden: dict[str, Any], missing: dict[str, Any]) -> None:
    async with mcp_client(shared_auth.mcp_url, ALICE) as client:
        concealed = error_json(await client.call_tool(tool, hidden))
        absent = error_json(await client.call_tool(tool, missing))
    assert concealed["code"] == "NOT_FOUND"
    assert orjson.dumps(concealed).replace(HIDDEN.encode(), b"nowhere") == orjson.dumps(absent)
    async with mcp_client(shared_auth.mcp_url, ADMIN) as client:
        assert not (await client.call_tool(tool, hidden)).is_error


async def test_access_decisions_are_cached(served: Served) -> None:
    def reviews() -> int:
        return sum(1 for method, path, _ in served.sim.api.request_log
                   if method == "POST" and path == ACCESS_REVIEWS)

    await graph(served, ALICE)
    first = reviews()
    namespaces = 4  # shop, payments, data, edge: one review each, after the cluster-wide one
    assert first >= 1 + namespaces
    async with mcp_client(served.mcp_url, ALICE) as client:
        for _ in range(3):
            structured(await client.call_tool("list_services", {}))
    await graph(served, ALICE)
    assert reviews() == first
    await graph(served, ADMIN)
    assert reviews() == first + 1  # a cluster-wide grant: one review, whatever the namespaces


async def test_the_change_stream_skips_hidden_namespaces(served: Served) -> None:
    sim = served.sim
    pod_type = sim.state.registry.get("", "v1", "pods")
    assert pod_type is not None
    events: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as http, http.get(
            served.url + "/api/graph/changes", headers=bearer(ALICE)) as response:
        assert response.status == 200

        async def read() -> None:
            async for line in response.content:
                if line.startswith(b"data: "):
                    event = orjson.loads(line[6:])
                    events.append(event)
                    if event.get("name") == "late":
                        return

        reading = asyncio.create_task(read())
        await asyncio.sleep(0.2)
        for ns, name in ((HIDDEN, "secret"), ("shop", "late")):
            sim.state.create(pod_type, {"apiVersion": "v1", "kind": "Pod",
                                        "metadata": {"name": name, "namespace": ns},
                                        "spec": {"containers": [{"name": "c"}]}}, ns)
            await asyncio.sleep(0.1)  # the hidden one first, in an earlier batch
        await asyncio.wait_for(reading, 10)
    assert [e["key"] for e in events] == ["Pod/shop/late"]


async def test_netsight_serve_checks_and_scopes_callers(sim: SimServer, tmp_path: Path) -> None:
    """The command as deployed (``--auth tokenreview``), in its own process, against the
    simulator: 401 without a token, a filtered answer for a restricted caller."""
    grant_demo_callers(sim)
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "netsight.cli", "serve", "--kubeconfig", str(kubeconfig),
        "--auth", "tokenreview", "--port", "0", "--cluster-name", "sim",
        stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None
    try:
        url = await announced_and_ready(process)  # /readyz is open: no token
        async with aiohttp.ClientSession() as http, \
                http.get(f"{url}/api/graph") as response:
            assert response.status == 401
        async with mcp_client(f"{url}/mcp", ALICE) as client:
            mine = structured(await client.call_tool("list_services", {"limit": 200}))
        assert {s["service"].split("/")[0] for s in mine["services"]} == {"shop"}
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 10) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    log = (await process.stderr.read()).decode()
    assert "Traceback" not in log
    assert ALICE not in log
