"""At 5k HTTPRoutes over 50 Gateways: one route resolves in about a millisecond, the whole
cluster in well under a second (the targets of issue #5; bounds here leave room for a
loaded CI machine)."""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest

from netsight.analyzers.catalog import call_tool
from netsight.graph.store import GraphStore, GraphView, Source

GATEWAYS, ROUTES_PER_GATEWAY, SERVICES_PER_NAMESPACE = 50, 100, 20


def _cluster() -> GraphView:
    store = GraphStore(source=Source.CLUSTER)
    store.apply("ADDED", {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                          "metadata": {"name": "c"}, "spec": {"controllerName": "x.io/c"}})
    for n in range(GATEWAYS):
        ns = f"ns{n}"
        store.apply("ADDED", {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": ns, "labels": {"team": "t"}}})
        store.apply("ADDED", {
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": ns},
            "spec": {"gatewayClassName": "c", "listeners": [{
                "name": "http", "port": 80, "protocol": "HTTP", "hostname": "*.example.com",
                "allowedRoutes": {"namespaces": {"from": "Selector",
                                                 "selector": {"matchLabels": {"team": "t"}}}}}]}})
        for s in range(SERVICES_PER_NAMESPACE):
            store.apply("ADDED", {"apiVersion": "v1", "kind": "Service",
                                  "metadata": {"name": f"svc{s}", "namespace": ns},
                                  "spec": {"selector": {"app": f"a{s}"}, "ports": [{"port": 80}]}})
        for r in range(ROUTES_PER_GATEWAY):
            store.apply("ADDED", {
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                "metadata": {"name": f"r{r}", "namespace": ns},
                "spec": {"parentRefs": [{"name": "gw"}], "hostnames": [f"h{r}.example.com"],
                         "rules": [{"matches": [{"path": {"type": "PathPrefix",
                                                          "value": f"/p{r}"}}],
                                    "backendRefs": [{"name": f"svc{r % 20}", "port": 80}]}]}})
    return store.view()


@pytest.fixture(scope="module")
def view() -> GraphView:
    return _cluster()


def _median_ms(view: GraphView, tool: str, args: dict[str, Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call_tool(view, tool, args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def test_one_route_resolves_in_about_a_millisecond(view: GraphView) -> None:
    assert _median_ms(view, "check_route_resolution", {"route": "ns7/r42"}, 50) < 5


def test_the_whole_cluster_resolves_in_well_under_a_second(view: GraphView) -> None:
    assert _median_ms(view, "check_route_resolution", {"limit": 500}, 3) < 3000
    assert _median_ms(view, "check_gateway_status", {"limit": 500}, 3) < 3000


def test_one_request_through_one_gateway(view: GraphView) -> None:
    args = {"host": "h42.example.com", "path": "/p42/x", "gateway": "ns7/gw"}
    assert _median_ms(view, "diff_routes", args, 10) < 100
