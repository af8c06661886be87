"""Routing analyzers at 5k HTTPRoutes over 50 Gateways (issue 5's targets).

    .venv/bin/python benchmarks/routing.py            # about a minute
    .venv/bin/python benchmarks/routing.py --runs 200

Builds the graph in-process (every Gateway admits routes from every namespace through a
label selector, one hostname and one path prefix per route), then times the tools through
``call_tool`` - argument validation, analyzer, result model - and prints p50/p99 per query.
Targets: ``check_route_resolution`` for one route <= 1 ms, the whole cluster <= 1 s,
``diff_routes`` p99 <= 2 ms. Never part of the test suite.

The baseline, timed in the same run: a naive resolver that answers the every-Gateway
question the obvious way - every Gateway, and for each every route of the cluster (raw
parentRefs), resolved per query with nothing indexed or kept - built from the same
matching and precedence code, so the ratio measures the indexes and caches alone. Its
answer is checked against diff_routes' before anything is timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    HTTP_ROUTE,
    is_gateway_api,
    parent_gateways,
)
from netsight.analyzers.routing.gateway_requests import entry_listeners
from netsight.analyzers.routing.requests import Request, best_hostname, candidates
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType, GraphStore, GraphView, Source
from netsight.graph.store.sync_status import KindStatus, SyncState


def cluster(gateways: int, routes_per_gateway: int, services: int = 20) -> GraphStore:
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
    # As after the informers' initial lists: every kind loaded here is watched and synced
    # (the Services have no EndpointSlices: their backends have no ready endpoints).
    for kind in ("Namespace", "Service", "EndpointSlice", "Pod", "GatewayClass", "Gateway",
                 "HTTPRoute", "GRPCRoute", "ReferenceGrant", "BackendTLSPolicy"):
        store.sync[kind] = KindStatus(kind, state=SyncState.SYNCED, synced_at=time.time())
    gc.freeze()
    return store


def route(namespace: str, name: str, weight: int = 1) -> dict[str, Any]:
    r = int(name[1:])
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"parentRefs": [{"name": "gw"}], "hostnames": [f"h{r}.example.com"],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": f"/p{r}"}}],
                                "backendRefs": [{"name": f"svc{r % 20}", "port": 80,
                                                 "weight": weight}]}]}}


def naive_every_gateway(view: GraphView, host: str, path: str) -> list[tuple[str, str | None]]:
    """The baseline: (entry, the route taking the request) at every Gateway, every route
    of the cluster read for each, nothing indexed and nothing kept between queries."""
    request = Request(host, path)
    resolver = Resolver(view)  # fresh per query
    answer = []
    for record in sorted(view.for_each(GATEWAY), key=lambda r: r.key):
        state = resolver.gateway(record.namespace, record.name) \
            if is_gateway_api(record) else None
        if state is None:
            continue
        for listener in entry_listeners(state, host, None):
            found = []
            for route_record in view.for_each(HTTP_ROUTE):
                if (record.namespace, record.name) not in parent_gateways(route_record):
                    continue
                route = resolver.route(route_record)
                result = resolver.resolve(route)
                if not any(p.gateway is state and listener in p.listeners
                           for p in result.parents):
                    continue
                effective = hostnames.effective(listener.listener.hostname, route.hostnames)
                fits, hostname = best_hostname(effective, request.host)
                if fits:
                    found.extend(candidates(route, hostname, request, set(result.dropped)))
            found.sort(key=lambda cand: cand.rank)
            if found:
                answer.append((f"{state.ref}/{listener.listener.name}", found[0].route.ref))
    return answer


def percentiles(wall: list[float], cpu: list[float], runs: int) -> dict[str, float]:
    """Wall-clock and CPU-time (this process) percentiles: on a machine shared with other
    jobs, wall time includes waiting for a core; CPU time is the analyzer's own."""
    wall.sort()
    cpu.sort()
    at99 = min(len(wall) - 1, int(len(wall) * 0.99))
    return {"p50": round(statistics.median(wall), 3), "p99": round(wall[at99], 3),
            "cpu_p50": round(statistics.median(cpu), 3), "cpu_p99": round(cpu[at99], 3),
            "runs": runs}


def measure(query: Callable[[], object], runs: int,
            before: Callable[[], None] | None = None) -> dict[str, float]:
    wall, cpu = [], []
    for _ in range(runs):
        if before is not None:
            before()
        start, start_cpu = time.perf_counter(), time.process_time()
        query()
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return percentiles(wall, cpu, runs)


def timings_ms(view: GraphView, tool: str, args: dict[str, Any], runs: int,
               before: Callable[[], None] | None = None) -> dict[str, float]:
    call_tool(view, tool, args)  # warm caches built on first use
    return measure(lambda: call_tool(view, tool, args), runs, before)


def baseline_ms(view: GraphView, host: str, path: str, runs: int) -> dict[str, float]:
    return measure(lambda: naive_every_gateway(view, host, path), runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateways", type=int, default=50)
    parser.add_argument("--routes-per-gateway", type=int, default=100)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    store = cluster(args.gateways, args.routes_per_gateway)
    view = store.view()
    built = time.perf_counter() - started
    # Route r42 of ns7 (and its host) at the default scale; the nearest that exists in a
    # smaller cluster (--gateways 5 --routes-per-gateway 20 for a quick check).
    r, n = min(42, args.routes_per_gateway - 1), min(7, args.gateways - 1)
    other = (min(3, args.gateways - 1), min(7, args.routes_per_gateway - 1))
    host, path = f"h{r}.example.com", f"/p{r}/x"
    every = {"host": host, "path": path}
    naive = naive_every_gateway(view, host, path)
    answer = call_tool(view, "diff_routes", every)
    assert naive == [(layer.entry, layer.route) for layer in answer.layers], "answers differ"  # type: ignore[attr-defined]
    churn = iter(range(2, 10**9))

    def change_another_route() -> None:
        # A route the request does not meet changes (the host index moves forward by one
        # change; what other routes' resolutions read is unchanged).
        store.apply(EventType.MODIFIED, route(f"ns{other[0]}", f"r{other[1]}",
                                              weight=next(churn)))

    proposed = json.dumps(route(f"ns{n}", f"r{r}", weight=5))
    queries = {
        "check_route_resolution one route": ("check_route_resolution", {"route": f"ns{n}/r{r}"},
                                             args.runs),
        "check_route_resolution whole cluster": ("check_route_resolution", {"limit": 500}, 3),
        "check_gateway_status whole cluster": ("check_gateway_status", {"limit": 500}, 3),
        "diff_routes through one gateway": (
            "diff_routes", {"host": host, "path": path, "gateway": f"ns{n}/gw"},
            args.runs),
        "diff_routes every gateway": ("diff_routes", every, args.runs),
        "diff_routes every gateway, against=10m": (
            "diff_routes", {**every, "against": "10m"}, args.runs),
        "diff_routes every gateway, proposed (one route's weight)": (
            "diff_routes", {**every, "proposed": proposed}, args.runs),
    }
    results = {name: timings_ms(view, tool, query, runs)
               for name, (tool, query, runs) in queries.items()}
    results["diff_routes every gateway, after another route changed"] = timings_ms(
        view, "diff_routes", every, args.runs, before=change_another_route)
    results["baseline: naive resolver, every gateway"] = baseline = baseline_ms(
        view, host, path, max(args.runs // 10, 5))
    fast = results["diff_routes every gateway"]
    print(json.dumps({"routes": args.gateways * args.routes_per_gateway,
                      "gateways": args.gateways, "build_s": round(built, 2),
                      "ms": results,
                      "baseline_over_diff_routes": {
                          key: round(baseline[key] / fast[key], 1)
                          for key in ("p50", "p99", "cpu_p50", "cpu_p99")}},
                     indent=1))


if __name__ == "__main__":
    main()
