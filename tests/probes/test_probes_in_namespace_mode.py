"""Probes where netsight watches only some namespaces (NAMESPACE=shop,data), against a
simulator that enforces RBAC with a token holding Roles only: the runner watches and sweeps
the probe pods of each namespace probes run in, never the cluster's pods, and its probes
answer there."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from netsight.graph.ingest.client import KubeTransport
from netsight.probes.message import TcpProbe
from netsight.probes.runner import NotRun, ProbeRunner
from netsight.server.cluster import LiveGraph
from netsight.server.config import load_settings
from netsight.sim.apiserver import SimServer
from tests.probes.conftest import PROBE_NAMESPACE, runner_settings
from tests.probes.test_probe_tools_over_mcp import ASK, answer_of, cluster_sim, error_of
from tests.server.conftest import serving_settings

pytestmark = pytest.mark.anyio

TEAM = "system:serviceaccount:shop:netsight"
WATCHED = ("data", "shop")


def grant_roles(sim: SimServer) -> None:
    """As the chart's Roles: read everything in the watched namespaces, create and delete
    pods where probes run, read pods in the probe namespace; nothing cluster-wide."""
    access = sim.access
    access.add_token("team-token", TEAM)
    access.allow(user=TEAM, verbs=("get", "list", "watch"), resources=("*",),
                 namespaces=WATCHED)
    access.allow(user=TEAM, verbs=("get", "list", "watch", "create", "delete"),
                 resources=("pods",), namespaces=(*WATCHED, PROBE_NAMESPACE))
    access.enforce = True


@contextlib.asynccontextmanager
async def serving_namespaces(sim: SimServer, tmp_path: Path
                             ) -> AsyncIterator[tuple[LiveGraph, str]]:
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig", token="team-token")
    settings = load_settings({"kubeconfig": str(kubeconfig), "port": 0, "probes": True,
                              "probe_namespace": PROBE_NAMESPACE, "probe_timeout": "5s"},
                             {"NAMESPACE": "shop,data"})
    async with serving_settings(settings) as (graph, _, url, _):
        yield graph, f"{url}/mcp"


async def test_probes_watch_each_namespace_they_run_in(tmp_path: Path) -> None:
    async with cluster_sim() as sim:
        grant_roles(sim)
        async with serving_namespaces(sim, tmp_path) as (graph, url), Client(url) as client:
            connected = answer_of(await client.call_tool("check_connectivity", ASK))
            # Without a source: from the probe namespace, watched too.
            anonymous = answer_of(await client.call_tool("probe_http", {
                "service": "data/db", "port": 5432}))
            assert graph.probes is not None
            assert sorted(graph.probes.watches) == sorted([*WATCHED, PROBE_NAMESPACE])
            await graph.probes.settled()
            assert await graph.probes.sweep() == 0  # per namespace too
    assert connected["observed"]["outcome"] == "connected"
    assert connected["agree"] is True, (connected["predicted"], connected.get("explanations"))
    assert anonymous["observed"]["probe"].startswith(f"{PROBE_NAMESPACE}/")
    refused = {(d.verb, d.resource, d.namespace) for d in sim.access.decisions
               if d.user == TEAM and not d.allowed and d.resource == "pods"}
    assert refused == set()  # no cluster-wide list or watch of pods was tried


async def test_a_namespace_outside_the_watched_ones_runs_no_probe(tmp_path: Path) -> None:
    async with cluster_sim() as sim:
        grant_roles(sim)
        async with serving_namespaces(sim, tmp_path) as (graph, url), Client(url) as client:
            assert graph.probes is not None
            error = error_of(await client.call_tool("check_connectivity", {
                **ASK, "source": "kube-system/coredns-0"}))
    assert error["code"] == "INVALID_INPUT"
    assert "namespace 'kube-system' is not watched" in error["message"]
    assert graph.probes.created == 0


async def test_the_runner_runs_no_probe_where_it_watches_no_probe_pods(tmp_path: Path
                                                                      ) -> None:
    async with cluster_sim() as sim:
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        runner = ProbeRunner(transport, runner_settings(namespaces=("shop",)))
        await runner.start()
        try:
            with pytest.raises(NotRun, match="namespace data is not watched"):
                await runner.run(TcpProbe(host="db", port=5432), source=("data", "db-0"))
        finally:
            await runner.stop()
            await transport.close()
    assert runner.created == 0
    assert runner.slots == set()
