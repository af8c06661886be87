"""The list worker (list_worker.py) changes where list pages are built, never the graph.

A synthetic cluster (pods of many templates, their services and EndpointSlices, policies)
plus objects the typed path refuses is listed once with the worker and once without; the
graphs, the problems and the sharing of label maps must be the same. A worker that dies
before or during the list leaves the informer to build the pages itself.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from netsight.graph.ingest.api_responses import Response, Transport
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.ingest.discovery import CORE_KINDS, NEVER_WATCHED, discover
from netsight.graph.ingest.informers import Informer, InformerSettings
from netsight.graph.ingest.list_worker import PageWorker, usable_cpus
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import PodRecord
from netsight.graph.store.live import GraphStore, Source
from netsight.sim.apiserver import SimServer
from netsight.sim.synthetic import generate
from tests.watching.conftest import FAST, namespace, pod

pytestmark = pytest.mark.anyio

SETTINGS = InformerSettings(page_size=50)


def _objects() -> list[dict[str, Any]]:
    objects = list(generate(pods=400, seed=3, policies_per_namespace=2).objects())
    bad_port = pod("bad-port", "x", app="web")
    bad_port["spec"] = {"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]}
    odd = pod("odd-ready", "x", app="web")
    odd["status"]["conditions"] = [{"type": "Ready", "status": 1}]
    return [*objects, namespace("x"), bad_port, odd, pod("plain", "x")]


def _graph_of(store: GraphStore) -> tuple[Any, ...]:
    graph = store.state.graph
    records = {k: d["record"] for k, d in graph.nodes(data=True)}
    pod_label_maps = {id(r.labels) for r in records.values() if isinstance(r, PodRecord)}
    return (records, {(u, v): rels for u, v, rels in store.state.edges()},
            dict(store.problems), len(pod_label_maps))


async def _list_all(transport: Transport, worker: PageWorker | None,
                    settings: InformerSettings = SETTINGS) -> GraphStore:
    """List every core kind, one informer after the other, into a new graph."""
    store = GraphStore(source=Source.CLUSTER)
    store.state.never_arrive(NEVER_WATCHED)
    for kind in await discover(transport):
        if (kind.group, kind.kind) in CORE_KINDS:
            await Informer(transport, store, kind, settings, worker=worker
                           ).list_and_reconcile()
    return store


ListWith = Callable[[KubeTransport, PageWorker], Awaitable[GraphStore]]


async def _alone_and_helped(tmp_path: Path, helped_list: ListWith
                            ) -> tuple[GraphStore, GraphStore, PageWorker]:
    """The cluster listed without a worker, then by ``helped_list`` with a ready one."""
    async with SimServer() as sim:
        sim.state.apply(_objects())
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        worker = PageWorker()
        try:
            alone = await _list_all(transport, None)
            await worker.start()
            assert await worker.wait_ready()
            helped = await helped_list(transport, worker)
        finally:
            await worker.close()  # kills it: a stopped process does not read its input
            await transport.close()
    return alone, helped, worker


async def test_pages_built_by_the_worker_make_the_graph_pages_built_here_make(
        tmp_path: Path) -> None:
    alone, helped, worker = await _alone_and_helped(tmp_path, _list_all)
    assert worker.pages > 0  # the worker built pages (the pods with odd values it did not)
    assert alone.view().count(Kind.POD) >= 400
    assert any("bad-port" in key for key in helped.problems)  # reported the checked way
    assert _graph_of(helped) == _graph_of(alone)


class KillingTransport:
    """The real transport; kills the worker process when request ``at`` is made."""

    def __init__(self, inner: KubeTransport, worker: PageWorker, at: int) -> None:
        self.inner, self.worker, self.at, self.asked = inner, worker, at, 0

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Response:
        self.asked += 1
        if self.asked == self.at:
            os.kill(self.worker.pid, signal.SIGKILL)
        return await self.inner.get(path, params, accept=accept)


@pytest.mark.parametrize("killed_at_request", [1, 8])
async def test_a_dead_worker_leaves_the_pages_to_the_informer(
        tmp_path: Path, killed_at_request: int) -> None:
    alone, helped, worker = await _alone_and_helped(
        tmp_path, lambda transport, worker: _list_all(
            KillingTransport(transport, worker, killed_at_request), worker))
    assert worker.failed is not None
    assert "ended" in worker.failed
    assert _graph_of(helped) == _graph_of(alone)


async def test_a_stuck_worker_is_given_up_and_its_pages_built_here(tmp_path: Path) -> None:
    async def stopped(transport: KubeTransport, worker: PageWorker) -> GraphStore:
        os.kill(worker.pid, signal.SIGSTOP)  # alive, never answering
        # Two pages of pods, both sent to the worker: the end of the list waits.
        return await _list_all(transport, worker, InformerSettings(page_size=250))

    alone, helped, worker = await _alone_and_helped(tmp_path, stopped)
    assert worker.failed is not None
    assert "no answer" in worker.failed
    assert worker.pages == 0
    assert _graph_of(helped) == _graph_of(alone)


async def _sync(sim: SimServer, tmp_path: Path, settings: InformerSettings
                ) -> tuple[GraphStore, ClusterWatcher, list[PageWorker | None]]:
    transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
    store = GraphStore(source=Source.CLUSTER)
    watcher = ClusterWatcher(transport, store, settings)
    try:
        await watcher.start()
        assert await watcher.wait_synced(30)
        await watcher.list_worker_done()
        return store, watcher, [i.worker for i, _ in watcher.informers.values()]
    finally:
        await watcher.stop()
        await transport.close()


@pytest.mark.parametrize("min_objects", [0, 10_000])
async def test_a_large_list_starts_the_worker_and_the_synced_watcher_stops_it(
        tmp_path: Path, min_objects: int) -> None:
    settings = InformerSettings(page_size=FAST.page_size, refreeze_interval=0)
    async with SimServer() as sim:
        sim.state.apply(_objects())
        alone, _, _ = await _sync(sim, tmp_path, settings)
        helped, watcher, workers = await _sync(sim, tmp_path, InformerSettings(
            page_size=FAST.page_size, refreeze_interval=0, list_worker=True,
            list_worker_min_objects=min_objects))
    # 400 pods in pages of 50: more than 0 objects follow the first page, not 10,000.
    assert watcher.list_worker_started is (min_objects == 0)
    assert workers == [None] * len(workers)  # the informers' re-lists build pages here
    assert _graph_of(helped) == _graph_of(alone)


def test_by_default_the_worker_is_used_when_two_cpus_are_usable() -> None:
    assert InformerSettings().use_list_worker is (usable_cpus() >= 2)
    assert InformerSettings(list_worker=True).use_list_worker is True
    assert InformerSettings(list_worker=False).use_list_worker is False


@pytest.mark.parametrize(("files", "cap"), [
    ({"cpu.max": "50000 100000\n"}, 1),  # limits.cpu: 500m
    ({"cpu.max": "150000 100000\n"}, 1),
    ({"cpu.max": "200000 100000\n"}, 2),
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),
])
def test_a_cgroup_cpu_quota_caps_the_usable_cpus(tmp_path: Path, files: dict[str, str],
                                                  cap: int | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    cpus = len(os.sched_getaffinity(0))
    assert usable_cpus(tmp_path) == (cpus if cap is None else min(cpus, cap))


async def test_the_worker_retires_once_pods_synced_while_another_kind_keeps_failing(
        tmp_path: Path) -> None:
    settings = InformerSettings(page_size=FAST.page_size, refreeze_interval=0,
                                backoff_base=0.01, backoff_cap=0.05, list_worker=True,
                                list_worker_min_objects=0)
    async with SimServer() as sim:
        sim.state.apply(_objects())
        sim.state.faults.fail(503, 10**9, path_contains="networkpolicies")
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        watcher = ClusterWatcher(transport, GraphStore(source=Source.CLUSTER), settings)
        try:
            await watcher.start()
            await asyncio.wait_for(watcher.list_worker_done(), 30)
            informers = {i.kind.kind: i for i, _ in watcher.informers.values()}
            assert informers["Pod"].synced.is_set()
            assert not informers["NetworkPolicy"].synced.is_set()  # still retrying
        finally:
            await watcher.stop()
            await transport.close()
    assert watcher.list_worker_started
    assert all(i.worker is None for i in informers.values())
