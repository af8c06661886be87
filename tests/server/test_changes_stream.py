"""/api/graph/changes: Server-Sent Events of the change ring, resumable by Last-Event-ID."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import aiohttp
import anyio
import pytest

from netsight.graph.store.live import EventType, GraphStore
from netsight.server import changes
from tests.server.conftest import Served, eventually

pytestmark = pytest.mark.anyio


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "labels": labels}}


async def next_event(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The next SSE event (comments and the retry hint skipped) as id/event/data."""
    fields: dict[str, Any] = {}
    with anyio.fail_after(10):
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if not line:
                if "event" in fields:
                    return fields
                continue
            name, _, value = line.partition(": ")
            if name in ("id", "event"):
                fields[name] = value
            elif name == "data":
                fields["data"] = json.loads(value)
    raise AssertionError("stream ended")


async def test_a_change_in_the_cluster_arrives_as_an_event(served: Served) -> None:
    url = f"{served.url}{changes.ENDPOINT}"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        served.sim.state.apply([pod("cart-7d9f-c", app="cart", version="v1")])
        event = await next_event(response)
    assert event["event"] == "change"
    data = event["data"]
    assert data["type"] == "ADDED"
    assert data["key"] == "Pod/shop/cart-7d9f-c"
    assert (data["kind"], data["namespace"], data["name"]) == ("Pod", "shop", "cart-7d9f-c")
    assert int(event["id"]) == data["generation"]
    # The cart Service selects version v1: the new pod is its first.
    assert {"source": "Service/shop/cart", "target": "Pod/shop/cart-7d9f-c",
            "type": "selects"} in data["links"]


async def test_a_reconnecting_client_resumes_after_its_last_event_id(served: Served) -> None:
    store = served.graph.store
    since = store.generation
    served.sim.state.apply([pod("a-1"), pod("a-2")])
    await eventually(lambda: store.view().exists("Pod/shop/a-2"))
    url = f"{served.url}{changes.ENDPOINT}"
    async with aiohttp.ClientSession() as http, http.get(
            url, headers={"Last-Event-ID": str(since)}) as response:
        first, second = await next_event(response), await next_event(response)
    assert [first["data"]["key"], second["data"]["key"]] == ["Pod/shop/a-1", "Pod/shop/a-2"]
    assert int(first["id"]) > since


async def test_a_bad_position_is_a_tool_error(served: Served) -> None:
    async with aiohttp.ClientSession() as http, http.get(
            f"{served.url}{changes.ENDPOINT}?since=yesterday") as response:
        assert response.status == 400
        error = await response.json()
    assert error["code"] == "INVALID_INPUT"
    assert error["tool"] == changes.ENDPOINT


async def test_a_client_behind_the_ring_is_told_to_refetch() -> None:
    store = GraphStore(changes=deque(maxlen=3))
    feed = changes.ChangeFeed(store)
    for i in range(5):
        store.apply(EventType.ADDED, pod(f"p-{i}"))
    events = changes.stream(feed, position=0)
    assert await anext(events) == b"retry: 2000\n\n"
    reset = (await anext(events)).decode()
    assert reset.startswith("event: reset\n")
    assert json.loads(reset.split("data: ", 1)[1])["generation"] == store.generation
    store.apply(EventType.ADDED, pod("p-5"))
    after = (await anext(events)).decode()
    assert after.startswith(f"id: {store.generation}\nevent: change\n")
    feed.close()
    assert [rest async for rest in events] == []


async def test_a_position_from_before_a_restart_is_told_to_refetch() -> None:
    """An EventSource resends its last id after netsight restarts; the new process counts
    generations from zero, so that id is ahead of it: reset, rather than wait for it."""
    store = GraphStore()
    feed = changes.ChangeFeed(store)
    store.apply(EventType.ADDED, pod("p-0"))
    events = changes.stream(feed, position=50_000)
    assert await anext(events) == b"retry: 2000\n\n"
    reset = (await anext(events)).decode()
    assert reset.startswith("event: reset\n")
    assert json.loads(reset.split("data: ", 1)[1])["generation"] == store.generation
    store.apply(EventType.ADDED, pod("p-1"))
    after = (await anext(events)).decode()
    assert after.startswith(f"id: {store.generation}\nevent: change\n")
    feed.close()
