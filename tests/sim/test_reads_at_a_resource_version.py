"""Reads at a resourceVersion, as kube-apiserver serves them: a version the storage has not
reached is refused with 504 "Too large resource version" (at once on a paged read, which
goes to etcd; after waiting for the watch cache otherwise), an Exact one is served as it
was, and a storage restored to an older version accepts a watch from a newer one and says
nothing on it until it catches up."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import orjson
import pytest

from netsight.sim.apiserver import SimConfig, SimServer
from tests.sim.conftest import PODS, pod

pytestmark = pytest.mark.anyio



@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def get(sim: SimServer, path: str, **params: str) -> tuple[int, dict[str, str], Any]:
    async with aiohttp.ClientSession() as http, http.get(sim.url + path,
                                                         params=params) as response:
        return response.status, dict(response.headers), orjson.loads(await response.read())


def names(body: Any) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


async def test_a_paged_read_past_the_storage_is_refused_at_once() -> None:
    async with SimServer(config=SimConfig(too_large_wait=5)) as sim:
        sim.state.apply([pod("a")])
        ahead = str(sim.state.rv + 10)
        began = time.monotonic()
        status, headers, body = await get(sim, PODS, limit="1", resourceVersion=ahead,
                                          resourceVersionMatch="NotOlderThan")
        assert time.monotonic() - began < 2
        assert status == 504
        # What k8s.io/apiserver's storage.NewTooLargeResourceVersionError makes of it.
        assert body == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "reason": "Timeout", "code": 504,
            "message": f"Timeout: Too large resource version: {ahead}, "
                       f"current: {sim.state.rv}",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                                    "message": "Too large resource version"}]}}
        assert "Retry-After" not in headers


async def test_an_unpaged_read_waits_for_the_storage_then_asks_for_a_retry() -> None:
    async with SimServer(config=SimConfig(too_large_wait=0.3)) as sim:
        sim.state.apply([pod("a")])
        status, headers, body = await get(sim, PODS, resourceVersion=str(sim.state.rv + 1))
        assert status == 504
        assert body["details"]["retryAfterSeconds"] == 1
        assert headers["Retry-After"] == "1"
        # A write arriving while it waits makes the version exist: then it is served.
        wanted = str(sim.state.rv + 1)
        later = asyncio.get_running_loop().call_later(0.1, sim.state.apply, [pod("b")])
        status, _, body = await get(sim, PODS, resourceVersion=wanted)
        later.cancel()
        assert status == 200
        assert names(body) == ["a", "b"]
        assert int(body["metadata"]["resourceVersion"]) >= int(wanted)


async def test_an_exact_read_serves_the_objects_as_they_were() -> None:
    async with SimServer() as sim:
        state = sim.state
        state.apply([pod("a", v="1"), pod("b")])
        then = state.rv
        pods = state.registry.for_kind("v1", "Pod")
        assert pods is not None
        state.apply([pod("a", v="2"), pod("c")])
        state.delete(pods, "x", "b")
        for params in ({"resourceVersionMatch": "Exact"}, {"limit": "10"}):
            status, _, body = await get(sim, PODS, resourceVersion=str(then), **params)
            assert status == 200, body
            assert names(body) == ["a", "b"]
            assert body["items"][0]["metadata"]["labels"] == {"v": "1"}
            assert body["metadata"]["resourceVersion"] == str(then)
        status, _, body = await get(sim, PODS)
        assert names(body) == ["a", "c"]
        state.compact()
        status, _, body = await get(sim, PODS, resourceVersion=str(then),
                                    resourceVersionMatch="Exact")
        assert (status, body["reason"]) == (410, "Expired")


@pytest.mark.parametrize(("params", "status"), [
    ({"resourceVersionMatch": "NotOlderThan"}, 422),
    ({"resourceVersion": "0", "resourceVersionMatch": "Exact"}, 422),
    ({"resourceVersion": "1", "resourceVersionMatch": "Newest"}, 422),
    ({"resourceVersion": "one"}, 400),
])
async def test_list_options_the_api_server_refuses(params: dict[str, str], status: int
                                                   ) -> None:
    async with SimServer() as sim:
        got, _, body = await get(sim, PODS, **params)
        assert got == status, body


async def test_a_restored_storage_accepts_a_newer_watch_and_stays_silent_on_it() -> None:
    async with SimServer(config=SimConfig(bookmark_interval=0.05)) as sim:
        state = sim.state
        state.apply([pod("a")])
        backup = state.checkpoint()
        state.apply([pod("b"), pod("c")])
        newer = state.rv
        await sim.restart(backup)  # the API server comes back on the older storage
        assert state.rv < newer
        assert sorted(state.objects[("", "Pod")]) == ["x/a"]
        state.apply([pod("d")])  # a version number the old storage had used already
        async with aiohttp.ClientSession() as http:
            params = {"watch": "1", "resourceVersion": str(newer),
                      "allowWatchBookmarks": "true", "timeoutSeconds": "1"}
            async with http.get(sim.url + PODS, params=params) as response:
                assert response.status == 200
                assert await response.read() == b""  # nothing, not even a bookmark
            status, _, body = await get(sim, PODS, limit="1", resourceVersion=str(newer),
                                        resourceVersionMatch="NotOlderThan")
            assert (status, body["reason"]) == (504, "Timeout")
            while state.rv <= newer:
                state.apply([pod(f"p{state.rv}")])
            params["resourceVersion"] = str(newer)
            async with http.get(sim.url + PODS, params=params) as response:
                lines = [orjson.loads(line) for line in (await response.read()).splitlines()]
        # Past the watch's version: only the events after it, and bookmarks.
        assert [e["object"]["metadata"]["name"] for e in lines if e["type"] == "ADDED"] \
            == [f"p{newer}"]
        assert {e["type"] for e in lines} == {"ADDED", "BOOKMARK"}


async def test_reset_connections_breaks_an_open_watch() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        params = {"watch": "1", "resourceVersion": str(sim.state.rv), "timeoutSeconds": "5"}
        async with http.get(sim.url + PODS, params=params) as response:
            await asyncio.sleep(0.1)
            assert sim.reset_connections() >= 1
            with pytest.raises(aiohttp.ClientError):
                await response.read()


async def test_slow_bodies_arrive_a_piece_at_a_time() -> None:
    async with SimServer() as sim:
        sim.state.apply([pod(f"p{i:03}", filler="x" * 60) for i in range(300)])
        sim.state.faults.slow_body = 0.05
        began = time.monotonic()
        status, _, body = await get(sim, PODS)
        assert status == 200
        assert len(body["items"]) == 300
        assert time.monotonic() - began >= 0.1  # more than one piece, each after a wait
