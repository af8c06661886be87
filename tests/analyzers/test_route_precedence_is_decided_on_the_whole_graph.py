"""A caller restricted to some namespaces gets the precedence the whole graph gives on a
Gateway shared with namespaces they may not read (a hidden route can take their request, or
hold their listener), the attachedRoutes its controller would write (hidden routes attach
all the same), and a hidden Gateway's verdict on their route (it accepts or refuses it all
the same); never a hidden route's name, nor a hidden Gateway's listeners."""

from __future__ import annotations

import json
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView
from netsight.graph.store.scoped import ScopedView
from tests.conftest import store_from_yaml

CLUSTER = """
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: example
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: panel, namespace: admin}
spec: {selector: {app: panel}, ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: panel, namespace: admin, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  hostnames: [shop.example.com]
  rules:
  - matches: [{path: {type: Exact, value: /admin}}]
    backendRefs: [{name: panel, port: 80}]
"""

OLDER_GRPC = """
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc, namespace: admin, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: panel, port: 80}]}]
"""

SHOP = {"shop", "infra"}


def ask(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return to_json(call_tool(view, tool, args), detail=True)


def test_a_hidden_route_that_takes_the_request_is_shown_as_hidden() -> None:
    view = store_from_yaml(CLUSTER).view()
    request = {"host": "shop.example.com", "path": "/admin", "expected_backend": "shop/web"}

    whole = ask(view, "diff_routes", request)
    scoped = ask(ScopedView(view, SHOP), "diff_routes", request)

    assert whole["layers"][0]["route"] == "admin/panel"
    layer = scoped["layers"][0]
    assert layer["hidden"] is True
    assert layer["outcome"] == whole["layers"][0]["outcome"]
    assert "route" not in layer
    assert layer["backends"] == []
    assert scoped["conflicts"] == [{
        "route": "shop/web", "kind": "HTTPRoute", "rule": 0,
        "shadowedBy": "a route in a namespace you may not read", "because": "exact path"}]
    assert scoped["matchesExpected"] is None  # where the hidden route sends it is not shown
    assert "admin/" not in json.dumps(scoped)


def test_a_request_the_hidden_route_does_not_match_is_answered_in_full() -> None:
    view = store_from_yaml(CLUSTER).view()
    scoped = ask(ScopedView(view, SHOP), "diff_routes",
                 {"host": "shop.example.com", "path": "/cart"})
    assert scoped["layers"][0]["route"] == "shop/web"
    assert scoped["conflicts"] == []


def test_an_older_hidden_grpc_route_holds_the_listener_without_being_named() -> None:
    view = store_from_yaml(CLUSTER + OLDER_GRPC).view()
    args = {"route": "shop/web"}

    whole = ask(view, "check_route_resolution", args)
    scoped = ask(ScopedView(view, SHOP), "check_route_resolution", args)

    accepted = whole["routes"][0]["parents"][0]["conditions"]["Accepted"]
    assert accepted["status"] == "False"
    assert "GRPCRoute admin/rpc" in accepted["message"]
    hidden = scoped["routes"][0]["parents"][0]["conditions"]["Accepted"]
    assert (hidden["status"], hidden["reason"]) == (accepted["status"], accepted["reason"])
    assert "taken by a GRPCRoute in a namespace you may not read" in hidden["message"]
    assert "admin/" not in json.dumps(scoped)


INGRESSES = """
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: old, namespace: admin, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  ingressClassName: nginx
  rules:
  - host: legacy.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: panel, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: new, namespace: shop, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  ingressClassName: nginx
  rules:
  - host: legacy.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
"""


def test_an_older_hidden_ingress_takes_the_request_without_being_named() -> None:
    view = store_from_yaml(CLUSTER + "---" + INGRESSES).view()
    request = {"host": "legacy.example.com", "path": "/"}

    whole = ask(view, "diff_routes", request)
    scoped = ask(ScopedView(view, SHOP), "diff_routes", request)

    assert [(layer["layer"], layer.get("route")) for layer in whole["layers"]] == [
        ("ingress", "admin/old")]
    assert [(layer["layer"], layer.get("hidden")) for layer in scoped["layers"]] == [
        ("ingress", True)]
    assert scoped["conflicts"][0]["route"] == "shop/new"
    assert scoped["conflicts"][0]["shadowedBy"] == "a route in a namespace you may not read"
    assert "admin/" not in json.dumps(scoped)


WITH_STATUS = CLUSTER.replace(
    "  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}\n",
    "  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}\n"
    "status:\n  listeners:\n  - {name: http, attachedRoutes: 2}\n")


@pytest.mark.parametrize("tool", ["check_gateway_status", "gateway_get", "gateway_list"])
def test_attached_routes_count_routes_the_caller_may_not_read(tool: str) -> None:
    view = store_from_yaml(WITH_STATUS).view()
    args = {} if tool == "gateway_list" else {"gateway": "infra/edge"}

    whole = ask(view, tool, args)
    scoped = ask(ScopedView(view, SHOP), tool, args)

    def listener(answer: dict[str, Any]) -> dict[str, Any]:
        gateway = answer["gateways"][0] if "gateways" in answer else answer["gateway"]
        found: dict[str, Any] = gateway["listeners"][0]
        return found

    assert listener(whole)["attachedRoutes"] == 2
    assert listener(scoped)["attachedRoutes"] == 2  # admin/panel attaches, unseen
    assert "disagrees" not in listener(scoped)  # the controller's 2 is right
    assert not [f for f in scoped.get("findings", []) if f["code"] == "NS0513"]
    assert "admin/" not in json.dumps(scoped)


SHOP_ONLY = {"shop"}  # the Gateway's namespace (infra) is hidden too


def test_a_route_on_a_hidden_gateway_gets_its_verdict_without_its_listeners() -> None:
    view = store_from_yaml(CLUSTER.replace("{name: http,", "{name: private-listener,")).view()
    args = {"route": "shop/web"}

    whole = ask(view, "check_route_resolution", args)
    scoped = ask(ScopedView(view, SHOP_ONLY), "check_route_resolution", args)

    parent = scoped["routes"][0]["parents"][0]
    accepted = whole["routes"][0]["parents"][0]["conditions"]["Accepted"]
    assert parent["parent"] == "infra/edge"
    assert (parent["conditions"]["Accepted"]["status"],
            parent["conditions"]["Accepted"]["reason"]) == ("True", "Accepted")
    assert (accepted["status"], accepted["reason"]) == ("True", "Accepted")
    assert "namespace you may not read" in parent["conditions"]["Accepted"]["message"]
    assert "listeners" not in parent
    assert whole["routes"][0]["parents"][0]["listeners"] == ["private-listener"]
    assert scoped["findings"] == []  # not "parent Gateway infra/edge not found"
    assert "private-listener" in json.dumps(whole)
    assert "private-listener" not in json.dumps(scoped)


def test_a_hidden_gateway_that_refuses_the_route_says_so_without_its_listeners() -> None:
    same_only = CLUSTER.replace("allowedRoutes: {namespaces: {from: All}}",
                                "allowedRoutes: {namespaces: {from: Same}}")
    view = store_from_yaml(same_only).view()

    scoped = ask(ScopedView(view, SHOP_ONLY), "check_route_resolution", {"route": "shop/web"})

    accepted = scoped["routes"][0]["parents"][0]["conditions"]["Accepted"]
    assert (accepted["status"], accepted["reason"]) == ("False", "NotAllowedByListeners")
    assert [f["code"] for f in scoped["findings"]] == ["NS0501"]
    assert "http" not in json.dumps(scoped["routes"][0]["parents"])


def test_a_request_routed_only_on_hidden_gateways_shows_the_layer_unnamed() -> None:
    view = store_from_yaml(CLUSTER).view()
    request = {"host": "shop.example.com", "path": "/cart", "expected_backend": "shop/web"}

    whole = ask(view, "diff_routes", request)
    scoped = ask(ScopedView(view, SHOP_ONLY), "diff_routes", request)

    assert [layer["entry"] for layer in whole["layers"]] == ["infra/edge/http"]
    [layer] = scoped["layers"]
    assert layer["entry"] == "a Gateway in a namespace you may not read (#1)"
    assert layer["entryHidden"] is True
    assert "port" not in layer
    # The caller's own route takes the request there: its rule and backends are theirs.
    assert (layer["route"], layer["outcome"]) == ("shop/web", "forwarded")
    assert scoped["findings"] == []  # no "no programmed HTTP/HTTPS listener serves host"
    assert scoped["matchesExpected"] is True
    assert scoped["incomplete"] is None
    assert any("1 listener(s) of Gateways in namespaces you may not read" in note
               for note in scoped["notEvaluated"])
    assert "infra/" not in json.dumps(scoped)
