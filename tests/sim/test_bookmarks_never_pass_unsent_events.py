"""A bookmark promises that every event up to its resourceVersion has been sent: a client
resumes from it. kube-apiserver's watch cache dispatches bookmarks in line with the events,
so one never overtakes an event still queued for the watch. Here the loop is held (a loaded
machine) while a bookmark's timer comes due and a write lands in the same turn of the loop:
the write's event must go out before any bookmark naming its version, and a watch that ends
meanwhile must not promise it."""

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


def hold_then_write(sim: SimServer, hold: float, write_at: float) -> None:
    """Hold the loop ``hold`` seconds from 0.05 s on, and relabel pod ``a`` ``write_at``
    seconds from now, inside the hold. A watch timer due in the hold before ``write_at``
    (its bookmark's, or its end's) fires first when the loop runs again (due timers run in
    time order), then the write queues its event, then the stream resumes."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    loop.call_at(now + 0.05, time.sleep, hold)
    loop.call_at(now + write_at, sim.state.apply, [pod("a", app="new")])


def version(line: dict[str, Any]) -> int:
    return int(line["object"]["metadata"]["resourceVersion"])


async def lines_of(response: aiohttp.ClientResponse) -> list[dict[str, Any]]:
    assert response.status == 200
    return [orjson.loads(line) for line in (await response.read()).splitlines()]


def watch_params(since: int, timeout: float) -> dict[str, str]:
    return {"watch": "1", "resourceVersion": str(since), "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout)}


async def test_a_bookmark_comes_after_the_events_it_covers() -> None:
    async with SimServer(config=SimConfig(bookmark_interval=0.2)) as sim, \
            aiohttp.ClientSession() as http:
        sim.state.apply([pod("a")])
        since = sim.state.rv
        async with http.get(sim.url + PODS, params=watch_params(since, 1.5)) as response:
            hold_then_write(sim, hold=0.5, write_at=0.4)
            lines = await lines_of(response)
        written = sim.state.rv
        assert [version(e) for e in lines if e["type"] == "MODIFIED"] == [written]
        promised = since
        for line in lines:
            if line["type"] == "BOOKMARK":
                promised = version(line)
            else:
                assert version(line) > promised, f"an event a bookmark passed: {lines}"


async def test_a_watch_resumed_from_its_last_version_misses_no_event() -> None:
    # The watch ends (its timeoutSeconds) in the turn of the loop where the write lands.
    async with SimServer(config=SimConfig(bookmark_interval=5)) as sim, \
            aiohttp.ClientSession() as http:
        sim.state.apply([pod("a")])
        since = sim.state.rv
        async with http.get(sim.url + PODS, params=watch_params(since, 0.5)) as response:
            hold_then_write(sim, hold=1.0, write_at=0.8)
            lines = await lines_of(response)
        # Resume as a client does, from the last version the stream named.
        last = max([since, *map(version, lines)])
        async with http.get(sim.url + PODS, params=watch_params(last, 0.3)) as response:
            lines += await lines_of(response)
        modified = [e["object"]["metadata"]["labels"] for e in lines if e["type"] == "MODIFIED"]
        assert modified == [{"app": "new"}], lines
