"""A list page is built and applied a slice at a time, with the event loop turning between
slices, and the next page is asked for before this one is applied.

A page of 1,000 pods is ~100 ms of CPU. Done in one piece, the next page's request (which
takes a few turns of the loop to be written out) would leave only once the page was applied,
so the API server would prepare it while netsight waited, and nothing else (probes, tools,
other informers) would run meanwhile.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from netsight.graph.ingest.api_responses import Response
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.discovery import WatchedKind
from netsight.graph.ingest.informers import LIST_SLICE, Informer, InformerSettings
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import Change, EventType, GraphStore, Source
from netsight.sim.apiserver import SimServer
from tests.watching.conftest import namespace, pod

pytestmark = pytest.mark.anyio

PODS = WatchedKind("", "v1", "Pod", "pods", True)
PAGE = 4 * LIST_SLICE


class CountingTransport:
    """The real transport, noting how many pods the graph held when each page was asked for."""

    def __init__(self, inner: KubeTransport, store: GraphStore) -> None:
        self.inner, self.store = inner, store
        self.pods_when_asked: list[int] = []

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Response:
        self.pods_when_asked.append(self.store.view().count(Kind.POD))
        return await self.inner.get(path, params, accept=accept)


async def test_the_loop_turns_while_a_page_is_applied(tmp_path: Path) -> None:
    async with SimServer() as sim:
        sim.state.apply([namespace("x"), *(pod(f"p{i:04}") for i in range(2 * PAGE + 10))])
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        store = GraphStore(source=Source.CLUSTER)
        informer = Informer(transport, store, PODS, InformerSettings(page_size=PAGE))
        ticks = 0
        ticks_at_add: list[int] = []

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        def on_change(change: Change) -> None:
            if change.type is EventType.ADDED:
                ticks_at_add.append(ticks)

        store.listeners.append(on_change)
        ticker = asyncio.create_task(tick())
        try:
            await informer.list_and_reconcile()
        finally:
            ticker.cancel()
            await transport.close()
    assert len(ticks_at_add) == 2 * PAGE + 10
    # Between the first and the last pod of a page, the loop turned once per slice applied.
    first_page = ticks_at_add[:PAGE]
    assert first_page[-1] - first_page[0] >= PAGE // LIST_SLICE - 1
    assert len(set(first_page)) == PAGE // LIST_SLICE


async def test_the_next_page_is_asked_for_before_this_one_is_applied(tmp_path: Path) -> None:
    async with SimServer() as sim:
        sim.state.apply([namespace("x"), *(pod(f"p{i:04}") for i in range(2 * PAGE + 10))])
        kube = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        store = GraphStore(source=Source.CLUSTER)
        transport = CountingTransport(kube, store)
        informer = Informer(transport, store, PODS, InformerSettings(page_size=PAGE))
        try:
            await informer.list_and_reconcile()
        finally:
            await kube.close()
    # Three pages: the second asked for before any pod of the first was in the graph, the
    # third once the first page was in and before the second was.
    assert transport.pods_when_asked == [0, 0, PAGE]
    assert store.view().count(Kind.POD) == 2 * PAGE + 10
