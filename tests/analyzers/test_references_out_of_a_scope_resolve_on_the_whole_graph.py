"""A caller restricted to some namespaces gets the status the cluster gives their Gateway and
routes when these reference objects in namespaces they may not read: a listener's certificate
Secret and client CA ConfigMap, a route's backend Service, a consumer route's parent Service,
each permitted by a ReferenceGrant there. Whether they resolve is decided on the whole graph
(a Gateway's status is a fact of the cluster, not of the caller); the answer never names the
hidden ReferenceGrants, EndpointSlices or BackendTLSPolicies, nor says what the hidden
objects hold (a certificate's flaw, a Service's ports, endpoints or TLS)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView
from netsight.graph.store.scoped import ScopedView
from tests.conftest import store_from_yaml

CERTIFICATE_GRANT = """
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: web-gateways-may-read-certs, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: web}]
  to: [{group: "", kind: Secret}, {group: "", kind: ConfigMap, name: client-ca}]
"""
BACKEND_GRANT = """
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: web-routes-may-call-api, namespace: backends}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: web}]
  to: [{group: "", kind: Service, name: api}]
"""

CLUSTER = """
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: web}
spec:
  gatewayClassName: example
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [{group: "", kind: ConfigMap, name: client-ca, namespace: certs}]
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: shop.example.com
    tls: {certificateRefs: [{name: wildcard, namespace: certs}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: broken, namespace: web}
spec:
  gatewayClassName: example
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: broken.example.com
    tls: {certificateRefs: [{name: not-a-cert, namespace: certs}]}
---
apiVersion: v1
kind: Secret
metadata: {name: wildcard, namespace: certs}
type: kubernetes.io/tls
---
apiVersion: v1
kind: Secret
metadata: {name: not-a-cert, namespace: certs}
type: kubernetes.io/tls
stringData: {tls.crt: "hello", tls.key: "world"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: client-ca, namespace: certs}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: web}
spec:
  parentRefs: [{name: edge}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: api, namespace: backends, port: 9090}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: calls-api, namespace: web}
spec:
  parentRefs: [{group: "", kind: Service, name: api, namespace: backends, port: 9090}]
  rules: [{backendRefs: [{name: api, namespace: backends, port: 9090}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: backends}
spec:
  selector: {app: api}
  ports: [{name: https-api, port: 9090, targetPort: 8443}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: api-x7k2q
  namespace: backends
  labels: {kubernetes.io/service-name: api}
addressType: IPv4
ports: [{name: https-api, port: 8443, protocol: TCP}]
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: true}
- addresses: [10.0.0.2]
  conditions: {ready: true}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: api-origination, namespace: backends}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  validation: {hostname: api.internal.example.com, wellKnownCACertificates: System}
"""

WEB = {"web"}
# What only the whole graph holds: hidden objects' names, and what they contain.
HIDDEN = ("web-gateways-may-read-certs", "web-routes-may-call-api", "api-x7k2q",
          "api-origination", "api.internal.example.com", "does not hold", "8443",
          "https-api")


def ask(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    data = to_json(call_tool(view, tool, {"detail": True, **args}), detail=True)
    data["metadata"].pop("timestamp", None)
    return data


def scoped_and_whole(tool: str, args: dict[str, Any], *,
                     grants: tuple[str, ...] = (CERTIFICATE_GRANT, BACKEND_GRANT),
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    view = store_from_yaml(CLUSTER + "".join(grants)).view()
    return ask(ScopedView(view, WEB), tool, args), ask(view, tool, args)


def assert_names_nothing_hidden(data: dict[str, Any]) -> None:
    text = json.dumps(data)
    for hidden in HIDDEN:
        assert hidden not in text, (hidden, text)


def listener(data: dict[str, Any], gateway: str) -> dict[str, Any]:
    found = [g for g in data["gateways"] if g["gateway"] == gateway]
    listeners: list[dict[str, Any]] = found[0]["listeners"]
    return listeners[0]


def conditions(cond: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {kind: (c["status"], c["reason"]) for kind, c in cond.items()}


def test_a_granted_certificate_in_a_hidden_namespace_resolves() -> None:
    scoped, whole = scoped_and_whole("check_gateway_status", {"gateway": "web/edge"})
    https = listener(scoped, "web/edge")
    assert conditions(https["conditions"])["ResolvedRefs"] == ("True", "ResolvedRefs")
    assert conditions(https["conditions"]) == conditions(listener(whole, "web/edge")
                                                         ["conditions"])
    assert scoped["gateways"][0]["conditions"]["Programmed"]["status"] == "True"
    assert_names_nothing_hidden(scoped)


def test_a_malformed_certificate_in_a_hidden_namespace_is_invalid_without_saying_why() -> None:
    scoped, whole = scoped_and_whole("check_gateway_status", {"gateway": "web/broken"})
    resolved = listener(scoped, "web/broken")["conditions"]["ResolvedRefs"]
    assert (resolved["status"], resolved["reason"]) == ("False", "InvalidCertificateRef")
    assert "does not hold" in listener(whole, "web/broken")["conditions"]["ResolvedRefs"][
        "message"]  # the whole graph's caller is told why
    assert "may not read" in resolved["message"]
    assert_names_nothing_hidden(scoped)


def test_without_the_grant_a_hidden_certificate_is_not_permitted() -> None:
    scoped, whole = scoped_and_whole("check_gateway_status", {"gateway": "web/edge"},
                                     grants=(BACKEND_GRANT,))
    resolved = listener(scoped, "web/edge")["conditions"]["ResolvedRefs"]
    assert (resolved["status"], resolved["reason"]) == ("False", "RefNotPermitted")
    assert conditions(listener(scoped, "web/edge")["conditions"]) == conditions(
        listener(whole, "web/edge")["conditions"])


def test_gateway_get_gives_the_clusters_listener_status() -> None:
    scoped, whole = scoped_and_whole("gateway_get", {"gateway": "web/edge"})
    https = scoped["gateway"]["listeners"][0]
    assert conditions(https["conditions"])["ResolvedRefs"] == ("True", "ResolvedRefs")
    assert conditions(https["conditions"]) == conditions(
        whole["gateway"]["listeners"][0]["conditions"])
    assert_names_nothing_hidden(scoped)


def backend(data: dict[str, Any], route: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in data["routes"] if r["route"] == route)
    return found


def test_a_granted_backend_in_a_hidden_namespace_resolves_without_its_endpoints() -> None:
    scoped, whole = scoped_and_whole("check_route_resolution", {"route": "web/shop"})
    route = backend(scoped, "web/shop")
    assert route["parents"][0]["conditions"]["ResolvedRefs"]["status"] == "True"
    [api] = route["backends"]
    assert api["backend"] == "backends/api"
    assert api["resolved"] is True
    assert "readyEndpoints" not in api
    assert "tls" not in api
    # The whole graph's caller sees how the Service is served.
    [seen] = backend(whole, "web/shop")["backends"]
    assert seen["readyEndpoints"] == 2
    assert seen["tls"]["policy"] == "backends/api-origination"
    assert_names_nothing_hidden(scoped)


def test_without_the_grant_a_hidden_backend_is_not_permitted() -> None:
    scoped, whole = scoped_and_whole("check_route_resolution", {"route": "web/shop"},
                                     grants=(CERTIFICATE_GRANT,))
    [api] = backend(scoped, "web/shop")["backends"]
    assert (api["resolved"], api["reason"]) == (False, "RefNotPermitted")
    assert backend(whole, "web/shop")["backends"][0]["reason"] == "RefNotPermitted"


def test_a_consumer_route_of_a_hidden_service_is_accepted_as_the_mesh_would() -> None:
    scoped, whole = scoped_and_whole("check_route_resolution", {"route": "web/calls-api"})
    accepted = backend(scoped, "web/calls-api")["parents"][0]["conditions"]["Accepted"]
    assert (accepted["status"], accepted["reason"]) == ("True", "Accepted")
    assert backend(whole, "web/calls-api")["parents"][0]["conditions"]["Accepted"][
        "status"] == "True"
    assert_names_nothing_hidden(scoped)


@pytest.mark.parametrize("grants", [True, False], ids=["granted", "not-granted"])
def test_diff_routes_forwards_to_a_hidden_backend_without_its_endpoints(grants: bool) -> None:
    args = {"host": "shop.example.com", "port": 443}
    scoped, whole = scoped_and_whole("diff_routes", args, grants=(
        CERTIFICATE_GRANT, BACKEND_GRANT) if grants else (CERTIFICATE_GRANT,))
    [layer] = scoped["layers"]
    assert layer["outcome"] == whole["layers"][0]["outcome"] == \
        ("forwarded" if grants else "500")
    [share] = layer["backends"]
    assert share["backend"] == "backends/api"
    assert share["resolved"] is grants
    assert "readyEndpoints" not in share
    assert "tls" not in share
    if grants:
        assert whole["layers"][0]["backends"][0]["readyEndpoints"] == 2
    assert_names_nothing_hidden(scoped)


def test_diff_routes_kept_layers_are_not_shared_between_scopes() -> None:
    """A layer is kept per rule and listener across requests (the shared resolver's route
    results are the whole graph's): one built for the whole graph's caller must not be
    served to a restricted one, nor the other way round."""
    view = store_from_yaml(CLUSTER + CERTIFICATE_GRANT + BACKEND_GRANT).view()
    args = {"host": "shop.example.com", "port": 443}
    for _ in range(2):
        whole = ask(view, "diff_routes", args)
        scoped = ask(ScopedView(view, WEB), "diff_routes", args)
        assert whole["layers"][0]["backends"][0]["readyEndpoints"] == 2
        assert "readyEndpoints" not in scoped["layers"][0]["backends"][0]
        assert_names_nothing_hidden(scoped)


KGATEWAY_CLUSTER = """
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: kg, namespace: web}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: to-backend, namespace: web}
spec:
  parentRefs: [{name: kg}]
  rules:
  - backendRefs: [{group: gateway.kgateway.dev, kind: Backend, name: vault, namespace: backends}]
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: Backend
metadata: {name: vault, namespace: backends}
spec:
  static:
    hosts: [{host: vault.internal.example, port: 8200}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: web-routes-may-use-vault, namespace: backends}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: web}]
  to: [{group: gateway.kgateway.dev, kind: Backend, name: vault}]
"""


def test_an_implementation_backend_resolves_without_showing_what_it_points_at() -> None:
    view = store_from_yaml(KGATEWAY_CLUSTER).view()
    args = {"route": "web/to-backend"}
    whole = ask(view, "check_route_resolution", args)
    scoped = ask(ScopedView(view, WEB), "check_route_resolution", args)
    for answer in (whole, scoped):
        (backend,) = answer["routes"][0]["backends"]
        assert backend["resolved"] is True
    assert whole["routes"][0]["backends"][0]["targets"] == ["vault.internal.example:8200"]
    assert "targets" not in scoped["routes"][0]["backends"][0]
    assert "vault.internal.example" not in json.dumps(scoped)
