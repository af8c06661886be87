"""What a caller allowed only namespace ``shop`` asks each tool about namespace ``edge``
(``worlds.py``): objects there, names that exist only there asked for in ``shop``, and
proposed objects naming them. The table is over ``TOOLS``: a tool without an entry fails
the tests that use it, so each new tool says how it is asked about names."""

from __future__ import annotations

from typing import Any


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


# Policies naming edge: one of edge (replacing a live one, if any), one of shop admitting
# edge's pods, and the deletion of one of edge's.
EDGE_POLICY = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
               "metadata: {name: api, namespace: edge}\nspec: {podSelector: {}}\n")
FROM_EDGE = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
             "metadata: {name: from-edge, namespace: shop}\nspec:\n  podSelector: {}\n"
             "  ingress: [{from: [{namespaceSelector: {matchLabels: "
             "{kubernetes.io/metadata.name: edge}}}]}]\n")
DELETE_EDGE = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
               "metadata: {name: api, namespace: edge, annotations: "
               "{netsight.io/delete: 'true'}}\n")


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
    "explain_finding": [{"code": "NS0101"}, {"signature": "0123456789ab"},
                        {"finding": {"code": "NS0101", "signature": "0123456789ab"}}],
    "record_fix_note": [{"signature": "0123456789ab", "code": "NS0101", "note": "n",
                         "namespace": "edge"},
                        {"signature": "0123456789ab", "code": "NS0101", "note": "n",
                         "namespace": "shop"}],
    "recent_changes": [{"around": "Service/edge/api"}, {"around": "Namespace/edge"},
                       {"around": "Service/shop/api"}, {"namespace": "edge"}, {}],
    "recent_events": [{"object": "Service/edge/api"}, {"object": "edge/api-1"},
                      {"namespace": "edge"}, {"kind": "Pod"}, {}],
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
        {"source": "shop/api-1", "destination": "shop/web-1", "port": 8080,
         "proposed": FROM_EDGE},
        {"source": "shop/api-1", "destination": "shop/web-1", "port": 8080,
         "proposed": DELETE_EDGE},
    ],
    "reachability_matrix": [{"namespaces": ["edge"], "ports": [80]},
                            {"pods": ["edge/api-1"], "ports": [9090]},
                            {"namespaces": ["shop", "edge"], "ports": [8080]},
                            {"namespaces": ["shop"], "ports": [8080], "proposed": FROM_EDGE},
                            {"namespaces": ["shop"], "ports": [8080],
                             "proposed": EDGE_POLICY}],
    "diff_reachability": [{"proposed": EDGE_POLICY, "ports": [80, 9090]},
                          {"proposed": FROM_EDGE, "ports": [8080]},
                          {"proposed": DELETE_EDGE, "ports": [80]},
                          {"proposed": FROM_EDGE, "ports": [8080], "namespaces": ["edge"]}],
    "k8s_networkpolicies": [{"namespace": "edge"}, {}],
    "list_ingresses": [{"namespace": "edge"}, {"ingress_class": "nginx"}, {}],
    "who_can_reach": [{"destination": "edge/api-1", "port": 9090},
                      {"destination": "Service/edge/api", "port": 80},
                      {"destination": "ip:10.0.1.1", "port": 9090},
                      {"destination": "shop/web-1", "port": 8080},
                      {"destination": "shop/web-1", "port": 8080, "proposed": FROM_EDGE}],
    "what_can_reach": [{"source": "edge/api-1"}, {"source": "Service/edge/api"},
                       {"source": "ip:10.0.1.1", "port": 8080},
                       {"source": "shop/client", "port": 9090}],
    "gateway_list": [{"namespace": "edge"}, {}],
    "gateway_get": [{"gateway": "edge/public"}, {"gateway": "shop/public"},
                    {"gateway": "edge/publik"}],
    "check_mesh_config": [{"namespace": "edge"}, {}],
    "check_dns_resolution": [{"name": "api.edge"}, {"name": "api.edge.svc.cluster.local."},
                             {"name": "api", "from": "shop/web-1"},
                             {"name": "api", "from": "edge/api-1"},
                             {"name": "_http._tcp.api.edge.svc.cluster.local."},
                             {"name": "10-0-1-1.edge.pod.cluster.local."}],
    "istio_mtls_status": [
        {"destination": "edge/api-1"}, {"destination": "Service/edge/api", "port": 80},
        {"destination": "shop/web-1", "source": "edge/api-1"},
        {"destination": "shop/web-1", "source": "shop/api-1", "port": 8080},
        {"destination": "Deployment/edge/api"}],
    "check_provider_status": [{}, {"provider": "istio"}, {"provider": "cni"}],
}
CASE_IDS = [(tool, args) for tool, cases in CASES.items() for args in cases]


