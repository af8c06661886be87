"""engine.warm builds ahead the models a policy question would build on its first call
about a namespace; answers must not depend on who built them (a warmed graph against the
same objects loaded cold), and a second pass must find nothing left to build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.policy.engine import warm
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.graph.store.sync_status import KindStatus, SyncState
from netsight.sim.scenarios import demo
from tests.conftest import store_from_yaml

TESTDATA = Path(__file__).parent / "testdata"
POLICY_TOOLS = ("find_blocking_policies", "who_can_reach", "what_can_reach")
CASES = sorted(p.parent for tool in POLICY_TOOLS for p in TESTDATA.glob(f"{tool}/*/query.json"))


def warm_everything(view: GraphView) -> int:
    return warm(view, None) + sum(warm(view, ns) for ns in sorted(view.namespaces()))


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    try:
        data = to_json(call_tool(view, tool, {"detail": True, **args}), detail=True)
    except ToolFailure as failure:
        return {"error": failure.to_error(tool).model_dump(mode="json")}
    data.get("metadata", {}).pop("timestamp", None)
    return data


def case_store(case: Path) -> tuple[GraphStore, dict[str, Any]]:
    query = json.loads((case / "query.json").read_text())
    store = store_from_yaml((case / "cluster.yaml").read_text(),
                            Source(query.get("source", "manifests")))
    for kind in query.get("synced", []):
        store.sync[kind] = KindStatus(kind, state=SyncState.SYNCED, synced_at=1.0)
    return store, query


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_a_warmed_graph_answers_as_a_cold_one(case: Path) -> None:
    warmed, query = case_store(case)
    cold, _ = case_store(case)  # the same objects, other records: its models are not built
    warm_everything(warmed.view())
    assert warm_everything(warmed.view()) == 0
    expected = answer(warmed.view(), query["tool"], query.get("args", {}))
    assert answer(cold.view(), query["tool"], query.get("args", {})) == expected


def test_warming_builds_every_namespace_policy_model_once() -> None:
    store = GraphStore(source=Source.CLUSTER)
    for obj in demo():
        store.apply("ADDED", obj)
    view = store.view()
    assert warm_everything(view) >= view.count("NetworkPolicy") > 0
    assert warm_everything(view) == 0
    before = next(iter(view.for_each("NetworkPolicy")))
    namespace = before.namespace
    assert namespace is not None
    changed = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": {"name": before.name, "namespace": namespace},
               "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                        "ingress": [{"from": [{"podSelector": {"matchLabels": {"x": "y"}}}]}]}}
    store.apply("MODIFIED", changed)
    # Only the replaced policy's model is cold again.
    assert warm(store.view(), namespace) == 1
    assert warm_everything(store.view()) == 0
