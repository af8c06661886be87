"""Linkerd's and Kuma's authorization, checked against cases derived from their own
end-to-end tests (tests/corpus/linkerd, tests/corpus/kuma; each case's ``source`` names the
upstream file and test).

Each query is one call of an upstream test: ``allowed`` is whether it succeeds, as
find_blocking_policies answers for the same source, destination, port and (where the test
asks for one) request path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import Source
from tests.conftest import corpus_cases, corpus_id, store_from_yaml

LINKERD_CASES = corpus_cases("linkerd")
KUMA_CASES = corpus_cases("kuma")


def test_the_corpus_holds_the_upstream_cases() -> None:
    assert len(LINKERD_CASES) >= 17
    assert len(KUMA_CASES) >= 11


@pytest.mark.parametrize("case", LINKERD_CASES + KUMA_CASES, ids=corpus_id)
def test_mesh_authorization_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    view = store_from_yaml((case / "manifests.yaml").read_text(), Source.MANIFESTS).view()
    wrong = []
    for query in expected["queries"]:
        args: dict[str, Any] = {"source": query["from"], "destination": query["to"],
                                "port": query["port"], "protocol": query["protocol"]}
        if "path" in query:
            args["path"] = query["path"]
        verdict = call_tool(view, "find_blocking_policies", args).model_dump(
            mode="json", by_alias=True)
        if verdict["allowed"] is not query["allowed"]:
            path = verdict["decisions"][1].get("path", "")
            wrong.append(f"{query['from']} -> {query['to']}:{query['port']}"
                         f"{query.get('path', '')}: allowed {verdict['allowed']}, expected "
                         f"{query['allowed']} ({path}; {verdict.get('reasons')})")
    assert not wrong, "\n".join(wrong)
