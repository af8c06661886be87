"""With callers checked, what describes the whole cluster is only for callers who may see it:
``/metrics`` needs ``get`` on the non-resource URL ``/metrics`` (Prometheus' ClusterRole) or
a cluster-wide grant, and ``/readyz`` stays open but gives its per-kind counts and errors only
to a caller with a token for the whole cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from netsight.sim.apiserver import SimServer
from tests.server.authenticated import ADMIN, ALICE, bearer, grant_demo_callers, serving_with_auth
from tests.server.conftest import Served, serving

pytestmark = pytest.mark.anyio

PROMETHEUS = "prometheus-token-0123456789"  # get on /metrics only, no resources


@pytest.fixture
async def served(sim: SimServer, tmp_path: Path) -> Any:
    grant_demo_callers(sim)
    sim.access.add_token(PROMETHEUS, "system:serviceaccount:monitoring:prometheus")
    sim.access.allow(user="system:serviceaccount:monitoring:prometheus", verbs=["get"],
                     non_resource_urls=["/metrics"])
    async with serving_with_auth(sim, tmp_path) as running:
        yield running


async def get(url: str, token: str | None = None) -> tuple[int, bytes]:
    headers = bearer(token) if token is not None else {}
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        return response.status, await response.read()


async def test_metrics_need_a_cluster_wide_grant(served: Served) -> None:
    status, body = await get(f"{served.url}/metrics", ALICE)  # pods in shop only
    assert status == 403
    assert orjson.loads(body)["code"] == "AUTH_FAILED"
    assert b"netsight_graph_nodes" not in body

    for token in (PROMETHEUS, ADMIN):  # /metrics granted; pods listed everywhere
        status, body = await get(f"{served.url}/metrics", token)
        assert status == 200, token
        assert b"netsight_graph_nodes" in body


async def test_readyz_detail_only_for_callers_who_see_the_whole_cluster(
        served: Served) -> None:
    for token in (None, "not-a-token", ALICE, PROMETHEUS):
        status, body = await get(f"{served.url}/readyz", token)
        assert status == 200, token
        ready = orjson.loads(body)
        assert ready["ready"] is True
        assert ready["kinds"]["Pod"] == {"state": "synced"}, token

    status, body = await get(f"{served.url}/readyz", ADMIN)
    assert status == 200
    assert "events" in orjson.loads(body)["kinds"]["Pod"]


async def test_unchecked_callers_get_the_detail(sim: SimServer, tmp_path: Path) -> None:
    async with serving(sim, tmp_path) as running:  # loopback, no auth: nothing to hide from
        _, body = await get(f"{running.url}/readyz")
        assert "events" in orjson.loads(body)["kinds"]["Pod"]
        assert (await get(f"{running.url}/metrics"))[0] == 200
