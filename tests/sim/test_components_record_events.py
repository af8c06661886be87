"""The simulated components record Events as theirs do, readable through events.k8s.io/v1
with the real client: the kubelet a BackOff (and a CrashLoopBackOff waiting reason) for a
container whose command exits, and Unhealthy for a failing readiness probe; the
EndpointSlice controller FailedToUpdateEndpointSlices on the Service when a write fails.
A recurring Event is one Event whose series count grows."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from netsight.sim.apiserver import SimServer
from netsight.sim.endpoint_slices import EndpointSliceController
from netsight.sim.kubelet import KubeletConfig
from netsight.sim.recorder import EventRecorder
from netsight.sim.state import ApiError, SimState

pytestmark = pytest.mark.anyio

NS = "shop"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def sim() -> AsyncIterator[tuple[SimServer, client.ApiClient]]:
    state = SimState()
    state.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    server = SimServer(state, kubelet=KubeletConfig(start_delay=0.01))
    async with server, client.ApiClient(client.Configuration(host=server.url)) as api:
        yield server, api


def pod(name: str, container: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": "web:1", **container}]}}


async def events_of(api: client.ApiClient, name: str, count: int = 1) -> list[Any]:
    """The Events about ``name``, once ``count`` have been recorded."""
    events = client.EventsV1Api(api)
    async with asyncio.timeout(10):
        while True:
            listed = await events.list_namespaced_event(
                NS, field_selector=f"regarding.name={name}")
            if len(listed.items) >= count:
                return list(listed.items)
            await asyncio.sleep(0.02)


async def test_the_kubelet_records_a_crash_loop_and_a_failing_probe(
        sim: tuple[SimServer, client.ApiClient]) -> None:
    _, api = sim
    v1 = client.CoreV1Api(api)
    await v1.create_namespaced_pod(NS, pod("crashing", {"command": ["false"]}))
    await v1.create_namespaced_pod(NS, pod("unready", {"readinessProbe": {
        "exec": {"command": ["sh", "-c", "exit 1"]}}}))
    await v1.create_namespaced_pod(NS, pod("fine", {}))
    (backoff,) = await events_of(api, "crashing")
    assert (backoff.type, backoff.reason, backoff.reporting_controller) == \
        ("Warning", "BackOff", "kubelet")
    assert backoff.regarding.kind == "Pod"
    assert backoff.note == "Back-off restarting failed container app in pod crashing"
    status = (await v1.read_namespaced_pod("crashing", NS)).status
    assert status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"
    (unhealthy,) = await events_of(api, "unready")
    assert (unhealthy.type, unhealthy.reason) == ("Warning", "Unhealthy")
    assert unhealthy.note.startswith("Readiness probe failed")
    await asyncio.sleep(0.05)
    assert not (await client.EventsV1Api(api).list_namespaced_event(
        NS, field_selector="regarding.name=fine")).items


async def test_the_same_event_again_grows_its_series(
        sim: tuple[SimServer, client.ApiClient]) -> None:
    server, api = sim
    service = server.state.apply([{"apiVersion": "v1", "kind": "Service",
                                   "metadata": {"name": "web", "namespace": NS},
                                   "spec": {"ports": [{"port": 80}]}}])
    assert service == 1
    recorder = EventRecorder(server.state, "service-controller")
    web = server.state.objects[("", "Service")][f"{NS}/web"]
    for _ in range(3):
        recorder.record(web, "Warning", "SyncLoadBalancerFailed", "no cloud provider",
                        "EnsuringLoadBalancer")
    (event,) = await events_of(api, "web")
    assert event.series.count == 3


async def test_the_slice_controller_reports_a_failed_write_on_the_service() -> None:
    state = SimState()
    state.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
                 {"apiVersion": "v1", "kind": "Service",
                  "metadata": {"name": "web", "namespace": NS},
                  "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}])
    controller = EndpointSliceController(state)
    slice_type = controller.slice_type
    create = state.create

    def refusing(rtype: Any, obj: Any, namespace: str | None = None, **kw: Any) -> Any:
        if rtype is slice_type:  # as a ResourceQuota on EndpointSlices would refuse it
            raise ApiError(403, "Forbidden", 'endpointslices "web-x" is forbidden: exceeded '
                           "quota: slices")
        return create(rtype, obj, namespace, **kw)

    state.create = refusing  # type: ignore[method-assign]
    controller.start()
    events = state.objects.get(("events.k8s.io", "Event"), {})
    (event,) = events.values()
    assert (event["type"], event["reason"], event["regarding"]["name"]) == \
        ("Warning", "FailedToUpdateEndpointSlices", "web")
    assert "exceeded quota" in event["note"]
