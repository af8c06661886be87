"""kgateway: implementation-specific backends and TrafficPolicy settings, checked against
cases derived from kgateway's own tests (tests/corpus/kgateway; each case's ``source``
names the upstream test and input file).

``routes`` are asked of check_route_resolution (ResolvedRefs of every parent, and each
backend's resolution), ``requests`` of diff_routes (the outcome, the backends reached and
the policies of the layer that takes the request); ``presentCodes`` must be among the
findings and ``absentCodes`` not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView, Source
from tests.conftest import corpus_cases, corpus_id, store_from_yaml

CASES = corpus_cases("kgateway")


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = to_json(call_tool(view, tool, args), detail=True)
    return result


def test_the_corpus_has_cases() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
def test_kgateway_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    view = store_from_yaml((case / "manifests.yaml").read_text(), Source.MANIFESTS).view()
    codes: set[str] = set()
    for want in expected.get("routes", []):
        got = answer(view, "check_route_resolution", {"route": want["route"]})
        codes |= {f["code"] for f in got["findings"]}
        (route,) = got["routes"]
        assert {p["conditions"]["ResolvedRefs"]["status"] for p in route["parents"]} == \
            {want["resolvedRefs"]}
        for backend in want["backends"]:
            seen = next(b for b in route["backends"] if b["backend"] == backend["backend"])
            assert {k: seen.get(k) for k in backend} == backend
    for want in expected.get("requests", []):
        got = answer(view, "diff_routes", {"host": want["host"], "path": want["path"]})
        codes |= {f["code"] for f in got["findings"]}
        (layer,) = got["layers"]
        if "outcome" in want:
            assert layer["outcome"] == want["outcome"]
        if "backends" in want:
            assert [b["backend"] for b in layer["backends"]] == want["backends"]
        if "policies" in want:
            assert layer.get("policies") == want["policies"]
    assert set(expected.get("presentCodes", [])) <= codes
    assert not set(expected.get("absentCodes", [])) & codes
