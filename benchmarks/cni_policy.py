"""find_blocking_policies with Cilium or Calico policies, beside the same cluster without them.

    .venv/bin/python benchmarks/cni_policy.py                 # 20k pods
    .venv/bin/python benchmarks/cni_policy.py --pods 5000 --runs 200

One seeded synthetic cluster (``netsight.sim.synthetic.generate``, 40 NetworkPolicies a
namespace) is loaded three times: as generated (the baseline), plus Cilium policies (per
namespace ``--per-namespace`` CiliumNetworkPolicies admitting one app from another, with
an ingressDeny, and 20 CiliumClusterwideNetworkPolicies), and plus Calico policies (the
same shapes as NetworkPolicies and GlobalNetworkPolicies, in two tiers). For the same
random pod pairs, p50/p99 in ms of ``find_blocking_policies`` through ``call_tool``, cold
(first query about a namespace) and warm, and the ratio to the baseline measured in the
same run. Prints JSON. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import time
from typing import Any

from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, Source
from netsight.sim.synthetic import generate

Raw = dict[str, Any]


def apps_by_namespace(objects: list[Raw]) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for obj in objects:
        if obj["kind"] == "Pod":
            app = (obj["metadata"].get("labels") or {}).get("app")
            if app:
                found.setdefault(obj["metadata"]["namespace"], set()).add(app)
    return {ns: sorted(apps) for ns, apps in found.items()}


def cilium(objects: list[Raw], per_namespace: int, rng: random.Random) -> list[Raw]:
    found: list[Raw] = []
    for ns, apps in apps_by_namespace(objects).items():
        for i in range(per_namespace):
            server, client = rng.choice(apps), rng.choice(apps)
            found.append({"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
                          "metadata": {"name": f"c{i}", "namespace": ns}, "spec": {
                              "endpointSelector": {"matchLabels": {"app": server}},
                              "ingress": [{"fromEndpoints": [{"matchLabels": {"app": client}}],
                                           "toPorts": [{"ports": [{"port": "8080"}]}]}],
                              "ingressDeny": [{"fromCIDR": ["192.0.2.0/24"]}]}})
    for i in range(20):
        found.append({"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
                      "metadata": {"name": f"cc{i}"}, "spec": {
                          "endpointSelector": {"matchLabels": {"team": f"t{i}"}},
                          "egress": [{"toEntities": ["cluster"]}, {"toCIDR": ["0.0.0.0/0"]}]}})
    return found


def calico(objects: list[Raw], per_namespace: int, rng: random.Random) -> list[Raw]:
    found: list[Raw] = [{"apiVersion": "projectcalico.org/v3", "kind": "Tier",
                         "metadata": {"name": "security"},
                         "spec": {"order": 100, "defaultAction": "Pass"}}]
    for ns, apps in apps_by_namespace(objects).items():
        for i in range(per_namespace):
            server, client = rng.choice(apps), rng.choice(apps)
            found.append({"apiVersion": "projectcalico.org/v3", "kind": "NetworkPolicy",
                          "metadata": {"name": f"c{i}", "namespace": ns}, "spec": {
                              "order": rng.choice((10, 500, 1500)),
                              "selector": f"app == '{server}'",
                              "ingress": [{"action": "Deny", "source": {
                                  "nets": ["192.0.2.0/24"]}},
                                  {"action": "Allow", "protocol": "TCP", "source": {
                                      "selector": f"app == '{client}'"},
                                   "destination": {"ports": ["8000:8100"]}}]}})
    for i in range(20):
        found.append({"apiVersion": "projectcalico.org/v3", "kind": "GlobalNetworkPolicy",
                      "metadata": {"name": f"g{i}"}, "spec": {
                          "tier": "security", "order": i,
                          "selector": f"team == 't{i}'",
                          "ingress": [{"action": "Pass"}]}})
    return found


def load(objects: list[Raw]) -> GraphStore:
    store = GraphStore(source=Source.CLUSTER)
    gc.disable()
    for obj in objects:
        store.apply("ADDED", obj)
    gc.enable()
    gc.collect()
    return store


def timed(store: GraphStore, pairs: list[tuple[str, str, int]]) -> tuple[list[float], list[Any]]:
    view = store.view()
    times, answers = [], []
    for source, destination, port in pairs:
        started = time.perf_counter()
        result = call_tool(view, "find_blocking_policies", {
            "source": source, "destination": destination, "port": port})
        times.append((time.perf_counter() - started) * 1000)
        answers.append(getattr(result, "allowed", None))
    return times, answers


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered), 3),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--per-namespace", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    objects = list(generate(pods=args.pods, policies_per_namespace=40,
                            seed=args.seed).objects())
    rng = random.Random(args.seed)
    pods = [o for o in objects if o["kind"] == "Pod"]
    pairs = []
    for _ in range(args.runs):
        src, dst = rng.sample(pods, 2)
        containers = dst["spec"].get("containers") or [{}]
        port = ((containers[0].get("ports") or [{}])[0]).get("containerPort", 80)
        pairs.append((f"{src['metadata']['namespace']}/{src['metadata']['name']}",
                      f"{dst['metadata']['namespace']}/{dst['metadata']['name']}", port))
    variants = {"baseline (NetworkPolicies only)": objects,
                "cilium": objects + cilium(objects, args.per_namespace, rng),
                "calico": objects + calico(objects, args.per_namespace, rng)}
    report: dict[str, Any] = {"pods": args.pods, "runs": args.runs,
                              "per_namespace": args.per_namespace,
                              "load_average": os.getloadavg()}
    base: dict[str, float] = {}
    for name, variant in variants.items():
        store = load(variant)
        cold, answers = timed(store, pairs)
        warm, _ = timed(store, pairs)
        entry = {"policies": len(variant) - len(objects), "cold": stats(cold),
                 "warm": stats(warm),
                 "answers": {str(k): answers.count(k) for k in (True, False, None)}}
        if not base:
            base = {"cold": entry["cold"]["p50_ms"], "warm": entry["warm"]["p50_ms"]}
        else:
            entry["p50_vs_baseline"] = {k: round(entry[k]["p50_ms"] / base[k], 2)
                                        for k in ("cold", "warm")}
        report[name] = entry
        del store
        gc.collect()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
