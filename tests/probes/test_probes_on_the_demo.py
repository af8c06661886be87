"""Probes on the demo, end to end: ``netsight serve --demo-static --probes`` as the CLI builds
it (the demo's simulator, its kubelet and data plane in-process, the informers, uvicorn), and
``check_connectivity`` over MCP with the SDK's client. Each probe pod is created through the
API, run by the simulated kubelet, answered by the simulated data plane and deleted.

The README's demo section shows the call that finds the demo's probe-only fault; this holds
it to what the demo answers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from mcp import Client

from netsight.analyzers.tools import TOOLS
from netsight.server.app import build_service
from netsight.server.cluster import LiveGraph, live_graph
from netsight.server.config import load_settings
from netsight.server.running import HttpServer
from tests.conftest import ROOT
from tests.probes.test_probe_tools_over_mcp import answer_of
from tests.server.conftest import eventually
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio

FRONTEND = "shop/frontend-6f7c-a"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def demo_with_probes(**flags: Any) -> AsyncIterator[tuple[LiveGraph, str]]:
    settings = load_settings({"demo_static": True, "probes": True, "port": 0,
                             "probe_timeout": "10s", **flags}, {})
    async with live_graph(settings, informers=FAST) as graph:
        server = HttpServer(build_service(graph, settings, tools=TOOLS), settings)
        url = await server.start()
        try:
            await eventually(lambda: graph.ready)
            yield graph, f"{url}/mcp"
        finally:
            await server.stop()


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
    assert answer["agree"] is True
    assert answer["explanations"] == []


async def test_a_flow_the_policies_deny_times_out_and_agrees(demo: tuple[LiveGraph, str]
                                                            ) -> None:
    answer = await check(demo[1], FRONTEND, "data/postgres", 5432)
    assert answer["observed"]["outcome"] == "timeout"  # dropped by the cilium-like CNI
    assert answer["predicted"]["allowed"] is False
    assert answer["agree"] is True


async def test_plaintext_toward_strict_mtls_is_reset_and_agrees(demo: tuple[LiveGraph, str]
                                                                ) -> None:
    answer = await check(demo[1], "pay/billing-0", "pay/ledger", 80)
    assert answer["observed"]["outcome"] == "reset"
    assert answer["predicted"]["allowed"] is False
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
