"""Data-driven analyzer tests: one folder per case under testdata/<analyzer>/<case>/.

- ``cluster.yaml``: the objects (manifests; multi-document YAML);
- ``query.json``: ``{"tool": ..., "args": {...}, "source": "manifests" | "cluster"}``, and
  for a cluster optionally ``"synced": [kinds]``, the kinds whose informers have listed
  (every other kind reads as not watched); optionally ``"namespaces": [...]``, the only
  namespaces the caller may read (the tool answers through a ``ScopedView``);
- ``expected.json``: ``{"codes": [...]}`` — exactly the finding codes the answer holds
  (a sorted multiset; omit the key to leave findings unchecked) — and optionally
  ``"result": {...}``, a subset of the JSON answer that must match (dicts by key, lists
  element by element and of equal length); or ``"error": {...}``, a subset of the
  ToolError the call must fail with (``code``, ``message``); ``"cites"``, the documentation
  sentences the expectation comes from, is for the reader.

The test runs in detail mode and with a page large enough to hold every finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.store.live import GraphView, Source
from netsight.graph.store.scoped import ScopedView
from netsight.graph.store.sync_status import KindStatus, SyncState
from tests.analyzers.recording import RecordingView
from tests.conftest import store_from_yaml

TESTDATA = Path(__file__).parent / "testdata"
CASES = sorted(p.parent for p in TESTDATA.glob("*/*/expected.json"))


def load_case(case: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    query = json.loads((case / "query.json").read_text())
    expected = json.loads((case / "expected.json").read_text())
    return query, expected, (case / "cluster.yaml").read_text()


def run_case(case: Path, *, detail: bool = True) -> tuple[dict[str, Any], RecordingView]:
    query, _, cluster = load_case(case)
    store = store_from_yaml(cluster, Source(query.get("source", "manifests")))
    for kind in query.get("synced", []):
        store.sync[kind] = KindStatus(kind, state=SyncState.SYNCED, synced_at=1.0)
    view = RecordingView(store)
    caller: GraphView = view if "namespaces" not in query else \
        ScopedView(view, query["namespaces"])
    args = {"detail": detail, **query.get("args", {})}
    if "limit" in TOOLS[query["tool"]].args.model_fields:
        args.setdefault("limit", 500)
    try:
        return to_json(call_tool(caller, query["tool"], args), detail=detail), view
    except ToolFailure as failure:
        return {"error": failure.to_error(query["tool"]).model_dump(mode="json")}, view


def assert_subset(expected: Any, actual: Any, path: str = "result") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key}: missing from {sorted(actual)}"
            assert_subset(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{path}: {len(actual)} items, expected {len(expected)}: {actual!r}"
        )
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_subset(e, a, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_case(case: Path) -> None:
    _, expected, _ = load_case(case)
    result, _ = run_case(case)
    if "error" in expected or "error" in result:
        assert_subset({"error": expected.get("error")}, result)
        return
    if "codes" in expected:
        actual = sorted(f["code"] for f in result.get("findings", []))
        assert actual == sorted(expected["codes"]), json.dumps(result.get("findings"), indent=1)
    if "result" in expected:
        assert_subset(expected["result"], result)
