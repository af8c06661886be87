"""Policy what-if at scale: the policy tools with ``proposed``, and diff_reachability.

    .venv/bin/python benchmarks/policy_what_if.py                 # 100k pods
    .venv/bin/python benchmarks/policy_what_if.py --pods 2000     # a quick look

The cluster of ``benchmarks/policy.py`` (synthetic, 40 NetworkPolicies a namespace, 500
AdminNetworkPolicies). Two proposals: one NetworkPolicy replaced in one namespace, and a
new AdminNetworkPolicy denying port 5432 to every pod (it selects every pod of the
cluster). For each, p50/p99 in ms of find_blocking_policies for random pod pairs (live, and
with the proposal), who_can_reach for random pods, a 5,000-entry reachability_matrix page,
and one diff_reachability page (its flows scanned, and the pages the whole diff takes).
Prints JSON. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import yaml

from benchmarks.policy import build, first_port, name
from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.analyzers.tools.diff_reachability import MAX_EVALUATED
from netsight.graph.store.live import GraphView

Raw = dict[str, Any]


def timed(fn: Callable[[], Any], runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1e3)
    times.sort()
    return {"p50": round(statistics.median(times), 2),
            "p99": round(times[min(len(times) - 1, int(len(times) * 0.99))], 2)}


def proposals(objects: list[Raw]) -> dict[str, str]:
    policy = next(o for o in objects if o["kind"] == "NetworkPolicy")
    changed = {**policy, "spec": {**policy["spec"], "ingress": []}}
    anp = {"apiVersion": "policy.networking.k8s.io/v1alpha1", "kind": "AdminNetworkPolicy",
           "metadata": {"name": "what-if-no-5432"},
           "spec": {"priority": 1, "subject": {"namespaces": {}},
                    "ingress": [{"name": "no-db", "action": "Deny",
                                 "from": [{"namespaces": {}}],
                                 "ports": [{"portNumber": {"protocol": "TCP",
                                                           "port": 5432}}]}]}}
    return {"one-networkpolicy": yaml.safe_dump(changed),
            "anp-on-every-pod": yaml.safe_dump(anp)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--anps", type=int, default=500)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    store, objects, _ = build(args.pods, args.anps, args.seed)
    view: GraphView = store.view()
    pods = [o for o in objects if o["kind"] == "Pod"]
    pairs = [(rng.choice(pods), rng.choice(pods)) for _ in range(args.runs)]
    pairs = [(s, d) for s, d in pairs if s is not d]
    out: dict[str, Any] = {"machine": {"nproc": os.cpu_count(), "load": os.getloadavg()},
                           "pods": len(pods), "ms": {}}

    def find(proposed: str | None) -> None:
        for s, d in pairs:
            call_tool(view, "find_blocking_policies", {
                "source": name(s), "destination": name(d), "port": first_port(d),
                **({"proposed": proposed} if proposed else {})})

    out["ms"]["find_live_all_pairs"] = timed(lambda: find(None), 1)
    for label, proposed in proposals(objects).items():
        ms: dict[str, Any] = {}
        ms["find_all_pairs"] = timed(lambda p=proposed: find(p), 1)  # type: ignore[misc]
        who = rng.choice(pods)
        ms["who_can_reach"] = timed(lambda p=proposed, w=who: call_tool(  # type: ignore[misc]
            view, "who_can_reach", {"destination": name(w), "port": first_port(w),
                                    "proposed": p}), 3)
        namespace = who["metadata"]["namespace"]
        ms["matrix_page"] = timed(lambda p=proposed, n=namespace: call_tool(  # type: ignore[misc]
            view, "reachability_matrix", {"namespaces": [n], "ports": [8080, 5432],
                                          "proposed": p}), 1)
        started = time.perf_counter()
        page = to_json(call_tool(view, "diff_reachability",
                                 {"proposed": proposed, "ports": [5432, 8080]}),
                       detail=False)
        ms["diff_page"] = {"ms": round((time.perf_counter() - started) * 1e3, 1),
                           "flows_total": page["page"]["total"],
                           "pages": -(-page["page"]["total"] // MAX_EVALUATED),
                           "changes_on_page": len(page["flows"])}
        out["ms"][label] = ms
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
