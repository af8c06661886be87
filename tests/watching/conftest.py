"""A simulated API server and the real informers talking to it over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.ingest.informers import InformerSettings
from netsight.graph.store.live import GraphStore, Source
from netsight.sim.apiserver import SimConfig, SimServer

# NETSIGHT_TEST_LIST_WORKER=1 runs these tests with a list worker (list_worker.py) started by
# every multi-page initial list (its pages are built here until it is ready); unset or 0,
# as by default on these small clusters, without one.
_WORKER = os.environ.get("NETSIGHT_TEST_LIST_WORKER") == "1"
FAST = InformerSettings(page_size=50, watch_timeout=(5, 6), inactivity_timeout=1.0,
                        forbidden_retry=0.3, backoff_base=0.02, backoff_cap=0.2,
                        list_worker=_WORKER, list_worker_min_objects=0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pod(name: str, namespace: str = "x", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            # crc32, not hash(): str hashes change per process, and two names drawing one
            # address made the pods one endpoint now and then.
            "status": {"podIP": f"10.0.0.{zlib.crc32(name.encode()) % 250 + 1}"}}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def service(name: str, namespace: str = "x", **selector: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector, "ports": [{"port": 80}]}}


@dataclass
class Cluster:
    sim: SimServer
    store: GraphStore
    watcher: ClusterWatcher
    transport: KubeTransport

    def kind_count(self, kind: str) -> int:
        return self.store.view().count(kind)


def crd(group: str, kind: str, plural: str, version: str = "v1",
        scope: str = "Namespaced") -> dict[str, Any]:
    """A CustomResourceDefinition serving one version of ``kind``."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "plural": plural},
                     "versions": [{"name": version, "served": True, "storage": True}]}}


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until ``check()`` holds; fail with the last state otherwise."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with SimServer(config=SimConfig(bookmark_interval=0.1)) as sim:
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
        transport = await KubeTransport.connect(str(kubeconfig))
        store = GraphStore(source=Source.CLUSTER, cluster_name="sim")
        watcher = ClusterWatcher(transport, store, FAST)
        try:
            yield Cluster(sim, store, watcher, transport)
        finally:
            await watcher.stop()
            await transport.close()
