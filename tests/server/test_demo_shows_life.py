"""``--demo`` shows life: its churn reaches the change stream, and the findings stay the
deliberate faults; ``--demo-static`` stays still."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from netsight.server.app import build_service
from netsight.server.cluster import LiveGraph, live_graph
from netsight.server.config import ConfigError, Settings, load_settings
from netsight.server.running import HttpServer
from tests.server.conftest import eventually
from tests.server.test_demo_findings import findings, readme_faults

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def demo_served(churn_interval: float | None) -> AsyncIterator[tuple[LiveGraph, str]]:
    """``netsight serve --demo`` in-process, its churn stepping every ``churn_interval``."""
    settings = Settings(cluster_name="demo", demo=True, demo_churn_interval=churn_interval,
                        port=0, tool_timeout=5.0, shutdown_timeout=1.0)
    async with live_graph(settings) as graph:
        server = HttpServer(build_service(graph, settings), settings)
        url = await server.start()
        try:
            await eventually(lambda: graph.ready)
            yield graph, url
        finally:
            await server.stop()


async def changes(url: str, seconds: float) -> list[dict[str, Any]]:
    """The graph changes streamed during ``seconds`` from now."""
    events: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as http, http.get(url + "/api/graph/changes") as response:
        assert response.status == 200

        async def read() -> None:
            async for line in response.content:
                if line.startswith(b"data: "):
                    events.append(orjson.loads(line[6:]))

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(read(), seconds)
    return events


def test_demo_static_serves_the_demo_without_churn() -> None:
    assert load_settings({"demo_static": True}, {}).demo_churn_interval is None
    assert load_settings({"demo_static": True}, {}).demo
    assert load_settings({"demo": True}, {}).demo_churn_interval is not None
    with pytest.raises(ConfigError, match=r"^--demo-static: runs its own simulated cluster"):
        load_settings({"demo_static": True, "kubeconfig": "/tmp/k"}, {})


async def test_the_demo_churns_onto_the_change_stream_and_keeps_its_faults() -> None:
    async with demo_served(churn_interval=0.3) as (graph, url):
        seen = await changes(url, 3.0)  # ten steps: every kind of step, twice and more
        kinds = {event["key"].split("/", 1)[0] for event in seen}
        assert {"Pod", "EndpointSlice", "NetworkPolicy"} <= kinds, kinds
        # Between steps the findings are the deliberate faults again.
        await eventually(lambda: findings(graph.store.view()) == readme_faults(), timeout=5)


async def test_the_static_demo_stays_still() -> None:
    async with demo_served(churn_interval=None) as (_, url):
        assert await changes(url, 1.5) == []
