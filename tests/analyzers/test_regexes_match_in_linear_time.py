"""Every regex netsight evaluates is matched by RE2, as Envoy matches it: in time linear in the
input, so a pattern that backtracks catastrophically in Python's ``re`` (``/(a+)+b``) cannot
hold the event loop, whether a caller proposes it or a live object in a namespace they cannot
read carries it; and a pattern RE2 refuses is refused with RE2's reason."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from netsight.analyzers.core import regex
from netsight.analyzers.policy.istio_model import path_matches
from netsight.analyzers.routing.requests import Request, matches

LONG = "/" + "a" * 5_000  # Python's re needs minutes for /(a+)+b on 41 characters

ROUTES = """
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: hidden}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: example
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: evil, namespace: hidden}
spec:
  parentRefs: [{name: edge, namespace: shop}]
  hostnames: [shop.example.com]
  rules:
  - matches:
    - path: {type: RegularExpression, value: "/(a+)+b"}
      headers: [{name: x-id, type: RegularExpression, value: "(a|aa)+c"}]
      queryParams: [{name: q, type: RegularExpression, value: "(a*)*d"}]
    backendRefs: [{name: web, namespace: shop, port: 80}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: evil, namespace: shop}
spec:
  hosts: [web]
  http:
  - match: [{uri: {regex: "/(a+)+b"}}]
    route: [{destination: {host: web}}]
"""

PROPOSED = """
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: proposed, namespace: shop}
spec:
  parentRefs: [{name: edge}]
  hostnames: [shop.example.com]
  rules:
  - matches: [{path: {type: RegularExpression, value: "/(a+)+b"}}]
    backendRefs: [{name: web, port: 80}]
"""

# The calls run in a child process: a backtracking match holds the GIL, so only a process
# boundary (and its timeout) can stop one if a regression brings it back.
CALLS = textwrap.dedent("""
    import json, sys
    from netsight.analyzers.core.calling import to_json
    from netsight.analyzers.tools import call_tool
    from netsight.graph.store.scoped import ScopedView
    from tests.conftest import store_from_yaml
    from tests.analyzers.test_regexes_match_in_linear_time import LONG, PROPOSED, ROUTES

    store = store_from_yaml(ROUTES)
    long_query = {"q": LONG[1:]}
    long_headers = {"x-id": LONG[1:]}
    from netsight.analyzers.policy.istio_model import path_matches
    from netsight.analyzers.routing.requests import Request, matches

    def path_regex(pattern, path):
        return matches({"path": {"type": "RegularExpression", "value": pattern}},
                       Request("h", path))

    answers = {
        "matches": [path_regex("/(a+)+b", LONG), path_regex("/(a+)+b", LONG + "b"),
                    path_regex("/(a|aa)+c", LONG),
                    path_matches("/{**}a{**}a{**}a{**}a{**}b", LONG)],
        "live": call_tool(ScopedView(store.view(), ["shop"]), "diff_routes",
                          {"host": "shop.example.com", "path": LONG,
                           "headers": long_headers, "query": long_query}),
        "proposed": call_tool(store.view(), "diff_routes",
                              {"host": "shop.example.com", "path": LONG + "b",
                               "proposed": PROPOSED}),
        "mesh": call_tool(store.view(), "diff_routes",
                          {"host": "web", "path": LONG, "via": "mesh",
                           "source_namespace": "shop"}),
    }
    json.dump({k: v if k == "matches" else to_json(v, detail=False)
               for k, v in answers.items()}, sys.stdout)
""")


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", CALLS], capture_output=True, text=True,
                          timeout=30, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_live_route_in_a_hidden_namespace_is_matched_without_backtracking(
        answers: dict[str, Any]) -> None:
    assert answers["live"]["layers"] == []
    assert [f["code"] for f in answers["live"]["findings"]] == ["NS0514"]  # 404


def test_a_proposed_route_is_matched_without_backtracking(answers: dict[str, Any]) -> None:
    assert answers["proposed"]["layers"] == []
    proposed = answers["proposed"]["proposed"]
    assert proposed["changed"] is True
    assert [(x["route"], x["outcome"]) for x in proposed["layers"]] == [
        ("shop/proposed", "forwarded")]


def test_a_virtual_service_regex_is_matched_without_backtracking(
        answers: dict[str, Any]) -> None:
    assert [(x["route"], x["outcome"]) for x in answers["mesh"]["layers"]] == [
        ("shop/evil", "404")]


def test_patterns_that_backtrack_in_python_are_matched_at_once(
        answers: dict[str, Any]) -> None:
    # /(a+)+b, without and with the b; /(a|aa)+c; an AuthorizationPolicy path template
    # with several {**} (Istio allows {**} only last, but the API server may hold one).
    assert answers["matches"] == [False, True, False, False]


@pytest.mark.parametrize(("pattern", "value", "expected"), [
    ("/v[0-9]+/.*", "/v2/x", True),
    ("/v[0-9]+", "/v2/x", False),  # the whole value, as Envoy's safe_regex
    (r"/\pN+", "/123", True),  # an RE2 class Python's re does not know
])
def test_route_regexes_are_matched_whole_by_re2(pattern: str, value: str,
                                                expected: bool) -> None:
    spec = {"path": {"type": "RegularExpression", "value": pattern}}
    assert matches(spec, Request("h", value)) is expected


@pytest.mark.parametrize(("pattern", "reason"), [
    ("/(?=a)b", "invalid perl operator: (?="),
    (r"(a)\1", r"invalid escape sequence: \1"),
    ("/(a", "missing ): /(a"),
])
def test_a_pattern_re2_refuses_gets_its_reason_and_matches_nothing(pattern: str,
                                                                  reason: str) -> None:
    fits = regex.fullmatcher(pattern)
    assert fits == reason
    spec = {"path": {"type": "RegularExpression", "value": pattern}}
    assert matches(spec, Request("h", "/ab")) is False


def test_authorization_policy_path_templates_match_segments() -> None:
    assert path_matches("/{**}a{**}a{**}a{**}a{**}b", "/xaxaxaxaxb") is True
    assert path_matches("/api/{*}/items.json", "/api/v1/items.json") is True
    assert path_matches("/api/{*}/items.json", "/api/v1/itemsXjson") is False


def test_a_lone_surrogate_is_refused_or_unmatched_not_raised() -> None:
    assert regex.fullmatcher("/.+")("/\ud800") in (True, False)
    assert isinstance(regex.judge("\ud800"), regex.Verdict)
