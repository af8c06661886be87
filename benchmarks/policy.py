"""Policy analyzers at 100k pods, 10k NetworkPolicies and 500 AdminNetworkPolicies (issue 3).

    .venv/bin/python -m benchmarks.policy                  # 100k pods: a few minutes
    .venv/bin/python -m benchmarks.policy --pods 10000     # a quick look
    .venv/bin/python -m benchmarks.policy --runs 500 --seed 2
    .venv/bin/python -m benchmarks.policy --only who matrix   # some of the measurements

Generates a seeded synthetic cluster (``netsight.sim.synthetic.generate``: 100k pods, ~14k
Services, 40 NetworkPolicies a namespace = 10k), adds 500 AdminNetworkPolicies and a
BaselineAdminNetworkPolicy here (the generator has none), loads everything in-process into
a ``GraphStore`` and calls ``gc.freeze()``. Then, through ``call_tool`` (argument validation,
analyzer, result model), p50/p99 in ms of:

- ``find_blocking_policies`` for random pod pairs (port: the destination's first
  container port), once cold (the first query about a namespace builds its policy models)
  and once more warm (every model built, as in a server that has been answering);
- ``who_can_reach`` for random destination pods; ``what_can_reach`` on port 8080 for
  random source pods;
- full identity reachability for one port (and again on a second port, what the first
  call built kept): every (source identity, destination identity)
  verdict, by the set evaluation (``identity_matrix.reachability``, in full, with the identity
  universe built first); beside it the previous method, who_can_reach's per-identity core
  for each destination identity, timed for a sample and scaled, and compared with the sets
  on that sample;
- one policy change: apply a modified NetworkPolicy (``GraphStore.apply``) plus the next
  ``find_blocking_policies`` about a pod it selects; and apply plus the next
  ``who_can_reach`` about that pod (its identity indexes kept current).

Side by side, in the same run, a naive evaluator written here (raw dicts; for each query
every NetworkPolicy and every ANP is scanned per direction, every pod per peer query; no
index, no cache) answers the same queries, and each ratio is printed. Where the naive
answer would take minutes, a sample is timed and scaled (marked ``scaled``). The two
evaluators' answers are compared on every find_blocking_policies pair. Targets: find
p99 <= 1 ms, who_can_reach p99 <= 20 ms, full identity reachability <= 2 s, one policy
change <= 5 ms. Prints JSON. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import ipaddress
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.cluster import admin_policies
from netsight.analyzers.policy import identity_matrix
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.peer_groups import cluster_endpoints, group
from netsight.analyzers.policy.reach import flow, narrowed_sources, policy_blocks, tally
from netsight.analyzers.policy.universe import Universe, universe
from netsight.analyzers.policy.verdict import Direction
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.sim.synthetic import generate

Raw = dict[str, Any]


# --- the cluster ------------------------------------------------------------------------------


def build(pods: int, anps: int, seed: int) -> tuple[GraphStore, list[Raw], float]:
    cluster = generate(pods=pods, policies_per_namespace=40, seed=seed)
    objects = list(cluster.objects())
    namespaces = [o for o in objects if o["kind"] == "Namespace"]
    objects += admin_policies(namespaces, anps, random.Random(seed))
    store = GraphStore(source=Source.CLUSTER)
    started = time.perf_counter()
    gc.disable()
    for obj in objects:
        store.apply("ADDED", obj)
    gc.enable()
    loaded = time.perf_counter() - started
    gc.collect()
    gc.freeze()
    return store, objects, loaded


# --- the naive evaluator ----------------------------------------------------------------------


def sel_match(sel: Raw | None, labels: Raw) -> bool:
    if sel is None:
        return True
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in sel.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if (op == "In" and labels.get(key) not in values) or \
                (op == "NotIn" and labels.get(key) in values) or \
                (op == "Exists" and key not in labels) or \
                (op == "DoesNotExist" and key in labels):
            return False
    return True


class Naive:
    """NetworkPolicy v1, ANP and BANP from raw objects: every policy scanned per direction."""

    def __init__(self, objects: list[Raw]) -> None:
        self.ns_labels = {o["metadata"]["name"]: {**o["metadata"].get("labels", {}),
                                                  "kubernetes.io/metadata.name":
                                                  o["metadata"]["name"]}
                          for o in objects if o["kind"] == "Namespace"}
        self.pods = [o for o in objects if o["kind"] == "Pod"
                     and o.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
        self.by_name = {(p["metadata"]["namespace"], p["metadata"]["name"]): p
                        for p in self.pods}
        self.netpols = [o for o in objects if o["kind"] == "NetworkPolicy"]
        self.anps = sorted((o for o in objects if o["kind"] == "AdminNetworkPolicy"),
                           key=lambda o: o["spec"]["priority"])
        self.banps = [o for o in objects if o["kind"] == "BaselineAdminNetworkPolicy"]

    def replace(self, policy: Raw) -> None:
        key = (policy["metadata"]["namespace"], policy["metadata"]["name"])
        for i, old in enumerate(self.netpols):
            if (old["metadata"]["namespace"], old["metadata"]["name"]) == key:
                self.netpols[i] = policy

    def change_and_ask(self, policy: Raw, src: Raw, dst: Raw, port: int) -> bool:
        self.replace(policy)
        return self.allowed(src, dst, port)

    @staticmethod
    def ns(pod: Raw) -> str:
        return str(pod["metadata"]["namespace"])

    @staticmethod
    def ips(pod: Raw) -> list[str]:
        status = pod.get("status", {})
        return [p["ip"] for p in status.get("podIPs", [])] or \
            ([status["podIP"]] if status.get("podIP") else [])

    @staticmethod
    def named(pod: Raw, name: str, port: int, proto: str) -> bool:
        return any(p.get("name") == name and p["containerPort"] == port and
                   p.get("protocol", "TCP") == proto
                   for c in pod["spec"].get("containers", []) for p in c.get("ports", []))

    def port_ok(self, entry: Raw, dst: Raw, port: int, proto: str) -> bool:
        if entry.get("protocol", "TCP") != proto:
            return False
        if "port" not in entry:
            return True
        if isinstance(entry["port"], str):
            return self.named(dst, entry["port"], port, proto)
        start: int = entry["port"]
        end: int = entry.get("endPort", start)
        return start <= port <= end

    def peer_ok(self, peer: Raw, other: Raw, policy_ns: str) -> bool:
        if "ipBlock" in peer:
            block = peer["ipBlock"]
            return any(ipaddress.ip_address(ip) in ipaddress.ip_network(block["cidr"]) and
                       not any(ipaddress.ip_address(ip) in ipaddress.ip_network(e)
                               for e in block.get("except", []))
                       for ip in self.ips(other))
        if "namespaceSelector" in peer:
            ns_ok = sel_match(peer["namespaceSelector"], self.ns_labels[self.ns(other)])
        else:
            ns_ok = self.ns(other) == policy_ns
        return ns_ok and sel_match(peer.get("podSelector"), other["metadata"]["labels"])

    def netpol_tier(self, direction: str, subject: Raw, other: Raw, dst: Raw, port: int,
                    proto: str) -> bool | None:
        key = "from" if direction == "ingress" else "to"
        selecting = []
        for policy in self.netpols:
            spec = policy["spec"]
            types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress")
                                                else ["Ingress"])
            if policy["metadata"]["namespace"] == self.ns(subject) and \
                    direction.capitalize() in types and \
                    sel_match(spec.get("podSelector"), subject["metadata"]["labels"]):
                selecting.append(policy)
        if not selecting:
            return None
        for policy in selecting:
            for rule in policy["spec"].get(direction) or []:
                if (not rule.get(key) or any(self.peer_ok(p, other,
                                                          policy["metadata"]["namespace"])
                                             for p in rule[key])) and \
                        (not rule.get("ports") or any(self.port_ok(e, dst, port, proto)
                                                      for e in rule["ports"])):
                    return True
        return False

    def admin_peer_ok(self, peer: Raw, other: Raw) -> bool:
        if "networks" in peer:
            return any(ipaddress.ip_address(ip) in ipaddress.ip_network(n)
                       for n in peer["networks"] for ip in self.ips(other))
        if "namespaces" in peer:
            return sel_match(peer["namespaces"], self.ns_labels[self.ns(other)])
        pods = peer["pods"]
        return sel_match(pods["namespaceSelector"], self.ns_labels[self.ns(other)]) and \
            sel_match(pods["podSelector"], other["metadata"]["labels"])

    def admin_tier(self, policies: list[Raw], direction: str, subject: Raw, other: Raw,
                   port: int, proto: str) -> str | None:
        key = "from" if direction == "ingress" else "to"
        for policy in policies:
            subj = policy["spec"]["subject"]
            if "namespaces" in subj:
                applies = sel_match(subj["namespaces"], self.ns_labels[self.ns(subject)])
            else:
                applies = sel_match(subj["pods"]["namespaceSelector"],
                                    self.ns_labels[self.ns(subject)]) and \
                    sel_match(subj["pods"]["podSelector"], subject["metadata"]["labels"])
            if not applies:
                continue
            for rule in policy["spec"].get(direction, []):
                ports = rule.get("ports")
                if any(self.admin_peer_ok(p, other) for p in rule[key]) and (
                        ports is None or any(e["portNumber"]["port"] == port and
                                             e["portNumber"]["protocol"] == proto
                                             for e in ports)):
                    return str(rule["action"])
        return None

    def direction(self, direction: str, subject: Raw, other: Raw, dst: Raw, port: int,
                  proto: str) -> bool:
        action = self.admin_tier(self.anps, direction, subject, other, port, proto)
        if action in ("Allow", "Deny"):
            return action == "Allow"
        np = self.netpol_tier(direction, subject, other, dst, port, proto)
        if np is not None:
            return np
        return self.admin_tier(self.banps, direction, subject, other, port, proto) != "Deny"

    def allowed(self, src: Raw, dst: Raw, port: int, proto: str = "TCP") -> bool:
        return self.direction("egress", src, dst, dst, port, proto) and \
            self.direction("ingress", dst, src, dst, port, proto)

    def what_can_reach(self, src: Raw, port: int, destinations: list[Raw]) -> int:
        return sum(1 for dst in destinations
                   if dst is not src and self.allowed(src, dst, port))

    def who_can_reach(self, dst: Raw, port: int, sources: list[Raw] | None = None
                      ) -> int:
        return sum(1 for src in (self.pods if sources is None else sources)
                   if src is not dst and self.allowed(src, dst, port))


# --- timing -------------------------------------------------------------------------------------


def stats(times: list[float], **extra: Any) -> dict[str, Any]:
    times = sorted(t * 1000 for t in times)
    return {"p50": round(statistics.median(times), 3),
            "p99": round(times[min(len(times) - 1, int(len(times) * 0.99))], 3),
            "max": round(times[-1], 3), "runs": len(times), **extra}


# CPU time (time.process_time) of the last timed call: on a machine shared with other jobs
# wall time measures the scheduler as much as the work; both are reported.
CPU: list[float] = [0.0]


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    started, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    CPU[0] = time.process_time() - cpu
    return time.perf_counter() - started, result


def first_port(pod: Raw) -> int:
    for container in pod["spec"].get("containers", []):
        for port in container.get("ports", []):
            return int(port["containerPort"])
    return 8080


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--anps", type=int, default=500)
    parser.add_argument("--runs", type=int, default=200, help="find_blocking_policies pairs")
    parser.add_argument("--who-runs", type=int, default=50)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--identity-sample", type=int, default=5,
                        help="destination identities timed for full reachability")
    parser.add_argument("--naive-runs", type=int, default=20)
    parser.add_argument("--naive-sources", type=int, default=300,
                        help="sources the naive who_can_reach is timed on, then scaled")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=("find", "who", "what", "matrix", "change"),
                        nargs="*",
                        help="measure only these (default: all)")
    args = parser.parse_args()
    only = set(args.only or ("find", "who", "what", "matrix", "change"))
    rng = random.Random(args.seed)

    store, objects, loaded = build(args.pods, args.anps, args.seed)
    view: GraphView = store.view()
    naive = Naive(objects)
    pods = naive.pods
    out: dict[str, Any] = {
        "machine": {"nproc": os.cpu_count(), "loadavg_start": os.getloadavg()},
        "cluster": {k: sum(1 for o in objects if o["kind"] == k) for k in (
            "Pod", "Service", "NetworkPolicy", "AdminNetworkPolicy", "Namespace")},
        "load_s": round(loaded, 2), "ms": {"cpu": {}}, "naive_ms": {}, "ratio_p50": {}}
    ms, naive_ms = out["ms"], out["naive_ms"]

    # find_blocking_policies, random pairs; the two evaluators must agree.
    pairs = [(rng.choice(pods), rng.choice(pods)) for _ in range(args.runs)]
    pairs = [(s, d) for s, d in pairs if s is not d]
    if "find" in only:
        measure_find(view, naive, pairs, args, ms, naive_ms)
    if "who" in only:
        measure_who(view, naive, pods, rng, args, ms, naive_ms)
    if "what" in only:
        measure_what(view, naive, pods, rng, args, ms, naive_ms)
    if "matrix" in only:
        measure_matrix(view, naive, pods, pairs, rng, args, ms, naive_ms)
    if "change" in only:
        measure_change(store, view, naive, objects, pods, rng, args, ms, naive_ms)

    for key, naive_key in (("find_blocking_policies", "find_blocking_policies"),
                           ("who_can_reach", "who_can_reach"),
                           ("what_can_reach", "what_can_reach"),
                           ("policy_change_apply_and_query", "policy_change_apply_and_query")):
        if key in ms:
            out["ratio_p50"][key] = round(naive_ms[naive_key]["p50"] / ms[key]["p50"], 1)
    if "full_identity_reachability_8080" in ms:
        out["ratio_p50"]["full_identity_reachability_8080"] = round(
            naive_ms["full_reachability_8080"]["scaled_total"] /
            ms["full_identity_reachability_8080"]["total"], 1)
    out["targets"] = targets(ms, naive_ms)
    out["machine"]["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


def targets(ms: dict[str, Any], naive_ms: dict[str, Any]) -> dict[str, Any]:
    """Each target of issue 3 beside what was measured and the naive evaluator's figure
    from the same run (targets whose part was not measured are left out)."""
    found: dict[str, Any] = {}

    cpu = ms["cpu"]

    def add(name: str, measured: float, limit: float, naive: float | None,
            what: str, cpu_ms: float | None = None) -> None:
        found[name] = {"measured_ms": measured, "cpu_ms": cpu_ms, "target_ms": limit,
                       "met": measured <= limit, "naive_ms": naive, "what": what}

    if "find_blocking_policies" in ms:
        add("find_blocking_policies_p99", ms["find_blocking_policies"]["p99"], 1.0,
            naive_ms["find_blocking_policies"]["p99"], "warm, tool time via call_tool",
            cpu["find_blocking_policies"]["p99"])
    if "what_can_reach" in ms:
        found["what_can_reach_p99"] = {
            "measured_ms": ms["what_can_reach"]["p99"], "cpu_ms": cpu["what_can_reach"]["p99"],
            "target_ms": None, "met": None, "naive_ms": naive_ms["what_can_reach"]["p99"],
            "what": "port 8080 from random pods (no target of its own in issue 3)"}
    if "who_can_reach" in ms:
        add("who_can_reach_p99", ms["who_can_reach"]["p99"], 20.0,
            naive_ms["who_can_reach"]["p99"], "after the first call (identity index built)",
            cpu["who_can_reach"]["p99"])
    if "full_identity_reachability_8080" in ms:
        full = ms["full_identity_reachability_8080"]
        add("full_identity_reachability", full["total"], 2000.0,
            naive_ms["full_reachability_8080"]["scaled_total"],
            f"one port; identity index build {full['universe']} ms of it (0 when kept)",
            cpu["full_identity_reachability_8080"]["total"])
    if "full_identity_reachability_5432_after_8080" in ms:
        add("full_identity_reachability_kept", ms["full_identity_reachability_5432_after_8080"],
            2000.0, None, "another port (5432) right after: what the first call built kept",
            cpu["full_identity_reachability_5432_after_8080"])
    if "policy_change_apply_and_query" in ms:
        add("policy_change_p99", ms["policy_change_apply_and_query"]["p99"], 5.0,
            naive_ms["policy_change_apply_and_query"]["p99"],
            "apply a modified NetworkPolicy + the next find_blocking_policies",
            cpu["policy_change_apply_and_query"]["p99"])
    return found


def name(pod: Raw) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def measure_find(view: GraphView, naive: Naive, pairs: list[tuple[Raw, Raw]],
                 args: argparse.Namespace, ms: dict[str, Any],
                 naive_ms: dict[str, Any]) -> None:
    args_of: list[dict[str, Any]] = [
        {"source": name(s), "destination": name(d), "port": first_port(d)} for s, d in pairs]
    # First pass: the first query about a namespace builds its policy models (cold); the
    # second asks the same pairs again with every model built (warm, as a running server).
    cold, times, disagree = [], [], 0
    for (src, dst), query in zip(pairs, args_of, strict=True):
        took, result = timed(call_tool, view, "find_blocking_policies", query)
        cold.append(took)
        disagree += result.allowed is not naive.allowed(src, dst, query["port"])
    cpu = []
    for query in args_of:
        times.append(timed(call_tool, view, "find_blocking_policies", query)[0])
        cpu.append(CPU[0])
    allowed = sum(1 for s, d in pairs if naive.allowed(s, d, first_port(d)))
    ms["find_blocking_policies_cold"] = stats(cold)
    ms["find_blocking_policies"] = stats(times, allowed_pairs=allowed,
                                         disagreements_with_naive=disagree)
    ms["cpu"]["find_blocking_policies"] = stats(cpu)
    naive_times = [timed(naive.allowed, s, d, first_port(d))[0]
                   for s, d in pairs[:args.naive_runs]]
    naive_ms["find_blocking_policies"] = stats(naive_times)


def measure_who(view: GraphView, naive: Naive, pods: list[Raw], rng: random.Random,
                args: argparse.Namespace, ms: dict[str, Any],
                naive_ms: dict[str, Any]) -> None:
    """who_can_reach, random destinations (the first call builds the identity universe)."""
    destinations = [rng.choice(pods) for _ in range(args.who_runs)]
    times, cpu = [], []
    for dst in destinations:
        query = {"destination": name(dst), "port": first_port(dst)}
        took, result = timed(call_tool, view, "who_can_reach", query)
        times.append(took)
        cpu.append(CPU[0])
    ms["cpu"]["who_can_reach"] = stats(cpu[1:])
    ms["who_can_reach_first"] = round(times[0] * 1000, 1)
    ms["who_can_reach"] = stats(times[1:], allowed_pods_last=result.summary.allowed_pods)
    naive_times = []
    for dst in destinations[:3]:
        sample = rng.sample(pods, min(args.naive_sources, len(pods)))
        took, _ = timed(naive.who_can_reach, dst, first_port(dst), sample)
        naive_times.append(took * len(pods) / len(sample))
    naive_ms["who_can_reach"] = stats(naive_times, scaled_from_sources=args.naive_sources)


def measure_what(view: GraphView, naive: Naive, pods: list[Raw], rng: random.Random,
                 args: argparse.Namespace, ms: dict[str, Any],
                 naive_ms: dict[str, Any]) -> None:
    """what_can_reach on port 8080 from random source pods (the identity index is built by
    then, or by the first call)."""
    sources = [rng.choice(pods) for _ in range(args.who_runs)]
    times, cpu = [], []
    for src in sources:
        took, result = timed(call_tool, view, "what_can_reach",
                             {"source": name(src), "port": 8080})
        times.append(took)
        cpu.append(CPU[0])
    ms["what_can_reach"] = stats(times[1:], allowed_pods_last=result.summary.allowed_pods)
    ms["cpu"]["what_can_reach"] = stats(cpu[1:])
    naive_times = []
    for src in sources[:3]:
        sample = rng.sample(pods, min(args.naive_sources, len(pods)))
        took, _ = timed(naive.what_can_reach, src, 8080, sample)
        naive_times.append(took * len(pods) / len(sample))
    naive_ms["what_can_reach"] = stats(naive_times, scaled_from_destinations=args.naive_sources)


def measure_matrix(view: GraphView, naive: Naive, pods: list[Raw],
                   pairs: list[tuple[Raw, Raw]], rng: random.Random,
                   args: argparse.Namespace, ms: dict[str, Any],
                   naive_ms: dict[str, Any]) -> None:
    """Full identity reachability for one port: the set evaluation over every destination
    identity (identity_matrix.reachability), beside who_can_reach's per-identity core (the
    previous method, sampled and scaled) and the naive evaluator (scaled); the two
    netsight answers are compared on the sampled destinations."""
    engine = PolicyEngine(view, explain=False)
    took_universe, uni = timed(universe, view)
    cpu_universe = CPU[0]
    took_matrix, matrix = timed(identity_matrix.reachability, engine, 8080, "TCP")
    ms["cpu"]["full_identity_reachability_8080"] = {
        "total": round((cpu_universe + CPU[0]) * 1000, 1),
        "universe": round(cpu_universe * 1000, 1)}
    # Once more on another port: the policy models, peer sets and admin answers the first
    # call built are kept with the graph, as in a server that has answered before.
    took_again, _ = timed(identity_matrix.reachability, PolicyEngine(view, explain=False), 5432,
                          "TCP")
    ms["full_identity_reachability_5432_after_8080"] = round(took_again * 1000, 1)
    ms["cpu"]["full_identity_reachability_5432_after_8080"] = round(CPU[0] * 1000, 1)
    assert matrix is not None
    ms["full_identity_reachability_8080"] = {
        "total": round((took_universe + took_matrix) * 1000, 1),
        "universe": round(took_universe * 1000, 1), "identities": len(uni),
        "ingress_classes": matrix.ingress_classes,
        "destinations_per_pod": bin(matrix.per_pod).count("1"),
        "allowed_identity_pairs": sum(bin(b).count("1") for b in matrix.allowed.values()),
        "identity_pairs_per_pod": sum(bin(b).count("1") for b in matrix.exact.values())}
    took_setup, peers = timed(lambda: group(cluster_endpoints(view), policy_blocks(engine),
                                            False))
    sample = rng.sample(peers, min(args.identity_sample, len(peers)))
    per_destination = []
    verdicts = disagree = 0
    for target in sample:
        def core(t: Any = target) -> int:
            # As who_can_reach: the sources through the indexes when the ingress allows.
            narrowed = narrowed_sources(engine, [(t, 8080)], "TCP")
            candidates = peers if narrowed is None else group(narrowed[0], (), False)
            found = tally(candidates, [(t, 8080)], lambda f, p, peer: flow(
                engine, peer, f.rep, 8080, "TCP", Direction.INGRESS))
            nonlocal disagree
            disagree += _disagreements(uni, matrix, t, found)
            return len(found)
        took, count = timed(core)
        per_destination.append(took)
        verdicts += count
    full = took_setup + statistics.mean(per_destination) * len(peers)
    ms["full_identity_reachability_8080_per_identity_engine"] = {
        "scaled_total": round(full * 1000, 1), "identities": len(peers),
        "per_destination_identity_p50": round(statistics.median(per_destination) * 1000, 3),
        "grouping": round(took_setup * 1000, 1), "sampled_destinations": len(sample),
        "disagreements_with_sets": disagree}
    naive_pair = statistics.mean(naive_ms_pair := [
        timed(naive.allowed, s, d, 8080)[0] for s, d in pairs[:20]])
    del naive_ms_pair
    naive_ms["full_reachability_8080"] = {
        "scaled_total": round(naive_pair * len(pods) * (len(pods) - 1) * 1000, 1),
        "note": "mean naive pair time x pod pairs"}


def _disagreements(uni: Universe, matrix: identity_matrix.Matrix, target: Any,
                   found: list[tuple[Any, Any]]) -> int:
    """Source identities the per-identity engine and the sets answer differently for one
    destination identity (sources the sets left to the per-pod path are not compared)."""
    position = uni.index.get((target.namespace, id(target.rep.labels)))
    if position is None or position not in matrix.allowed:
        return 0
    by_content = {(uni.namespaces[i], uni.label_keys[i]): i for i in range(len(uni))}
    engine_allowed = {by_content[(g.namespace, g.labels)] for g, t in found
                      if t.verdict is True and (g.namespace, g.labels) in by_content}
    exact = matrix.exact[position]
    sets_allowed = {i for i in range(len(uni)) if matrix.allowed[position] >> i & 1}
    # The destination's own identity: the engine leaves its pod out; pods of it reach it.
    differ = (engine_allowed ^ sets_allowed) - {position}
    return sum(1 for i in differ if not exact >> i & 1)


def measure_change(store: GraphStore, view: GraphView, naive: Naive, objects: list[Raw],
                   pods: list[Raw], rng: random.Random, args: argparse.Namespace,
                   ms: dict[str, Any], naive_ms: dict[str, Any]) -> None:
    """One policy change: modify a NetworkPolicy, apply it, ask about a pod it selects
    (find_blocking_policies; and, with the identity index built, who_can_reach)."""
    policies = [o for o in objects if o["kind"] == "NetworkPolicy" and
                (o["spec"].get("podSelector") or {}).get("matchLabels", {}).get("app")]
    call_tool(view, "who_can_reach", {"destination": name(pods[0]), "port": 80})  # warm
    apply_times, change_times, naive_change, who_times = [], [], [], []
    change_cpu: list[float] = []
    for i in range(args.changes):
        policy = rng.choice(policies)
        changed = json.loads(json.dumps(policy))
        changed["metadata"]["resourceVersion"] = str(10_000_000 + i)
        for rule in changed["spec"].get("ingress", []) + changed["spec"].get("egress", []):
            rule.setdefault("ports", []).append({"port": 20_000 + i, "protocol": "TCP"})
        app = changed["spec"]["podSelector"]["matchLabels"]["app"]
        namespace = changed["metadata"]["namespace"]
        selected = [p for p in pods if p["metadata"]["namespace"] == namespace and
                    p["metadata"]["labels"].get("app") == app] or pods[:1]
        dst, src = selected[0], rng.choice(pods)
        query = {"source": name(src), "destination": name(dst), "port": 20_000 + i}
        took_apply, _ = timed(store.apply, "MODIFIED", changed)
        cpu_apply = CPU[0]
        took_query, _ = timed(call_tool, view, "find_blocking_policies", query)
        change_cpu.append(cpu_apply + CPU[0])
        apply_times.append(took_apply)
        change_times.append(took_apply + took_query)
        # The same change once more (another port), then who_can_reach about the pod.
        again = json.loads(json.dumps(changed))
        again["metadata"]["resourceVersion"] = str(20_000_000 + i)
        for rule in again["spec"].get("ingress", []) + again["spec"].get("egress", []):
            rule["ports"].append({"port": 30_000 + i, "protocol": "TCP"})
        took_apply, _ = timed(store.apply, "MODIFIED", again)
        took_who, _ = timed(call_tool, view, "who_can_reach",
                            {"destination": name(dst), "port": 30_000 + i})
        who_times.append(took_apply + took_who)
        took_naive, _ = timed(naive.change_and_ask, changed, src, dst, 20_000 + i)
        naive_change.append(took_naive)
    ms["policy_change_apply"] = stats(apply_times)
    ms["policy_change_apply_and_query"] = stats(change_times)
    ms["cpu"]["policy_change_apply_and_query"] = stats(change_cpu)
    ms["policy_change_apply_and_who_can_reach"] = stats(who_times)
    naive_ms["policy_change_apply_and_query"] = stats(naive_change)


if __name__ == "__main__":
    main()
