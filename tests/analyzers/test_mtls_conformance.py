"""Istio mTLS reachability, checked against cases derived from Istio's own integration test
(tests/corpus/mtls; each case's ``source`` names the upstream test case and configs).

Each query is one call of upstream's matrix: ``allowed`` is whether the call succeeds
(find_blocking_policies), ``mtls`` — where it does — whether it went over mTLS, which
istio_mtls_status answers for the same source, destination and port.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView, Source
from tests.conftest import corpus_cases, corpus_id, store_from_yaml

MTLS_CASES = corpus_cases("mtls")


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = call_tool(view, tool, args).model_dump(mode="json", by_alias=True)
    return result


def test_the_corpus_holds_the_upstream_cases() -> None:
    assert len(MTLS_CASES) >= 14


@pytest.mark.parametrize("case", MTLS_CASES, ids=corpus_id)
def test_mtls_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    view = store_from_yaml((case / "manifests.yaml").read_text(), Source.MANIFESTS).view()
    wrong = []
    for query in expected["queries"]:
        args = {"source": query["from"], "destination": query["to"], "port": query["port"]}
        verdict = answer(view, "find_blocking_policies", {**args, "protocol": query["protocol"]})
        if verdict["allowed"] is not query["allowed"]:
            path = verdict["decisions"][1].get("path", "")
            wrong.append(f"{query['from']} -> {query['to']}:{query['port']}: allowed "
                         f"{verdict['allowed']}, expected {query['allowed']} ({path})")
            continue
        if "mtls" not in query:
            continue
        status = answer(view, "istio_mtls_status", args)
        outcomes = {c["outcome"] for row in status["ports"] for c in row["clients"]}
        want = "mtls" if query["mtls"] else "plaintext"
        if outcomes != {want}:
            wrong.append(f"{query['from']} -> {query['to']}:{query['port']}: {outcomes}, "
                         f"expected {want}")
    assert not wrong, "\n".join(wrong)
