"""A small simulated cluster holding the benchmark's questions, and a BenchContext on it
whose netsight answers come from netsight's own list path (``netsight call``'s snapshot of
every kind), for the measurement modules' tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from benchmarks.context import BenchContext, ProgressBar
from netsight.analyzers.core.calling import answer, to_json
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_snapshot import take_snapshot
from netsight.graph.store.live import GraphStore, Source
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.demo import load_demo
from tests.server.conftest import serving

QUESTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "reach": ("find_blocking_policies", {"source": "x/a", "destination": "y/b", "port": 80}),
    "no_endpoints": ("diagnose_service", {"service": "shop/cart"}),
}


def _pod(namespace: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": namespace, "name": name, "labels": {"app": name}},
            "spec": {"nodeName": "node-1", "containers": [
                {"name": "app", "image": f"demo/{name}:1",
                 "ports": [{"containerPort": 80, "name": "http"}]}]},
            "status": {"phase": "Running", "podIP": f"10.251.0.{len(namespace) + ord(name)}",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


# x/a -> y/b on 80: y isolates b's ingress and admits only app=c; a pod of another
# namespace (z) that the scoped lists of a pair question never read.
REACH_OBJECTS: list[dict[str, Any]] = [
    *({"apiVersion": "v1", "kind": "Namespace",
       "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}
      for name in ("x", "y", "z")),
    _pod("x", "a"), _pod("y", "b"), _pod("z", "c"),
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"namespace": "y", "name": "b-from-c"},
     "spec": {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
              "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "c"}}}],
                           "ports": [{"port": 80}]}]}},
]


class _Bar:
    def advance(self, steps: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def no_progress(phase: str, total: int | None) -> ProgressBar:
    return _Bar()


@contextlib.asynccontextmanager
async def benchmark_cluster(tmp_path: Path, *, serve_netsight: bool = False, repeats: int = 2,
                            work_dir: Path | None = None
                            ) -> AsyncIterator[tuple[SimServer, BenchContext]]:
    """The demo cluster plus the reach question's namespaces, served by the simulator; the
    context's netsight answers in process from one snapshot of every kind netsight reads,
    and over MCP (``serve_netsight``) from a netsight serving the simulator."""
    async with SimServer(config=SimConfig(bookmark_interval=0.1)) as sim, \
            contextlib.AsyncExitStack() as stack:
        controller = load_demo(sim.state)
        sim.state.apply(REACH_OBJECTS)
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
        netsight_mcp_url = ""
        if serve_netsight:
            served = await stack.enter_async_context(serving(sim, tmp_path))
            netsight_mcp_url = served.mcp_url
        store = GraphStore(source=Source.CLUSTER)
        transport = await KubeTransport.connect(str(kubeconfig))
        try:
            await take_snapshot(transport, store,
                                frozenset().union(*(t.metadata.reads for t in TOOLS.values())))
        finally:
            await transport.close()

        def analyze(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            return to_json(answer(TOOLS[tool], store.view(), args), detail=False)

        ctx = BenchContext(scale="test", pods=store.view().count("Pod"), api_url=sim.url,
                           kubeconfig=kubeconfig,
                           netsight_mcp_url=netsight_mcp_url, netsight_analyze=analyze,
                           questions=QUESTIONS, progress=no_progress, repeats=repeats,
                           work_dir=work_dir or tmp_path / "work")
        try:
            yield sim, ctx
        finally:
            controller.stop()
