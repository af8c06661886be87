"""One run of the suite at one scale: the phases, in one process that is netsight.

This process runs netsight as ``netsight serve`` does (informers on the real HTTP path, the
live graph, the MCP server and graph API on 127.0.0.1, uvloop), against the simulator in a
process of its own (``benchmarks.simulator``); the MCP client runs in a third
(``benchmarks.mcp_client``). So this process's RSS and CPU time are netsight's, plus the
suite's own small bookkeeping, measured before anything starts (``rss_empty_bytes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import inspect
import json
import math
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.cluster import QUESTIONS, Scale
from benchmarks.context import BenchContext, Progress
from benchmarks.informers import control_headers, cpu_seconds, proc_status
from benchmarks.tool_args import Names, samplers
from netsight.analyzers.core.calling import call, parse_args
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.informers import Informer
from netsight.graph.store.live import GraphStore
from netsight.server.app import build_service
from netsight.server.cluster import LiveGraph, live_graph
from netsight.server.config import Settings
from netsight.server.running import HttpServer

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("tools", "mcp", "export", "churn", "baseline", "peer")
MiB = 1024 * 1024
Result = dict[str, Any]


@dataclass(frozen=True)
class Options:
    scale: Scale
    seed: int = 1
    only: frozenset[str] = frozenset(PHASES)
    quick: bool = False
    ready_timeout: float = 900.0

    @property
    def repeats(self) -> int:
        return 20 if self.quick else 200

    @property
    def beside_repeats(self) -> int:
        """Timed calls per figure of the per-call design and the peer, whose calls take
        100-1000x netsight's: enough for a p50 within S's two minutes."""
        return 5 if self.quick else 20

    @property
    def tool_budget_s(self) -> float:
        """Most seconds one tool's timed calls take (fewer calls for slow tools)."""
        return 0.5 if self.quick else 5.0

    @property
    def churn(self) -> tuple[float, float]:
        """Writes a second, and for how many seconds."""
        return (200.0, 2.0) if self.quick else (5_000.0, 20.0)


def percentiles(ms: list[float]) -> Result:
    if not ms:
        return {"n": 0}
    ordered = sorted(ms)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 4)

    return {"p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": round(ordered[-1], 4),
            "n": len(ordered)}


def machine() -> Result:
    model = next((line.split(":", 1)[1].strip()
                  for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "netsight", "benchmarks"], cwd=ROOT,
                           capture_output=True, text=True, check=False).stdout.strip()
    return {"cpus": os.cpu_count(), "cpu_model": model, "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_before": [round(x, 2) for x in os.getloadavg()],
            "commit": commit + ("+dirty" if dirty else "")}


# --- the simulator ---------------------------------------------------------------------------


@dataclass
class Simulator:
    process: asyncio.subprocess.Process
    info: Result
    kubeconfig: Path

    @property
    def url(self) -> str:
        return str(self.info["url"])

    @property
    def pid(self) -> int:
        return int(self.info["pid"])

    @property
    def control(self) -> dict[str, str]:
        return control_headers(self.info.get("controlToken"))


@contextlib.asynccontextmanager
async def simulator(scale: Scale, seed: int, kubeconfig: Path, progress: Progress
                    ) -> AsyncIterator[Simulator]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "benchmarks.simulator", "--scale", str(scale.pods),
        "--seed", str(seed), "--kubeconfig", str(kubeconfig),
        stdout=asyncio.subprocess.PIPE, cwd=ROOT, env=env, limit=1 << 20)
    try:
        with progress("simulator: generate, load", None):
            assert process.stdout is not None
            line = await process.stdout.readline()
        if not line:
            raise RuntimeError(f"the simulator exited ({await process.wait()}) before serving")
        yield Simulator(process, json.loads(line), kubeconfig)
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


# --- netsight --------------------------------------------------------------------------------


@dataclass
class Netsight:
    graph: LiveGraph
    url: str

    @property
    def store(self) -> GraphStore:
        return self.graph.store

    def analyze(self, tool: str, args: dict[str, Any]) -> Any:
        """A tool's analyzer on the live graph, arguments validated as the server does."""
        found = TOOLS[tool]
        result = call(found, self.store.view(), parse_args(found, args))
        if inspect.iscoroutine(result):
            result.close()
            raise TypeError(f"{tool} waits (a probe or the knowledge base): call it over MCP")
        return result


@contextlib.asynccontextmanager
async def netsight(kubeconfig: Path) -> AsyncIterator[tuple[Netsight, HttpServer]]:
    settings = Settings(cluster_name="bench", kubeconfig=str(kubeconfig), port=0,
                       log_level="WARNING", shutdown_timeout=1.0, tool_timeout=60.0)
    async with live_graph(settings) as graph:
        server = HttpServer(build_service(graph, settings), settings)
        url = await server.start()
        try:
            yield Netsight(graph, url), server
        finally:
            await server.stop()


async def until(condition: Callable[[], bool], timeout: float, what: str) -> float:
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        await asyncio.sleep(0.005)
    return time.perf_counter() - started


# --- phases ----------------------------------------------------------------------------------


async def tool_latencies(ns: Netsight, options: Options, progress: Progress) -> Result:
    """Every registered tool, in-process on the live graph: the first call (cold: what it
    builds on first use) and ``repeats`` more (warm), each with fresh sampled arguments."""
    view = ns.store.view()
    findings = ns.analyze("analyze_config", {"limit": 1}).model_dump(mode="json")
    finding = next(iter(findings.get("findings") or []), None)
    draw = samplers(Names.of(view), finding, TOOLS)
    rng = random.Random(options.seed)
    found: Result = {}
    with progress("analyzers: every tool", len(draw)) as bar:
        for name, sample in draw.items():
            tool = TOOLS[name]
            times: list[float] = []
            cpu_s = 0.0
            first_ms: float | None = None
            error: str | None = None
            deadline = time.perf_counter() + options.tool_budget_s
            for index in range(options.repeats + 1):
                args = sample(rng)
                started, cpu = time.perf_counter(), time.process_time()
                try:
                    result = call(tool, ns.store.view(), parse_args(tool, args))
                    if inspect.isawaitable(result):
                        await result
                except Exception as exc:  # reported, the run goes on
                    error = f"{type(exc).__name__}: {exc}"[:300]
                    break
                took = (time.perf_counter() - started) * 1000
                if index == 0:
                    first_ms = round(took, 4)
                else:
                    times.append(took)
                    cpu_s += time.process_time() - cpu
                if index >= 5 and time.perf_counter() > deadline:
                    break
            found[name] = {"first_ms": first_ms, **percentiles(times),
                           "cpu_ms_mean": round(1000 * cpu_s / max(1, len(times)), 4),
                           **({"error": error} if error else {})}
            bar.advance()
    return found


async def mcp_end_to_end(ns: Netsight, options: Options, progress: Progress) -> Result:
    """The questions over MCP from the SDK client in its own process; netsight's CPU per
    call beside the wall-clock latencies."""
    calls = options.repeats
    cpu = time.process_time()
    with progress("mcp: SDK client, loopback", None):
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.mcp_client", f"{ns.url}/mcp", str(calls),
            json.dumps(QUESTIONS), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the MCP client failed: {err.decode()[-2000:]}")
    found: Result = json.loads(out)
    total_calls = (calls + 20) * len(QUESTIONS) + 4  # warm-up and tools/list included
    found["server_cpu_ms_per_call"] = round(
        1000 * (time.process_time() - cpu) / total_calls, 3)
    return found


class PeakRss:
    """This process's highest RSS while the block runs, sampled every 5 ms from a thread
    (VmHWM is the peak since the process started)."""

    def __init__(self) -> None:
        self.peak = self.start = 0
        self._stop = threading.Event()

    def __enter__(self) -> PeakRss:
        self.peak = self.start = proc_status("VmRSS")
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, proc_status("VmRSS"))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def graph_export(ns: Netsight, options: Options, progress: Progress) -> Result:
    """``GET /api/graph`` whole (time, bytes, peak RSS over the start) and ``around`` one
    pod at depth 1, read as the bytes come."""

    async def fetch(http: aiohttp.ClientSession, params: dict[str, str]) -> tuple[float, int]:
        started, size = time.perf_counter(), 0
        async with http.get(f"{ns.url}/api/graph", params=params) as response:
            response.raise_for_status()
            async for chunk in response.content.iter_any():
                size += len(chunk)
        return (time.perf_counter() - started) * 1000, size

    runs = 1 if options.quick else 3
    around = "Pod/x/a"
    async with aiohttp.ClientSession() as http:
        with progress("export: /api/graph", runs + 20) as bar:
            whole: list[tuple[float, int]] = []
            peak = 0
            for _ in range(runs):
                gc.collect()
                with PeakRss() as rss:
                    whole.append(await fetch(http, {}))
                peak = max(peak, rss.peak - rss.start)
                bar.advance()
            near = []
            for _ in range(20):
                near.append(await fetch(http, {"around": around, "depth": "1"}))
                bar.advance()
    return {"whole_ms": percentiles([t for t, _ in whole]), "whole_bytes": whole[0][1],
            "whole_peak_rss_growth_bytes": peak,
            "around": around, "around_ms": percentiles([t for t, _ in near]),
            "around_bytes": near[0][1]}


@contextlib.contextmanager
def timed_lines(applied: array[float], base: list[int]) -> Iterator[list[int]]:
    """Every watch line's arrival: the wall time its resourceVersion was applied here,
    once ``Informer.handle_line`` (decode and apply, pods and slices included) returns."""
    original = Informer.handle_line
    arrived = [0]

    def handle_line(informer: Informer, line: bytes, resource_version: str) -> str:
        version = original(informer, line, resource_version)
        if base[0] and line.startswith((b'{"type":"ADDED"', b'{"type":"MODIFIED"',
                                        b'{"type":"DELETED"')):
            index = int(version) - base[0]
            if 0 <= index < len(applied):
                applied[index] = time.time()
                arrived[0] += 1
        return version

    Informer.handle_line = handle_line  # type: ignore[method-assign,assignment]
    try:
        yield arrived
    finally:
        Informer.handle_line = original  # type: ignore[method-assign]


async def churn(ns: Netsight, sim: Simulator, options: Options, progress: Progress) -> Result:
    """The simulator writes at a steady rate (pod restarts, scaling, labels, policies); each
    write's latency from just before the simulator made it to netsight having applied it."""
    rate, duration = options.churn
    applied = array("d", [0.0]) * (int(rate * duration * 1.1) + 1000)
    base = [0]
    async with aiohttp.ClientSession(base_url=sim.url, headers=sim.control) as http:
        with timed_lines(applied, base) as arrived:
            state = await (await http.get("/sim/state")).json()
            base[0] = int(state["resourceVersion"]) + 1
            cpu, sim_cpu, started = time.process_time(), cpu_seconds(sim.pid), time.time()
            response = await http.post("/sim/churn", json={
                "rate": rate, "duration": duration, "seed": options.seed, "record": True,
                "scaleWorkloads": False})
            if response.status != 202:
                raise RuntimeError(f"/sim/churn: {await response.text()}")
            status: Result = {}
            with progress("churn: events -> graph", int(duration)) as bar:
                shown = 0
                while True:
                    await asyncio.sleep(1.0)
                    status = await (await http.get("/sim/churn")).json()
                    seconds = min(int(duration), int(status["elapsed"]))
                    bar.advance(seconds - shown)
                    shown = seconds
                    if not status["running"]:
                        break
            writes = int(status["writes"])
            drain_until = time.time() + 30
            while arrived[0] < writes and time.time() < drain_until:
                await asyncio.sleep(0.02)
            cpu, sim_cpu = time.process_time() - cpu, cpu_seconds(sim.pid) - sim_cpu
            log = await (await http.get("/sim/churn/log")).json()
    latencies = []
    missing = 0
    for rv, at in zip(log["rv"], log["at"], strict=True):
        index = rv - base[0]
        done = applied[index] if 0 <= index < len(applied) else 0.0
        if done == 0.0:
            missing += 1
        else:
            latencies.append((done - at) * 1000)
    elapsed = float(status.get("elapsed") or duration)
    return {"target_rate": rate, "duration_s": round(elapsed, 2), "writes": writes,
            "events_per_s": round(len(latencies) / elapsed, 1), "missing": missing,
            "sim_rate": status.get("rate"), "sim_max_behind_s": status.get("maxBehind"),
            "writes_by_kind": status.get("writesByKind"), "sim_error": status.get("error"),
            "visible_ms": percentiles(latencies),
            "histogram_ms": histogram(latencies),
            "cpu_s": round(cpu, 2), "sim_cpu_s": round(sim_cpu, 2),
            "wall_s": round(time.time() - started, 2)}


def histogram(ms: list[float]) -> dict[str, int]:
    """Counts by power-of-two bucket (upper bound in ms), for the distribution plot."""
    counts: dict[str, int] = {}
    for value in ms:
        bound = 2.0 ** math.ceil(math.log2(max(value, 0.0625)))
        counts[f"{bound:g}"] = counts.get(f"{bound:g}", 0) + 1
    return dict(sorted(counts.items(), key=lambda item: float(item[0])))


def beside(module: str, ctx: BenchContext) -> Result:
    """``benchmarks.<module>.measure(ctx)``, or why there is no figure."""
    try:
        found = importlib.import_module(f"benchmarks.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"benchmarks.{module}":
            raise
        return {"available": False, "reason": "module not present"}
    try:
        measured = found.measure(ctx)
        if inspect.iscoroutine(measured):  # an async measure(): on this thread's own loop
            measured = asyncio.run(measured)
    except Exception as exc:  # the slot stays, saying why it is empty
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"[:500]}
    return dict(measured)


def same_arguments(ns: Netsight, tools: Result, options: Options) -> None:
    """netsight's analyzer on the arguments the per-call design was timed with, beside its
    figures (``netsight``), so that each ratio compares the same question."""
    for name, figures in tools.items():
        args = figures.get("args") if isinstance(figures, dict) else None
        if not isinstance(args, dict) or name not in TOOLS:
            continue
        times: list[float] = []
        deadline = time.perf_counter() + options.tool_budget_s
        for index in range(options.repeats + 1):
            if index > 5 and time.perf_counter() > deadline:
                figures["netsight"] = percentiles(times)
                break
            started = time.perf_counter()
            try:
                ns.analyze(name, args)
            except Exception as exc:  # a waiting tool, a refused argument: no ratio
                figures["netsight"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                break
            if index:  # the first call builds what the tools phase may not have
                times.append((time.perf_counter() - started) * 1000)
        else:
            figures["netsight"] = percentiles(times)


# --- the run ---------------------------------------------------------------------------------


async def run(options: Options, progress: Progress, work_dir: Path) -> Result:
    run_started = time.perf_counter()
    gc.collect()
    rss_empty = proc_status("VmRSS")
    result: Result = {"scale": options.scale.name, "pods_asked": options.scale.pods,
                      "seed": options.seed, "quick": options.quick,
                      "machine": machine(), "rss_empty_bytes": rss_empty}
    with tempfile.TemporaryDirectory(prefix="netsight-bench-") as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        async with simulator(options.scale, options.seed, kubeconfig, progress) as sim:
            result["cluster"] = {"counts": sim.info["counts"], "objects": sim.info["objects"],
                                 "sim_load_s": sim.info["load_s"],
                                 "sim_rss_bytes": sim.info["rss_bytes"]}
            cpu, sim_cpu = time.process_time(), cpu_seconds(sim.pid)
            started = time.perf_counter()
            async with netsight(kubeconfig) as (ns, _):
                with progress("netsight: list and watch", None):
                    await until(lambda: ns.graph.ready, options.ready_timeout, "ready")
                ready_s = time.perf_counter() - started
                ready_cpu = time.process_time() - cpu
                with contextlib.suppress(TimeoutError):
                    await until(lambda: ns.graph.warmed is not None, 120, "warm")
                warm_s = time.perf_counter() - started
                await asyncio.sleep(0.5)  # the collector keeper's first tick
                rss = proc_status("VmRSS")
                view = ns.store.view()
                pods = view.count("Pod")
                result["ready"] = {
                    "ready_s": round(ready_s, 3), "ready_cpu_s": round(ready_cpu, 3),
                    "sim_cpu_s": round(cpu_seconds(sim.pid) - sim_cpu, 3),
                    "warm_s": round(warm_s, 3), "pods": pods, "nodes": view.node_count,
                    "edges": view.edge_count, "rss_bytes": rss,
                    "rss_per_pod_bytes": round((rss - rss_empty) / max(1, pods), 1),
                    "sim_rss_bytes": proc_status("VmRSS", sim.pid)}
                phases: Result = {}
                result["phases"] = phases
                if "tools" in options.only:
                    phases["tools"] = await tool_latencies(ns, options, progress)
                if "mcp" in options.only:
                    phases["mcp"] = await mcp_end_to_end(ns, options, progress)
                if "export" in options.only:
                    phases["export"] = await graph_export(ns, options, progress)
                ctx = BenchContext(
                    scale=options.scale.name, pods=pods, api_url=sim.url,
                    kubeconfig=kubeconfig, netsight_mcp_url=f"{ns.url}/mcp",
                    netsight_analyze=ns.analyze, questions=QUESTIONS, progress=progress,
                    repeats=options.beside_repeats, seed=options.seed, quick=options.quick,
                    netsight_url=ns.url, work_dir=work_dir, extra=result)
                # The designs beside netsight read the cluster: before churn changes it.
                for phase, module in (("baseline", "baseline_design"), ("peer", "peer_server")):
                    if phase in options.only:
                        work_dir.mkdir(parents=True, exist_ok=True)
                        phases[phase] = await asyncio.to_thread(beside, module, ctx)
                if "tools" in phases.get("baseline", {}):
                    same_arguments(ns, phases["baseline"]["tools"], options)
                if "churn" in options.only:
                    phases["churn"] = await churn(ns, sim, options, progress)
                result["rss_end_bytes"] = proc_status("VmRSS")
                result["rss_peak_bytes"] = proc_status("VmHWM")
    result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["wall_s"] = round(time.perf_counter() - run_started, 1)
    return result
