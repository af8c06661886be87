"""The per-call design answers as netsight does: over real HTTP from the simulator, each
tool's answer (metadata aside) equals netsight's on the same cluster, and a pair question
lists only the namespaces it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.baseline_design import Session, gist, measure, tool_calls
from tests.benchmarks.simulated_cluster import QUESTIONS, benchmark_cluster

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def codes(data: dict[str, Any]) -> list[str]:
    return sorted(str(finding["code"]) for finding in data.get("findings", []))


async def test_the_questions_get_netsights_verdict_and_findings(tmp_path: Path) -> None:
    async with benchmark_cluster(tmp_path) as (sim, ctx):
        session = await Session.open(str(ctx.kubeconfig))
        try:
            for tool, args in QUESTIONS.values():
                sim.api.request_log.clear()
                mine = await session.call(tool, args)
                theirs = ctx.netsight_analyze(tool, args)
                assert mine.get("allowed") == theirs.get("allowed")
                assert mine.get("blockingPolicies") == theirs.get("blockingPolicies")
                assert mine.get("status") == theirs.get("status")
                assert codes(mine) == codes(theirs)
                assert gist(mine) == gist(theirs)
                pods = {path for _, path, _ in sim.api.request_log if path.endswith("/pods")}
                assert "/api/v1/pods" not in pods  # namespaced lists only
        finally:
            await session.close()
    reach = ctx.netsight_analyze(*QUESTIONS["reach"])
    # Questions with answers worth comparing: a denial by y's policy, a Service's finding.
    assert reach["allowed"] is False
    assert reach["blockingPolicies"][0]["name"] == "b-from-c"
    assert codes(ctx.netsight_analyze(*QUESTIONS["no_endpoints"])) == ["NS0101"]


async def test_every_tool_measured_agrees_with_netsight(tmp_path: Path) -> None:
    async with benchmark_cluster(tmp_path, repeats=2) as (_sim, ctx):
        result = await measure(ctx)
        calls = tool_calls(ctx)
    assert set(calls) <= set(result["tools"])
    assert set(result["tools"]) == {
        "find_blocking_policies", "who_can_reach", "diagnose_service", "check_route_resolution",
        "diff_routes", "list_services", "analyze_config"}
    for tool, figures in result["tools"].items():
        assert figures["agrees"], tool
        for mode in ("cold", "warm"):
            assert figures[mode]["n"] == 2
            assert figures[mode]["p50_ms"] <= figures[mode]["p99_ms"]
        assert figures["cold"]["listed_mb"] > 0, tool
    assert "cache 30 s" in result["notes"]


async def test_a_warm_call_lists_nothing_and_a_cold_one_lists_again(tmp_path: Path) -> None:
    async with benchmark_cluster(tmp_path) as (sim, ctx):
        session = await Session.open(str(ctx.kubeconfig))
        try:
            tool, args = QUESTIONS["no_endpoints"]
            await session.call(tool, args)
            sim.api.request_log.clear()
            await session.call(tool, args)
            assert not sim.api.request_log
            session.forget()
            await session.call(tool, args)
            assert sim.api.request_log
        finally:
            await session.close()
