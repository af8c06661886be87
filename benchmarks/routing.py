"""Routing analyzers at 5k HTTPRoutes over 50 Gateways (issue 5's targets).

    .venv/bin/python benchmarks/routing.py            # about a minute
    .venv/bin/python benchmarks/routing.py --runs 200

Builds the graph in-process (every Gateway admits routes from every namespace through a
label selector, one hostname and one path prefix per route), then times the tools through
``call_tool`` - argument validation, analyzer, result model - and prints p50/p99 per query.
Targets: ``check_route_resolution`` for one route <= 1 ms, the whole cluster <= 1 s,
``diff_routes`` p99 <= 2 ms. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from typing import Any

from netsight.analyzers.catalog import call_tool
from netsight.graph.store import GraphStore, GraphView, Source


def cluster(gateways: int, routes_per_gateway: int, services: int = 20) -> GraphView:
    store = GraphStore(source=Source.CLUSTER)
    store.apply("ADDED", {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                          "metadata": {"name": "c"}, "spec": {"controllerName": "x.io/c"}})
    for n in range(gateways):
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
        for s in range(services):
            store.apply("ADDED", {"apiVersion": "v1", "kind": "Service",
                                  "metadata": {"name": f"svc{s}", "namespace": ns},
                                  "spec": {"selector": {"app": f"a{s}"}, "ports": [{"port": 80}]}})
        for r in range(routes_per_gateway):
            store.apply("ADDED", {
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                "metadata": {"name": f"r{r}", "namespace": ns},
                "spec": {"parentRefs": [{"name": "gw"}], "hostnames": [f"h{r}.example.com"],
                         "rules": [{"matches": [{"path": {"type": "PathPrefix",
                                                          "value": f"/p{r}"}}],
                                    "backendRefs": [{"name": f"svc{r % services}",
                                                     "port": 80}]}]}})
    gc.freeze()
    return store.view()


def timings_ms(view: GraphView, tool: str, args: dict[str, Any], runs: int) -> dict[str, float]:
    call_tool(view, tool, args)  # warm caches built on first use
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call_tool(view, tool, args)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"p50": round(statistics.median(times), 3),
            "p99": round(times[min(len(times) - 1, int(len(times) * 0.99))], 3),
            "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateways", type=int, default=50)
    parser.add_argument("--routes-per-gateway", type=int, default=100)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    view = cluster(args.gateways, args.routes_per_gateway)
    built = time.perf_counter() - started
    queries = {
        "check_route_resolution one route": ("check_route_resolution", {"route": "ns7/r42"},
                                             args.runs),
        "check_route_resolution whole cluster": ("check_route_resolution", {"limit": 500}, 3),
        "check_gateway_status whole cluster": ("check_gateway_status", {"limit": 500}, 3),
        "diff_routes through one gateway": (
            "diff_routes", {"host": "h42.example.com", "path": "/p42/x", "gateway": "ns7/gw"},
            args.runs),
        "diff_routes every gateway": (
            "diff_routes", {"host": "h42.example.com", "path": "/p42/x"}, max(args.runs // 5, 5)),
    }
    results = {name: timings_ms(view, tool, query, runs)
               for name, (tool, query, runs) in queries.items()}
    print(json.dumps({"routes": args.gateways * args.routes_per_gateway,
                      "gateways": args.gateways, "build_s": round(built, 2),
                      "ms": results}, indent=1))


if __name__ == "__main__":
    main()
