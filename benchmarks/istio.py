"""What evaluating Istio authorization costs the policy tools (issue 3).

    .venv/bin/python benchmarks/istio.py                    # 20k pods: about a minute
    .venv/bin/python benchmarks/istio.py --pods 100000 --who 20

One seeded synthetic cluster (``netsight.sim.synthetic.generate``, 10 NetworkPolicies a
namespace) is loaded four times, side by side in the same run:

- ``l4``: as generated — NetworkPolicies only (the baseline);
- ``open``: without its NetworkPolicies (nothing to evaluate: the floor);
- ``mesh`` and ``mesh-open``: each of those with every namespace labelled
  ``istio-injection=enabled``, every pod running an ``istio-proxy`` container and a
  service account of its app, a mesh-wide STRICT PeerAuthentication, and per namespace
  three AuthorizationPolicies
  (ALLOW from the namespace's own principals and from istio-system, DENY on one port, and
  an ALLOW by source ipBlocks for one app).

Then, through ``call_tool``, p50/p99 in ms of ``find_blocking_policies`` for the same random
pod pairs (warm: every model built) and ``who_can_reach`` for the same random destinations,
how many answers each decided, how many were allowed, and in how many Istio had a say.
Prints JSON. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import random
import statistics
import time
from typing import Any

from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.sim.synthetic import generate

Raw = dict[str, Any]


def mesh(objects: list[Raw]) -> list[Raw]:
    found = copy.deepcopy(objects)
    namespaces = []
    for obj in found:
        if obj["kind"] == "Namespace":
            obj["metadata"].setdefault("labels", {})["istio-injection"] = "enabled"
            namespaces.append(obj["metadata"]["name"])
        elif obj["kind"] == "Pod":
            spec = obj["spec"]
            spec["containers"].append({"name": "istio-proxy", "image": "istio/proxyv2"})
            spec["serviceAccountName"] = (obj["metadata"].get("labels") or {}).get(
                "app", "default")
    found.append({"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
                  "metadata": {"name": "default", "namespace": "istio-system"},
                  "spec": {"mtls": {"mode": "STRICT"}}})
    for ns in namespaces:
        def policy(name: str, spec: Raw, ns: str = ns) -> Raw:
            return {"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
                    "metadata": {"name": name, "namespace": ns}, "spec": spec}
        found += [
            policy("same-namespace", {"rules": [{"from": [
                {"source": {"principals": [f"cluster.local/ns/{ns}/*"]}},
                {"source": {"namespaces": ["istio-system"]}}]}]}),
            policy("deny-debug", {"action": "DENY", "rules": [
                {"to": [{"operation": {"ports": ["9999"]}}]}]}),
            policy("by-address", {"selector": {"matchLabels": {"app": "app-0"}},
                                  "rules": [{"from": [{"source": {
                                      "ipBlocks": ["10.0.0.0/9"]}}]}]}),
        ]
    return found


def load(objects: list[Raw]) -> tuple[GraphView, float]:
    store = GraphStore(source=Source.CLUSTER)
    started = time.perf_counter()
    gc.disable()
    for obj in objects:
        store.apply("ADDED", obj)
    gc.enable()
    took = time.perf_counter() - started
    gc.collect()
    gc.freeze()
    return store.view(), took


def stats(times: list[float], answers: list[Any], **extra: Any) -> dict[str, Any]:
    ms = sorted(t * 1000 for t in times)
    return {"p50": round(statistics.median(ms), 3),
            "p99": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 3),
            "runs": len(ms), "decided": sum(1 for a in answers if a is not None), **extra}


def first_port(pod: Raw) -> int:
    for container in pod["spec"].get("containers", []):
        for port in container.get("ports") or ():
            return int(port["containerPort"])
    return 80


def measure(view: GraphView, pairs: list[tuple[Raw, Raw]], targets: list[Raw]
            ) -> dict[str, Any]:
    def name(pod: Raw) -> str:
        return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"

    for src, dst in pairs:  # warm: every model built
        call_tool(view, "find_blocking_policies", {
            "source": name(src), "destination": name(dst), "port": first_port(dst)})
    times, answers, istio = [], [], 0
    for src, dst in pairs:
        started = time.perf_counter()
        answer = call_tool(view, "find_blocking_policies", {
            "source": name(src), "destination": name(dst), "port": first_port(dst)})
        times.append(time.perf_counter() - started)
        answers.append(answer.allowed)
        istio += any("[Istio]" in d.path for d in answer.decisions)
    who_times, who_answers = [], []
    for dst in targets:
        started = time.perf_counter()
        answer = call_tool(view, "who_can_reach", {"destination": name(dst),
                                                   "port": first_port(dst)})
        who_times.append(time.perf_counter() - started)
        who_answers.append(answer.summary.allowed_pods)
    return {"find_blocking_policies": stats(times, answers, istio_decided=istio,
                                            allowed=sum(1 for a in answers if a)),
            "who_can_reach": stats(who_times, who_answers)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--who", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    objects = list(generate(pods=args.pods, policies_per_namespace=10, seed=args.seed)
                   .objects())
    rng = random.Random(args.seed)
    pods = [o for o in objects if o["kind"] == "Pod" and o.get("status", {}).get("podIP")]
    pairs = [(rng.choice(pods), rng.choice(pods)) for _ in range(args.pairs)]
    pairs = [(s, d) for s, d in pairs if s is not d]
    targets = rng.sample(pods, args.who)
    meshed = mesh(objects)
    variants = {"l4": objects, "mesh": meshed,
                "open": [o for o in objects if o["kind"] != "NetworkPolicy"],
                "mesh-open": [o for o in meshed if o["kind"] != "NetworkPolicy"]}
    results: dict[str, Any] = {}
    loads: dict[str, float] = {}
    for variant, chosen in variants.items():
        view, loads[variant] = load(chosen)
        by_key = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
                  for o in chosen if o["kind"] == "Pod"}

        def same(pod: Raw, by_key: dict[tuple[str, str], Raw] = by_key) -> Raw:
            return by_key[(pod["metadata"]["namespace"], pod["metadata"]["name"])]

        results[variant] = measure(view, [(same(s), same(d)) for s, d in pairs],
                                   [same(t) for t in targets])
        del view
        gc.unfreeze()
        gc.collect()
    print(json.dumps({
        "pods": args.pods, "load_average": os.getloadavg(),
        "authorization_policies": sum(1 for o in meshed
                                      if o["kind"] == "AuthorizationPolicy"),
        "load_s": {k: round(v, 2) for k, v in loads.items()},
        **results,
        "p50_ratios": {f"{m} / {b}": {k: round(results[m][k]["p50"] / results[b][k]["p50"], 2)
                                      for k in results[b]}
                       for m, b in (("mesh", "l4"), ("mesh-open", "open"))},
    }, indent=1))


if __name__ == "__main__":
    main()
