"""A proposal's YAML is read on a worker thread by the server (``Tool.prepare``), since
composing a megabyte of YAML takes about a second in C that no deadline can stop; the
answers are those of the CLI's path, which reads it inline, byte for byte."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from netsight.analyzers.core import proposals
from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.store.live import GraphStore, Source
from netsight.server.mcp_tools import ToolHost, run_tool
from tests.analyzers.hostile.questions import CASES
from tests.analyzers.hostile.worlds import world
from tests.conftest import store_from_yaml

pytestmark = pytest.mark.anyio

TESTDATA = Path(__file__).parents[1] / "analyzers" / "testdata" / "diff_routes"
ODD = ["{", "a: [", "- *nowhere", "\ud800", "x" * ((1 << 20) + 1), "[]", "null", "42",
       "l0: &a [x, x]\nl1: &b [*a, *a]\nl2: [*b, *b]\n", '{"kind": "Service"}',
       "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: shop}\n---\n" * 101]


def cases() -> list[tuple[str, str, dict[str, Any]]]:
    found: list[tuple[str, str, dict[str, Any]]] = []
    for case in sorted(TESTDATA.glob("*/query.json")):
        query = json.loads(case.read_text())
        if "proposed" in query.get("args", {}):
            found.append((case.parent.name, (case.parent / "cluster.yaml").read_text(),
                          query["args"]))
    found += [(f"hostile-{i}", "hidden", args)
              for i, args in enumerate(CASES["diff_routes"]) if "proposed" in args]
    found += [(f"odd-{i}", "hidden", {"host": "shop.example.com", "proposed": text})
              for i, text in enumerate(ODD)]
    return found


CASE_LIST = cases()


def inline(store: GraphStore, args: dict[str, Any]) -> dict[str, Any]:
    try:
        return to_json(call_tool(store.view(), "diff_routes", args), detail=True)
    except ToolFailure as failure:
        return {"error": failure.to_error("diff_routes").model_dump(mode="json")}


async def served(store: GraphStore, args: dict[str, Any]) -> dict[str, Any]:
    answer = await run_tool(ToolHost(store=store, tools=TOOLS, timeout=600), "diff_routes",
                            args)
    if answer.is_error:
        return {"error": orjson.loads(answer.content[0].text)}  # type: ignore[union-attr]
    assert answer.structured_content is not None
    return answer.structured_content


def alike(data: dict[str, Any]) -> dict[str, Any]:
    data.get("metadata", {}).pop("timestamp", None)
    return data


def test_there_are_cases() -> None:
    assert sum(1 for name, _, _ in CASE_LIST if not name.startswith(("hostile", "odd"))) >= 5


@pytest.mark.parametrize(("name", "cluster", "args"), CASE_LIST,
                         ids=[name for name, _, _ in CASE_LIST])
async def test_a_proposal_read_off_the_loop_answers_as_one_read_inline(
        name: str, cluster: str, args: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = world(cluster) if cluster == "hidden" else store_from_yaml(cluster,
                                                                        Source.CLUSTER)
    threads: list[str] = []
    read_ahead = proposals.read_ahead

    def spied(text: str) -> Any:
        threads.append(threading.current_thread().name)
        return read_ahead(text)

    monkeypatch.setattr(proposals, "read_ahead", spied)
    args = {"detail": True, **args}
    assert alike(await served(store, args)) == alike(inline(store, args))
    assert len(threads) == 1
    assert threads[0].startswith("netsight-prepare"), threads
