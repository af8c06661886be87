"""The tools asking about many peers at once (who_can_reach, what_can_reach,
reachability_matrix) answer as find_blocking_policies does pair by pair where Linkerd
decides: a namespace whose default policy needs a mesh identity, pods injected by label
(as the injector marks them) or by annotation (manifests), and pods outside the mesh."""

from __future__ import annotations

from typing import Any

from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView, Source
from tests.conftest import store_from_yaml


def _pod(name: str, ns: str, labels: str, ip: str, annotations: str = "{}") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {labels}, annotations: {annotations}}}
spec: {{containers: [{{name: c, image: i, ports: [{{name: http, containerPort: 8080}}]}}]}}
status: {{phase: Running, podIP: {ip}, podIPs: [{{ip: {ip}}}]}}
"""


MESHED = "{app: %s, linkerd.io/control-plane-ns: linkerd}"
CLUSTER = """
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Namespace
metadata:
  name: books
  annotations: {config.linkerd.io/default-inbound-policy: all-authenticated}
""" + _pod("x1", "a", "{app: x}", "10.0.0.1") + _pod(
    "x2", "a", "{app: x}", "10.0.0.2", "{linkerd.io/inject: enabled}") + _pod(
    "api", "books", MESHED % "api", "10.0.1.1") + _pod(
    "web", "books", MESHED % "web", "10.0.1.2") + """---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: books}
spec: {selector: {app: api}, ports: [{port: 8080, targetPort: http}]}
"""
PODS = ("a/x1", "a/x2", "books/api", "books/web")


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = call_tool(view, tool, args).model_dump(mode="json", by_alias=True)
    return found


def pairwise(view: GraphView) -> dict[tuple[str, str], bool]:
    return {(s, d): answer(view, "find_blocking_policies",
                           {"source": s, "destination": d, "port": 8080})["allowed"]
            for s in PODS for d in PODS if s != d}


def test_many_peer_tools_agree_with_the_pairwise_verdicts() -> None:
    view = store_from_yaml(CLUSTER, Source.MANIFESTS).view()
    expected = pairwise(view)
    # Linkerd decides some pairs: the unmeshed pod is refused by books' default policy.
    assert expected[("a/x1", "books/api")] is False
    assert expected[("a/x2", "books/api")] is True
    matrix = answer(view, "reachability_matrix", {"ports": [8080]})
    assert {(e["from"], e["to"]): e["allowed"] for e in matrix["entries"]} == expected
    who = answer(view, "who_can_reach", {"destination": "books/api", "port": 8080})
    allowed = {m for p in who["peers"] if p["allowed"]
               for m in p.get("members") or [f"{p['namespace']}/{p['labels']['app']}"]}
    assert allowed == {s for (s, d), ok in expected.items() if d == "books/api" and ok}
    what = answer(view, "what_can_reach", {"source": "a/x1", "port": 8080})
    reached = {f"{p['namespace']}/{p['labels']['app']}" for p in what["peers"]
               if p.get("namespace") and p["allowed"]}
    assert reached == {d.replace("/x2", "/x") for (s, d), ok in expected.items()
                       if s == "a/x1" and ok}
