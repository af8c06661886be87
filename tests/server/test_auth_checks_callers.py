"""HTTP callers need a bearer token TokenReview accepts: 401 without one or with a bad one
(MCP and the graph API alike), the probes stay open, valid tokens are reviewed once a minute
rather than per request, a review netsight cannot make fails closed, and no token reaches
the logs. ``--auth none`` off loopback refuses to start without ``--insecure-no-auth``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import orjson
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from netsight.cli import EXIT_TOOL_ERROR, main
from netsight.server.auth import TOKEN_REVIEWS
from netsight.sim.access import SERVICE_ACCOUNT_TOKEN
from netsight.sim.apiserver import SimServer
from tests.server.authenticated import (
    ADMIN,
    ALICE,
    TOKENS,
    bearer,
    grant_demo_callers,
    mcp_client,
    serving_with_auth,
)
from tests.server.conftest import Served, structured

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
MCP_HEADERS = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}


@pytest.fixture
async def served(sim: SimServer, tmp_path: Path) -> Any:
    grant_demo_callers(sim)
    async with serving_with_auth(sim, tmp_path) as running:
        yield running


async def request(served: Served, method: str, path: str, headers: dict[str, str] | None = None,
                  body: Any = None) -> tuple[int, dict[str, str], bytes]:
    async with aiohttp.ClientSession() as http, http.request(
            method, served.url + path, headers=headers,
            data=None if body is None else orjson.dumps(body)) as response:
        headers = {k.lower(): v for k, v in response.headers.items()}
        return response.status, headers, await response.read()


def token_reviews(sim: SimServer) -> int:
    return sum(1 for method, path, _ in sim.api.request_log
               if method == "POST" and path == TOKEN_REVIEWS)


@pytest.mark.parametrize(("path", "method", "headers", "body"), [
    ("/api/graph", "GET", {}, None),
    ("/api/graph/changes", "GET", {}, None),
    ("/metrics", "GET", {}, None),
    ("/mcp", "POST", MCP_HEADERS, INITIALIZE),
])
async def test_no_token_or_a_bad_one_is_401(shared_auth: Served, path: str, method: str,
                                            headers: dict[str, str], body: Any) -> None:
    status, answer_headers, raw = await request(shared_auth, method, path, headers, body)
    assert status == 401
    assert answer_headers["www-authenticate"].startswith("Bearer")
    assert orjson.loads(raw)["code"] == "AUTH_FAILED"

    for authorization in ("Bearer not-a-token", f"Basic {ALICE}", "Bearer"):
        status, answer_headers, raw = await request(
            shared_auth, method, path, {**headers, "Authorization": authorization}, body)
        assert status == 401, authorization
        assert answer_headers["www-authenticate"].startswith("Bearer")
    _, answer_headers, _ = await request(
        shared_auth, method, path, {**headers, **bearer("not-a-token")}, body)
    assert 'error="invalid_token"' in answer_headers["www-authenticate"]


async def test_the_mcp_client_needs_a_token(shared_auth: Served) -> None:
    with pytest.raises(ExceptionGroup) as raised:  # the SDK's task groups wrap the 401
        async with httpx2.AsyncClient() as http, \
                Client(streamable_http_client(shared_auth.mcp_url, http_client=http),
                       mode="legacy") as client:
            await client.list_tools()
    assert raised.group_contains(MCPError)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_good_token_is_served(shared_auth: Served, mode: str) -> None:
    status, _, raw = await request(shared_auth, "GET", "/api/graph", bearer(ADMIN))
    assert status == 200
    assert orjson.loads(raw)["nodes"]
    async with mcp_client(shared_auth.mcp_url, ADMIN, mode) as client:
        cart = structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        assert cart["metadata"]["clusterName"] == "sim"


async def test_probes_stay_open(shared_auth: Served) -> None:
    assert (await request(shared_auth, "GET", "/healthz"))[0] == 200
    assert (await request(shared_auth, "GET", "/readyz"))[0] == 200


async def test_a_valid_token_is_reviewed_once_then_cached(served: Served) -> None:
    before = token_reviews(served.sim)
    for _ in range(3):
        assert (await request(served, "GET", "/api/graph?kind=Service", bearer(ALICE)))[0] == 200
    assert token_reviews(served.sim) == before + 1
    # Invalid tokens are not kept: a token that was just issued must work at once.
    for _ in range(2):
        assert (await request(served, "GET", "/api/graph", bearer("fresh-token")))[0] == 401
    served.sim.access.add_token("fresh-token", "fresh")
    assert (await request(served, "GET", "/api/graph", bearer("fresh-token")))[0] == 200


async def test_reviews_go_out_with_netsights_own_credentials(served: Served) -> None:
    # Without its service account token netsight cannot review, and then serves nobody: 503.
    served.sim.access.revoke(SERVICE_ACCOUNT_TOKEN)
    status, headers, raw = await request(served, "GET", "/api/graph", bearer(ALICE))
    assert status == 503
    assert headers["retry-after"]
    assert ALICE not in raw.decode()
    served.sim.access.reset()
    grant_demo_callers(served.sim)
    assert (await request(served, "GET", "/api/graph", bearer(ALICE)))[0] == 200


async def test_an_api_server_that_cannot_review_fails_closed(served: Served) -> None:
    served.sim.state.faults.fail(500, count=1, path_contains="tokenreviews")
    assert (await request(served, "GET", "/api/graph", bearer(ADMIN)))[0] == 503
    assert (await request(served, "GET", "/api/graph", bearer(ADMIN)))[0] == 200  # not cached


async def test_no_token_appears_in_the_logs(sim: SimServer, tmp_path: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    grant_demo_callers(sim)
    async with serving_with_auth(sim, tmp_path, log_level="DEBUG") as served:
        for token in (*TOKENS, "not-a-token"):
            await request(served, "GET", "/api/graph?kind=Namespace", bearer(token))
            await request(served, "GET", "/api/graph", {"Authorization": f"Basic {token}"})
        sim.state.faults.fail(500, count=1, path_contains="tokenreviews")
        await request(served, "GET", "/api/graph", bearer("after-a-fault"))
        async with mcp_client(served.mcp_url, ALICE) as client:
            await client.call_tool("list_services", {})
    text = caplog.text
    assert "rejected a request" in text  # the failures were logged ...
    assert "cannot check a bearer token" in text
    for token in (*TOKENS, "not-a-token", "after-a-fault", SERVICE_ACCOUNT_TOKEN):
        assert token not in text  # ... without the token


def test_auth_none_off_loopback_refuses_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--demo", "--auth", "none", "--host", "0.0.0.0", "--port", "0"])
    assert code == EXIT_TOOL_ERROR
    assert "--insecure-no-auth" in capsys.readouterr().err
