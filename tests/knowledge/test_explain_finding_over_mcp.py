"""explain_finding over MCP against a served demo cluster with its knowledge base on: the
finding another tool returned, followed up by its signature."""

from __future__ import annotations

import pytest
from mcp import Client

from netsight.knowledge.database import connect
from netsight.knowledge.knowledge_base import knowledge_base
from netsight.server.app import build_service
from netsight.server.cluster import live_graph
from netsight.server.running import HttpServer
from tests.server.conftest import demo_sim, eventually, settings_for, structured
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_finding_is_followed_up_by_its_signature(location: str, tmp_path: object) -> None:
    async with demo_sim() as sim:
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")  # type: ignore[operator]
        settings = settings_for(kubeconfig, knowledge_db=location)
        async with live_graph(settings, informers=FAST) as graph, \
                knowledge_base(location, graph.store, ready=lambda: graph.ready) as kb:
            assert kb is not None
            assert kb.observer is not None
            observer = kb.observer
            server = HttpServer(build_service(graph, settings, knowledge=kb), settings)
            url = await server.start()
            try:
                await eventually(lambda: graph.ready)
                await eventually(lambda: observer.runs > 0 or bool(observer.observe()))
                assert await kb.flush()
                async with Client(f"{url}/mcp") as client:
                    listed = {t.name for t in (await client.list_tools()).tools}
                    found = structured(await client.call_tool(
                        "analyze_config", {"namespace": "shop", "codes": ["NS0101"]}))
                    (finding,) = found["findings"]
                    assert "evidence" not in finding  # compact, the signature kept
                    answer = structured(await client.call_tool(
                        "explain_finding", {"signature": finding["signature"]}))
                    by_finding = structured(await client.call_tool(
                        "explain_finding", {"finding": finding}))
            finally:
                await server.stop()
    assert "explain_finding" in listed
    assert "record_fix_note" not in listed
    assert answer["signature"] == finding["signature"]
    assert answer["pattern"]["signaturePattern"] == \
        "NS0101::Service(spec.selector={2 labels: app,version})"
    assert (answer["pattern"]["occurrences"], answer["affectedNow"]) == (1, 1)
    assert answer["isNewPattern"] is False
    assert answer["history"] == "recorded"
    assert [o["object"] for o in answer["recentOccurrences"]] == ["Service/shop/cart"]
    assert {k: v for k, v in by_finding.items() if k != "metadata"} == \
        {k: v for k, v in answer.items() if k != "metadata"}
    # Closed with the server: the queue was flushed, the rows are there.
    db = connect(location)
    try:
        assert db.query("SELECT count(*) FROM patterns")[0][0] >= 4  # the demo's faults
    finally:
        db.close()
