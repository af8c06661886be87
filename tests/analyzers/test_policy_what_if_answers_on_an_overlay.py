"""Policy what-if: ``proposed`` on find_blocking_policies, who_can_reach and
reachability_matrix, and diff_reachability, answered on an overlay of the live graph.

The reference is the graph with the proposal applied for real (loaded from the manifests as
they would be after it): every answer with ``proposed`` must equal that graph's answer, and
the live graph, its kept models and its answers must be the same afterwards. The corpus
(tests/corpus/whatif) restates np-guard's ``diff`` tests (netpol-analyzer
pkg/netpol/diff/diff_test.go, TestDiff) as diff_reachability questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.policy.kept_models import Kept
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore
from tests.conftest import store_from_yaml

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "whatif"
CASES = sorted(p for p in CORPUS.iterdir() if p.is_dir())

CLUSTER = """
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: shop}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}
status: {phase: Running, podIP: 10.0.0.1}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: shop, labels: {app: db}}
spec: {containers: [{name: c, ports: [{containerPort: 5432}]}]}
status: {phase: Running, podIP: 10.0.0.2}
---
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: other, labels: {app: probe}}
spec: {containers: [{name: c}]}
status: {phase: Running, podIP: 10.0.0.3}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-from-web, namespace: shop}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress: [{from: [{podSelector: {matchLabels: {app: web}}}]}]
"""
# Replaces db-from-web (db open to the other namespace too) and isolates web.
PROPOSED = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-from-web, namespace: shop}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress: [{from: [{podSelector: {matchLabels: {app: web}}},
                    {namespaceSelector: {}}]}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-deny-all, namespace: shop}
spec: {podSelector: {matchLabels: {app: web}}, policyTypes: [Ingress]}
---
apiVersion: policy.networking.k8s.io/v1alpha1
kind: AdminNetworkPolicy
metadata: {name: no-probe-egress}
spec:
  priority: 10
  subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: other}}}
  egress: [{name: deny, action: Deny, to: [{namespaces: {}}],
            ports: [{portNumber: {protocol: TCP, port: 5432}}]}]
"""


def items(document: dict[str, Any]) -> list[dict[str, Any]]:
    """A document's objects: a List's items (of the kind its name gives), or itself."""
    kind = document["kind"]
    if not kind.endswith("List"):
        return [document]
    return [{"kind": kind.removesuffix("List"), "apiVersion": document["apiVersion"], **item}
            for item in document["items"]]


def applied(cluster: str, proposed: str) -> GraphStore:
    """The graph as it would be with ``proposed`` applied (deletions honoured)."""
    objects = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
               for d in yaml.safe_load_all(cluster) if d
               for o in items(d)}
    for o in yaml.safe_load_all(proposed):
        if not o:
            continue
        key = (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
        if (o["metadata"].get("annotations") or {}).get("netsight.io/delete") == "true":
            del objects[key]
        else:
            objects[key] = o
    return store_from_yaml(yaml.safe_dump_all(objects.values()))


def answer(store: GraphStore, tool: str, args: dict[str, Any], *, detail: bool = False
           ) -> dict[str, Any]:
    found = to_json(call_tool(store.view(), tool, {**args, "detail": detail}), detail=detail)
    found.pop("metadata")
    return found


def without_proposed(found: dict[str, Any]) -> dict[str, Any]:
    found.pop("proposed", None)
    for entry in found.get("entries", ()):
        entry.pop("whatIf", None)
    return found


QUESTIONS = [
    ("find_blocking_policies", {"source": "other/probe", "destination": "shop/db",
                                "port": 5432}),
    ("find_blocking_policies", {"source": "shop/db", "destination": "shop/web",
                                "port": 8080}),
    ("who_can_reach", {"destination": "shop/db", "port": 5432}),
    ("who_can_reach", {"destination": "shop/web", "port": 8080}),
    ("reachability_matrix", {"ports": [5432, 8080]}),
]


@pytest.mark.parametrize(("tool", "args"), QUESTIONS)
def test_a_proposal_answers_as_the_applied_graph(tool: str, args: dict[str, Any]) -> None:
    live = store_from_yaml(CLUSTER)
    reference = answer(applied(CLUSTER, PROPOSED), tool, args, detail=True)
    before = answer(live, tool, args, detail=True)
    proposed = answer(live, tool, {**args, "proposed": PROPOSED}, detail=True)
    assert proposed["proposed"] is not None
    assert without_proposed(proposed) == without_proposed(reference)
    assert answer(live, tool, args, detail=True) == before  # the live answer is unchanged


def test_the_live_graph_and_its_keepings_are_untouched() -> None:
    live = store_from_yaml(CLUSTER)
    view = live.view()
    args = {"ports": [5432, 8080]}
    call_tool(view, "reachability_matrix", args)  # warms the models kept with the graph
    kept = view.kept()["policy.engine"]
    assert isinstance(kept, Kept)
    models = dict(kept.models)
    generation, nodes, edges = view.generation, view.node_count, view.edge_count
    policies = sorted(r.key for r in view.for_each("NetworkPolicy"))
    for tool, question in QUESTIONS:
        call_tool(view, tool, {**question, "proposed": PROPOSED})
    call_tool(view, "diff_reachability", {"proposed": PROPOSED, "ports": [5432]})
    assert (view.generation, view.node_count, view.edge_count) == (generation, nodes, edges)
    assert sorted(r.key for r in view.for_each("NetworkPolicy")) == policies
    assert view.count("AdminNetworkPolicy") == 0
    assert view.kept()["policy.engine"] is kept
    assert dict(kept.models) == models  # no proposed model written beneath
    assert all(kept.models[k][1] is m[1] for k, m in models.items())


def test_find_blocking_policies_names_the_live_verdict_and_who_changed_it() -> None:
    live = store_from_yaml(CLUSTER)
    found = answer(live, "find_blocking_policies", {
        "source": "shop/db", "destination": "shop/web", "port": 8080, "proposed": PROPOSED})
    assert found["allowed"] is False
    assert found["proposed"]["live"] == "allowed"
    assert found["proposed"]["by"] == ["NetworkPolicy/shop/web-deny-all"]
    assert found["proposed"]["objects"] == [
        "replace NetworkPolicy/shop/db-from-web", "add NetworkPolicy/shop/web-deny-all",
        "add AdminNetworkPolicy/no-probe-egress"]


def test_diff_reachability_lists_flows_gained_and_lost() -> None:
    live = store_from_yaml(CLUSTER)
    found = answer(live, "diff_reachability", {"proposed": PROPOSED, "ports": [5432, 8080],
                                               "namespaces": ["shop", "other"]})
    flows = {(f["from"], f["to"], f["port"]): (f["diff"], f["by"]) for f in found["flows"]}
    assert flows == {
        # probe -> db on 5432 stays denied: the ANP now denies it before the replaced
        # policy could admit it; on 8080 the replaced policy admits it.
        ("other/probe", "shop/db", 8080): ("added", ["NetworkPolicy/shop/db-from-web"]),
        ("shop/db", "shop/web", 8080): ("removed", ["NetworkPolicy/shop/web-deny-all"]),
        ("other/probe", "shop/web", 8080): ("removed", ["NetworkPolicy/shop/web-deny-all"]),
        ("other/probe", "shop/web", 5432): ("removed", ["AdminNetworkPolicy/no-probe-egress",
                                                        "NetworkPolicy/shop/web-deny-all"]),
        ("shop/db", "shop/web", 5432): ("removed", ["NetworkPolicy/shop/web-deny-all"]),
    }
    assert found["summary"] == {"added": 1, "removed": 4, "changed": 0}


def test_diff_reachability_pages_from_its_cursor() -> None:
    live = store_from_yaml(CLUSTER)
    args = {"proposed": PROPOSED, "ports": [5432, 8080], "namespaces": ["shop", "other"]}
    whole = answer(live, "diff_reachability", args)["flows"]
    seen, cursor = [], None
    while True:
        page = answer(live, "diff_reachability",
                      {**args, "limit": 1, **({"cursor": cursor} if cursor else {})})
        seen += page["flows"]
        cursor = page["page"].get("nextCursor")
        if cursor is None:
            break
    assert seen == whole
    assert len(seen) == 5


@pytest.mark.parametrize("tool", ["find_blocking_policies", "who_can_reach",
                                  "reachability_matrix", "diff_reachability"])
def test_kinds_the_engine_does_not_evaluate_are_refused(tool: str) -> None:
    args = {"find_blocking_policies": {"source": "shop/web", "destination": "shop/db",
                                       "port": 5432},
            "who_can_reach": {"destination": "shop/db", "port": 5432}}.get(
        tool, {"ports": [5432]})
    service = "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: shop}\n"
    with pytest.raises(ToolFailure) as failed:
        call_tool(store_from_yaml(CLUSTER).view(), tool, {**args, "proposed": service})
    assert failed.value.code is ErrorCode.INVALID_INPUT
    assert "v1 Service: not a policy kind" in failed.value.message
    assert "NetworkPolicy, AdminNetworkPolicy" in failed.value.message


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_np_guard_diff_cases(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    assert expected["source"]["repository"] == "np-guard/netpol-analyzer"
    manifests, proposed = (case / "manifests.yaml").read_text(), \
        (case / "proposed.yaml").read_text()
    store = store_from_yaml(manifests)
    assert store.view().problems() == []  # upstream's manifests read whole
    found = answer(store, "diff_reachability", {"proposed": proposed, **expected["args"]})
    assert found["page"].get("nextCursor") is None
    got = [{k: f[k] for k in ("from", "to", "port", "protocol", "diff")}
           for f in found["flows"]]
    assert sorted(got, key=str) == sorted(expected["flows"], key=str)
    # The same flows as two matrices: the live graph's, and the graph with it applied.
    matrix = {"ports": expected["args"]["ports"], "protocols": expected["args"]["protocols"],
              "limit": 20_000}
    before = {(e["from"], e["to"], e["port"], e["protocol"]): e["allowed"]
              for e in answer(store, "reachability_matrix", matrix)["entries"]}
    after = {(e["from"], e["to"], e["port"], e["protocol"]): e["allowed"]
             for e in answer(applied(manifests, proposed), "reachability_matrix",
                             matrix)["entries"]}
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {(f["from"], f["to"], f["port"], f["protocol"]) for f in got}
