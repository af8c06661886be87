"""A watch that goes silent after its server has sent it a line is stalled: the server owes
it a bookmark every interval. Within 1.5 intervals the kind is reported stale — in every
answer's ``metadata.stale`` and in ``/readyz`` — and stays so until a restarted watch
delivers again; a watch that has sent nothing yet may rightly be quiet for longer."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.ingest.api_responses import Stalled
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.ingest.watch_stream import stream_lines
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphStore, Source
from netsight.server.app import readiness
from netsight.server.cluster import LiveGraph
from netsight.sim.apiserver import SimConfig, SimServer
from tests.watching.conftest import FAST, Cluster, eventually, namespace, pod

pytestmark = pytest.mark.anyio

INTERVAL = 0.4  # the simulator's bookmark interval, and what the informers expect of it
# Before a watch's first line, the informers wait as long as they do by default.
SETTINGS = dataclasses.replace(FAST, inactivity_timeout=420.0, bookmark_interval=INTERVAL,
                               watch_timeout=(30, 40))


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with SimServer(config=SimConfig(bookmark_interval=INTERVAL)) as sim:
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        store = GraphStore(source=Source.CLUSTER)
        watcher = ClusterWatcher(transport, store, SETTINGS)
        try:
            yield Cluster(sim, store, watcher, transport)
        finally:
            await watcher.stop()
            await transport.close()


def readyz(cluster: Cluster) -> tuple[int, dict[str, Any]]:
    response = readiness(LiveGraph(cluster.store, watcher=cluster.watcher, started=True))
    return response.status_code, orjson.loads(bytes(response.body))


def stale_in_answers(cluster: Cluster) -> list[str]:
    answer = to_json(call_tool(cluster.store.view(), "list_services", {}), detail=False)
    return sorted(answer["metadata"].get("stale") or ())


async def test_a_stall_is_reported_within_the_bookmark_bound(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a"), pod("b")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    await asyncio.sleep(2 * INTERVAL)  # every watch has had a bookmark
    assert readyz(cluster)[0] == 200
    assert stale_in_answers(cluster) == []

    state.faults.stalled = True
    stalled_at = time.monotonic()
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    state.delete(pods, "x", "b")  # held back by the stalled stream
    await eventually(lambda: Kind.POD in stale_in_answers(cluster), timeout=10)
    # 1.5 intervals of silence, then the time to notice (and a loaded machine's slack).
    assert time.monotonic() - stalled_at < 1.5 * INTERVAL + 1.5
    status, body = readyz(cluster)
    assert status == 503
    assert body["kinds"][Kind.POD]["state"] == "retrying"
    assert "stalled" in body["kinds"][Kind.POD]["lastError"]
    assert cluster.store.view().exists("Pod/x/b")  # the graph lags, and says so

    # The watch is restarted, and stays suspect while the new one is silent too.
    opened = len(cluster.sim.api.watch_log)
    for _ in range(40):
        assert Kind.POD in stale_in_answers(cluster)
        assert readyz(cluster)[0] == 503
        await asyncio.sleep(0.05)
    assert len(cluster.sim.api.watch_log) > opened

    state.faults.stalled = False
    await eventually(lambda: not cluster.store.view().exists("Pod/x/b"), timeout=5)
    await eventually(lambda: stale_in_answers(cluster) == [] and readyz(cluster)[0] == 200)
    assert cluster.store.sync[Kind.POD].relists == 0, "resumed, not re-listed"


@contextlib.asynccontextmanager
async def serving(lines: list[tuple[float, bytes]]) -> AsyncIterator[str]:
    """A chunked HTTP answer writing each line after its delay, then silent but open."""
    done = asyncio.Event()

    async def send(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for delay, line in lines:
            await asyncio.sleep(delay)
            await response.write(line)
        await done.wait()
        return response

    app = web.Application()
    app.router.add_get("/watch", send)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/watch"
    finally:
        done.set()
        await runner.cleanup()


async def _read(url: str, inactivity: float, stall: float,
                on_line: Callable[[bytes], None] = lambda line: None) -> float:
    """Seconds until stream_lines gives up on the stream at ``url``."""
    async def consume(response: aiohttp.ClientResponse) -> None:
        async for line in stream_lines(response, inactivity, stall):
            on_line(line)

    began = time.monotonic()
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        with pytest.raises(Stalled):
            await consume(response)
    return time.monotonic() - began


async def test_a_watch_without_a_line_yet_gets_the_longer_bound() -> None:
    # Quiet for 0.6 s (longer than the stall bound), then silent for good after a line.
    async with serving([(0.6, b'{"type":"BOOKMARK"}\n')]) as url:
        took = await _read(url, inactivity=1.0, stall=0.2)
    assert 0.75 <= took < 1.5


async def test_a_held_loop_is_not_taken_for_a_silent_server() -> None:
    seen: list[bytes] = []

    def hold(line: bytes) -> None:
        seen.append(line)
        if len(seen) == 1:  # while the next read waits, something holds the loop too long
            asyncio.get_running_loop().call_later(0.05, time.sleep, 0.5)

    async with serving([(0, b"{}\n"), (0.1, b"{}\n"), (0.1, b"{}\n")]) as url:
        await _read(url, inactivity=5.0, stall=0.2, on_line=hold)
    assert len(seen) == 3, "a line sent while the loop was held was taken for a stall"
