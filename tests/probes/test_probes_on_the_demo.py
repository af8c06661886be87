"""Probes on the demo, end to end: ``netsight serve --demo-static --probes`` as the CLI builds
it (the demo's simulator, its kubelet and data plane in-process, the informers, uvicorn), and
``check_connectivity`` over MCP with the SDK's client. Each probe pod is created through the
API, run by the simulated kubelet, answered by the simulated data plane and deleted.

The README's demo section shows the call that finds the demo's probe-only fault; this holds
it to what the demo answers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from netsight.analyzers.core.signatures import ProbeFailure, probe_signature
from netsight.server.cluster import LiveGraph
from netsight.server.config import load_settings
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.demo import load_demo
from netsight.sim.kubelet import KubeletConfig
from tests.conftest import ROOT
from tests.probes.test_probe_tools_over_mcp import answer_of
from tests.server.conftest import serving, serving_settings

pytestmark = pytest.mark.anyio

FRONTEND = "shop/frontend-6f7c-a"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def demo_with_probes(**flags: Any) -> AsyncIterator[tuple[LiveGraph, str]]:
    settings = load_settings({"demo_static": True, "probes": True, "port": 0,
                             "probe_timeout": "10s", **flags}, {})
    async with serving_settings(settings) as (graph, _, url, _):
        yield graph, f"{url}/mcp"


@pytest.fixture(scope="module")
async def demo() -> AsyncIterator[tuple[LiveGraph, str]]:
    async with demo_with_probes() as running:
        yield running


async def check(url: str, source: str, destination: str, port: int) -> dict[str, Any]:
    async with Client(url) as client:
        return answer_of(await client.call_tool("check_connectivity", {
            "source": source, "destination": destination, "port": port}))


async def test_the_readme_fault_is_refused_with_no_listener_first(
        demo: tuple[LiveGraph, str]) -> None:
    graph, url = demo
    answer = await check(url, FRONTEND, "shop/invoices", 80)
    assert answer["observed"]["outcome"] == "refused"
    # Filed as the knowledge base files failed probes: a refusal by a Service with ready
    # endpoints, signed without the names of these pods.
    assert answer["observed"]["failure"] == "CONNECTION_REFUSED"
    assert answer["observed"]["signature"] == probe_signature(ProbeFailure(
        "tcp", "refused", target_kind="Service", ready_endpoints=1)).hash
    assert answer["predicted"]["allowed"] is True
    assert answer["agree"] is False
    first = answer["explanations"][0]
    assert first["cause"] == "no-listener"
    assert graph.probes is not None
    await graph.probes.settled()
    assert not graph.probes.active


async def test_a_healthy_flow_agrees(demo: tuple[LiveGraph, str]) -> None:
    answer = await check(demo[1], "shop/cart-7d9f-a", "shop/frontend", 80)
    assert (answer["observed"]["outcome"], answer["predicted"]["allowed"]) == ("connected", True)
    assert "failure" not in answer["observed"]
    assert "signature" not in answer["observed"]
    assert answer["agree"] is True
    assert answer["explanations"] == []


async def test_a_flow_the_policies_deny_times_out_and_agrees(demo: tuple[LiveGraph, str]
                                                            ) -> None:
    answer = await check(demo[1], FRONTEND, "data/postgres", 5432)
    assert answer["observed"]["outcome"] == "timeout"  # dropped by the cilium-like CNI
    assert answer["predicted"]["allowed"] is False
    assert answer["observed"]["failure"] == "POLICY_DENIED"
    assert answer["agree"] is True


async def test_plaintext_toward_strict_mtls_is_reset_and_agrees(demo: tuple[LiveGraph, str]
                                                                ) -> None:
    answer = await check(demo[1], "pay/billing-0", "pay/ledger", 80)
    assert answer["observed"]["outcome"] == "reset"
    assert answer["predicted"]["allowed"] is False
    assert answer["observed"]["failure"] == "POLICY_DENIED"
    assert answer["agree"] is True


def readme_answer() -> dict[str, Any]:
    """The key lines of the README's check_connectivity answer on the demo, as JSON."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### The demo\n", 1)[1].split("\n### ", 1)[0]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    return dict(orjson.loads("{" + block.replace(", ...]", "]").strip().rstrip(",") + "}"))


async def test_the_readme_shows_what_the_demo_answers(demo: tuple[LiveGraph, str]) -> None:
    shown = readme_answer()
    answer = await check(demo[1], FRONTEND, "shop/invoices", 80)
    for field in ("observed", "predicted"):
        assert shown[field].items() <= answer[field].items(), field
    assert shown["agree"] is answer["agree"] is False
    (first,) = shown["explanations"]
    assert first.items() <= answer["explanations"][0].items()


# --- check_dns_resolution: the static walk beside what a probe pod is answered -------------


async def resolve(url: str, name: str, source: str | None = FRONTEND) -> dict[str, Any]:
    arguments = {"name": name} if source is None else {"name": name, "from": source}
    async with Client(url) as client:
        return answer_of(await client.call_tool("check_dns_resolution", arguments))


async def test_a_service_name_resolves_as_the_graph_says(demo: tuple[LiveGraph, str]) -> None:
    answer = await resolve(demo[1], "cart")
    assert answer["outcome"] == "resolves"
    observed = answer["observed"]
    assert (observed["outcome"], observed["rcode"]) == ("resolved", "NOERROR")
    assert [f"A {a}" for a in observed["answers"]] == answer["answer"]
    assert observed["canonicalName"].startswith("cart.shop.svc.")
    assert observed["identity"] == FRONTEND
    assert answer["agree"] is True
    assert "explanations" not in observed


async def test_a_name_that_does_not_exist_agrees_on_nxdomain(demo: tuple[LiveGraph, str]
                                                            ) -> None:
    answer = await resolve(demo[1], "nosuch.shop.svc.cluster.local")
    assert answer["outcome"] == "nxdomain"
    assert answer["observed"]["rcode"] == "NXDOMAIN"
    assert answer["agree"] is True


async def test_without_from_no_probe_runs(demo: tuple[LiveGraph, str]) -> None:
    graph, url = demo
    assert graph.probes is not None
    created = graph.probes.created
    answer = await resolve(url, "cart.shop", source=None)
    assert answer["outcome"] == "resolves"
    assert "observed" not in answer
    assert "agree" not in answer
    assert graph.probes.created == created


@contextlib.asynccontextmanager
async def demo_sim_with_kubelet() -> AsyncIterator[SimServer]:
    """The demo cluster as ``--demo`` runs it (its kubelet, data plane and EndpointSlice
    controller), in reach of the test: for faults injected into its data plane."""
    sim = SimServer(config=SimConfig(bookmark_interval=0.1), kubelet=KubeletConfig())
    load_demo(sim.state)
    async with sim:
        yield sim


async def test_cluster_dns_down_disagrees_and_says_why(tmp_path: Path) -> None:
    async with demo_sim_with_kubelet() as sim, \
            serving(sim, tmp_path, probes=True, probe_timeout=10.0) as served:
        sim.state.network.configure({"dnsDown": True})
        service = await resolve(served.mcp_url, "cart")
        missing = await resolve(served.mcp_url, "nosuch.shop.svc.cluster.local")
    for answer in (service, missing):
        assert answer["observed"]["rcode"] == "SERVFAIL"
        assert answer["agree"] is False
        (why,) = answer["observed"]["explanations"]
        assert (why["cause"], why["likelihood"]) == ("dns", "high")
        assert "cluster DNS failed to answer (SERVFAIL)" in why["summary"]
    assert service["observed"]["explanations"][0]["evidence"][1].startswith(
        "the graph answers 'cart': resolves (A 10.")
