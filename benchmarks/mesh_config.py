"""What the Istio networking lint (check_mesh_config, analyze_config's mesh_config) costs.

    .venv/bin/python benchmarks/mesh_config.py                  # 5k pods: about 2 minutes
    .venv/bin/python benchmarks/mesh_config.py --pods 2000 --runs 3   # a quick look

One seeded synthetic cluster (``netsight.sim.synthetic.generate``) with, for every Service,
a mesh VirtualService (route to subset v1, a mirror) and a DestinationRule (subset v1 of
its pods, and a subset v9 no pod carries), per namespace an Istio Gateway and a
VirtualService bound to it, and an ingress gateway Deployment and Service. Loaded once as
manifests, then measured in CPU seconds (``time.process_time``; the machine is shared):

- ``cold``: the first call, which reads every Istio object and builds the host map;
- ``warm``: later calls (median of ``--runs``), objects and host map kept by the store;
- ``after-change``: one VirtualService modified before each call, so only the
  VirtualServices are read again;
- ``baseline``, alternated with ``warm`` in the same run: the same analysis through a view
  that keeps nothing between calls and finds pods by scanning every pod (no label index).

Prints JSON. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, TypeVar

from netsight.analyzers.tools import call_tool
from netsight.graph.model.kinds import POD_LIKE_KINDS
from netsight.graph.model.records import Record, WorkloadRecord
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.sim.synthetic import generate

Raw = dict[str, Any]
T = TypeVar("T")


def mesh_config(objects: list[Raw]) -> list[Raw]:
    added: list[Raw] = [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "istio-ingressgateway", "namespace": "istio-system"},
         "spec": {"selector": {"matchLabels": {"istio": "ingressgateway"}},
                  "template": {"metadata": {"labels": {"istio": "ingressgateway"}},
                               "spec": {"containers": [{"name": "istio-proxy",
                                                        "image": "proxyv2"}]}}}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "istio-ingressgateway", "namespace": "istio-system"},
         "spec": {"selector": {"istio": "ingressgateway"},
                  "ports": [{"name": "http2", "port": 80}, {"name": "https", "port": 443}]}},
    ]
    namespaces = set()
    for obj in objects:
        if obj["kind"] != "Service":
            continue
        meta = obj["metadata"]
        ns, name = meta["namespace"], meta["name"]
        namespaces.add(ns)
        selector = obj["spec"].get("selector") or {}
        added += [
            {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
             "metadata": {"name": name, "namespace": ns},
             "spec": {"hosts": [name], "http": [
                 {"match": [{"headers": {"x-canary": {"exact": "1"}}}],
                  "route": [{"destination": {"host": name, "subset": "v9"}}]},
                 {"route": [{"destination": {"host": name, "subset": "v1"}}],
                  "mirror": {"host": name, "subset": "v1"}}]}},
            {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
             "metadata": {"name": name, "namespace": ns},
             "spec": {"host": name, "subsets": [
                 {"name": "v1", "labels": dict(selector)},
                 {"name": "v9", "labels": {**selector, "version": "v9"}}]}},
        ]
    for ns in sorted(namespaces):
        added += [
            {"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
             "metadata": {"name": "edge", "namespace": ns},
             "spec": {"selector": {"istio": "ingressgateway"}, "servers": [
                 {"port": {"number": 80, "name": "http", "protocol": "HTTP"},
                  "hosts": [f"{ns}.example.com"]}]}},
            {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
             "metadata": {"name": "edge", "namespace": ns},
             "spec": {"hosts": [f"{ns}.example.com"], "gateways": ["edge"],
                      "http": [{"route": [{"destination": {"host": "missing"}}]}]}},
        ]
    return objects + added


class NoCacheScanView(GraphView):
    """The baseline: nothing kept between calls, pods found by a scan of every pod."""

    __slots__ = ()

    def derived(self, name: Hashable, kinds: Iterable[str],
                build: Callable[[GraphView], T]) -> T:
        return build(self)

    def matching(self, namespace: str, selector: LabelSelector) -> Iterator[Record]:
        for kind in POD_LIKE_KINDS:
            for record in self.for_each(kind, namespace):
                labels = record.pod_labels if isinstance(record, WorkloadRecord) \
                    else record.labels
                if selector.matches(labels):
                    yield record


def cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    answer = run()
    return time.process_time() - started, answer


def main() -> None:
    parser = argparse.ArgumentParser()
    # The baseline scans every pod for every subset: its cost grows with pods x subsets.
    parser.add_argument("--pods", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    objects = mesh_config(list(generate(pods=args.pods, seed=args.seed).objects()))
    store = GraphStore(source=Source.MANIFESTS, cluster_name="bench")
    gc.disable()
    load_s, _ = cpu(lambda: [store.apply("ADDED", o) for o in objects])
    gc.enable()
    gc.collect()
    gc.freeze()
    view, baseline_view = store.view(), NoCacheScanView(store)

    def check(on: GraphView) -> Any:
        return call_tool(on, "check_mesh_config", {"limit": 500})

    cold_s, answer = cpu(lambda: check(view))
    warm, baseline = [], []
    for _ in range(args.runs):  # alternated, so both see the same machine
        warm.append(cpu(lambda: check(view))[0])
        baseline.append(cpu(lambda: check(baseline_view))[0])
    vs = next(o for o in objects if o["kind"] == "VirtualService")
    changed = []
    for i in range(args.runs):
        vs["spec"]["http"][0]["match"][0]["headers"]["x-canary"]["exact"] = str(i + 2)
        store.apply("MODIFIED", vs)
        changed.append(cpu(lambda: check(view))[0])

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    kinds = ("Pod", "Service", "VirtualService", "DestinationRule", "Gateway")
    print(json.dumps({
        "pods": args.pods, "load_average": os.getloadavg(),
        "objects": {k: sum(1 for o in objects if o["kind"] == k) for k in kinds},
        "load_cpu_s": round(load_s, 2),
        "findings": answer.page.total, "by_code": answer.by_code,
        "cpu_ms": {"cold": round(cold_s * 1000, 1), "warm": ms(warm),
                   "after_change": ms(changed), "baseline": ms(baseline)},
        "baseline / warm": round(statistics.median(baseline) / statistics.median(warm), 2),
    }, indent=1))


if __name__ == "__main__":
    main()
