"""What one whole-graph export (``GET /api/graph``) costs ``netsight serve`` in memory.

    .venv/bin/python benchmarks/export_memory.py --scale 100k            # ~4 min
    .venv/bin/python benchmarks/export_memory.py --scale 100k --tree /work/wt-before

Separate processes, as in production: the simulated API server (``netsight sim``) and
``netsight serve`` against it. Once serve is ready and has settled (the collector keeper's
first ticks, the policy models warmed), its RSS is sampled from ``/proc`` every 10 ms: idle
for a few seconds, then through each export, then for a few seconds after. Two readers: a
fast one (reads as the bytes come) and a slow one (64 KiB every 20 ms, a client on a slow
link), because a server that does not wait for its reader buffers the whole body.

Issue 20's target: at 100k pods, RSS during an export at most **+50 MiB** over the idle
figure, and back within **10 MiB** of it afterwards.

``--tree DIR`` runs serve (and the simulator) from another checkout, for the side-by-side
figure: run the script once per tree in the same sitting. Results as JSON on stdout and in
``benchmarks/out/export-memory-<scale>[-<tree>].json``. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp
from informers import proc_status  # this directory's benchmarks, run as scripts
from serving import sim_and_serve, wait_ready

OUT = Path(__file__).resolve().parent / "out"
ROOT = Path(__file__).resolve().parent.parent
MiB = 1024 * 1024


class Sampler:
    """RSS of one process every ``every`` seconds, on a thread (the loop is busy reading)."""

    def __init__(self, pid: int, every: float = 0.01) -> None:
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), proc_status("VmRSS", self.pid)))
            time.sleep(self.every)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, began: float, ended: float) -> list[int]:
        return [value for at, value in self.samples if began <= at <= ended]


async def export(url: str, slow: bool) -> tuple[float, int]:
    started = time.monotonic()
    size = 0
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout) as http, \
            http.get(f"{url}/api/graph") as response:
        assert response.status == 200, response.status
        if slow:
            while chunk := await response.content.read(64 * 1024):
                size += len(chunk)
                await asyncio.sleep(0.02)
        else:
            async for chunk in response.content.iter_any():
                size += len(chunk)
    return time.monotonic() - started, size


async def measure(url: str, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    await wait_ready(url, args.ready_timeout)
    await asyncio.sleep(args.settle)
    runs: list[dict[str, Any]] = []
    with Sampler(pid) as sampler:
        await asyncio.sleep(args.idle)
        for slow in [False, True] * args.runs:
            began = time.monotonic()
            idle = statistics.median(sampler.between(began - args.idle, began))
            seconds, size = await export(url, slow)
            ended = time.monotonic()
            await asyncio.sleep(args.idle)
            during = sampler.between(began, ended)
            after = statistics.median(sampler.between(time.monotonic() - 1.0, time.monotonic()))
            runs.append({"reader": "slow" if slow else "fast", "seconds": round(seconds, 2),
                         "body_mb": round(size / 1e6, 1), "idle_mib": round(idle / MiB, 1),
                         "peak_over_idle_mib": round((max(during) - idle) / MiB, 1),
                         "after_over_idle_mib": round((after - idle) / MiB, 1)})
            print(json.dumps(runs[-1]), file=sys.stderr)
    return {"runs": runs,
            "worst_peak_over_idle_mib": max(r["peak_over_idle_mib"] for r in runs),
            "worst_after_over_idle_mib": max(r["after_over_idle_mib"] for r in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="100k", help="demo, or a pod count such as 100k")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the checkout serve and the simulator run from")
    parser.add_argument("--runs", type=int, default=2, help="exports per reader")
    parser.add_argument("--settle", type=float, default=20.0,
                        help="seconds after ready before measuring")
    parser.add_argument("--idle", type=float, default=5.0,
                        help="seconds of idle samples before and after each export")
    parser.add_argument("--ready-timeout", type=float, default=600.0)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    tree = args.tree.resolve()
    load_before = os.getloadavg()
    with sim_and_serve(args.scale, args.ready_timeout, ["--log-level", "warn"],
                       tree=tree) as (url, pid):
        result = asyncio.run(measure(url, pid, args))
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    result = {"scale": args.scale, "tree": str(tree), "commit": commit,
              "load_average_before": load_before, "load_average": os.getloadavg(), **result}
    suffix = "" if tree == ROOT else f"-{tree.name}"
    (OUT / f"export-memory-{args.scale}{suffix}.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
