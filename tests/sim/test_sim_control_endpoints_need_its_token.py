"""The simulator's control endpoints (``/sim/``: faults, the access policy, state, churn)
answer only the holder of its control token, made at random when it starts; the demo that
``netsight serve --demo`` runs does not serve them at all; ``netsight sim`` hands the token
to its user alone."""

from __future__ import annotations

import asyncio
import re
import stat
import sys
from pathlib import Path

import aiohttp
import pytest

from netsight.sim.apiserver import SimServer
from netsight.sim.demo import demo_cluster
from netsight.sim.remote_churn import ChurnController

pytestmark = pytest.mark.anyio

CONTROL = [("POST", "/sim/faults", {"latency": 0.5}),
           ("POST", "/sim/access", {"tokens": {"mine": {"username": "eve",
                                                         "groups": ["system:masters"]}}}),
           ("GET", "/sim/state", None),
           ("GET", "/sim/churn", None)]  # added after the server was made


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def status_of(url: str, method: str, body: object, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with aiohttp.ClientSession() as http, http.request(
            method, url, json=body, headers=headers) as response:
        return response.status


async def test_control_needs_the_token_made_at_start() -> None:
    async with SimServer() as sim:
        sim.api.app.router.routes.extend(ChurnController(sim.state).routes())
        token = sim.control_token
        assert token is not None
        assert len(token) >= 32
        assert token != SimServer().control_token  # random, per server
        for method, path, body in CONTROL:
            for wrong in (None, "", "sim-token", token[:-1]):
                assert await status_of(sim.url + path, method, body, wrong) == 401, (path, wrong)
        assert sim.state.faults.latency == 0
        assert sim.access.authenticate("mine") is None
        for method, path, body in CONTROL:
            assert await status_of(sim.url + path, method, body, token) == 200, path
        assert sim.state.faults.latency == 0.5
        assert sim.access.authenticate("mine") is not None


async def test_the_demo_serves_no_control_endpoints() -> None:
    async with demo_cluster() as demo:
        for method, path, body in CONTROL:
            assert await status_of(demo.url + path, method, body, None) == 404, path
        assert await status_of(demo.url + "/api/v1/namespaces/shop/services/cart", "GET",
                               None, None) == 200


async def test_netsight_sim_writes_its_token_for_its_user_only(tmp_path: Path) -> None:
    token_file = tmp_path / "control-token"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "netsight.cli", "sim", "--port", "0",
        "--control-token-file", str(token_file), stdout=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        match = re.search(r"at (http://\S+) ", line)
        assert match, line
        url = match.group(1)
        token = token_file.read_text().strip()
        assert token not in line  # in the file, not on the terminal
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert await status_of(url + "/sim/faults", "POST", {}, None) == 401
        assert await status_of(url + "/sim/faults", "POST", {}, token) == 200
    finally:
        process.terminate()
        await process.wait()
