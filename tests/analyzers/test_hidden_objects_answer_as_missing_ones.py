"""A caller restricted to some namespaces learns nothing from naming an object they may not
read: every tool of the catalog answers them about a hidden object exactly as about one that
does not exist, byte for byte (but for ``metadata.timestamp`` and ``graphGeneration``).

Three graphs hold the same visible objects (``hostile/worlds.py``, namespace ``shop``):
one where namespace ``edge`` holds objects (``hostile/hidden.yaml``), one where ``edge``
exists but is empty, and one without it. A caller allowed ``shop`` only asks each tool about
objects of ``edge`` (hidden; in the third graph of a namespace that does not exist), about
names that exist only there asked for in ``shop``, and proposes objects that name them
(``hostile/questions.py``): the three answers are one.

The table is over ``TOOLS``: a tool without an entry fails the test, so each new tool says
how it is asked about names. The graph generation is left out of the comparison: it counts
every change anywhere, so it tells a restricted caller that (and how often) something they
may not read changed, never what. The same questions over HTTP, and every other endpoint of
``netsight serve``, are compared by ``tests/server/test_hidden_objects_answer_alike_over_http.py``.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.graph.store.scoped import ScopedView
from tests.analyzers.hostile.questions import CASE_IDS, CASES, PROBE, route
from tests.analyzers.hostile.worlds import SCOPE, TAKEN_IN, WORLDS, world


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> str:
    """The answer as the caller reads it, as text: the timestamp and generation left out."""
    args = {"detail": True, **args}
    try:
        data = to_json(call_tool(view, tool, args), detail=True)
    except ToolFailure as failure:
        data = {"error": failure.to_error(tool).model_dump(mode="json")}
    data.get("metadata", {}).pop("timestamp", None)
    data.get("metadata", {}).pop("graphGeneration", None)
    return json.dumps(data, indent=1, sort_keys=True)


def test_every_tool_is_asked_about_hidden_names() -> None:
    assert sorted(CASES) == sorted(TOOLS), "add the new tool's argument sets to CASES"


@pytest.mark.parametrize(("tool", "args"), CASE_IDS,
                         ids=[f"{tool}-{i}" for i, (tool, _) in enumerate(CASE_IDS)])
def test_a_hidden_object_answers_as_a_missing_one(tool: str, args: dict[str, Any]) -> None:
    hidden, empty, none = (answer(ScopedView(world(w).view(), SCOPE), tool, args)
                           for w in ("hidden", "empty", "none"))
    assert "INTERNAL_ERROR" not in hidden
    assert hidden == none, _diff(hidden, none)
    assert empty == none, _diff(empty, none)


# Requests for hosts that only hidden objects serve. A request is answered on the whole graph
# by design (test_every_tool_answers_alike_through_a_scoped_view): whatever takes it is shown
# by its outcome, so these answers differ from those of a graph without the hidden objects;
# but they name no hidden object and show none of its backends.
HOSTS = [{"host": "api.edge.example"}, {"host": "api.edge.example", "port": 8080},
         {"host": "api.edge.example", "via": "gateway shop/ingress"},
         {"host": "api.edge.svc.cluster.local", "via": "mesh", "source_namespace": "shop"},
         {"host": "api.edge.svc.cluster.local", "via": "mesh", "source_namespace": "shop",
          "expected_backend": "edge/api"}]


@pytest.mark.parametrize("args", HOSTS, ids=[str(i) for i in range(len(HOSTS))])
def test_a_host_hidden_objects_serve_is_answered_without_them(args: dict[str, Any]) -> None:
    text = answer(ScopedView(world("hidden").view(), SCOPE), "diff_routes", args)
    shown = json.loads(text)
    assert "error" not in shown
    assert "edge/" not in text.replace('"edge/api"', "")
    assert "readyEndpoints" not in text
    assert all(layer.get("hidden") for layer in shown["layers"]
               if layer["outcome"] in ("forwarded", "503"))


# A route of shop already attached to a Gateway of "edge" (whose outcome the caller is shown,
# unnamed): a proposal may name that Gateway as the live route does, whether or not it exists
# (the graph's pending reference names it then), and no other object of "edge".
NAMING = """apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: attached, namespace: shop}
spec:
  parentRefs: [{name: public, namespace: edge}]
  hostnames: [attached.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
"""


@pytest.mark.parametrize("gateway", ["public", "other"])
def test_a_proposal_names_a_hidden_object_only_as_a_live_visible_one_does(gateway: str) -> None:
    proposed = route(f"{{name: {gateway}, namespace: edge}}")
    answers = {}
    for name in ("hidden", "none"):
        store = GraphStore(source=Source.CLUSTER, cluster_name="test", created_at=TAKEN_IN)
        load_manifests(store, ["-"], stdin=io.StringIO(f"{WORLDS[name]}\n---\n{NAMING}"))
        answers[name] = json.loads(answer(ScopedView(store.view(), SCOPE), "diff_routes",
                                          {**PROBE, "proposed": proposed}))
    if gateway == "public":  # named by shop/attached: proposed alike
        assert all("error" not in a for a in answers.values())
    else:
        assert answers["hidden"] == answers["none"]
        assert "names Gateway edge/other" in answers["none"]["error"]["message"]


def _diff(a: str, b: str) -> str:
    import difflib

    return "\n".join(difflib.unified_diff(b.splitlines(), a.splitlines(), "missing", "hidden",
                                          lineterm="", n=2))[:6000]
