"""What the event ring (graph/store/event_ring.py) holds and costs at a cluster's scale.

    .venv/bin/python benchmarks/event_ring.py --scale 100k            # ~1 min
    .venv/bin/python benchmarks/event_ring.py --scale 2k --hours 0.1  # a quick functional run

An hour (``--hours``) of a cluster's Events at realistic rates, as events.k8s.io/v1 watch
objects (each ADDED or MODIFIED object decoded from JSON, as the watch does), into one ring
with its default caps. The rates, per hour, for ``--scale`` pods (one Service per ten pods):

- rollouts restart 5% of the pods: Scheduled, Pulling, Pulled, Created, Started and Killing,
  Normal events about Pods (the watch's field selectors leave them out; fed here anyway, to
  count what filtering at ingest costs);
- 0.5% of the pods crash-loop: one BackOff Warning each, its series updated every 5 minutes;
- 1% fail their readiness probe now and then: one Unhealthy Warning each, updated every
  minute for a quarter of the hour;
- 0.1% cannot pull their image (Failed, BackOff) and 0.2% cannot be scheduled
  (FailedScheduling);
- 0.1% of the Services see FailedToUpdateEndpointSlices, 1% of them a load balancer's
  Normal events (EnsuringLoadBalancer, EnsuredLoadBalancer), and one HTTPRoute in a hundred
  Services a controller's Warning.

Then the worst case: a node outage with every pod's readiness failing at once (one new
Unhealthy Warning per pod), which fills the ring to its cap. Reported: the ring's memory
(tracemalloc: what the ring keeps, strings included), events fed per second, and what
diagnose_service's events layer costs (one pass over a namespace's events).
Results as JSON on stdout and in ``benchmarks/out/event-ring-<scale>.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from netsight.graph.store.event_ring import EventRing  # noqa: E402
from netsight.sim.scenarios import parse_scale  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
NAMESPACES = 50
HOUR = 3600.0


def stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1e6):06d}Z"


def event(name: str, ns: str, kind: str, obj: str, event_type: str, reason: str, note: str,
          at: float, count: int = 1, api_version: str = "v1") -> bytes:
    """One watch line's object, as the API server sends it."""
    body: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": str(int(at * 1000)),
                     "uid": f"{name}-uid", "creationTimestamp": stamp(at)},
        "eventTime": stamp(at), "reportingController": "kubelet", "reportingInstance": "node-7",
        "action": "Probing", "reason": reason, "note": note, "type": event_type,
        "regarding": {"apiVersion": api_version, "kind": kind, "namespace": ns, "name": obj,
                      "uid": f"{obj}-uid", "resourceVersion": "12345",
                      "fieldPath": "spec.containers{app}"},
    }
    if count > 1:
        body["series"] = {"count": count, "lastObservedTime": stamp(at)}
    return orjson.dumps(body)


def hour_of_events(pods: int, hours: float, rng: random.Random) -> list[tuple[float, bytes]]:
    """(time, object) of every ADDED or MODIFIED Event in ``hours``, in time order."""
    out: list[tuple[float, bytes]] = []
    span = hours * HOUR

    def pod(i: int) -> tuple[str, str]:
        return f"ns-{i % NAMESPACES}", f"app-{i // 10}-7d9f8c6b5-{i:06x}"

    def pick(share: float) -> list[int]:
        return rng.sample(range(pods), max(1, int(pods * share * hours)))

    for i in pick(0.05):
        ns, name = pod(i)
        at = rng.uniform(0, span)
        for step, reason in enumerate(("Scheduled", "Pulling", "Pulled", "Created", "Started",
                                       "Killing")):
            out.append((at + step, event(f"{name}.{step:x}", ns, "Pod", name, "Normal", reason,
                                         f"{reason} container app", at + step)))
    for i in pick(0.005):
        ns, name = pod(i)
        start = rng.uniform(0, 300)
        for n, at in enumerate(range(int(start), int(span), 300), 1):
            out.append((at, event(f"{name}.bo", ns, "Pod", name, "Warning", "BackOff",
                                  f"Back-off restarting failed container app in pod {name}"
                                  f"_{ns}(0b6f1c2e-6a0e-4c5e-9a51-3c1d2e3f4a5b)", at, n)))
    for i in pick(0.01):
        ns, name = pod(i)
        start = rng.uniform(0, max(0.0, span - 900))
        for n in range(1, 16):
            at = start + 60 * n
            out.append((at, event(f"{name}.uh", ns, "Pod", name, "Warning", "Unhealthy",
                                  f'Readiness probe failed: Get "http://10.244.{i % 250}.'
                                  f'{i % 200}:8080/ready": context deadline exceeded', at, n)))
    for i in pick(0.001):
        ns, name = pod(i)
        at = rng.uniform(0, span)
        out.append((at, event(f"{name}.f", ns, "Pod", name, "Warning", "Failed",
                              f'Failed to pull image "registry.example/app:{i}": not found',
                              at)))
        out.append((at + 1, event(f"{name}.ib", ns, "Pod", name, "Warning", "BackOff",
                                  f'Back-off pulling image "registry.example/app:{i}"',
                                  at + 1)))
    for i in pick(0.002):
        ns, name = pod(i)
        at = rng.uniform(0, span)
        out.append((at, event(f"{name}.fs", ns, "Pod", name, "Warning", "FailedScheduling",
                              "0/500 nodes are available: 500 Insufficient cpu.", at)))
    services = max(1, pods // 10)
    for share, kind, api, reason, event_type, note in (
            (0.001, "Service", "v1", "FailedToUpdateEndpointSlices", "Warning",
             "Error updating Endpoint Slices for Service: exceeded quota: endpointslices"),
            (0.01, "Service", "v1", "EnsuringLoadBalancer", "Normal", "Ensuring load balancer"),
            (0.01, "HTTPRoute", "gateway.networking.k8s.io/v1", "BackendNotFound", "Warning",
             "backendRef app-svc not found")):
        for i in rng.sample(range(services), max(1, int(services * share * hours))):
            at = rng.uniform(0, span)
            out.append((at, event(f"svc-{i}.{reason[:6].lower()}", f"ns-{i % NAMESPACES}",
                                  kind, f"svc-{i}", event_type, reason, note, at,
                                  api_version=api)))
    out.sort(key=lambda e: e[0])
    return out


def feed(ring: EventRing, lines: list[tuple[float, bytes]]) -> tuple[int, float]:
    """Decode and keep each line as the watch does; (kept, seconds)."""
    kept = 0
    started = time.perf_counter()
    for _, line in lines:
        kept += ring.observe(orjson.loads(line))
    return kept, time.perf_counter() - started


def traced(batches: list[list[tuple[float, bytes]]]) -> tuple[EventRing, int, list[float]]:
    """Feed each batch into one ring under tracemalloc, for its bytes; and into another
    without it, for the seconds (tracing slows every allocation)."""
    times = []
    untraced = EventRing()
    for lines in batches:
        times.append(feed(untraced, lines)[1])
    del untraced
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    ring = EventRing()
    for lines in batches:
        feed(ring, lines)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return ring, held, times


def layer_cost(ring: EventRing) -> float:
    """Microseconds for one pass over one namespace's Warnings, as the events layer does."""
    wanted = {(e.namespace, e.kind, e.name) for e in list(ring.events.values())[:100]}
    started = time.perf_counter()
    runs = 20
    for _ in range(runs):
        sum(1 for e in reversed(ring.events.values())
            if e.namespace == "ns-1" and e.type == "Warning"
            and (e.namespace, e.kind, e.name) in wanted)
    return (time.perf_counter() - started) / runs * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="100k")
    parser.add_argument("--hours", type=float, default=1.0)
    args = parser.parse_args()
    pods = parse_scale(args.scale)
    rng = random.Random(7)
    hour = hour_of_events(pods, args.hours, rng)
    ring, held, (seconds,) = traced([hour])
    realistic = {"objects_fed": len(hour), "events_held": len(ring.events),
                 "objects_held": len(ring.by_object), "ring_MiB": round(held / 2**20, 2),
                 "bytes_per_event": round(held / max(1, len(ring.events))),
                 "fed_per_second": round(len(hour) / seconds),
                 "events_layer_us": round(layer_cost(ring), 1)}
    outage = [(HOUR + i / 1000, event(f"{name}.out", ns, "Pod", name, "Warning", "Unhealthy",
                                      "Readiness probe failed: connection refused", HOUR))
              for i in range(pods) for ns, name in ((f"ns-{i % NAMESPACES}", f"p-{i:06x}"),)]
    ring, held, (_, outage_seconds) = traced([hour, outage])
    worst = {"objects_fed": len(hour) + len(outage), "events_held": len(ring.events),
             "evicted": ring.evicted, "ring_MiB": round(held / 2**20, 2),
             "bytes_per_event": round(held / max(1, len(ring.events))),
             "fed_per_second": round(len(outage) / outage_seconds),
             "events_layer_us": round(layer_cost(ring), 1)}
    result = {"pods": pods, "hours": args.hours, "limit": ring.limit,
              "per_object": ring.per_object, "realistic": realistic, "outage": worst}
    OUT.mkdir(exist_ok=True)
    (OUT / f"event-ring-{args.scale}.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
