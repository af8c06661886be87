"""events.k8s.io Events reach the event ring through their watch: Warnings about anything and
Normal events about anything but Pods are asked for with field selectors, the rest is
filtered at ingest, and a recurring Event holds one slot whose count grows. In NAMESPACE
mode each watched namespace is watched on its own."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.sim.recorder import EventRecorder
from tests.watching.conftest import FAST, Cluster, eventually, namespace, pod, service

pytestmark = pytest.mark.anyio


def deployment(name: str, namespace_: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace_}}


def held(cluster: Cluster) -> set[tuple[str, str, str, int]]:
    return {(e.object_ref, e.type, e.reason, e.count) for e in cluster.store.view().events()}


async def test_networking_events_are_kept_and_series_update_in_place(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("shop"), namespace("other"), service("web", "shop", app="web"),
                 pod("web-1", "shop", app="web"), deployment("web", "shop")])
    objects = state.objects
    web = objects[("", "Service")]["shop/web"]
    web_pod = objects[("", "Pod")]["shop/web-1"]
    kubelet = EventRecorder(state, "kubelet")
    controller = EventRecorder(state, "endpointslice-controller.k8s.io")
    kubelet.record(web_pod, "Normal", "Scheduled", "assigned to node-1", "Binding")
    kubelet.record(web_pod, "Warning", "BackOff", "Back-off restarting failed container",
                   "Restarting")
    controller.record(web, "Warning", "FailedToUpdateEndpointSlices", "quota", "Reconcile")
    EventRecorder(state, "deployment-controller").record(
        objects[("apps", "Deployment")]["shop/web"], "Normal", "ScalingReplicaSet",
        "Scaled up", "Scaling")
    try:
        await cluster.watcher.start()
        assert await cluster.watcher.wait_synced(10)
        await eventually(lambda: len(held(cluster)) == 2)
        assert held(cluster) == {("Pod/shop/web-1", "Warning", "BackOff", 1),
                                 ("Service/shop/web", "Warning",
                                  "FailedToUpdateEndpointSlices", 1)}
        # The Pod's Normal events never crossed the wire: the field selectors left them out.
        selectors = {query.get("fieldSelector") for _, path, query in
                     cluster.sim.api.request_log if path.startswith("/apis/events.k8s.io/")}
        assert selectors == {"type=Warning", "type=Normal,regarding.kind!=Pod"}
        assert cluster.store.view().events_unknown() is None
        generation = cluster.store.generation
        # The same again: its series grows, the ring holds one entry with the new count.
        kubelet.record(web_pod, "Warning", "BackOff", "Back-off restarting failed container",
                       "Restarting")
        await eventually(lambda: ("Pod/shop/web-1", "Warning", "BackOff", 2) in held(cluster))
        assert len(held(cluster)) == 2
        assert cluster.store.generation == generation  # events are not graph changes
    finally:
        await cluster.watcher.stop()


async def test_each_watched_namespace_is_watched_on_its_own(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("shop"), namespace("other"), service("web", "shop"),
                 service("web", "other")])
    recorder = EventRecorder(state, "service-controller")
    for ns in ("shop", "other"):
        recorder.record(state.objects[("", "Service")][f"{ns}/web"], "Warning",
                        "SyncLoadBalancerFailed", "no cloud provider", "Sync")
    watcher = ClusterWatcher(cluster.transport, cluster.store, dataclasses.replace(FAST),
                             namespaces=("shop",))
    try:
        await watcher.start()
        await eventually(lambda: bool(held(cluster)))
        assert held(cluster) == {("Service/shop/web", "Warning", "SyncLoadBalancerFailed", 1)}
        paths = {path for _, path, _ in cluster.sim.api.request_log
                 if path.startswith("/apis/events.k8s.io/")}
        assert paths == {"/apis/events.k8s.io/v1/namespaces/shop/events"}
    finally:
        await watcher.stop()
