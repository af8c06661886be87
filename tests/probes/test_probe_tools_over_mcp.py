"""The probe tools on a running netsight, over MCP Streamable HTTP with the SDK's client:
offered only when probes are enabled and the server is not read-only; check_connectivity's
observed outcome beside the static verdict, with the likeliest reasons when they differ;
the caller's right to create the pod checked; the pod deleted even when the client goes
away mid-call; the graph never holding a probe pod.

The simulator's kubelet runs the probe pods and its data plane answers them: a CNI that
enforces nothing, a port nothing listens on, a Service without a ready pod, a node that drops
every packet are faults of the simulated cluster, not answers written by the test."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp_types import CallToolResult

from netsight.cli.main import main
from netsight.server.config import ProbeMode
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.dataplane.enforcement import Profile
from netsight.sim.endpoint_slices import EndpointSliceController
from netsight.sim.kubelet import DEFAULT_NODE, KubeletConfig
from tests.probes.conftest import (
    PROBE_NAMESPACE,
    PodRecorder,
    cluster,
    deny_ingress,
    eventually,
    pod,
    service,
)
from tests.server.authenticated import mcp_client, serving_with_auth
from tests.server.conftest import Served, serving

pytestmark = pytest.mark.anyio

PROBE_TOOLS = {"check_connectivity", "probe_http"}
ASK = {"source": "shop/web-1", "destination": "data/db", "port": 5432}
DNS_ASK = {"name": "db.data", "from": "shop/web-1"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def cluster_sim(*extra: dict[str, Any], time_scale: float = 1.0
                      ) -> AsyncIterator[SimServer]:
    """:func:`cluster` with the simulator's kubelet, data plane and EndpointSlices."""
    sim = SimServer(config=SimConfig(bookmark_interval=0.1),
                    kubelet=KubeletConfig(start_delay=0.01, time_scale=time_scale))
    sim.state.apply([*cluster(), *extra])
    slices = EndpointSliceController(sim.state)
    slices.start()
    try:
        async with sim:
            yield sim
    finally:
        slices.stop()


def recording(sim: SimServer) -> PodRecorder:
    recorder = PodRecorder()
    sim.state.observers.append(recorder.observe)
    return recorder


@contextlib.asynccontextmanager
async def probing_server(tmp_path: Path, *extra: dict[str, Any], time_scale: float = 1.0,
                         **overrides: Any) -> AsyncIterator[tuple[Served, PodRecorder]]:
    settings = {"probes": True, "probe_namespace": PROBE_NAMESPACE, "probe_timeout": 3.0,
                "probe_image": "ghcr.io/example/probe:1", **overrides}
    async with cluster_sim(*extra, time_scale=time_scale) as sim:
        recorder = recording(sim)
        async with serving(sim, tmp_path, **settings) as served:
            yield served, recorder


def drop_probes_node(sim: SimServer) -> None:
    """Every packet to or from the probe's node lost: a probe that waits out its timeout
    (cluster() holds no Node, so the simulated scheduler uses DEFAULT_NODE)."""
    sim.state.network.configure({"dropNode": DEFAULT_NODE})


def probe_pods(sim: SimServer) -> list[str]:
    return [key for key, p in sim.state.objects.get(("", "Pod"), {}).items()
            if "netsight.io/probe-id" in (p["metadata"].get("labels") or {})]


def answer_of(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    error: dict[str, Any] = orjson.loads(text)
    return error


async def listed(url: str) -> dict[str, Any]:
    async with Client(url) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_probe_tools_are_offered_only_when_enabled_and_not_read_only(
        tmp_path: Path) -> None:
    async with cluster_sim() as sim:
        async with serving(sim, tmp_path) as served:
            assert not PROBE_TOOLS & set(await listed(served.mcp_url))
            assert served.graph.probes is None  # no runner, no watch, no sweep
        async with serving(sim, tmp_path, probes=True, read_only=True) as served:
            assert not PROBE_TOOLS & set(await listed(served.mcp_url))
            assert served.graph.probes is None
        async with serving(sim, tmp_path, probes=True) as served:
            tools = await listed(served.mcp_url)
    assert set(tools) >= PROBE_TOOLS
    for name in PROBE_TOOLS:
        hints = tools[name].annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == \
            (False, False, True)
    assert tools["find_blocking_policies"].annotations.read_only_hint is True  # type: ignore[union-attr]
    # check_dns_resolution probes too now: the same tool, no longer read-only
    hints = tools["check_dns_resolution"].annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == \
        (False, False, True)


async def test_a_healthy_flow_agrees_and_leaves_no_pod(tmp_path: Path) -> None:
    async with probing_server(tmp_path) as (served, kubelet), Client(served.mcp_url) as client:
        answer = answer_of(await client.call_tool("check_connectivity", ASK))
        sim = served.sim
        await eventually(lambda: probe_pods(sim) == [])
    assert answer["observed"]["outcome"] == "connected"
    assert answer["observed"]["identity"] == "shop/web-1"
    assert answer["predicted"]["allowed"] is True
    assert answer["agree"] is True
    assert answer["explanations"] == []
    (spec,) = [orjson.loads(p["metadata"]["annotations"]["netsight.io/probe"])
               for p in kubelet.seen.values()]
    assert kubelet.statuses[-1][1] == "Succeeded"  # the data plane's answer
    assert spec == {"type": "tcp", "host": "db.data.svc", "port": 5432,
                    "timeoutSeconds": 1.5}


FLANNEL = pod("kube-system", "kube-flannel-ds-x7k2p", {"app": "flannel"}, ip="10.0.0.5",
              owner=("DaemonSet", "kube-flannel-ds"))


async def test_policies_a_cni_does_not_enforce_are_the_likeliest_reason(tmp_path: Path
                                                                        ) -> None:
    deny = deny_ingress("data", "db-deny-all", {"app": "db"})
    async with probing_server(tmp_path, deny, FLANNEL) as (served, _), \
            Client(served.mcp_url) as client:
        served.sim.state.network.cni = Profile.NONE  # Flannel's: no policy enforced
        answer = answer_of(await client.call_tool("check_connectivity", ASK))
    assert answer["predicted"]["allowed"] is False
    assert answer["observed"]["outcome"] == "connected"
    assert answer["agree"] is False
    first = answer["explanations"][0]
    assert (first["cause"], first["likelihood"]) == ("cni-enforces-no-policy", "high")
    assert "Flannel" in first["summary"]
    assert first["evidence"] == ["pod kube-system/kube-flannel-ds-x7k2p of DaemonSet "
                                 "kube-flannel-ds"]


async def test_without_a_known_cni_it_says_the_cni_is_unknown(tmp_path: Path) -> None:
    deny = deny_ingress("data", "db-deny-all", {"app": "db"})
    async with probing_server(tmp_path, deny) as (served, _), Client(served.mcp_url) as client:
        served.sim.state.network.cni = Profile.NONE  # enforcing nothing, showing nothing
        answer = answer_of(await client.call_tool("check_connectivity", ASK))
    assert answer["agree"] is False
    assert answer["explanations"][0]["cause"] == "cni-unknown"
    assert "the CNI is unknown" in answer["explanations"][0]["summary"]


async def test_a_refused_connection_points_at_an_undeclared_port(tmp_path: Path) -> None:
    cache = pod("data", "cache-0", {"app": "cache"}, ip="10.244.2.30", ports=(6380,))
    extra = (cache, service("data", "cache", {"app": "cache"}, 6379, ip="10.96.0.21"))
    async with probing_server(tmp_path, *extra) as (served, _), \
            Client(served.mcp_url) as client:
        answer = answer_of(await client.call_tool("check_connectivity", {
            "source": "shop/web-1", "destination": "data/cache", "port": 6379}))
    assert answer["observed"]["outcome"] == "refused"
    assert (answer["predicted"]["allowed"], answer["agree"]) == (True, False)
    causes = {e["cause"]: e for e in answer["explanations"]}
    assert causes["no-listener"]["likelihood"] == "high"
    assert causes["no-listener"]["evidence"] == ["data/cache-0 declares no containerPort 6379"]


async def test_a_service_without_ready_pods_is_named(tmp_path: Path) -> None:
    slow = pod("data", "slow-0", {"app": "slow"}, ip="10.244.2.40", ports=(80,), ready=False)
    extra = (slow, service("data", "slow", {"app": "slow"}, 80, ip="10.96.0.22"))
    async with probing_server(tmp_path, *extra) as (served, _), \
            Client(served.mcp_url) as client:
        answer = answer_of(await client.call_tool("check_connectivity", {
            "source": "shop/web-1", "destination": "data/slow", "port": 80}))
    assert answer["observed"]["outcome"] == "refused"  # kube-proxy's REJECT
    assert answer["explanations"][0]["cause"] == "no-ready-endpoint"


async def test_a_probe_that_does_not_answer_is_probe_timeout(tmp_path: Path) -> None:
    async with probing_server(tmp_path, probe_timeout=0.5) as (served, _), \
            Client(served.mcp_url) as client:
        drop_probes_node(served.sim)  # the probe waits out its 1.5 s: past the deadline
        error = error_of(await client.call_tool("check_connectivity", ASK))
        sim = served.sim
        await eventually(lambda: probe_pods(sim) == [])
    assert error["code"] == "PROBE_TIMEOUT"


async def test_the_graph_never_holds_a_probe_pod(tmp_path: Path) -> None:
    # A slow data plane: the dropped probe waits out its timeout twenty times over.
    async with probing_server(tmp_path, time_scale=20.0, probe_timeout=60.0) as (
            served, kubelet), Client(served.mcp_url) as client:
        drop_probes_node(served.sim)
        call = asyncio.create_task(client.call_tool("check_connectivity", ASK))
        sim = served.sim
        await eventually(lambda: len(kubelet.statuses) == 1)  # created, and Running
        graph_pods = {r.name for r in served.graph.store.view().for_each("Pod")}
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
    assert "web-1" in graph_pods
    assert not any(name.startswith("netsight-probe-") for name in graph_pods)
    pod_reads = [q for method, path, q in sim.api.request_log
                 if method == "GET" and path == "/api/v1/pods" and "watch" in q
                 and "netsight.io/probe-id" not in q.get("labelSelector", "x")]
    assert pod_reads == []  # every watch of pods selects probes in or out


# legacy: a session over the handshake; 2026-07-28: single exchanges, answered as JSON,
# where only the connection's end tells the server the client has gone.
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_that_goes_away_mid_call_leaves_no_pod(tmp_path: Path, mode: str
                                                              ) -> None:
    async with probing_server(tmp_path, time_scale=20.0, probe_timeout=30.0) as (served, _):
        sim = served.sim
        drop_probes_node(sim)

        async def call() -> None:
            async with Client(served.mcp_url, mode=mode) as client:
                await client.call_tool("check_connectivity", ASK)

        task = asyncio.create_task(call())
        await eventually(lambda: len(probe_pods(sim)) == 1)
        task.cancel()  # the client closes its session mid-call, as a closed agent does
        with contextlib.suppress(asyncio.CancelledError):
            await task
        # Long before the probe's 30 s deadline: the server cancelled the call, and the
        # runner deleted the pod in a task the cancellation could not reach.
        runner = served.graph.probes
        assert runner is not None
        await eventually(lambda: probe_pods(sim) == [] and not runner.slots, timeout=10.0)


def grant(sim: SimServer) -> None:
    sim.access.add_token("alice-token", "alice", groups=["team-shop"])
    sim.access.add_token("bob-token", "bob", groups=["team-shop"])
    sim.access.allow(group="team-shop", verbs=["get", "list", "watch"], resources=["*"])
    sim.access.allow(user="alice", verbs=["create"], resources=["pods"], namespaces=["shop"])


async def test_only_a_caller_who_could_create_the_pod_gets_a_probe(tmp_path: Path) -> None:
    settings = {"probes": True, "probe_namespace": PROBE_NAMESPACE, "probe_timeout": 3.0}
    async with cluster_sim() as sim:
        kubelet = recording(sim)
        grant(sim)
        async with serving_with_auth(sim, tmp_path, **settings) as served:
            async with mcp_client(served.mcp_url, "bob-token") as bob:
                refused = error_of(await bob.call_tool("check_connectivity", ASK))
            assert kubelet.seen == {}  # no pod was created for bob
            async with mcp_client(served.mcp_url, "bob-token") as bob:
                static = answer_of(await bob.call_tool("check_dns_resolution", DNS_ASK))
            assert kubelet.seen == {}
            async with mcp_client(served.mcp_url, "alice-token") as alice:
                answer = answer_of(await alice.call_tool("check_connectivity", ASK))
                probed = answer_of(await alice.call_tool("check_dns_resolution", DNS_ASK))
                # alice may create pods in shop, not in the probe namespace
                elsewhere = error_of(await alice.call_tool("probe_http", {
                    "service": "data/db", "port": 5432}))
    assert refused["code"] == "FORBIDDEN"
    assert "bob may not create pods in namespace shop" in refused["message"]
    # bob still gets the static answer, told why nothing was observed
    assert static["outcome"] == "resolves"
    assert "observed" not in static
    assert "agree" not in static
    assert static["notEvaluated"][-1].startswith(
        "observed: no DNS probe from shop/web-1 (FORBIDDEN: bob may not create pods")
    assert probed["observed"]["answers"] == ["10.96.0.20"]
    assert probed["agree"] is True
    assert answer["agree"] is True
    assert elsewhere["code"] == "FORBIDDEN"
    assert f"namespace {PROBE_NAMESPACE}" in elsewhere["message"]


async def test_probe_http_sets_the_response_beside_the_predicted_backend(tmp_path: Path
                                                                         ) -> None:
    async with probing_server(tmp_path) as (served, _), Client(served.mcp_url) as client:
        served.sim.state.network.configure({"httpStatus": {"pod": "data/db-0", "status": 503}})
        answer = answer_of(await client.call_tool("probe_http", {
            "service": "data/db", "port": 5432, "path": "/health", "from": "shop/web-1"}))
    assert answer["request"] == "GET http://db.data.svc:5432/health"
    assert answer["observed"]["status"] == 503
    assert answer["observed"]["headers"]["server"] == "netsight-sim"
    assert answer["observed"]["identity"] == "shop/web-1"
    assert answer["predicted"]["backends"] == ["data/db:5432"]
    assert answer["predicted"]["layers"] == []


async def test_netsight_call_reaches_the_probe_tools_on_a_server(tmp_path: Path) -> None:
    async with probing_server(tmp_path) as (served, _):
        out = io.StringIO()
        code = await asyncio.to_thread(main, [
            "call", "check_connectivity", "--server", served.url, "--source", "shop/web-1",
            "--destination", "data/db", "--port", "5432"], stdout=out)
    assert code == 0
    assert orjson.loads(out.getvalue())["agree"] is True
    out = io.StringIO()
    code = main(["call", "probe_http", "-f", str(tmp_path), "--url", "http://x/"], stdout=out)
    assert code != 0
    assert "give --server URL of a netsight serve started with --probes" in out.getvalue()


async def test_in_ephemeral_mode_the_caller_must_be_able_to_patch_the_source(
        tmp_path: Path) -> None:
    settings = {"probes": True, "probe_namespace": PROBE_NAMESPACE, "probe_timeout": 3.0,
                "probe_mode": ProbeMode.EPHEMERAL}
    async with cluster_sim() as sim:
        grant(sim)  # alice may create pods in shop, not patch its pods' ephemeral containers
        sim.access.allow(user="bob", verbs=["patch"], resources=["pods/ephemeralcontainers"],
                         namespaces=["shop"])
        async with serving_with_auth(sim, tmp_path, **settings) as served:
            async with mcp_client(served.mcp_url, "alice-token") as alice:
                refused = error_of(await alice.call_tool("check_connectivity", ASK))
            async with mcp_client(served.mcp_url, "bob-token") as bob:
                answer = answer_of(await bob.call_tool("check_connectivity", ASK))
    assert refused["code"] == "FORBIDDEN"
    assert "alice may not patch pods/ephemeralcontainers in namespace shop" in \
        refused["message"]
    assert answer["observed"]["probe"] == "shop/web-1"  # inside the source pod itself
    assert answer["agree"] is True
    source = sim.state.objects[("", "Pod")]["shop/web-1"]
    (ran,) = source["status"]["ephemeralContainerStatuses"]  # one probe, run by the kubelet
    assert ran["state"]["terminated"]["exitCode"] == 0
