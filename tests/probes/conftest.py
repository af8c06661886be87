"""A small cluster on the simulated API server, the probe runner talking to it through the
real client, and the stand-in kubelet answering its probe pods."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.probes.runner import ProbeRunner, RunnerSettings
from netsight.sim.apiserver import SimConfig, SimServer
from tests.probes.kubelet import StandInKubelet

PROBE_NAMESPACE = "netsight-probes"
IMAGE = "ghcr.io/example/netsight-probe:test"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def pod(namespace: str, name: str, labels: dict[str, str], *, ip: str,
        ports: tuple[int, ...] = (), annotations: dict[str, str] | None = None,
        service_account: str = "default", ready: bool = True,
        owner: tuple[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels,
                            "annotations": annotations or {}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0],
                                    "name": owner[1], "uid": f"uid-{owner[1]}",
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"serviceAccountName": service_account, "nodeName": "node-1",
                     "dnsPolicy": "ClusterFirst",
                     "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
                     "containers": [{"name": "main", "image": "app:1", "ports": [
                         {"containerPort": p, "protocol": "TCP"} for p in ports]}]},
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                       "conditions": [{"type": "Ready",
                                       "status": "True" if ready else "False"}]}}


def service(namespace: str, name: str, selector: dict[str, str], port: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector, "clusterIP": "10.96.0.20",
                     "ports": [{"port": port, "targetPort": port, "protocol": "TCP"}]}}


def deny_ingress(namespace: str, name: str, selector: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"podSelector": {"matchLabels": selector}, "policyTypes": ["Ingress"]}}


CLIENT_LABELS = {"app": "web", "tier": "front", "pod-template-hash": "5d9f7c",
                 "app.kubernetes.io/managed-by": "Helm"}


def cluster() -> list[dict[str, Any]]:
    """shop/web-1 (a Deployment's pod) calls data/db (a Service on port 5432)."""
    return [
        namespace("shop"), namespace("data"), namespace(PROBE_NAMESPACE),
        namespace("kube-system"),
        pod("shop", "web-1", CLIENT_LABELS, ip="10.244.1.10", service_account="web",
            annotations={"sidecar.istio.io/inject": "false", "team": "shop",
                         "sidecar.istio.io/status": "{}"},
            owner=("ReplicaSet", "web-5d9f7c")),
        pod("data", "db-0", {"app": "db", "statefulset.kubernetes.io/pod-name": "db-0",
                             "controller-revision-hash": "db-7"},
            ip="10.244.2.20", ports=(5432,), owner=("StatefulSet", "db")),
        service("data", "db", {"app": "db"}, 5432),
    ]


def runner_settings(**overrides: Any) -> RunnerSettings:
    values: dict[str, Any] = {"image": IMAGE, "namespace": PROBE_NAMESPACE, "timeout": 3.0,
                              "sweep_interval": 3600.0}
    values.update(overrides)
    return RunnerSettings(**values)


@dataclass
class Probing:
    sim: SimServer
    runner: ProbeRunner
    kubelet: StandInKubelet

    def probe_pods(self) -> list[dict[str, Any]]:
        pods = self.sim.state.objects.get(("", "Pod"), {}).values()
        return [p for p in pods if "netsight.io/probe-id" in (p["metadata"].get("labels") or {})]


@contextlib.asynccontextmanager
async def probing(tmp_path: Path, *, ephemeral: bool = False, **overrides: Any
                  ) -> AsyncIterator[Probing]:
    sim = SimServer(config=SimConfig(bookmark_interval=0.1))
    sim.state.apply(cluster())
    async with sim:
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        runner = ProbeRunner(transport, runner_settings(**overrides))
        kubelet = StandInKubelet(sim, ephemeral=ephemeral)
        try:
            async with kubelet.running():
                await runner.start()
                try:
                    yield Probing(sim, runner, kubelet)
                finally:
                    await runner.stop()
        finally:
            await transport.close()


@pytest.fixture
async def probes(tmp_path: Path) -> AsyncIterator[Probing]:
    async with probing(tmp_path) as running:
        yield running
