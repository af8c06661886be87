"""Probes on the simulator (issue 21): the round trip of one probe (create -> answer ->
deleted) and what 100 concurrent probes cost the API server in requests.

The runner (netsight/probes/runner.py) talks to the simulator through the real client; the
simulator's kubelet runs each probe pod (Pending -> Running after ``KubeletConfig.start_delay``,
50 ms, as a real node's pod start is never instant) and its data plane answers it. Reported:

- ``round_trip``: ``--sequential`` probes one after another, each timed from the call to its
  pod's deletion being done (``settled``): p50, p99, max in milliseconds;
- ``concurrent``: ``--concurrent`` probes started at once (MAX_CONCURRENT_PROBES raised to
  fit), their wall time, and the requests netsight made (by method and resource) — the
  kubelet's own status writes left out. One watch serves every probe, so the count per probe
  should stay near its floor: a create, a source read and a delete.

    .venv/bin/python benchmarks/probes.py                       # 200 sequential, 100 at once
    .venv/bin/python benchmarks/probes.py --sequential 5 --concurrent 5   # a functional check

Results go to ``benchmarks/out/probes.json``. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from netsight.graph.ingest.client import KubeTransport  # noqa: E402
from netsight.probes.message import TcpProbe  # noqa: E402
from netsight.probes.runner import ProbeRunner, RunnerSettings  # noqa: E402
from netsight.sim.apiserver import SimConfig, SimServer  # noqa: E402
from netsight.sim.kubelet import KubeletConfig  # noqa: E402
from tests.probes.conftest import cluster  # noqa: E402

OUT = ROOT / "benchmarks" / "out" / "probes.json"
SPEC = TcpProbe(host="db.data.svc", port=5432, timeout_seconds=1.0)
SOURCE = ("shop", "web-1")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def netsight_requests(log: list[tuple[str, str, dict[str, str]]]) -> dict[str, int]:
    """Requests by 'METHOD resource', the kubelet's status writes and watch left out."""
    counts: collections.Counter[str] = collections.Counter()
    for method, path, query in log:
        if path.endswith("/status"):
            continue  # a kubelet's (the simulator's writes its own state directly)
        parts = [p for p in path.split("/") if p]
        resource = "namespace" if parts[-2:-1] == ["namespaces"] else \
            "pods" if "pods" in parts else parts[-1]
        kind = "watch" if query.get("watch") in ("1", "true") else method
        counts[f"{kind} {resource}"] += 1
    return dict(sorted(counts.items()))


async def measure(sequential: int, concurrent: int) -> dict[str, Any]:
    sim = SimServer(config=SimConfig(bookmark_interval=1.0), kubelet=KubeletConfig())
    sim.state.apply(cluster())
    async with sim:
        with tempfile.TemporaryDirectory() as tmp:
            transport = await KubeTransport.connect(str(sim.write_kubeconfig(
                Path(tmp) / "kubeconfig")))
        settings = RunnerSettings(image="probe:bench", namespace="netsight-probes",
                                  max_concurrent=max(concurrent, 1), timeout=30.0,
                                  rate_per_minute=1e9, burst=10**9, sweep_interval=3600.0)
        runner = ProbeRunner(transport, settings)
        await runner.start()
        try:
            trips = []
            for _ in range(sequential):
                started = time.perf_counter()
                await runner.run(SPEC, source=SOURCE)
                await runner.settled()
                trips.append((time.perf_counter() - started) * 1e3)
            before = len(sim.api.request_log)
            started = time.perf_counter()
            await asyncio.gather(*(runner.run(SPEC, source=SOURCE, caller=f"c{n}")
                                   for n in range(concurrent)))
            await runner.settled()
            wall = time.perf_counter() - started
            log = list(sim.api.request_log)[before:]
        finally:
            await runner.stop()
            await transport.close()
    requests = netsight_requests(log)
    return {
        "round_trip_ms": {"probes": sequential, "p50": round(percentile(trips, 0.5), 1),
                          "p99": round(percentile(trips, 0.99), 1),
                          "max": round(max(trips), 1),
                          "mean": round(statistics.fmean(trips), 1)} if trips else None,
        "concurrent": {"probes": concurrent, "wall_s": round(wall, 3),
                       "requests": requests, "requests_total": sum(requests.values()),
                       "per_probe": round(sum(requests.values()) / max(concurrent, 1), 2)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequential", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=100)
    args = parser.parse_args()
    result = asyncio.run(measure(args.sequential, args.concurrent))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
