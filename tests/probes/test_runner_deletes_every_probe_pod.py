"""The probe runner against the simulated API server, through the real client: a probe pod
is created, runs, answers through its termination message and is deleted — on success, on
failure, on timeout and when the caller is cancelled; the sweep removes orphans; at most
MAX_CONCURRENT_PROBES pods exist; each caller has a rate.

The simulator's kubelet runs the probe pods and its data plane answers them; a probe that
never answers in time is one whose node drops every packet (the data plane's ``dropNode``
fault) and a probe longer than the runner's deadline. Only a probe whose message is a
crash's log needs the stand-in kubelet: no data plane writes one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from netsight.probes.message import Outcome, ProbeResult, TcpProbe
from netsight.probes.runner import LimitReached, Mode, NotRun, SourceGone, TimedOut
from netsight.server.probe_tools import dns_agree, observe_dns
from netsight.sim.kubelet import DEFAULT_NODE
from tests.probes.conftest import PROBE_NAMESPACE, Probing, eventually, probing

pytestmark = pytest.mark.anyio

SPEC = TcpProbe(host="db.data.svc", port=5432, timeout_seconds=1.0)
# A probe that cannot answer before the runner's deadline: its node drops every packet and
# its own timeout is longer.
SLOW = TcpProbe(host="db.data.svc", port=5432, timeout_seconds=60.0)


def drop_probes_node(probes: Probing) -> None:
    # cluster() holds no Node: the simulated scheduler puts new pods on DEFAULT_NODE.
    probes.sim.state.network.configure({"dropNode": DEFAULT_NODE})


async def test_a_probe_runs_answers_and_its_pod_is_deleted(probes: Probing) -> None:
    seen = await probes.runner.run(SPEC, source=("shop", "web-1"))
    await probes.runner.settled()
    assert seen.result.outcome is Outcome.CONNECTED
    assert seen.result.peer == "10.96.0.20:5432"  # the Service's ClusterIP
    assert seen.identity == "shop/web-1"
    name = seen.pod.split("/")[1]
    # Created, Running, then its answer; then gone.
    assert [phase for pod, phase in probes.kubelet.statuses if pod == name] == \
        ["Running", "Succeeded"]
    assert seen.pod.startswith("shop/netsight-probe-")
    assert probes.probe_pods() == []
    assert probes.runner.active == probes.runner.slots == set()
    assert (probes.runner.created, probes.runner.deleted) == (1, 1)


async def test_a_failed_probe_is_answered_and_deleted(probes: Probing) -> None:
    probes.sim.state.network.close_port("data/db-0", 5432)
    seen = await probes.runner.run(SPEC, source=("shop", "web-1"))
    await probes.runner.settled()
    assert seen.result.outcome is Outcome.REFUSED
    assert [phase for pod, phase in probes.kubelet.statuses] == ["Running", "Failed"]
    assert probes.probe_pods() == []


async def test_a_message_that_is_no_answer_is_an_error_outcome(tmp_path: Path) -> None:
    def crashed(spec: dict[str, Any], pod: dict[str, Any]) -> ProbeResult:
        # FallbackToLogsOnError: a crash puts its log's tail where the answer goes.
        return ProbeResult(type="tcp", outcome="error", error="Traceback ...")

    async with probing(tmp_path, stand_in=True) as probes:
        probes.stand_in.answers = crashed
        seen = await probes.runner.run(SPEC)
        assert seen.result.outcome is Outcome.ERROR
        assert seen.pod.startswith(f"{PROBE_NAMESPACE}/")  # no source: the probe namespace
        await probes.runner.settled()
        assert probes.probe_pods() == []


async def test_a_probe_that_never_answers_times_out_and_is_deleted(tmp_path: Path) -> None:
    async with probing(tmp_path, timeout=0.5) as probes:
        drop_probes_node(probes)
        with pytest.raises(TimedOut, match="last seen Running"):
            await probes.runner.run(SLOW, source=("shop", "web-1"))
        await probes.runner.settled()
        assert len(probes.kubelet.seen) == 1
        assert probes.probe_pods() == []
        assert probes.runner.active == probes.runner.slots == set()


async def test_a_cancelled_probe_still_deletes_its_pod(probes: Probing) -> None:
    drop_probes_node(probes)
    task = asyncio.create_task(probes.runner.run(SLOW, source=("shop", "web-1")))
    await eventually(lambda: any(phase == "Running" for _, phase in probes.kubelet.statuses))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The deletion runs in a task of its own: the cancelled caller does not stop it.
    await eventually(lambda: probes.probe_pods() == [] and not probes.runner.slots)


async def test_a_missing_source_is_reported_and_creates_nothing(probes: Probing) -> None:
    with pytest.raises(SourceGone, match="shop/gone"):
        await probes.runner.run(SPEC, source=("shop", "gone"))
    assert probes.kubelet.seen == {}


async def test_a_refused_pod_is_reported(probes: Probing) -> None:
    probes.sim.state.faults.fail(403, 1, path_contains=f"/namespaces/{PROBE_NAMESPACE}/pods")
    with pytest.raises(NotRun, match="HTTP 403"):
        await probes.runner.run(SPEC)
    await probes.runner.settled()
    assert probes.kubelet.seen == {}
    assert probes.runner.active == probes.runner.slots == set()


async def test_the_sweep_deletes_orphans_and_spares_live_probes(probes: Probing) -> None:
    old = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "netsight-probe-0ld", "namespace": "shop",
        "creationTimestamp": "2020-01-01T00:00:00Z",
        "labels": {"app.kubernetes.io/managed-by": "netsight",
                   "netsight.io/probe-id": "0ld"}},
        "spec": {"activeDeadlineSeconds": 33, "containers": [{"name": "probe"}]}}
    young = {**old, "metadata": {k: v for k, v in old["metadata"].items()
                                 if k != "creationTimestamp"}}
    young["metadata"]["name"] = "netsight-probe-y0ung"  # created now
    await eventually(lambda: probes.runner.sweeps >= 1)  # the sweep at start is done
    probes.sim.state.apply([old, young])
    assert await probes.runner.sweep() == 1
    names = {p["metadata"]["name"] for p in probes.probe_pods()}
    assert names == {"netsight-probe-y0ung"}  # perhaps another replica's, still running


async def test_the_sweep_runs_at_start(tmp_path: Path) -> None:
    async with probing(tmp_path) as probes:
        orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "netsight-probe-left", "namespace": "shop",
            "creationTimestamp": "2020-01-01T00:00:00Z",
            "labels": {"app.kubernetes.io/managed-by": "netsight",
                       "netsight.io/probe-id": "left"}},
            "spec": {"containers": [{"name": "probe"}]}}
        probes.sim.state.apply([orphan])
        await probes.runner.stop()
        await probes.runner.start()
        await eventually(lambda: probes.probe_pods() == [])


async def test_no_more_than_max_concurrent_probes_run(tmp_path: Path) -> None:
    async with probing(tmp_path, max_concurrent=2, timeout=5.0) as probes:
        drop_probes_node(probes)
        running = [asyncio.create_task(probes.runner.run(SLOW, caller=f"c{n}"))
                   for n in range(2)]
        await eventually(lambda: len(probes.probe_pods()) == 2)
        with pytest.raises(LimitReached, match="MAX_CONCURRENT_PROBES"):
            await probes.runner.run(SPEC, caller="c3")
        assert len(probes.kubelet.seen) == 2
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await probes.runner.settled()
        assert probes.probe_pods() == []
        probes.sim.state.network.configure({"restoreNode": DEFAULT_NODE})
        await probes.runner.run(SPEC, caller="c3")  # a slot is free again
        await probes.runner.settled()
        # Calls arriving together cannot all pass the check before any pod exists.
        together = await asyncio.gather(*(probes.runner.run(SPEC, source=("shop", "web-1"),
                                                            caller=f"d{n}")
                                          for n in range(5)), return_exceptions=True)
        assert sum(isinstance(r, LimitReached) for r in together) == 3
        await probes.runner.settled()
        assert probes.runner.slots == set()


async def test_each_caller_has_a_rate(tmp_path: Path) -> None:
    async with probing(tmp_path, burst=2, rate_per_minute=1.0) as probes:
        for _ in range(2):
            await probes.runner.run(SPEC, caller="alice")
        with pytest.raises(LimitReached, match="retry in"):
            await probes.runner.run(SPEC, caller="alice")
        await probes.runner.run(SPEC, caller="bob")  # another caller's bucket
        await probes.runner.settled()


async def test_an_ephemeral_probe_runs_in_the_source_pod(tmp_path: Path) -> None:
    async with probing(tmp_path, mode=Mode.EPHEMERAL) as probes:
        seen = await probes.runner.run(SPEC, source=("shop", "web-1"))
        source = probes.sim.state.objects[("", "Pod")]["shop/web-1"]
    assert seen.result.outcome is Outcome.CONNECTED
    assert (seen.pod, seen.identity) == ("shop/web-1", "shop/web-1")
    (container,) = source["spec"]["ephemeralContainers"]
    assert container["name"] == seen.container
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert "resources" not in container
    assert "readinessProbe" not in container
    assert probes.probe_pods() == []  # no pod of its own; the container stays, terminated
    assert probes.runner.active == probes.runner.slots == set()


async def test_a_probe_reads_dns_as_the_source_would(probes: Probing) -> None:
    result, answer = await observe_dns(probes.runner, "db.data", ("shop", "web-1"))
    assert answer is not None
    assert answer.canonical_name == "db.data.svc.cluster.local"
    assert dns_agree({"10.96.0.20"}, result) is True
    assert dns_agree({"10.96.0.21"}, result) is False
    assert dns_agree(None, result) is None
    (pod,) = probes.kubelet.seen.values()
    assert pod["spec"]["dnsConfig"] == {"options": [{"name": "ndots", "value": "2"}]}


async def test_without_a_watch_of_probe_pods_no_probe_runs(tmp_path: Path) -> None:
    async with probing(tmp_path, timeout=0.5) as probes:
        await probes.runner.watch.stop()  # as if RBAC refused it from the start
        probes.runner.watch.synced.clear()
        probes.sim.state.faults.forbidden.add("pods")
        with pytest.raises(TimedOut, match="probe pods cannot be watched"):
            await probes.runner.run(SPEC)
        probes.sim.state.faults.forbidden.discard("pods")
        await probes.runner.settled()
        assert probes.kubelet.seen == {}
