"""A caller restricted to some namespaces learns nothing from naming an object they may not
read: every tool of the catalog answers them about a hidden object exactly as about one that
does not exist, byte for byte (but for ``metadata.timestamp`` and ``graphGeneration``).

Three graphs hold the same visible objects (``hostile/visible.yaml``, namespace ``shop``):
one where namespace ``edge`` holds objects (``hostile/hidden.yaml``), one where ``edge``
exists but is empty, and one without it. A caller allowed ``shop`` only asks each tool about
objects of ``edge`` (hidden; in the third graph of a namespace that does not exist), about
names that exist only there asked for in ``shop``, and proposes objects that name them: the
three answers are one.

The table is over ``TOOLS``: a tool without an entry fails the test, so each new tool says
how it is asked about names. The graph generation is left out of the comparison: it counts
every change anywhere, so it tells a restricted caller that (and how often) something they
may not read changed, never what. The HTTP endpoints of ``netsight serve`` are compared by
the server's own tests, not here.
"""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store import live
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.graph.store.scoped import ScopedView
from tests.analyzers.hostile import HIDDEN, VISIBLE

EDGE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: edge}\n"
WORLDS = {"hidden": f"{VISIBLE}\n---\n{EDGE}---\n{HIDDEN}", "empty": f"{VISIBLE}\n---\n{EDGE}",
          "none": VISIBLE}
SCOPE = frozenset({"shop"})
TAKEN_IN = float(int(time.time()) - 60)  # when every graph took in every object


def route(parent: str, *, rules: str = "[{backendRefs: [{name: web, port: 80}]}]") -> str:
    """A proposed HTTPRoute of shop for probe.example.com, its parentRefs ``parent``."""
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: probe, namespace: shop}\n"
            f"spec:\n  parentRefs: [{parent}]\n  hostnames: [probe.example.com]\n"
            f"  rules: {rules}\n")


PROBE = {"host": "probe.example.com"}
LISTENER_SET = ("apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\n"
                "metadata: {name: probe, namespace: shop}\n"
                "spec:\n  parentRef: {name: public, namespace: edge}\n"
                "  listeners: [{name: probe, port: 9000, protocol: HTTP}]\n")
VIRTUAL_SERVICE = ("apiVersion: networking.istio.io/v1\nkind: VirtualService\n"
                   "metadata: {name: probe, namespace: shop}\n"
                   "spec:\n  hosts: [probe.shop.svc.cluster.local]\n  http: [{ROUTE}]\n")
SERVICE = ("apiVersion: v1\nkind: Service\nmetadata: {name: probe, namespace: shop}\n"
           "spec: {selector: {app: web}, ports: [{port: 80}]}\n")


def virtual_service(route_text: str) -> str:
    return SERVICE + "---\n" + VIRTUAL_SERVICE.replace("{ROUTE}", route_text)


MESH = {"host": "probe.shop.svc.cluster.local", "via": "mesh", "source_namespace": "shop"}

# For each tool, argument sets that name objects of "edge" (or names only "edge" holds): a
# tool missing here fails test_every_tool_is_asked_about_hidden_names.
CASES: dict[str, list[dict[str, Any]]] = {
    "diagnose_service": [{"service": "edge/api"}, {"service": "shop/api"},
                         {"service": "edge/api", "port": "http"},
                         {"service": "edge/api", "port": 80}],
    "list_services": [{"namespace": "edge"}, {}],
    "analyze_config": [{"namespace": "edge"}, {}, {"namespace": "edge", "analyzers": ["mesh"]}],
    "recent_changes": [{"around": "Service/edge/api"}, {"around": "Namespace/edge"},
                       {"around": "Service/shop/api"}, {"namespace": "edge"}, {}],
    "check_route_resolution": [{"route": "edge/api"}, {"route": "shop/api"},
                               {"namespace": "edge"}, {"route": "edge/api", "kind": "HTTPRoute"},
                               {}],
    "check_gateway_status": [{"gateway": "edge/public"}, {"gateway": "shop/public"},
                             {"namespace": "edge"}, {}],
    "diff_routes": [
        {"host": "api.edge.example", "gateway": "edge/public"},
        {"host": "api.edge.example", "gateway": "shop/public"},
        {"host": "shop.example.com", "expected_backend": "edge/api"},
        {"host": "api.edge.example", "via": "gateway edge/ingress"},
        {"host": "api.edge.example", "via": "gateway shop/ingress"},
        {"host": "api.edge.svc.cluster.local", "via": "mesh", "source_namespace": "edge"},
        {"host": "web.shop.svc.cluster.local", "via": "mesh", "source_namespace": "shop",
         "expected_backend": "edge/api"},
        {**PROBE, "proposed": route("{name: public, namespace: edge}")},
        {**PROBE, "proposed": route("{name: public, namespace: edge, port: 8080}")},
        {**PROBE, "proposed": route("{name: public, namespace: edge, port: 9090}")},
        {**PROBE, "proposed": route("{name: public, namespace: edge, sectionName: http}")},
        {**PROBE, "proposed": route("{name: public, namespace: edge}"), "port": 8080},
        {**PROBE, "proposed": route("{name: public, namespace: edge}"),
         "gateway": "edge/public"},
        {**PROBE, "proposed": route("{name: extra, namespace: edge, kind: ListenerSet}")},
        {**PROBE, "proposed": route("{name: gw}", rules="[{backendRefs: [{name: api, "
                                    "namespace: edge, port: 80}]}]")},
        {**PROBE, "proposed": route("{name: gw}", rules="[{backendRefs: [{name: api, "
                                    "namespace: edge, port: 80}]}]"),
         "expected_backend": "edge/api"},
        {**PROBE, "proposed": LISTENER_SET},
        {**MESH, "proposed": virtual_service(
            "{route: [{destination: {host: api.edge.svc.cluster.local}}]}")},
        {**MESH, "proposed": virtual_service(
            "{route: [{destination: {host: api.edge.svc.cluster.local, subset: v1}}]}")},
        {**MESH, "proposed": virtual_service("{delegate: {name: api, namespace: edge}}")},
        {**PROBE, "against": 0},
        {**PROBE, "against": "1h"},
    ],
    "find_blocking_policies": [
        {"source": "edge/api-1", "destination": "shop/web-1", "port": 8080},
        {"source": "shop/client", "destination": "Service/edge/api", "port": 80},
        {"source": "shop/client", "destination": "Deployment/edge/api", "port": 9090},
        {"source": "ip:10.0.1.1", "destination": "shop/web-1", "port": 8080},
        {"source": "shop/client", "destination": "ip:10.96.1.10", "port": 80},
        {"source": "shop/api-1", "destination": "shop/web-1", "port": 8080},
    ],
    "reachability_matrix": [{"namespaces": ["edge"], "ports": [80]},
                            {"pods": ["edge/api-1"], "ports": [9090]},
                            {"namespaces": ["shop", "edge"], "ports": [8080]}],
    "k8s_networkpolicies": [{"namespace": "edge"}, {}],
    "list_ingresses": [{"namespace": "edge"}, {"ingress_class": "nginx"}, {}],
    "who_can_reach": [{"destination": "edge/api-1", "port": 9090},
                      {"destination": "Service/edge/api", "port": 80},
                      {"destination": "ip:10.0.1.1", "port": 9090},
                      {"destination": "shop/web-1", "port": 8080}],
    "what_can_reach": [{"source": "edge/api-1"}, {"source": "Service/edge/api"},
                       {"source": "ip:10.0.1.1", "port": 8080},
                       {"source": "shop/client", "port": 9090}],
    "gateway_list": [{"namespace": "edge"}, {}],
    "gateway_get": [{"gateway": "edge/public"}, {"gateway": "shop/public"},
                    {"gateway": "edge/publik"}],
    "check_mesh_config": [{"namespace": "edge"}, {}],
}
CASE_IDS = [(tool, args) for tool, cases in CASES.items() for args in cases]


@functools.cache
def world(name: str) -> GraphStore:
    """The graph called ``name``, every change taken in at one time (the change ring's
    times are then alike in every graph)."""
    at = TAKEN_IN
    store = GraphStore(source=Source.CLUSTER, cluster_name="test", created_at=at)

    class Clock:
        @staticmethod
        def time() -> float:
            return at

    real = live.time
    live.time = Clock  # type: ignore[assignment]
    try:
        load_manifests(store, ["-"], stdin=_text(WORLDS[name]))
    finally:
        live.time = real
    return store


def _text(text: str) -> Any:
    import io

    return io.StringIO(text)


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
        load_manifests(store, ["-"], stdin=_text(f"{WORLDS[name]}\n---\n{NAMING}"))
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
