"""/api/graph: node-link JSON of the live graph, its filters, ETag/304; /readyz and /healthz."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import networkx as nx
import pytest

from netsight.graph.store.sync_status import SyncState
from netsight.sim.apiserver import SimServer
from tests.server.conftest import Served, eventually, serving

pytestmark = pytest.mark.anyio


async def get(url: str, headers: dict[str, str] | None = None
              ) -> tuple[int, Mapping[str, str], Any]:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        body = await response.read()
        return response.status, response.headers, json.loads(body) if body else None


async def test_the_whole_graph_is_node_link_json(shared: Served) -> None:
    status, headers, data = await get(f"{shared.url}/api/graph")
    assert status == 200
    view = shared.graph.store.view()
    assert len(data["nodes"]) == view.node_count
    assert len({(link["source"], link["target"]) for link in data["links"]}) == view.edge_count
    assert data["graph"]["generation"] == shared.graph.store.generation
    assert headers["ETag"].endswith(f'.{data["graph"]["generation"]}"')
    graph = nx.node_link_graph(data, edges="links")
    assert graph.nodes["Service/shop/cart"]["kind"] == "Service"
    assert graph.nodes["Service/shop/cart"]["namespace"] == "shop"
    assert graph.nodes["Namespace/shop"]["namespace"] is None
    assert graph.has_edge("Service/shop/frontend", "Pod/shop/frontend-6f7c-a", key="selects")
    assert graph.has_edge("Namespace/shop", "Service/shop/cart", key="contains")


async def test_filters_select_a_namespace_kinds_or_a_neighbourhood(shared: Served) -> None:
    _, _, shop = await get(f"{shared.url}/api/graph?namespace=shop")
    assert {n["namespace"] for n in shop["nodes"]} == {"shop"}
    assert {"Service/shop/cart", "Pod/shop/cart-7d9f-a"} <= {n["id"] for n in shop["nodes"]}

    _, _, kinds = await get(f"{shared.url}/api/graph?namespace=shop&kind=Service,Pod")
    assert {n["kind"] for n in kinds["nodes"]} == {"Service", "Pod"}
    assert {link["type"] for link in kinds["links"]} == {"selects"}

    _, _, around = await get(f"{shared.url}/api/graph?around=Service/shop/frontend&depth=1")
    ids = {n["id"] for n in around["nodes"]}
    # The demo's HTTPRoute edge/storefront sends to shop/frontend (a backendRef).
    assert ids == {"Service/shop/frontend", "Pod/shop/frontend-6f7c-a", "Namespace/shop",
                   "HTTPRoute/edge/storefront"} \
        | {i for i in ids if i.startswith("EndpointSlice/")}
    assert all(link["source"] in ids and link["target"] in ids for link in around["links"])

    _, _, zero = await get(f"{shared.url}/api/graph?around=Service/shop/frontend&depth=0")
    assert [n["id"] for n in zero["nodes"]] == ["Service/shop/frontend"]


BAD_FILTERS = [
    ("kind=Pods", 400, "INVALID_INPUT", "did you mean 'Pod'"),
    ("namespace=Shop_1", 400, "INVALID_INPUT", "not a namespace name"),
    ("around=Service/shop/frontend&depth=9", 400, "INVALID_INPUT", "depth: a whole number"),
    ("depth=2", 400, "INVALID_INPUT", "only meaningful with around"),
    ("around=frontend", 400, "INVALID_INPUT", "'Kind/namespace/name'"),
    ("around=Service/shop/nope", 404, "NOT_FOUND", "no object"),
    ("colour=red", 400, "INVALID_INPUT", "unknown parameter 'colour'"),
]


async def test_a_bad_filter_is_answered_with_a_tool_error(shared: Served) -> None:
    for query, status, code, says in BAD_FILTERS:
        got, _, error = await get(f"{shared.url}/api/graph?{query}")
        assert (got, error["code"], error["tool"]) == (status, code, "/api/graph"), query
        assert says in error["message"], query


async def test_etag_is_the_generation_and_if_none_match_saves_the_body(served: Served) -> None:
    url = f"{served.url}/api/graph?namespace=data"
    _, headers, _ = await get(url)
    tag = headers["ETag"]
    status, again, body = await get(url, {"If-None-Match": tag})
    assert status == 304
    assert body is None
    assert again["ETag"] == tag

    generation = served.graph.store.generation
    served.sim.state.apply([{"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": "psql-client", "namespace": "data"}}])
    await eventually(lambda: served.graph.store.generation > generation)
    status, changed, data = await get(url, {"If-None-Match": tag})
    assert status == 200
    assert changed["ETag"] != tag
    assert "Pod/data/psql-client" in {n["id"] for n in data["nodes"]}


async def test_readyz_is_503_with_per_kind_detail_until_every_informer_synced(
        sim: SimServer, tmp_path: Path) -> None:
    sim.state.faults.fail(500, count=10_000, path_contains="/pods")
    async with serving(sim, tmp_path, wait_ready=False) as running:
        status, _, health = await get(f"{running.url}/healthz")
        assert (status, health) == (200, {"status": "ok"})

        await eventually(lambda: running.graph.started)
        sync = running.graph.store.sync

        def pods_failing_and_services_synced() -> bool:
            # The informers list concurrently: on a loaded machine Pods may fail before
            # Services have finished listing, so wait for both states the answer shows.
            pods, services = sync.get("Pod"), sync.get("Service")
            return (pods is not None and pods.last_error is not None
                    and services is not None and services.state is SyncState.SYNCED)

        await eventually(pods_failing_and_services_synced)
        status, _, body = await get(f"{running.url}/readyz")
        assert status == 503
        assert body["ready"] is False
        assert body["kinds"]["Pod"]["state"] == "retrying"
        assert "500" in body["kinds"]["Pod"]["lastError"]
        assert body["kinds"]["Service"]["state"] == "synced"

        sim.state.faults.failures.clear()
        await eventually(lambda: running.graph.ready)
        status, _, body = await get(f"{running.url}/readyz")
    assert status == 200
    assert body["ready"] is True
    assert {entry["state"] for entry in body["kinds"].values()} == {"synced"}
