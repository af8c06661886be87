"""The simulated API server of one scale, in a process of its own, so that netsight's RSS
and CPU time are its own: ``python -m benchmarks.simulator --scale S --kubeconfig PATH``.

It prints one JSON line once it serves (URL, pid, the /sim/ control token, counts by
kind, load time, RSS) and runs until terminated. Churn is driven over HTTP
(``netsight.sim.remote_churn``: ``POST /sim/churn``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import time
from pathlib import Path

from benchmarks.cluster import CRDS, Scale, objects
from benchmarks.informers import bench_state, fast_load, proc_status
from netsight.sim.apiserver import SimConfig, SimServer, loop_factory
from netsight.sim.remote_churn import ChurnController


async def serve(scale: Scale, seed: int, kubeconfig: Path) -> None:
    started = time.perf_counter()
    # The simulator's objects are acyclic JSON: with the collector on, every full
    # collection rescans millions of them (and the watch log). Its memory is not measured.
    gc.disable()
    server = SimServer(bench_state(), config=SimConfig(bookmark_interval=5.0))
    server.state.apply(CRDS)  # registers their kinds before objects of those kinds load
    generated, counts = objects(scale, seed)
    loaded = fast_load(server.state, generated)
    controller = ChurnController(server.state)
    server.api.app.router.routes.extend(controller.routes())
    await server.start()
    server.write_kubeconfig(kubeconfig)
    print(json.dumps({"url": server.url, "pid": os.getpid(), "objects": loaded,
                      "controlToken": server.control_token, "counts": counts,
                      "load_s": round(time.perf_counter() - started, 2),
                      "rss_bytes": proc_status("VmRSS")}), flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    args = parser.parse_args()
    with asyncio.Runner(loop_factory=loop_factory()) as runner:  # as `netsight sim` runs
        runner.run(serve(Scale.parse(args.scale), args.seed, args.kubeconfig))


if __name__ == "__main__":
    main()
