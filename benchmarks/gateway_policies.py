"""gateway_get and gateway_list at 5k HTTPRoutes, 50 Gateways and ~10k attached policies.

    .venv/bin/python benchmarks/gateway_policies.py            # under a minute
    .venv/bin/python benchmarks/gateway_policies.py --runs 200

The routing benchmark's cluster (50 Gateways, 100 HTTPRoutes each, 20 Services per
namespace), plus per Gateway 4 policies on the Gateway or a listener, one SecurityPolicy per
route, and one BackendTLSPolicy per Service. Times through ``call_tool``:

- ``gateway_get`` on one Gateway, against ``check_gateway_status`` on the same Gateway (the
  same route resolution without policies) as the baseline;
- how gateway_get finds a Gateway's policies: the graph's ``target_ref`` edges into it
  (``gateway_attachments``), against reading every policy's targetRefs (the scan the edges
  replace), side by side in the same run;
- ``gateway_list`` for the whole cluster, against ``check_gateway_status`` for the whole
  cluster;
- ``check_gateway_status`` on one Gateway with the backend TLS lookup switched off: what
  finding each backend's BackendTLSPolicy adds to route resolution.

Never part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.backend_tls import BackendTLSPolicies
from netsight.analyzers.routing.policies import KNOWN_KINDS, gateway_attachments, refs_naming
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, GraphView, Source

GW = "gateway.networking.k8s.io"
EG = "gateway.envoyproxy.io/v1alpha1"


def cluster(gateways: int, routes_per_gateway: int, services: int = 20) -> GraphView:
    store = GraphStore(source=Source.CLUSTER)
    store.apply("ADDED", {"apiVersion": f"{GW}/v1", "kind": "GatewayClass",
                          "metadata": {"name": "c"}, "spec": {"controllerName": "x.io/c"}})
    for n in range(gateways):
        ns = f"ns{n}"
        store.apply("ADDED", {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": ns, "labels": {"team": "t"}}})
        store.apply("ADDED", {
            "apiVersion": f"{GW}/v1", "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": ns},
            "spec": {"gatewayClassName": "c", "listeners": [{
                "name": "http", "port": 80, "protocol": "HTTP", "hostname": "*.example.com",
                "allowedRoutes": {"namespaces": {"from": "Selector",
                                                 "selector": {"matchLabels": {"team": "t"}}}}}]}})
        gateway_ref = {"group": GW, "kind": "Gateway", "name": "gw"}
        for kind, section in (("ClientTrafficPolicy", "http"), ("BackendTrafficPolicy", None),
                              ("SecurityPolicy", None), ("EnvoyExtensionPolicy", "http")):
            ref = {**gateway_ref, **({"sectionName": section} if section else {})}
            store.apply("ADDED", {"apiVersion": EG, "kind": kind,
                                  "metadata": {"name": "gw-policy", "namespace": ns},
                                  "spec": {"targetRefs": [ref]}})
        for s in range(services):
            store.apply("ADDED", {"apiVersion": "v1", "kind": "Service",
                                  "metadata": {"name": f"svc{s}", "namespace": ns},
                                  "spec": {"selector": {"app": f"a{s}"},
                                           "ports": [{"name": "https", "port": 80}]}})
            store.apply("ADDED", {
                "apiVersion": f"{GW}/v1", "kind": "BackendTLSPolicy",
                "metadata": {"name": f"svc{s}", "namespace": ns},
                "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": f"svc{s}"}],
                         "validation": {"hostname": f"svc{s}.example.com",
                                        "wellKnownCACertificates": "System"}}})
        for r in range(routes_per_gateway):
            store.apply("ADDED", {
                "apiVersion": f"{GW}/v1", "kind": "HTTPRoute",
                "metadata": {"name": f"r{r}", "namespace": ns},
                "spec": {"parentRefs": [{"name": "gw"}], "hostnames": [f"h{r}.example.com"],
                         "rules": [{"matches": [{"path": {"type": "PathPrefix",
                                                          "value": f"/p{r}"}}],
                                    "backendRefs": [{"name": f"svc{r % services}",
                                                     "port": 80}]}]}})
            store.apply("ADDED", {
                "apiVersion": EG, "kind": "SecurityPolicy",
                "metadata": {"name": f"r{r}", "namespace": ns},
                "spec": {"targetRefs": [{"group": GW, "kind": "HTTPRoute", "name": f"r{r}"}]}})
    gc.freeze()
    return store.view()


def timed(run: Callable[[], object], runs: int) -> dict[str, float]:
    run()  # warm caches built on first use
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"p50": round(statistics.median(times), 3),
            "p99": round(times[min(len(times) - 1, int(len(times) * 0.99))], 3), "runs": runs}


def scan_attachments(view: GraphView, namespace: str, name: str) -> int:
    """The baseline: every policy of every known kind, its targetRefs read."""
    found = 0
    for _, kind in KNOWN_KINDS:
        for policy in view.for_each(kind):
            found += sum(1 for _ in refs_naming(policy, GW, "Gateway", namespace, name))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateways", type=int, default=50)
    parser.add_argument("--routes-per-gateway", type=int, default=100)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    view = cluster(args.gateways, args.routes_per_gateway)
    built = time.perf_counter() - started
    state = Resolver(view).gateway("ns7", "gw")
    assert state is not None
    edges = len(gateway_attachments(view, state))
    assert edges == scan_attachments(view, "ns7", "gw") == 4
    one: dict[str, tuple[Callable[[], object], int]] = {
        "gateway_get one gateway": (
            lambda: call_tool(view, "gateway_get", {"gateway": "ns7/gw"}), args.runs),
        "baseline: check_gateway_status one gateway": (
            lambda: call_tool(view, "check_gateway_status", {"gateway": "ns7/gw"}), args.runs),
        "policies of one gateway through target_ref edges": (
            lambda: gateway_attachments(view, state), args.runs * 10),
        "baseline: policies of one gateway by scanning every policy": (
            lambda: scan_attachments(view, "ns7", "gw"), args.runs),
        "gateway_list whole cluster": (
            lambda: call_tool(view, "gateway_list", {"limit": 500}), 3),
        "baseline: check_gateway_status whole cluster": (
            lambda: call_tool(view, "check_gateway_status", {"limit": 500}), 3),
    }
    results: dict[str, Any] = {name: timed(run, runs) for name, (run, runs) in one.items()}
    # What the backend TLS lookup adds to route resolution: the same query with it off,
    # alternated with it on so that both see the same machine load.
    lookup = BackendTLSPolicies.for_backend

    def without_lookup() -> object:
        BackendTLSPolicies.for_backend = lambda self, service, port: None  # type: ignore[method-assign]
        try:
            return call_tool(view, "check_gateway_status", {"gateway": "ns7/gw"})
        finally:
            BackendTLSPolicies.for_backend = lookup  # type: ignore[method-assign]

    def with_lookup() -> object:
        return call_tool(view, "check_gateway_status", {"gateway": "ns7/gw"})

    pair: dict[str, list[float]] = {"on": [], "off": []}
    for _ in range(args.runs):
        for name, run in (("on", with_lookup), ("off", without_lookup)):
            start = time.perf_counter()
            run()
            pair[name].append((time.perf_counter() - start) * 1000)
    results["check_gateway_status one gateway, backend TLS lookup on/off (alternated)"] = {
        name: round(statistics.median(times), 3) for name, times in pair.items()}
    policies = sum(view.count(kind) for _, kind in KNOWN_KINDS) + view.count("BackendTLSPolicy")
    print(json.dumps({"routes": args.gateways * args.routes_per_gateway,
                      "gateways": args.gateways, "policies": policies,
                      "nodes": view.node_count, "build_s": round(built, 2), "ms": results},
                     indent=1))


if __name__ == "__main__":
    main()
