"""The simulated kubelet, driven through the real kubernetes-asyncio client: pods created
through the API run (Pending -> Running), probe pods end with the data plane's answer as
their termination message, deadlines are enforced, ephemeral containers run, and every
transition reaches a watch as an ordinary event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.rest import ApiException

from netsight.sim.apiserver import SimServer
from netsight.sim.endpoint_slices import EndpointSliceController
from netsight.sim.kubelet import DEADLINE_MESSAGE, Kubelet, KubeletConfig, _fails
from netsight.sim.scenarios import synthetic
from netsight.sim.state import SimState

pytestmark = pytest.mark.anyio
NS = "probes"
SERVER = {"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "web-0", "namespace": NS, "labels": {"app": "web"}},
          "spec": {"nodeName": "node-a", "containers": [
              {"name": "app", "image": "web:1",
               "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
          "status": {"phase": "Running", "podIP": "10.9.0.5", "podIPs": [{"ip": "10.9.0.5"}],
                     "conditions": [{"type": "Ready", "status": "True"}]}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def api() -> AsyncIterator[tuple[client.CoreV1Api, SimServer]]:
    state = SimState()
    state.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, SERVER,
                 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web",
                                                                      "namespace": NS},
                  "spec": {"selector": {"app": "web"}, "clusterIP": "10.96.9.9",
                           "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}])
    slices = EndpointSliceController(state)
    slices.start()
    async with SimServer(state, kubelet=KubeletConfig(start_delay=0.02, time_scale=0.01)) \
            as sim:
        configuration = client.Configuration(host=sim.url)
        async with client.ApiClient(configuration) as api_client:
            yield client.CoreV1Api(api_client), sim


def probe_pod(name: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A pod as the probe runner makes one: restricted, never Ready, run once."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"app.kubernetes.io/managed-by": "netsight", "app": "web"},
                     "annotations": {"netsight.io/probe": json.dumps(spec)}},
        "spec": {
            "restartPolicy": "Never", "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "probe", "image": "netsight-probe:1",
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "env": [{"name": "NETSIGHT_PROBE", "valueFrom": {"fieldRef": {
                    "fieldPath": "metadata.annotations['netsight.io/probe']"}}}],
                "readinessProbe": {"exec": {"command": ["false"]}},
                "securityContext": {"allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]}}}],
            **extra,
        }}


async def now(v1: client.CoreV1Api) -> str:
    """The resourceVersion to watch from: before what the test does next."""
    return str((await v1.list_namespaced_pod(NS)).metadata.resource_version)


async def watch_until(v1: client.CoreV1Api, name: str, since: str,
                      done: Callable[[dict[str, Any]], bool]) -> list[tuple[str, Any]]:
    """Every (event type, pod) a watch from ``since`` sees of ``name`` until ``done(pod)``."""
    seen: list[tuple[str, Any]] = []
    async with asyncio.timeout(10), watch.Watch() as pods:
        stream = pods.stream(v1.list_namespaced_pod, NS, resource_version=since,
                             field_selector=f"metadata.name={name}")
        async for event in stream:
            pod = v1.api_client.sanitize_for_serialization(event["object"])
            seen.append((event["type"], pod))
            if done(pod):
                break
    return seen


def phase(pod: dict[str, Any]) -> str | None:
    return (pod.get("status") or {}).get("phase")


def ready(pod: dict[str, Any]) -> str | None:
    return next((c["status"] for c in (pod.get("status") or {}).get("conditions") or ()
                 if c["type"] == "Ready"), None)


async def test_a_probe_pod_runs_answers_and_is_deleted(
        api: tuple[client.CoreV1Api, SimServer]) -> None:
    v1, sim = api
    spec = {"type": "tcp", "host": "web", "port": 80, "timeoutSeconds": 2}
    since = await now(v1)
    await v1.create_namespaced_pod(NS, probe_pod("probe-1", spec))
    seen = await watch_until(v1, "probe-1", since, lambda p: phase(p) in ("Succeeded", "Failed"))
    assert [t for t, _ in seen] == ["ADDED"] + ["MODIFIED"] * (len(seen) - 1)
    phases = [phase(p) for _, p in seen]
    assert phases[0] is None
    assert phases[-1] == "Succeeded"
    assert "Pending" in phases
    assert "Running" in phases
    running = next(p for _, p in seen if phase(p) == "Running")
    assert running["status"]["podIP"].startswith("10.244.")
    assert running["spec"]["nodeName"] == "sim-node"
    assert ready(running) == "False"  # never Ready: no Service routes to a probe
    final = seen[-1][1]
    terminated = final["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 0
    assert terminated["reason"] == "Completed"
    message = json.loads(terminated["message"])
    assert message["outcome"] == "connected"
    assert message["peer"] == "10.96.9.9:80"  # as the probe program writes it
    assert message["resolved"] == ["10.96.9.9"]

    await v1.delete_namespaced_pod("probe-1", NS)
    with pytest.raises(ApiException) as gone:
        await v1.read_namespaced_pod("probe-1", NS)
    assert gone.value.status == 404
    assert not sim.kubelet or not sim.kubelet._tasks


async def test_a_probe_that_is_refused_fails_with_exit_code_one(
        api: tuple[client.CoreV1Api, SimServer]) -> None:
    v1, sim = api
    sim.state.network.close_port(f"{NS}/web-0", 8080)
    since = await now(v1)
    await v1.create_namespaced_pod(NS, probe_pod("probe-2", {"type": "tcp", "host": "10.9.0.5",
                                                             "port": 8080}))
    seen = await watch_until(v1, "probe-2", since, lambda p: phase(p) in ("Succeeded", "Failed"))
    final = seen[-1][1]
    assert phase(final) == "Failed"
    terminated = final["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (1, "Error")
    assert json.loads(terminated["message"])["outcome"] == "refused"


async def test_an_unreadable_spec_exits_two(api: tuple[client.CoreV1Api, SimServer]) -> None:
    v1, _ = api
    body = probe_pod("probe-3", {})
    body["metadata"]["annotations"]["netsight.io/probe"] = '{"type": "icmp"}'
    since = await now(v1)
    await v1.create_namespaced_pod(NS, body)
    seen = await watch_until(v1, "probe-3", since, lambda p: phase(p) in ("Succeeded", "Failed"))
    terminated = seen[-1][1]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 2
    assert json.loads(terminated["message"])["outcome"] == "error"


async def test_the_deadline_fails_a_pod_that_runs_too_long(
        api: tuple[client.CoreV1Api, SimServer]) -> None:
    v1, _ = api
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sleeper", "namespace": NS},
            "spec": {"activeDeadlineSeconds": 20, "restartPolicy": "Never",
                     "containers": [{"name": "sleep", "image": "busybox"}]}}
    since = await now(v1)
    await v1.create_namespaced_pod(NS, body)
    seen = await watch_until(v1, "sleeper", since, lambda p: phase(p) == "Failed")
    assert "Running" in [phase(p) for _, p in seen]
    final = seen[-1][1]["status"]
    assert (final["reason"], final["message"]) == ("DeadlineExceeded", DEADLINE_MESSAGE)
    assert final["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137


@pytest.mark.parametrize("target", ["client", "web-0"])  # created through the API, or loaded
async def test_a_probe_in_an_ephemeral_container_reports_in_its_status(
        api: tuple[client.CoreV1Api, SimServer], target: str) -> None:
    v1, _ = api
    since = await now(v1)
    if target == "client":
        await v1.create_namespaced_pod(NS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client", "namespace": NS},
            "spec": {"containers": [{"name": "app", "image": "client:1"}]}})
        await watch_until(v1, "client", since, lambda p: phase(p) == "Running")
    spec = json.dumps({"type": "dns", "name": "web"})
    debug = {"spec": {"ephemeralContainers": [{
        "name": "netsight-probe-1", "image": "netsight-probe:1",
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "env": [{"name": "NETSIGHT_PROBE", "value": spec}]}]}}
    since = await now(v1)
    await v1.patch_namespaced_pod_ephemeralcontainers(target, NS, debug)

    def finished(pod: dict[str, Any]) -> bool:
        return any("terminated" in s["state"]
                   for s in (pod.get("status") or {}).get("ephemeralContainerStatuses") or ())

    seen = await watch_until(v1, target, since, finished)
    status = seen[-1][1]["status"]
    assert phase(seen[-1][1]) == "Running"  # the pod goes on
    terminated = status["ephemeralContainerStatuses"][0]["state"]["terminated"]
    message = json.loads(terminated["message"])
    assert terminated["exitCode"] == 0
    assert message["dns"] == {"rcode": "NOERROR", "answers": ["10.96.9.9"],
                              "canonicalName": f"web.{NS}.svc.cluster.local"}
    # A second container is merged in (strategic merge by name); changing one is refused.
    second = {"spec": {"ephemeralContainers": [{"name": "shell", "image": "busybox"}]}}
    pod = await v1.patch_namespaced_pod_ephemeralcontainers(target, NS, second)
    assert [c.name for c in pod.spec.ephemeral_containers] == ["netsight-probe-1", "shell"]
    changed = {"spec": {"ephemeralContainers": [{"name": "shell", "image": "alpine"}]}}
    with pytest.raises(ApiException) as refused:
        await v1.patch_namespaced_pod_ephemeralcontainers(target, NS, changed)
    assert refused.value.status == 422


async def test_probe_pods_are_never_ready_endpoints(
        api: tuple[client.CoreV1Api, SimServer]) -> None:
    v1, sim = api
    discovery = client.DiscoveryV1Api(v1.api_client)
    # A dropping node holds the probe running long enough to look at the slices.
    sim.state.network.dropping_nodes.add("node-a")
    since = await now(v1)
    await v1.create_namespaced_pod(NS, probe_pod("probe-4", {
        "type": "tcp", "host": "10.9.0.5", "port": 8080, "timeoutSeconds": 60}))
    seen = await watch_until(v1, "probe-4", since, lambda p: phase(p) == "Running")
    address = seen[-1][1]["status"]["podIP"]
    slices = await discovery.list_namespaced_endpoint_slice(NS)
    endpoints = {e.addresses[0]: e.conditions.ready for s in slices.items
                 for e in s.endpoints or ()}
    assert endpoints == {"10.9.0.5": True, address: False}
    seen = await watch_until(v1, "probe-4", since, lambda p: phase(p) == "Failed")
    message = json.loads(seen[-1][1]["status"]["containerStatuses"][0]["state"]["terminated"][
        "message"])
    assert message["outcome"] == "timeout"
    assert message["latencyMs"] == 60_000
    slices = await discovery.list_namespaced_endpoint_slice(NS)
    assert [e.addresses for s in slices.items for e in s.endpoints or ()] == [["10.9.0.5"]]


@pytest.mark.parametrize(("command", "fails"), [
    (["false"], True), (["/bin/false"], True), (["sh", "-c", "exit 1"], True),
    (["/bin/sh", "-c", "false"], True), (["sh", "-c", "exit 0"], False), (["true"], False),
    ([], True),
])
def test_which_exec_readiness_probes_never_pass(command: list[str], fails: bool) -> None:
    assert _fails(command) is fails


async def test_the_kubelet_leaves_pods_loaded_with_a_status_alone() -> None:
    state = SimState()
    kubelet = Kubelet(state, KubeletConfig(start_delay=0))
    kubelet.start()
    try:
        state.apply(synthetic(300))
        before = state.rv
        await asyncio.sleep(0.05)
        assert state.rv == before
        assert not kubelet._tasks
    finally:
        await kubelet.stop()


async def test_the_data_plane_is_set_over_http(api: tuple[client.CoreV1Api, SimServer]) -> None:
    _, sim = api
    headers = {"Authorization": f"Bearer {sim.control_token}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.post(f"{sim.url}/sim/dataplane", json={
                "cni": "cilium-like", "closePort": {"pod": f"{NS}/web-0", "port": 8080},
                "dropNode": "node-b", "dnsDown": True}) as response:
            assert response.status == 200
            settings = await response.json()
        async with http.post(f"{sim.url}/sim/dataplane", json={"cni": "calico"}) as response:
            assert response.status == 400
            assert "cni must be one of" in (await response.json())["message"]
        async with aiohttp.ClientSession() as anonymous, \
                anonymous.post(f"{sim.url}/sim/dataplane", json={}) as response:
            assert response.status == 401
    assert settings["cni"] == "cilium-like"
    assert settings["closedPorts"] == {f"{NS}/web-0": [8080]}
    assert settings["droppingNodes"] == ["node-b"]
    assert sim.state.network.dns_down is True
