"""A small cluster on the simulated API server, the probe runner talking to it through the
real client, and the simulator's own kubelet and data plane running its probe pods — or,
for the few tests that need an answer no data plane gives (a crashed probe's log, a probe
that never answers), the stand-in kubelet of ``tests/probes/kubelet.py``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.probes.runner import ProbeRunner, RunnerSettings
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.endpoint_slices import EndpointSliceController
from netsight.sim.kubelet import KubeletConfig
from netsight.sim.state import Event
from tests.probes.kubelet import StandInKubelet

PROBE_NAMESPACE = "netsight-probes"
IMAGE = "ghcr.io/example/netsight-probe:test"
PROBE_ID = "netsight.io/probe-id"


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


def service(namespace: str, name: str, selector: dict[str, str], port: int, *,
            ip: str = "10.96.0.20") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector, "clusterIP": ip,
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
class PodRecorder:
    """What the simulated kubelet did to probe pods, read from the simulator's events: each
    pod as first created, and each phase (and readiness) it reported, in order."""

    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    statuses: list[tuple[str, str]] = field(default_factory=list)  # (pod, phase) written
    ready: list[str] = field(default_factory=list)  # pods ever reported Ready

    def observe(self, event: Event) -> None:
        meta = event.new.get("metadata") or {}
        if event.storage != ("", "Pod") or PROBE_ID not in (meta.get("labels") or {}):
            return
        name = meta["name"]
        if event.type == "ADDED":
            self.seen[name] = event.new
            return
        status = event.new.get("status") or {}
        phase = status.get("phase")
        if event.type == "MODIFIED" and phase and phase not in (
                "Pending", (event.old or {}).get("status", {}).get("phase")):
            self.statuses.append((name, phase))
        if any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or ()):
            self.ready.append(name)


@dataclass
class Probing:
    sim: SimServer
    runner: ProbeRunner
    kubelet: PodRecorder | StandInKubelet

    def probe_pods(self) -> list[dict[str, Any]]:
        pods = self.sim.state.objects.get(("", "Pod"), {}).values()
        return [p for p in pods if PROBE_ID in (p["metadata"].get("labels") or {})]

    @property
    def recorder(self) -> PodRecorder:
        assert isinstance(self.kubelet, PodRecorder), "probing(..., stand_in=False)"
        return self.kubelet

    @property
    def stand_in(self) -> StandInKubelet:
        assert isinstance(self.kubelet, StandInKubelet), "probing(..., stand_in=True)"
        return self.kubelet


@contextlib.asynccontextmanager
async def probing(tmp_path: Path, *, stand_in: bool = False, **overrides: Any
                  ) -> AsyncIterator[Probing]:
    """The runner on :func:`cluster`, its probes run by the simulator's kubelet and data
    plane (``stand_in``: by the stand-in kubelet, whose answers the test sets)."""
    sim = SimServer(config=SimConfig(bookmark_interval=0.1),
                    kubelet=None if stand_in else KubeletConfig(start_delay=0.01))
    sim.state.apply(cluster())
    slices = EndpointSliceController(sim.state)
    slices.start()  # kube-proxy in the data plane reads EndpointSlices
    recorder = PodRecorder()
    sim.state.observers.append(recorder.observe)
    async with sim:
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        runner = ProbeRunner(transport, runner_settings(**overrides))
        try:
            async with contextlib.AsyncExitStack() as stack:
                kubelet: PodRecorder | StandInKubelet = recorder
                if stand_in:
                    kubelet = await stack.enter_async_context(
                        StandInKubelet(sim).running())
                await runner.start()
                try:
                    yield Probing(sim, runner, kubelet)
                finally:
                    await runner.stop()
        finally:
            slices.stop()
            await transport.close()


@pytest.fixture
async def probes(tmp_path: Path) -> AsyncIterator[Probing]:
    async with probing(tmp_path) as running:
        yield running
