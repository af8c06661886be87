"""Informers against the simulated API server at 100k pods: sync, event latency, memory, lists.

The simulator runs in a process of its own (``_sim``), so its CPU time and memory never mix
with netsight's. The machine has 2 cores, though: while netsight parses, the simulator
serializes, and whatever else runs on the box takes its share of the same two cores. Every
measurement of netsight runs in a fresh process (``_worker``) against the one simulator.

    .venv/bin/python benchmarks/informers.py sync      # (a) initial sync vs kubernetes-asyncio
    .venv/bin/python benchmarks/informers.py profile   # (a) pyinstrument + tracemalloc, once
    .venv/bin/python benchmarks/informers.py churn     # (b) event -> graph latency under churn
    .venv/bin/python benchmarks/informers.py soak      # (c) RSS over 1M events
    .venv/bin/python benchmarks/informers.py list      # (d) the simulator's list throughput
    .venv/bin/python benchmarks/informers.py apply     # (a) list+apply CPU, no HTTP, in-process
    .venv/bin/python benchmarks/informers.py sim-churn --baseline main  # the simulator's CPU/write

Each takes 1.5-5 minutes. Figures go to ``benchmarks/out/informers-<command>.json`` (and
profiles next to them), and a summary to stdout. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import itertools
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import orjson

# Children run a copy of this script (see snapshot_code), and learn where out/ and the
# repository are from here: their own file lies in the snapshot.
ROOT = Path(os.environ.get("NETSIGHT_BENCH_ROOT") or Path(__file__).resolve().parent.parent)
OUT = Path(os.environ.get("NETSIGHT_BENCH_OUT") or ROOT / "benchmarks" / "out")
Result = dict[str, Any]
MiB = 1024 * 1024
SNAPSHOT = OUT / "informers-code"
CHILD_ENV = dict(os.environ)
SIM_CONTROL_TOKEN = "NETSIGHT_SIM_CONTROL_TOKEN"  # workers find the /sim/ token here


def snapshot_code() -> str:
    """Copy netsight/ and this script aside and run every process of this command from the
    copies, so edits made to the working tree while it runs cannot mix versions. Returns a
    hash of the netsight code."""
    shutil.rmtree(SNAPSHOT, ignore_errors=True)
    shutil.copytree(ROOT / "netsight", SNAPSHOT / "netsight",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(__file__, SNAPSHOT / "informers.py")
    digest = hashlib.sha256()
    for path in sorted((SNAPSHOT / "netsight").rglob("*.py")):
        digest.update(path.relative_to(SNAPSHOT).as_posix().encode())
        digest.update(path.read_bytes())
    CHILD_ENV["PYTHONPATH"] = str(SNAPSHOT)
    CHILD_ENV["NETSIGHT_BENCH_OUT"] = str(OUT)
    CHILD_ENV["NETSIGHT_BENCH_ROOT"] = str(ROOT)
    return digest.hexdigest()[:12]


# --- /proc ------------------------------------------------------------------------------------


def proc_status(field: str, pid: int | str = "self") -> int:
    """VmRSS / VmHWM of a process, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine() -> Result:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "netsight"], cwd=ROOT,
                           capture_output=True, text=True, check=False).stdout.strip()
    return {"cpus": os.cpu_count(), "cpu_model": model, "python": platform.python_version(),
            "platform": platform.platform(), "load_average": os.getloadavg(),
            "commit": commit + ("+dirty" if dirty else ""), "code_sha256": snapshot_code(),
            "dirty_files": dirty.splitlines()}


# --- the simulator process -------------------------------------------------------------------


def fast_load(state: Any, objects: Any) -> int:
    """Store generated objects as they are, each with the next resourceVersion.

    ``SimState.apply`` deep-copies every object (40 s at 100k pods); the generator's objects
    are fresh already. They share unchanging nested parts, which nothing mutates in place:
    the simulator copies on every write.
    """
    from netsight.sim.state import object_key, storage_key

    types: dict[tuple[str, str], Any] = {}
    count = 0
    for obj in objects:
        ident = (obj["apiVersion"], obj["kind"])
        rtype = types.get(ident)
        if rtype is None:
            rtype = types[ident] = state.registry.for_kind(*ident)
        meta = obj["metadata"]
        state.rv += 1
        meta["resourceVersion"] = str(state.rv)
        key = object_key(meta.get("namespace") if rtype.namespaced else None, meta["name"])
        state.objects.setdefault(storage_key(rtype), {})[key] = obj
        count += 1
    # Nothing happened before now that a watch could miss: a watch from the current
    # resourceVersion is valid, one from before it gets 410 Gone.
    state.log.clear()
    state.compacted_rv = state.rv
    return count


def loaded_state(args: argparse.Namespace) -> Any:
    """A bench_state() holding the synthetic cluster of ``args`` (pods, seed, policies)."""
    from netsight.sim.synthetic import generate

    state = bench_state()
    cluster = generate(pods=args.pods, seed=args.seed,
                       policies_per_namespace=args.policies_per_namespace or None)
    fast_load(state, cluster.objects())
    return state


def bench_state() -> Any:
    """A SimState whose deletes are cheap enough for thousands of writes a second.

    Before netsight/sim copied a deleted object's top level and metadata only,
    ``SimState.delete`` deep-copied it with ``copy.deepcopy`` (about 1 ms for a generated
    pod); for such a version (a ``sim-churn --baseline``), the delete is overridden.
    """
    import inspect

    from netsight.sim.resources import CRD_TYPE
    from netsight.sim.state import SimState, object_key, storage_key

    if "deepcopy" not in inspect.getsource(SimState.delete):
        return SimState()

    class BenchState(SimState):
        def delete(self, rtype: Any, namespace: str | None, name: str) -> Any:
            if rtype == CRD_TYPE or (rtype.kind == "Namespace" and not rtype.group):
                return super().delete(rtype, namespace, name)
            current = self.get(rtype, namespace, name)
            key = object_key(namespace, name)
            del self.objects[storage_key(rtype)][key]
            gone = {**current, "metadata": dict(current["metadata"])}
            return self._commit(rtype, "DELETED", key, current, gone, store=False)

    return BenchState()


def sim_main(args: argparse.Namespace) -> None:
    from netsight.sim.apiserver import SimConfig, SimServer, loop_factory
    from netsight.sim.remote_churn import ChurnController
    from netsight.sim.synthetic import generate

    async def serve() -> None:
        started = time.perf_counter()
        gc.disable()
        cluster = generate(pods=args.pods, seed=args.seed,
                           policies_per_namespace=args.policies_per_namespace or None)
        generated = time.perf_counter() - started
        server = SimServer(bench_state(), port=args.port,
                           config=SimConfig(bookmark_interval=5.0))
        count = fast_load(server.state, cluster.objects())
        counts = cluster.counts()
        del cluster
        warm_up(server.state, args.warmup_writes, args.warmup_seed)
        # The collector stays off in the simulator: its objects are acyclic JSON, and with
        # the 50,000-event watch log alive every full collection rescans millions of them,
        # which cost 40% of its time under churn. Its memory is not what is measured.
        controller = ChurnController(server.state)
        if args.profile:
            profile_first_churn(controller, args.profile)
        server.api.app.router.routes.extend(controller.routes())
        await server.start()
        server.write_kubeconfig(Path(args.kubeconfig))
        print(json.dumps({"url": server.url, "pid": os.getpid(), "objects": count,
                          # a baseline tree's simulator (--compare-code) may have none
                          "controlToken": getattr(server, "control_token", None),
                          "counts": counts, "generate_s": round(generated, 2),
                          "load_s": round(time.perf_counter() - started, 2),
                          "loop": type(asyncio.get_running_loop()).__module__,
                          "rss_bytes": proc_status("VmRSS")}), flush=True)
        await asyncio.Event().wait()

    with asyncio.Runner(loop_factory=loop_factory()) as runner:  # as `netsight sim` runs
        runner.run(serve())


def profile_first_churn(controller: Any, stem: str) -> None:
    """pyinstrument over the simulator's first churn (the whole thread: HTTP included)."""
    from pyinstrument import Profiler

    start = controller.start

    def profiled(body: Any) -> Any:
        stats = start(body)
        if controller.start is not profiled:
            return stats
        controller.start = start  # once
        profiler = Profiler(interval=0.0005, async_mode="disabled")
        profiler.start()

        def done(task: Any) -> None:
            profiler.stop()
            Path(stem + ".txt").write_text(profiler.output_text(unicode=False))

        controller.task.add_done_callback(done)
        return stats

    controller.start = profiled


class Sim:
    """The simulator subprocess, loaded and listening."""

    def __init__(self, args: argparse.Namespace, *, code: Path = SNAPSHOT, name: str = "",
                 extra: tuple[str, ...] = ()) -> None:
        OUT.mkdir(exist_ok=True)
        self.kubeconfig = OUT / f"informers-kubeconfig{'-' + name if name else ''}"
        command = [sys.executable, str(code / "informers.py"), "_sim", "--pods", str(args.pods),
                   "--seed", str(args.seed), "--policies-per-namespace",
                   str(args.policies_per_namespace), "--kubeconfig", str(self.kubeconfig),
                   *extra]
        if warmup_writes(args):  # (a baseline ref's script, sim-churn's, has no warm-up)
            command += ["--warmup-writes", str(warmup_writes(args)),
                        "--warmup-seed", str(getattr(args, "churn_seed", 1) + 1000)]
        warmup = f", {warmup_writes(args)} warm-up writes" if warmup_writes(args) else ""
        print(f"starting the simulator{' ' + name if name else ''}: {args.pods} pods{warmup} ...",
              file=sys.stderr, flush=True)
        env = {**CHILD_ENV, "PYTHONPATH": str(code)}
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                        env=env)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            sys.exit("the simulator did not start")
        self.info: Result = json.loads(line)
        self.url: str = self.info["url"]
        self.pid: int = self.info["pid"]
        # The /sim/ endpoints' bearer token: to workers in their environment, never argv.
        self.control: dict[str, str] = control_headers(self.info.get("controlToken"))
        print(f"simulator ready: {self.info['objects']} objects, loaded in "
              f"{self.info['load_s']} s, {self.info['rss_bytes'] / MiB:.0f} MiB",
              file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def warmup_writes(args: argparse.Namespace) -> int:
    """Churn writes the simulator makes before netsight lists it: by default 20 per pod
    for a soak (``warm_up``), none for the other commands."""
    writes = getattr(args, "warmup_writes", None)
    if writes is None:
        return 20 * args.pods if getattr(args, "events", None) else 0
    return int(writes)


@contextmanager
def simulator(args: argparse.Namespace) -> Iterator[Sim]:
    sim = Sim(args)
    try:
        yield sim
    finally:
        sim.stop()


def snapshot_compare(source: Path) -> Path:
    """Copy another netsight tree (``--compare-code``: a checkout of main) aside, with this
    script beside it, so that its workers import that tree's netsight and nothing else."""
    code = OUT / "informers-code-compare"
    shutil.rmtree(code, ignore_errors=True)
    shutil.copytree(source / "netsight", code / "netsight",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(SNAPSHOT / "informers.py", code / "informers.py")
    return code


def spawn(sim: Sim, variant: str, *, code: Path = SNAPSHOT, **options: Any) -> Result:
    """One measurement in a fresh netsight process; its result is its last stdout line.
    ``code``: the snapshot whose netsight it runs (this tree's, or --compare-code's)."""
    command = [sys.executable, str(code / "informers.py"), "_worker", "--variant", variant,
               "--kubeconfig", str(sim.kubeconfig), "--sim-pid", str(sim.pid),
               "--options", json.dumps(options)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT,
                          env={**CHILD_ENV, "PYTHONPATH": str(code),
                               SIM_CONTROL_TOKEN: sim.info.get("controlToken") or ""})
    if done.returncode != 0:
        sys.exit(f"{variant} failed:\n{done.stderr[-5000:]}")
    result: Result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_average_after"] = os.getloadavg()
    return result


# --- (a) initial sync -------------------------------------------------------------------------


async def sync_netsight(kubeconfig: str, sim_pid: int, *, profile: str | None = None,
                        trace: bool = False, page_size: int | None = None,
                        list_worker: bool | None = None) -> Result:
    """From connecting to ``wait_synced()`` returning, as ``netsight serve`` starts.

    ``list_worker``: InformerSettings.list_worker (None: the default). The list worker's
    CPU and peak RSS (its own process, a child of this one) are reported beside this
    process's, once it has stopped after the sync."""
    import resource

    from netsight.graph.ingest.client import KubeTransport
    from netsight.graph.ingest.cluster_watcher import ClusterWatcher
    from netsight.graph.ingest.informers import InformerSettings
    from netsight.graph.model.kinds import Kind
    from netsight.graph.store.live import GraphStore, Source

    profiler = None
    if profile:
        from pyinstrument import Profiler
        profiler = Profiler(interval=0.001)
    if trace:
        import tracemalloc
        tracemalloc.start()
    gc.collect()
    idle = count_idle(asyncio.get_running_loop())
    rss0, sim_cpu0, cpu0 = proc_status("VmRSS"), cpu_seconds(sim_pid), time.process_time()
    if profiler is not None:
        profiler.start()
    started = time.perf_counter()
    idle[0] = 0.0
    transport = await KubeTransport.connect(kubeconfig)
    store = GraphStore(source=Source.CLUSTER, cluster_name="sim")
    settings = InformerSettings() if page_size is None else InformerSettings(page_size=page_size)
    if list_worker is not None:  # an older tree (--compare-code) has no such setting
        settings.list_worker = list_worker
    watcher = ClusterWatcher(transport, store, settings)
    await watcher.start()
    worker = getattr(watcher, "_worker", None)  # the list worker, stopped after the sync
    synced = await watcher.wait_synced(600)
    wall = time.perf_counter() - started
    cpu, sim_cpu = time.process_time() - cpu0, cpu_seconds(sim_pid) - sim_cpu0
    worker_peak_rss = 0
    if worker is not None and worker.started:  # before it has exited, at best
        with contextlib.suppress(OSError, AssertionError):
            worker_peak_rss = proc_status("VmHWM", worker.pid)
    if profiler is not None:
        profiler.stop()
    rss, rss_peak = proc_status("VmRSS"), proc_status("VmHWM")
    if hasattr(watcher, "list_worker_done"):
        await watcher.list_worker_done()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the list worker, if any
    result: Result = {
        "synced": synced, "wall_s": wall, "cpu_s": cpu,
        "idle_s": idle[0],
        "sim_cpu_s": sim_cpu,
        "worker_cpu_s": children.ru_utime + children.ru_stime,
        "worker_peak_rss_bytes": worker_peak_rss,
        "offloaded_pages": getattr(watcher, "offloaded_pages", 0),
        "rss_growth_bytes": rss - rss0,
        "rss_peak_growth_bytes": rss_peak - rss0,
        "rss_bytes": rss,
        "pods": store.view().count(Kind.POD), "nodes": store.view().node_count,
        "edges": store.view().edge_count,
        "relists": sum(s.relists for s in store.sync.values()),
        "problems": len(store.view().problems()),
        "by_kind": {kind: store.view().count(kind) for kind in store.view().kinds()},
    }
    if profiler is not None and profile:
        result["profile"] = profile_summary(profiler, Path(profile))
    if trace:
        result["memory"] = memory_breakdown(result["pods"])
    await watcher.stop()
    await transport.close()
    return result


def collect_frozen() -> tuple[int, int, list[tuple[str, int]]]:
    """What the frozen generation hid from the collector: cycles that became garbage after
    gc.freeze() took them, freed only by a full collection after unfreeze(). Returns the
    frozen count, how many of them were garbage, and the commonest garbage types."""
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    garbage = gc.collect()
    types = Counter(type(o).__name__ for o in gc.garbage).most_common(12)
    gc.garbage.clear()
    gc.set_debug(0)
    gc.collect()
    return frozen, garbage, types


class GcPauses:
    """The collector's pauses by generation, timed by ``clock``: ``on_gc`` goes into
    ``gc.callbacks``, ``summary()`` into the results."""

    def __init__(self, clock: Callable[[], float], capacity: int = 1 << 16) -> None:
        self.clock = clock
        # Each pause's generation, seconds and unreachable objects found, in arrays
        # allocated (and touched) here: a soak's RSS slope is judged in this process, and a
        # growing list of tuples was ~1.6 MiB of it over 1M events (17,839 young
        # collections). Pauses past the capacity are counted, not kept.
        self.generations = array("b", [0]) * capacity
        self.seconds = array("d", [0.0]) * capacity
        self.found = array("q", [0]) * capacity
        self.kept = self.dropped = 0
        self._start = 0.0

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = self.clock()
        elif self.kept < len(self.seconds):
            n = self.kept
            self.seconds[n] = self.clock() - self._start
            self.generations[n] = info["generation"]
            self.found[n] = info["collected"]
            self.kept = n + 1
        else:
            self.dropped += 1

    @property
    def pauses(self) -> list[tuple[int, float, int]]:
        """(generation, seconds, unreachable objects found) of each pause kept."""
        return list(zip(self.generations[:self.kept], self.seconds[:self.kept],
                        self.found[:self.kept], strict=True))

    def summary(self) -> Result:
        out: Result = {}
        for g in (0, 1, 2):
            ps = sorted(d for gen, d, _ in self.pauses if gen == g)
            if ps:
                out[f"gen{g}"] = {
                    "count": len(ps), "p50_ms": round(1000 * ps[len(ps) // 2], 2),
                    "p99_ms": round(1000 * ps[int(len(ps) * 0.99)], 2),
                    "max_ms": round(1000 * ps[-1], 2), "total_s": round(sum(ps), 3),
                    "collected": sum(c for gen, _, c in self.pauses if gen == g)}
        if self.dropped:
            out["not_kept"] = self.dropped  # past the capacity: in no figure above
        return out


def keep_young(settings: Any, interval: float | None = None) -> Any:
    """The collector's keeper as ClusterWatcher.wait_synced starts it, with the tree's
    settings (a baseline tree's may not know every one)."""
    from netsight.graph.runtime.collector import keep_collections_young

    extra = {"young_threshold": settings.young_threshold} if hasattr(
        settings, "young_threshold") else {}
    if hasattr(settings, "release_interval"):
        extra["release_every"] = settings.release_interval
    if hasattr(settings, "refreeze_idle_interval") and interval is None:
        extra["idle_interval"] = settings.refreeze_idle_interval
    return keep_collections_young(
        interval if interval is not None else settings.refreeze_interval,
        settings.full_collection_interval, **extra)


def count_idle(loop: asyncio.AbstractEventLoop) -> list[float]:
    """Time the loop spends blocked waiting for I/O (in its selector), summed into the
    returned list's one item: during a sync, netsight waiting for the API server. Wall
    time is roughly CPU + idle + time the process waited for a core."""
    total = [0.0]
    selector = loop._selector  # type: ignore[attr-defined]
    select = selector.select

    def timed(timeout: float | None = None) -> Any:
        started = time.perf_counter()
        try:
            return select(timeout)
        finally:
            total[0] += time.perf_counter() - started

    selector.select = timed
    return total


async def sync_pods_netsight(kubeconfig: str) -> Result:
    """Only the Pod informer's list, into an empty graph: the part the baseline also does."""
    from netsight.graph.ingest.client import KubeTransport
    from netsight.graph.ingest.discovery import WatchedKind
    from netsight.graph.ingest.informers import Informer
    from netsight.graph.store.live import GraphStore, Source

    transport = await KubeTransport.connect(kubeconfig)
    store = GraphStore(source=Source.CLUSTER)
    informer = Informer(transport, store, WatchedKind("", "v1", "Pod", "pods", True))
    gc.collect()
    rss0, cpu0 = proc_status("VmRSS"), time.process_time()
    gc.disable()  # as ClusterWatcher.wait_synced does
    started = time.perf_counter()
    await informer.list_and_reconcile()
    wall = time.perf_counter() - started
    gc.freeze()
    gc.enable()
    result = {"wall_s": wall, "cpu_s": time.process_time() - cpu0,
              "rss_growth_bytes": proc_status("VmRSS") - rss0,
              "pods": store.view().count("Pod")}
    await transport.close()
    return result


async def sync_pods_baseline(kubeconfig: str, limit_pods: int | None) -> Result:
    """kubernetes-asyncio's generated models: list_pod_for_all_namespaces, 500 a page,
    keeping every V1Pod (as a client-side cache of them would)."""
    from kubernetes_asyncio import client, config

    configuration = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    api = client.ApiClient(configuration)
    core = client.CoreV1Api(api)
    pods: list[Any] = []
    gc.collect()
    rss0, cpu0 = proc_status("VmRSS"), time.process_time()
    gc.disable()  # the same treatment as netsight's sync
    started = time.perf_counter()
    cont: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": 500}
        if cont:
            kwargs["_continue"] = cont
        page = await core.list_pod_for_all_namespaces(**kwargs)
        pods.extend(page.items)
        cont = page.metadata._continue
        if not cont or (limit_pods and len(pods) >= limit_pods):
            break
    wall = time.perf_counter() - started
    gc.freeze()
    gc.enable()
    result = {"wall_s": wall, "cpu_s": time.process_time() - cpu0,
              "rss_growth_bytes": proc_status("VmRSS") - rss0, "pods": len(pods)}
    await api.close()
    return result


def profile_summary(profiler: Any, stem: Path) -> Result:
    stem.with_suffix(".txt").write_text(
        profiler.output_text(unicode=False, color=False, show_all=False))
    stem.with_suffix(".html").write_text(profiler.output_html())
    session = profiler.last_session
    root = session.root_frame()
    self_time: dict[str, float] = defaultdict(float)
    inclusive: dict[str, float] = defaultdict(float)

    def walk(frame: Any, on_stack: frozenset[str]) -> None:
        label = f"{frame.function} ({frame.file_path_short}:{frame.line_no})"
        if not frame.is_synthetic:
            self_time[label] += frame.total_self_time
            if label not in on_stack:
                inclusive[label] += frame.time
            on_stack = on_stack | {label}
        for child in frame.children:
            walk(child, on_stack)

    walk(root, frozenset())

    def top(table: dict[str, float], n: int = 25) -> list[tuple[str, float]]:
        return sorted(((k, round(v, 3)) for k, v in table.items()), key=lambda kv: -kv[1])[:n]

    return {"duration_s": session.duration, "top_self": top(self_time),
            "top_inclusive_netsight": top({k: v for k, v in inclusive.items()
                                           if "netsight/" in k})}


COMPONENTS = (  # allocation site (file path part) -> what the bytes are
    ("networkx/", "networkx: adjacency and node/edge attribute dicts"),
    ("netsight/graph/store/digraph.py", "digraph.py: node data and adjacency dicts"),
    ("netsight/graph/store/building.py", "building.py: indexes and reference bookkeeping"),
    ("netsight/graph/model/core_records.py", "core_records.py: records read the checked way"),
    ("netsight/graph/ingest/typed_records.py", "typed_records.py: records read typed"),
    ("netsight/graph/ingest/shared_parts.py", "shared_parts.py: shared ports and owners"),
    ("netsight/graph/model/selectors.py", "selectors.py: label maps and selectors"),
    ("netsight/graph/model/kinds.py", "kinds.py: node keys"),
    ("netsight/graph/ingest/informers.py", "informers.py: parsed JSON the records keep"),
    ("netsight/graph/store/live.py", "live.py: change ring, problems"),
)


def memory_breakdown(pods: int) -> Result:
    """Traced bytes still allocated after the sync, by component, and per pod."""
    import tracemalloc

    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    by_component: Counter[str] = Counter()
    by_line: Counter[str] = Counter()
    for stat in snapshot.statistics("lineno"):
        frame = stat.traceback[0]
        name = next((label for part, label in COMPONENTS if part in frame.filename), "other")
        by_component[name] += stat.size
        by_line[f"{frame.filename.rpartition('site-packages/')[2]}:{frame.lineno}"] += stat.size
    total = sum(by_component.values())
    return {
        "traced_bytes": total, "bytes_per_pod": total / pods,
        "components": [(name, size, round(size / pods)) for name, size in
                       by_component.most_common()],
        "top_lines": by_line.most_common(15),
    }


# --- (b) and (c): churn -----------------------------------------------------------------------


# The churn times the CPU of one watch line in this many (its latency: every line's).
HANDLE_SAMPLE = 8


async def churn_run(kubeconfig: str, sim_pid: int, *, rate: float, duration: float,
                    seed: int, sample_every: float = 1.0, window: float = 10.0,
                    profile_stem: str | None = None, freeze_every: float = 0.0,
                    drain_timeout: float = 60.0, census_every: float = 0.0,
                    trace: bool = False) -> Result:
    """Sync, then churn the simulator at ``rate`` writes/s; every watched event's latency
    from the simulator's write (wall time just before it) to ``GraphStore.apply`` returning
    here, and this process's RSS every ``sample_every`` seconds."""
    from netsight.graph.ingest.client import KubeTransport
    from netsight.graph.ingest.cluster_watcher import ClusterWatcher
    from netsight.graph.ingest.informers import Informer
    from netsight.graph.store.live import GraphStore, Source

    census: Any = None
    with contextlib.suppress(ImportError):  # an older tree (--compare-code) has none
        from netsight.graph.store.footprint import census
    typed_caches: Any = dict  # the typed decoders' caches: the store's census does not see them
    with contextlib.suppress(ImportError):
        from netsight.graph.ingest.shared_parts import cache_sizes as typed_caches
    if trace:
        import tracemalloc
        tracemalloc.start()

    capacity = int(rate * duration * 1.05) + 10_000
    # Allocated (and touched) before the RSS baseline: when each write was applied here, how
    # long apply() took, and the event's kind and type.
    applied = array("d", [0.0]) * capacity
    apply_s = array("f", [math.nan]) * capacity  # NaN: the line's CPU was not timed
    what = array("b", [0]) * capacity
    codes: dict[tuple[str, str], int] = {}
    transport = await KubeTransport.connect(kubeconfig)
    store = GraphStore(source=Source.CLUSTER, cluster_name="sim")
    watcher = ClusterWatcher(transport, store)
    await watcher.start()
    sync_started = time.perf_counter()
    assert await watcher.wait_synced(600)
    sync_s = time.perf_counter() - sync_started

    async with aiohttp.ClientSession(
            base_url=_sim_url(kubeconfig),
            headers=control_headers(os.environ.get(SIM_CONTROL_TOKEN))) as http:
        state = await (await http.get("/sim/state")).json()
        base_rv = int(state["resourceVersion"]) + 1
        original_handle = Informer.handle_line

        arrived = [0]

        lines = [0]

        def timed_handle(informer: Any, line: bytes, resource_version: str) -> str:
            # Each watch line: decoded and applied (Pods and slices go straight to records,
            # past GraphStore.apply); every line's latency, and every HANDLE_SAMPLE-th line's
            # CPU time of this thread (a thread clock is a syscall: timing every line cost
            # ~4.5 us of system time an event, which this benchmark charged to netsight).
            lines[0] += 1
            if lines[0] % HANDLE_SAMPLE:
                version = original_handle(informer, line, resource_version)
                took = math.nan
            else:
                began = time.thread_time()
                version = original_handle(informer, line, resource_version)
                took = time.thread_time() - began
            event = line[9:line.find(b'"', 9)].decode()
            if event in ("ADDED", "MODIFIED", "DELETED"):
                index = int(version) - base_rv
                if 0 <= index < capacity:
                    applied[index] = time.time()
                    apply_s[index] = took
                    what[index] = codes.setdefault((informer.kind.kind, event), len(codes))
                    arrived[0] += 1
            return str(version)

        freezer = None
        if freeze_every:
            async def freeze() -> None:
                while True:
                    await asyncio.sleep(freeze_every)
                    gc.freeze()

            freezer = asyncio.create_task(freeze())

        Informer.handle_line = timed_handle  # type: ignore[method-assign,assignment]
        await asyncio.sleep(2)  # let the watches settle after the sync
        # Sized for the keeper's fastest clock (100 a second) and the automatic safety net.
        gc_pauses = GcPauses(time.perf_counter, capacity=int(duration * 200) + 10_000)
        gc.callbacks.append(gc_pauses.on_gc)
        samples: list[tuple[float, int, int, int, int, int, int]] = []
        # Every census_every seconds: the entries of each of the graph's per-object
        # structures (netsight/graph/store/footprint.py), to tell state from leaks.
        censuses: list[tuple[float, int, dict[str, int]]] = []
        last_census = [0.0]
        frozen_now = [-1]  # frozen objects at the last census (-1: none taken)

        def sample(received: int) -> None:
            # Identities (pod-likes of a namespace sharing a label map) are the part of the
            # graph that grows with the cluster's variety of label sets, not with its size.
            # Frozen: objects gc.freeze() keeps out of the collector's reach; traced: bytes
            # Python has allocated (with trace), against which RSS shows fragmentation.
            at = round(time.time() - churn_started, 2)
            identities = sum(map(len, store.state.identities.values()))
            traced = tracemalloc.get_traced_memory()[0] if trace else 0
            # A census walks every structure, and gc.get_freeze_count() the linked list of
            # the ~1.4M frozen objects: ~0.1-0.2 s each at 100k pods with the loop held (a
            # count every second held 10% of the events up to 200 ms). The soak takes them
            # now and then; the churn command, which times events, never.
            if census is not None and census_every and at - last_census[0] >= census_every:
                last_census[0] = at
                frozen_now[0] = gc.get_freeze_count()
                censuses.append((at, received, census(store) | typed_caches() | tables(store)
                                 | heap_free()))
            samples.append((at, proc_status("VmRSS"), received, proc_status("VmRSS", sim_pid),
                            identities, frozen_now[0], traced))

        if census is not None and census_every:
            # At rest, before the first write: where in-flight structures must return to.
            censuses.append((0.0, 0, census(store) | typed_caches() | tables(store) | heap_free()))
        rss_start = proc_status("VmRSS")
        cpu0, sim_cpu0 = time.process_time(), cpu_seconds(sim_pid)
        times0 = os.times()
        profiler = None
        if profile_stem:
            from pyinstrument import Profiler
            profiler = Profiler(interval=0.001, async_mode="disabled")
            profiler.start()
        response = await http.post("/sim/churn", json={
            "rate": rate, "duration": duration, "seed": seed, "record": True,
            "scaleWorkloads": False})
        assert response.status == 202, await response.text()
        churn_started = time.time()
        status: Result = {}
        while True:
            await asyncio.sleep(sample_every)
            sample(sum(s.events for s in store.sync.values()))
            status = await (await http.get("/sim/churn")).json()
            if not status["running"]:
                break
        churn_cpu, sim_cpu = time.process_time() - cpu0, cpu_seconds(sim_pid) - sim_cpu0
        times1 = os.times()
        profile: Result | None = None
        if profiler is not None and profile_stem:
            profiler.stop()
            profile = profile_summary(profiler, Path(profile_stem))
        churn_ended = time.time()
        arrived_at_end = arrived[0]
        # Drain: wait until every write has arrived (each kind has a stream of its own, so
        # the last write is not the last to arrive), or drain_timeout seconds pass. Every
        # write is to a watched kind (scaleWorkloads is off).
        writes = int(status["writes"])
        deadline = time.time() + drain_timeout
        next_sample = time.time() + sample_every
        while arrived[0] < writes and time.time() < deadline:
            await asyncio.sleep(0.05)
            if time.time() >= next_sample:
                next_sample += sample_every
                sample(sum(s.events for s in store.sync.values()))
        # CPU until the last event was applied: while netsight runs behind, the churn's
        # window alone leaves out the backlog's events, whose writes it counts.
        drained_cpu, drained_times = time.process_time() - cpu0, os.times()
        gc.callbacks.remove(gc_pauses.on_gc)
        sample(sum(s.events for s in store.sync.values()))
        if census is not None and census_every:
            censuses.append((samples[-1][0], samples[-1][2],
                             census(store) | typed_caches() | tables(store)))
        rss_end = proc_status("VmRSS")
        gc.collect()
        rss_after_collect = proc_status("VmRSS")
        frozen, frozen_garbage, garbage_types = collect_frozen()
        rss_after_full = proc_status("VmRSS")
        rss_after_trim = trimmed_rss()
        # Only now: the log of 1M writes costs this process ~100 MiB of Python objects.
        log = await (await http.get("/sim/churn/log")).json()
    if freezer is not None:
        freezer.cancel()
    latencies = array("d")
    windows: dict[int, list[float]] = defaultdict(list)
    by_what: dict[int, list[float]] = defaultdict(list)
    service: dict[int, list[float]] = defaultdict(list)
    missing = 0
    for rv, at in zip(log["rv"], log["at"], strict=True):
        index = rv - base_rv
        done = applied[index] if 0 <= index < capacity else 0.0
        if done == 0.0:
            missing += 1
            continue
        latencies.append(done - at)
        windows[int((at - log["at"][0]) // window)].append(done - at)
        by_what[what[index]].append(done - at)
        if not math.isnan(apply_s[index]):
            service[what[index]].append(apply_s[index])
    names = {code: f"{kind} {event}" for (kind, event), code in codes.items()}
    last_applied = max(applied) if len(applied) else 0.0
    await watcher.stop()
    await transport.close()
    sorted_latencies = sorted(latencies)
    received = len(sorted_latencies)
    return {
        "sync_s": sync_s, "rate_target": rate, "duration_s": status.get("elapsed"),
        "writes": status.get("writes"), "writes_by_kind": status.get("writesByKind"),
        "mutations": status.get("mutations"), "sim_rate": status.get("rate"),
        "sim_max_behind_s": status.get("maxBehind"),
        "received": received, "missing": missing,
        "received_per_s": received / status["elapsed"] if status.get("elapsed") else 0,
        "drain_s": max(0.0, last_applied - churn_ended),
        "backlog_at_end": len(log["rv"]) - arrived_at_end,
        "latency_ms": percentiles(sorted_latencies),
        "latency_ms_by_event": {names[c]: percentiles(sorted(v)) for c, v in by_what.items()},
        # CPU per watch line, decoding included (GraphStore.apply alone until Nov 2026).
        "handle_ms_by_event": {names[c]: percentiles(sorted(v)) for c, v in service.items()},
        # Estimated from the timed lines (every HANDLE_SAMPLE-th).
        "handle_s_total": sum(sum(v) for v in service.values()) * received / max(
            1, sum(map(len, service.values()))),
        "handle_timed_lines": sum(map(len, service.values())),
        "latency_ms_by_window": {
            f"{w * window:.0f}-{(w + 1) * window:.0f}s": percentiles(sorted(v))
            for w, v in sorted(windows.items())},
        "loop": type(asyncio.get_running_loop()).__module__,
        "cpu_s": churn_cpu, "sim_cpu_s": sim_cpu,
        # The same CPU split: in Python and libraries (user), in the kernel (sys: sockets).
        "cpu_user_s": times1.user - times0.user, "cpu_sys_s": times1.system - times0.system,
        "cpu_drained_s": drained_cpu,
        "cpu_drained_user_s": drained_times.user - times0.user,
        "cpu_drained_sys_s": drained_times.system - times0.system,
        "gc": gc_pauses.summary(),
        "rss_start_bytes": rss_start, "rss_end_bytes": rss_end,
        "rss_after_collect_bytes": rss_after_collect,
        "frozen_at_end": frozen, "frozen_garbage": frozen_garbage,
        "frozen_garbage_types": garbage_types, "rss_after_full_collect_bytes": rss_after_full,
        "rss_after_trim_bytes": rss_after_trim,
        # (seconds into churn, RSS, events received, sim RSS, identities, frozen objects,
        # traced bytes)
        "rss_samples": samples,
        "censuses": censuses,  # (seconds into churn, events received, census)
        "graph": {"nodes": store.view().node_count, "edges": store.view().edge_count},
        "relists": {k: s.relists for k, s in store.sync.items() if s.relists},
        "errors": {k: s.last_error for k, s in store.sync.items() if s.last_error},
        "profile": profile,
    }


def graph_digests(store: Any, related_limit: int) -> tuple[str, str]:
    """Digests of ``store``'s change ring and of its edges, to check that two trees (or two
    ways of feeding one) changed the graph alike. A change's related keys are cut at
    ``related_limit`` (the tree's RELATED_LIMIT) in an order that varies between processes:
    then only their number is compared."""
    digest = hashlib.sha256()
    for change in store.changes:
        related = sorted(change.related) if len(change.related) < related_limit else len(
            change.related)
        digest.update(repr((change.generation, str(change.type), change.key, change.fields,
                            related)).encode())
    edges = hashlib.sha256(repr(sorted(
        (source, target, sorted(rels)) for source, target, rels in store.state.edges()
    )).encode()).hexdigest()[:16]
    return digest.hexdigest()[:16], edges


def percentiles(values: list[float]) -> Result:
    if not values:
        return {}

    def at(q: float) -> float:
        return round(1000 * values[min(len(values) - 1, int(q * len(values)))], 3)

    return {"n": len(values), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99),
            "p999": at(0.999), "max": round(1000 * values[-1], 3)}


def control_headers(token: str | None) -> dict[str, str]:
    """What a request to the simulator's /sim/ endpoints carries (nothing for a simulator
    without a control token)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def _sim_url(kubeconfig: str) -> str:
    import yaml

    config = yaml.safe_load(Path(kubeconfig).read_text())
    return str(config["clusters"][0]["cluster"]["server"])


# --- (d) the simulator's list throughput ------------------------------------------------------


async def list_throughput(kubeconfig: str, sim_pid: int, *, limit: int, parse: bool,
                          pods: int) -> Result:
    """Every pod, ``limit`` a page, read as bytes (and parsed with orjson, if asked)."""
    objects = size = 0
    parse_s = 0.0
    sim_cpu0 = cpu_seconds(sim_pid)
    gc.disable()
    async with aiohttp.ClientSession(base_url=_sim_url(kubeconfig)) as http:
        started = time.perf_counter()
        cont: str | None = None
        while True:
            params = {"limit": str(limit)} if limit else {}
            if cont:
                params["continue"] = cont
            async with http.get("/api/v1/pods", params=params) as response:
                body = await response.read()
            size += len(body)
            t = time.perf_counter()
            page = orjson.loads(body) if parse else None
            parse_s += time.perf_counter() - t
            if page is None:  # the continue token, from the metadata at the start
                head = body[:1000]
                marker = head.find(b'"continue":"')
                cont = head[marker + 12:head.index(b'"', marker + 12)].decode() if (
                    marker >= 0) else None
            else:
                objects += len(page["items"])
                cont = page["metadata"].get("continue")
            if not cont:
                break
        wall = time.perf_counter() - started
    gc.enable()
    objects = objects or pods
    return {"limit": limit, "parse": parse, "objects": objects, "bytes": size, "wall_s": wall,
            "objects_per_s": objects / wall, "mb_per_s": size / wall / 1e6,
            "parse_s": parse_s, "sim_cpu_s": cpu_seconds(sim_pid) - sim_cpu0}


# --- (e) the simulator's CPU per write under churn --------------------------------------------


def code_at(ref: str) -> Path:
    """netsight/ and this script as committed at git ``ref``, in out/informers-code-<ref>: the
    baseline simulator of ``sim-churn`` (its ``_sim`` subcommand, with its own patches)."""
    import io
    import tarfile

    dest = OUT / f"informers-code-{ref.replace('/', '_')}"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref, "netsight", "benchmarks/informers.py"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    (dest / "benchmarks" / "informers.py").rename(dest / "informers.py")
    return dest


async def watched_paths(url: str) -> list[tuple[str, str | None]]:
    """(path, Accept header) of every watch netsight's informers open on this server."""
    from netsight.graph.ingest.api_responses import Transport
    from netsight.graph.ingest.discovery import CRD_KIND, discover

    class Plain:  # discovery through plain aiohttp: the simulator takes any token
        def __init__(self, http: aiohttp.ClientSession) -> None:
            self.http = http

        async def get(self, path: str, params: list[tuple[str, str]], *,
                      accept: str | None = None) -> Any:
            response = await self.http.get(path, params=params)
            await response.read()
            return response

    async with aiohttp.ClientSession(base_url=url) as http:
        transport: Transport = Plain(http)  # type: ignore[assignment]
        kinds = [*await discover(transport), CRD_KIND]
    return [(k.path, k.accept[1] if k.accept else None) for k in kinds]


async def sim_churn_run(sim: Sim, paths: list[tuple[str, str | None]], *, rate: float,
                        duration: float, seed: int, drain_timeout: float = 60.0) -> Result:
    """Churn ``sim`` at ``rate`` with a watch open on every path netsight watches, each read
    as raw bytes (no parsing: this process must stay cheap and keep up); the simulator's
    CPU from the start of churn until every event has arrived, per write."""
    events = [0]
    sizes = [0]

    async def consume(http: aiohttp.ClientSession, path: str, accept: str | None,
                      rv: str) -> None:
        params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true",
                  "timeoutSeconds": "3600"}
        headers = {"Accept": accept} if accept else {}
        async with http.get(path, params=params, headers=headers) as response:
            assert response.status == 200, await response.text()
            while chunk := await response.content.readany():
                sizes[0] += len(chunk)
                events[0] += chunk.count(b"\n") - chunk.count(b'"BOOKMARK"')

    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(base_url=sim.url, timeout=timeout,
                                     headers=sim.control) as http:
        rv = str((await (await http.get("/sim/state")).json())["resourceVersion"])
        tasks = [asyncio.create_task(consume(http, path, accept, rv)) for path, accept in paths]
        await asyncio.sleep(1.0)  # the streams are open
        load0, cpu0, mine0 = os.getloadavg()[0], cpu_seconds(sim.pid), time.process_time()
        response = await http.post("/sim/churn", json={
            "rate": rate, "duration": duration, "seed": seed, "record": True,
            "scaleWorkloads": False})
        assert response.status == 202, await response.text()
        started = time.perf_counter()
        while True:
            await asyncio.sleep(0.5)
            status = await (await http.get("/sim/churn")).json()
            if not status["running"]:
                break
        writes = int(status["writes"])
        deadline = time.perf_counter() + drain_timeout
        while events[0] < writes and time.perf_counter() < deadline:
            await asyncio.sleep(0.01)
        wall = time.perf_counter() - started
        sim_cpu, mine = cpu_seconds(sim.pid) - cpu0, time.process_time() - mine0
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if status.get("error"):
        sys.exit(f"churn failed in the simulator: {status['error']}")
    return {"rate_target": rate, "writes": writes, "received": events[0],
            "bytes_per_write": round(sizes[0] / max(writes, 1)),
            "sim_rate": status["rate"], "sim_max_behind_s": status["maxBehind"],
            "wall_s": round(wall, 3), "sim_cpu_s": round(sim_cpu, 3),
            "sim_us_per_write": round(sim_cpu / max(writes, 1) * 1e6, 1),
            "sim_cpu_share": round(sim_cpu / wall, 3), "client_cpu_s": round(mine, 3),
            "writes_by_kind": status["writesByKind"], "load_average": [load0,
                                                                     os.getloadavg()[0]]}


def command_sim_churn(args: argparse.Namespace) -> None:
    """(e) The simulator's CPU per write under churn, this tree against ``--baseline`` (a git
    ref) side by side: both simulators loaded at once, runs alternated (ABBA)."""
    info = machine()
    variants: list[tuple[str, Path]] = [("this", SNAPSHOT)]
    if args.baseline:
        variants.append((f"baseline {args.baseline}", code_at(args.baseline)))
    if args.in_process:
        sim_churn_in_process(args, variants, info)
        return
    sims: list[Sim] = []
    runs: dict[str, list[Result]] = defaultdict(list)
    try:
        for name, code in variants:
            extra = ("--profile", str(OUT / "informers-profile-sim-churn")) if (
                args.profile and code == SNAPSHOT) else ()
            sims.append(Sim(args, code=code, name=name.replace(" ", "-").replace("/", "_"),
                            extra=extra))
        paths = asyncio.run(watched_paths(sims[0].url))
        for i in range(args.runs):
            order = list(zip(variants, sims, strict=True))
            if i % 2:
                order.reverse()
            for (name, _), sim in order:
                result = sim_churn_run(sim, paths, rate=args.rate, duration=args.duration,
                                       seed=args.churn_seed + i)
                result = asyncio.run(result)
                runs[name].append(result)
                print(f"run {i + 1} {name}: {result['writes']} writes at {result['sim_rate']}/s"
                      f" (behind {result['sim_max_behind_s']} s), simulator "
                      f"{result['sim_cpu_s']:.2f} s CPU = {result['sim_us_per_write']} us/write"
                      f", received {result['received']}, load {result['load_average']}",
                      file=sys.stderr)
    finally:
        for sim in sims:
            sim.stop()
    summary = {name: {"runs": len(rs), "rate_target": args.rate,
                      "sim_us_per_write_median": statistics.median(
                          r["sim_us_per_write"] for r in rs),
                      "sim_us_per_write": [r["sim_us_per_write"] for r in rs],
                      "sim_cpu_share": [r["sim_cpu_share"] for r in rs],
                      "sim_max_behind_s": [r["sim_max_behind_s"] for r in rs],
                      "missing": [r["writes"] - r["received"] for r in rs]}
               for name, rs in runs.items()}
    save(args.name, {"machine": info, "sims": {n: s.info for (n, _), s in
                                               zip(variants, sims, strict=True)},
                     "watched": paths, "summary": summary, "runs": runs})
    print(json.dumps(summary, indent=1))


def sim_churn_in_process(args: argparse.Namespace, variants: list[tuple[str, Path]],
                         info: Result) -> None:
    """The state path alone (driver, store, fan-out, encoding; no HTTP), each variant in a
    child process of its own, alternated."""
    runs: dict[str, list[Result]] = defaultdict(list)
    for i in range(args.runs):
        order = variants if i % 2 == 0 else variants[::-1]
        for name, code in order:
            # This script next to the variant's netsight/ (a script's own directory comes
            # first on sys.path).
            script = code / "informers_sim_in_process.py"
            shutil.copy(SNAPSHOT / "informers.py", script)
            command = [sys.executable, str(script), "_sim_in_process",
                       "--pods", str(args.pods), "--seed", str(args.seed),
                       "--policies-per-namespace", str(args.policies_per_namespace),
                       "--writes", str(args.writes), "--churn-seed", str(args.churn_seed + i)]
            if args.profile and code == SNAPSHOT and i == 0:
                command += ["--profile", str(OUT / "informers-profile-sim-in-process")]
            done = subprocess.run(command, capture_output=True, text=True, check=False,
                                  cwd=ROOT, env={**CHILD_ENV, "PYTHONPATH": str(code)})
            if done.returncode != 0:
                sys.exit(f"{name} failed:\n{done.stderr[-5000:]}")
            result: Result = json.loads(done.stdout.strip().splitlines()[-1])
            runs[name].append(result)
            print(f"run {i + 1} {name}: {result['writes']} writes, {result['cpu_s']:.2f} s CPU"
                  f" = {result['us_per_write']} us/write (load {os.getloadavg()[0]:.2f})",
                  file=sys.stderr)
    summary = {name: {"runs": len(rs), "us_per_write_median": statistics.median(
        r["us_per_write"] for r in rs), "us_per_write": [r["us_per_write"] for r in rs]}
        for name, rs in runs.items()}
    save(args.name + "-in-process", {"machine": info, "summary": summary, "runs": runs})
    print(json.dumps(summary, indent=1))


def sim_in_process_main(args: argparse.Namespace) -> None:
    """One in-process run: load, open a watcher per watched kind, churn at full speed."""
    from netsight.sim.churn import ChurnDriver
    from netsight.sim.selection import Selection

    gc.disable()  # as the simulator process runs
    state = loaded_state(args)
    watched = ("namespaces", "pods", "services", "endpointslices", "networkpolicies",
               "ingresses", "ingressclasses", "secrets", "configmaps",
               "customresourcedefinitions")

    async def main() -> Result:
        watchers = []
        for rtype in state.registry:
            if rtype.plural in watched:
                watchers.append(state.open_watch(rtype, Selection(), str(state.rv)))
        driver = ChurnDriver(state, seed=args.churn_seed, scale_workloads=False)
        size = 0

        def drain() -> None:  # what each watch stream would send
            nonlocal size
            for watcher in watchers:
                if hasattr(watcher, "take"):  # lines pending in a list, sent together
                    while watcher.pending:
                        size += sum(len(line) for line in watcher.take() if line)
                    continue
                queue = watcher.queue  # a version with an asyncio.Queue a watcher
                while not queue.empty():
                    item = queue.get_nowait()
                    size += len(item) if item else 0

        profiler = None
        if args.profile:
            from pyinstrument import Profiler
            profiler = Profiler(interval=0.0005)
            profiler.start()
        cpu0 = time.process_time()
        while driver.stats.writes < args.writes:
            for _ in range(10):
                driver.step()
            drain()
        cpu = time.process_time() - cpu0
        if profiler is not None:
            profiler.stop()
            Path(args.profile + ".txt").write_text(profiler.output_text(unicode=False))
        writes = driver.stats.writes
        return {"writes": writes, "cpu_s": cpu, "us_per_write": round(cpu / writes * 1e6, 1),
                "bytes_per_write": round(size / writes),
                "writes_by_kind": dict(driver.stats.writes_by_kind)}

    print(json.dumps(asyncio.run(main())))


# --- the worker -------------------------------------------------------------------------------


def worker_main(args: argparse.Namespace) -> None:
    options = json.loads(args.options)
    kubeconfig, sim_pid = args.kubeconfig, args.sim_pid
    variant = args.variant
    result: Result
    if variant == "netsight":
        result = asyncio.run(sync_netsight(kubeconfig, sim_pid,
                                           page_size=options.get("page_size"),
                                           list_worker=options.get("list_worker")))
    elif variant == "profile":
        result = asyncio.run(sync_netsight(kubeconfig, sim_pid, profile=options["stem"]))
    elif variant == "tracemalloc":
        result = asyncio.run(sync_netsight(kubeconfig, sim_pid, trace=True))
    elif variant == "pods-netsight":
        result = asyncio.run(sync_pods_netsight(kubeconfig))
    elif variant == "pods-baseline":
        result = asyncio.run(sync_pods_baseline(kubeconfig, options.get("limit_pods")))
    elif variant == "churn":
        from netsight.sim.apiserver import loop_factory

        # By default on the event loop `netsight serve` runs the informers on (uvloop where
        # installed; asyncio's own costs ~18% more instructions a read of a watch stream).
        # Before 2026-11-24 the churn ran on asyncio's: --loop asyncio compares.
        factory = None if options.get("loop") == "asyncio" else loop_factory()
        with asyncio.Runner(loop_factory=factory) as runner:
            result = runner.run(churn_run(
                kubeconfig, sim_pid, rate=options["rate"], duration=options["duration"],
                seed=options["seed"], profile_stem=options.get("profile"),
                freeze_every=options.get("freeze_every", 0.0),
                drain_timeout=options.get("drain_timeout", 60.0),
                census_every=options.get("census_every", 0.0),
                trace=options.get("trace", False)))
    elif variant == "list":
        result = asyncio.run(list_throughput(kubeconfig, sim_pid, limit=options["limit"],
                                             parse=options["parse"], pods=options["pods"]))
    else:
        raise SystemExit(f"unknown variant {variant}")
    import netsight

    result["netsight_from"] = str(Path(netsight.__file__).parent)
    print(json.dumps(result))


# --- the commands -----------------------------------------------------------------------------


def median(runs: list[Result], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def save(name: str, data: Result) -> None:
    path = OUT / f"informers-{name}.json"
    path.write_text(json.dumps(data, indent=1))
    print(f"wrote {path}", file=sys.stderr)


def _page_sizes(text: str) -> list[int | None]:
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("page sizes: positive integers separated by commas")
    return list(sizes)


def command_sync(args: argparse.Namespace) -> None:
    info = machine()
    codes = [("", SNAPSHOT)]
    if args.compare_code is not None:  # alternated: an A/B of two versions of the code
        codes.append(("-compare", snapshot_compare(args.compare_code)))
        info["compare_code"] = str(args.compare_code)
    workers = {"default": (None,), "off": (False,), "on": (True,),
               "both": (False, True)}[args.list_worker]
    with simulator(args) as sim:
        runs: dict[str, list[Result]] = defaultdict(list)
        for i in range(args.runs):
            for (suffix, code), size, worker in itertools.product(codes, args.page_sizes,
                                                                  workers):
                # alternated: an A/B of the list page size, of the list worker
                name = ("netsight" if size is None else f"netsight-page-{size}") + suffix
                if worker is not None:
                    name += "-worker-on" if worker else "-worker-off"
                result = spawn(sim, "netsight", code=code, page_size=size, list_worker=worker)
                runs[name].append(result)
                print(f"run {i + 1} {name}: {result['wall_s']:.2f} s, CPU "
                      f"{result['cpu_s']:.2f} s, idle {result.get('idle_s', 0):.2f} s, "
                      f"list worker CPU {result.get('worker_cpu_s', 0):.2f} s (peak RSS "
                      f"{result.get('worker_peak_rss_bytes', 0) / MiB:.0f} MiB, "
                      f"{result.get('offloaded_pages', 0)} pages), "
                      f"simulator CPU {result['sim_cpu_s']:.2f} s, RSS +"
                      f"{result['rss_growth_bytes'] / MiB:.0f} MiB", file=sys.stderr)
            if args.pods_runs:
                result = spawn(sim, "pods-netsight")
                runs["pods-netsight"].append(result)
                print(f"run {i + 1} pods-netsight: {result['wall_s']:.2f} s, RSS +"
                      f"{result['rss_growth_bytes'] / MiB:.0f} MiB", file=sys.stderr)
        for i in range(args.baseline_runs):
            result = spawn(sim, "pods-baseline", limit_pods=args.baseline_pods)
            runs["pods-baseline"].append(result)
            print(f"run {i + 1} pods-baseline: {result['wall_s']:.2f} s for {result['pods']} "
                  f"pods, RSS +{result['rss_growth_bytes'] / MiB:.0f} MiB", file=sys.stderr)
    first = "netsight" if "netsight" in runs else next(iter(runs))
    pods = runs[first][0]["pods"]
    summary: Result = {}
    for variant, results in runs.items():
        n = statistics.median(r["pods"] for r in results)
        wall = median(results, "wall_s")
        summary[variant] = {
            "runs": len(results), "pods": n, "wall_s": round(wall, 2),
            "us_per_pod": round(wall / n * 1e6, 1),
            "cpu_s": round(median(results, "cpu_s"), 2),
            "rss_growth_mib": round(median(results, "rss_growth_bytes") / MiB, 1),
            "rss_growth_bytes_per_pod": round(median(results, "rss_growth_bytes") / n),
        }
    for variant, results in runs.items():
        if not variant.startswith("netsight"):
            continue
        full = summary[variant]
        full["sim_cpu_s"] = round(median(results, "sim_cpu_s"), 2)
        if all("idle_s" in r for r in results):  # a --compare-code tree's script may lack it
            full["idle_s"] = round(median(results, "idle_s"), 2)
        if all("worker_cpu_s" in r for r in results):
            full["worker_cpu_s"] = round(median(results, "worker_cpu_s"), 2)
            full["worker_peak_rss_mib"] = round(
                median(results, "worker_peak_rss_bytes") / MiB, 1)
        full["rss_mib"] = round(median(results, "rss_bytes") / MiB, 1)
        full["rss_peak_growth_mib"] = round(median(results, "rss_peak_growth_bytes") / MiB, 1)
    if "pods-baseline" in summary and "pods-netsight" in summary:  # --baseline-runs 0 leaves it out
        ours, theirs = summary["pods-netsight"], summary["pods-baseline"]
        summary["ratio_baseline_over_netsight"] = {
            "time_per_pod": round(theirs["us_per_pod"] / ours["us_per_pod"], 1),
            "rss_per_pod": round(theirs["rss_growth_bytes_per_pod"]
                                 / ours["rss_growth_bytes_per_pod"], 1),
        }
    save("sync", {"machine": info, "sim": sim.info, "pods": pods, "summary": summary,
                  "runs": runs})
    print(json.dumps(summary, indent=1))


def command_profile(args: argparse.Namespace) -> None:
    info = machine()
    with simulator(args) as sim:
        profile = spawn(sim, "profile", stem=str(OUT / "informers-profile-sync"))
        traced = spawn(sim, "tracemalloc")
    save("profile", {"machine": info, "sim": sim.info, "profile": profile, "tracemalloc": traced})
    print(json.dumps({"profile_wall_s": profile["wall_s"],
                      "top_inclusive_netsight": profile["profile"]["top_inclusive_netsight"],
                      "top_self": profile["profile"]["top_self"][:15],
                      "memory": traced["memory"]}, indent=1))


def command_churn(args: argparse.Namespace, *, name: str | None = None) -> None:
    name = name or args.name
    info = machine()
    by_rate: dict[float, list[Result]] = defaultdict(list)
    rates = args.rates or [args.rate]
    with simulator(args) as sim:
        for rate in rates:
            for i in range(args.runs):
                first = not by_rate
                result = spawn(sim, "churn", rate=rate, duration=args.duration,
                               seed=args.churn_seed + len(by_rate[rate]),
                               profile=str(OUT / f"informers-profile-{name}") if (
                                   args.profile and first) else None,
                               freeze_every=args.freeze_every,
                               loop=args.loop,
                               drain_timeout=args.drain_timeout,
                               census_every=getattr(args, "census_every", 0.0),
                               trace=getattr(args, "trace", False))
                by_rate[rate].append(result)
                lat = result["latency_ms"]
                print(f"{rate:.0f}/s run {i + 1}: {result['received_per_s']:.0f} events/s "
                      f"received, p50 {lat.get('p50')} ms, p99 {lat.get('p99')} ms, max "
                      f"{lat.get('max')} ms, backlog at end {result['backlog_at_end']}, "
                      f"missing {result['missing']}, RSS {result['rss_start_bytes'] / MiB:.0f}"
                      f" -> {result['rss_end_bytes'] / MiB:.0f} MiB", file=sys.stderr)
    keys = ("p50", "p90", "p99", "p999", "max")
    summary: Result = {}
    for rate, runs in by_rate.items():
        summary[f"{rate:.0f}/s"] = {
            "runs": len(runs), "rate_target": rate, "duration_s": args.duration,
            "received_per_s": round(statistics.median(r["received_per_s"] for r in runs)),
            "latency_ms": {k: statistics.median(r["latency_ms"][k] for r in runs)
                           for k in keys},
            "p99_ms_by_window": [[w["p99"] for w in r["latency_ms_by_window"].values()]
                                 for r in runs],
            "backlog_at_end": [r["backlog_at_end"] for r in runs],
            "missing": [r["missing"] for r in runs],
            "drain_s": [round(r["drain_s"], 3) for r in runs],
            "sim_max_behind_s": [r["sim_max_behind_s"] for r in runs],
            "cpu_share": round(statistics.median(r["cpu_s"] / r["duration_s"] for r in runs), 2),
            # Until the last event was applied, per event received; its system part.
            "cpu_us_per_event": [round(r["cpu_drained_s"] / max(1, r["received"]) * 1e6, 1)
                                 for r in runs],
            "sys_us_per_event": [round(r["cpu_drained_sys_s"] / max(1, r["received"]) * 1e6,
                                       1) for r in runs],
            "loop": runs[0].get("loop"),
            "sim_cpu_share": round(statistics.median(r["sim_cpu_s"] / r["duration_s"]
                                                     for r in runs), 2),
            "gc": [r["gc"] for r in runs],
            "rss_mib": [(round(r["rss_start_bytes"] / MiB, 1),
                         round(r["rss_end_bytes"] / MiB, 1)) for r in runs],
        }
    runs_out = {f"{rate:.0f}/s": runs for rate, runs in by_rate.items()}
    save(name, {"machine": info, "sim": sim.info, "summary": summary, "runs": runs_out})
    print(json.dumps(summary, indent=1))


# "Flat": over the second half of the events, RSS grows less than SOAK_SLOPE_MIB per 100k
# events, and no structure of the graph that should be stationary (netsight/graph/store/footprint.py
# PER_OBJECT, less the in-flight ones) grows by more than SOAK_DRIFT. Counts that follow the
# cluster (identities with its label variety) must be stationary too: churn keeps the
# cluster's size and label variety bounded (netsight/sim/churn.py; warm_up), so a count still
# climbing is a leak or a warm-up too short. In-flight structures are queues, not state:
# pending references (an edge waiting for its target: a slice applied before the pod it
# lists, which comes on another stream) are 0 at rest and some hundreds while netsight runs
# behind, so their trend measures the lag, not a leak. They are judged at rest: after the
# drain, no more than after the sync.
SOAK_SLOPE_MIB = 1.0
SOAK_DRIFT = 0.02  # fitted change over the second half, relative to the mean
IN_FLIGHT = ("pending_targets", "pending_edges")
# Not judged: shared_label_maps counts, besides the live label sets, the ones the typed
# decoders' bounded label cache keeps alive (graph/ingest/shared_parts.py, two generations).
NOT_JUDGED = ("shared_label_maps",)


def command_soak(args: argparse.Namespace) -> None:
    if args.piped:
        command_soak_piped(args)
        return
    args.duration = args.events / args.rate
    args.census_every = args.duration / 20  # every 5% of the events
    args.rates = None
    args.runs = 1
    command_churn(args, name=args.name)
    data = json.loads((OUT / f"informers-{args.name}.json").read_text())
    (key,) = data["runs"]
    run = data["runs"][key][0]
    data["summary"][key]["rss"] = soak_summary(run)
    save(args.name, data)
    print(json.dumps(data["summary"][key]["rss"], indent=1))


def soak_summary(run: Result) -> Result:
    samples = run["rss_samples"]
    events = samples[-1][2]
    half = [s for s in samples if s[2] >= events / 2]
    slope = _slope([s[2] for s in half], [s[1] for s in half])  # bytes per event
    # Tenths of the events applied: the first sample with at least that many.
    points = [next(s for s in samples if s[2] >= events * n / 10) for n in range(11)]
    drift, at_rest, judged = structure_judgement(run, events)
    late = [c for c in run.get("censuses") or [] if c[1] >= events / 2]
    slope_mib = slope * 100_000 / MiB
    return {
        "start_mib": round(run["rss_start_bytes"] / MiB, 1),
        "end_mib": round(run["rss_end_bytes"] / MiB, 1),
        "max_mib": round(max(s[1] for s in samples) / MiB, 1),
        "after_collect_mib": round(run["rss_after_collect_bytes"] / MiB, 1),
        "after_full_collect_mib": round(run["rss_after_full_collect_bytes"] / MiB, 1),
        "after_trim_mib": round(run.get("rss_after_trim_bytes", 0) / MiB, 1),
        "second_half_slope_mib_per_100k_events": round(slope_mib, 2),
        "events": events,
        "sim_rss_mib": (round(samples[0][3] / MiB), round(samples[-1][3] / MiB)),
        # At each tenth of the events: (events, RSS MiB, identities, frozen objects, traced
        # MiB or 0). RSS that follows identities is cluster state (more distinct label
        # sets among the live pods), not a leak.
        "at_tenths": [(s[2], round(s[1] / MiB, 1), s[4], s[5] if len(s) > 5 else None,
                       round(s[6] / MiB, 1) if len(s) > 6 else None) for s in points],
        "structure_trend_second_half": drift,
        "in_flight_at_rest": at_rest,
        "census_at_half_and_end": [(c[1], c[2]) for c in (late[:1] + late[-1:])],
        **({"traced_growth_second_half": run["traced_growth_second_half"]}
           if run.get("traced_growth_second_half") else {}),
        "frozen_garbage": run.get("frozen_garbage"),
        "frozen_garbage_types": run.get("frozen_garbage_types"),
        "flat": judged and slope_mib < SOAK_SLOPE_MIB
        and all(d <= SOAK_DRIFT for d in drift.values())
        and all(r["end"] <= r["start"] for r in at_rest.values()),
        "criterion": f"second-half RSS slope < {SOAK_SLOPE_MIB} MiB/100k events, every "
                     f"stationary structure's fitted change over the second half below "
                     f"+{SOAK_DRIFT:.0%} of its mean, and the in-flight ones "
                     f"({', '.join(IN_FLIGHT)}) after the drain no higher than after the "
                     "sync (not judged when the drain did not finish)",
    }


def structure_judgement(run: Result, events: int
                        ) -> tuple[dict[str, float], dict[str, Result], bool]:
    """(trend of each stationary structure over the second half, each in-flight structure
    at the start, at its highest and after the drain, whether the run could be judged: a
    census at rest at both ends and at least three over the second half)."""
    from netsight.graph.store.footprint import PER_OBJECT

    censuses = run.get("censuses") or []
    late = [c for c in censuses if c[1] >= events / 2]
    drift: dict[str, float] = {}
    at_rest: dict[str, Result] = {}
    # Drained: every event arrived (the HTTP soak waits up to drain_timeout for it; the
    # piped one applies every write in lockstep, so its last census is at rest).
    drained = not run.get("backlog_at_end") and not run.get("missing")
    # At rest at the start: a census before the first event (older runs took none).
    judged = len(late) >= 3 and drained and bool(censuses) and censuses[0][1] == 0
    for k in PER_OBJECT:
        if k in NOT_JUDGED or not late or k not in late[0][2]:
            continue
        if k in IN_FLIGHT:
            at_rest[k] = {"start": censuses[0][2][k], "max": max(c[2][k] for c in censuses),
                          "end": censuses[-1][2][k]}
            continue
        # The fitted change across the second half, not its end points: label variety
        # fluctuates by a few percent in a small cluster. Relative to the mean (at least 1:
        # structures that stay empty, problems say, have a mean of 0).
        ys = [c[2][k] for c in late]
        change = _slope([c[1] for c in late], ys) * (late[-1][1] - late[0][1])
        drift[k] = round(change / max(statistics.fmean(ys), 1.0), 4)
    return drift, at_rest, judged


def warm_up(state: Any, writes: int, seed: int) -> None:
    """Churn ``state`` for ``writes`` writes before anyone watches it: a cluster that has
    been churning for a while. The label toggles spread the live pods over more label sets
    (identities, at most 6 per ReplicaSet) until restarts, which bring a pod back to its
    template's labels, balance them. At 100k pods that takes ~1.7M writes: 15,934 label
    sets at the start, 22,582 after 100k writes, 28,110 after 500k, 29,238 after 1M, then
    29,500-29,900 from 1.5M to 2.6M. A 1M-event soak from a fresh cluster measured mostly
    that (RSS following identities 16.5k -> 29.1k)."""
    from netsight.sim.churn import ChurnDriver

    driver = ChurnDriver(state, seed=seed, scale_workloads=False)
    start = state.rv
    while state.rv - start < writes:
        driver.step()


def _frame(out: Any, value: Any) -> None:
    import pickle

    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(data).to_bytes(8, "little") + data)


def _unframe(source: Any) -> Any:
    import pickle

    head = source.read(8)
    return pickle.loads(source.read(int.from_bytes(head, "little")))


def command_soak_piped(args: argparse.Namespace) -> None:
    """The soak without HTTP, in lockstep: the simulated state and its churn in this
    process, netsight in a child (``_soak_child``) fed the watch lines through a pipe. A
    child that falls behind blocks the churn, so every write is applied whatever the
    machine's load, and the child's RSS is netsight's alone."""
    from netsight.graph.ingest.discovery import CORE_KINDS
    from netsight.sim.churn import ChurnDriver
    from netsight.sim.selection import Selection

    info = machine()
    gc.disable()
    state = loaded_state(args)
    warmup = warmup_writes(args)
    started = time.process_time()
    warm_up(state, warmup, args.churn_seed + 1000)
    warmup_s = time.process_time() - started
    kinds: list[tuple[str, str, str, str, bool]] = []
    pages: dict[str, list[bytes]] = {}
    watchers: dict[str, Any] = {}
    for rtype in state.registry:
        if (rtype.group, rtype.kind) not in CORE_KINDS:
            continue
        rv, items = state.list(rtype, Selection())
        kinds.append((rtype.group, rtype.version, rtype.kind, rtype.plural, rtype.namespaced))
        chunks = [items[i:i + 1000] for i in range(0, len(items), 1000)] or [[]]
        pages[rtype.path()] = [orjson.dumps({"metadata": {"resourceVersion": str(rv), **(
            {"continue": str(n + 1)} if n + 1 < len(chunks) else {})}, "items": chunk})
            for n, chunk in enumerate(chunks)]
        watchers[rtype.path()] = state.open_watch(rtype, Selection(), str(state.rv))
    code = snapshot_code()
    child = subprocess.Popen(
        [sys.executable, str(SNAPSHOT / "informers.py"), "_soak_child"] + (
            ["--trace"] if args.trace else []),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
        env={**CHILD_ENV, "PYTHONPATH": str(SNAPSHOT)})
    assert child.stdin is not None
    assert child.stdout is not None
    _frame(child.stdin, {"kinds": kinds, "pages": pages, "events": args.events})
    del pages
    driver = ChurnDriver(state, seed=args.churn_seed, scale_workloads=False)
    start = state.rv
    print(f"{args.pods} pods, {warmup} warm-up writes in {warmup_s:.0f} s CPU; churning "
          f"{args.events} writes in lockstep ...", file=sys.stderr, flush=True)
    while state.rv - start < args.events:
        for _ in range(20):
            driver.step()
        for path, watcher in watchers.items():
            while watcher.pending:
                lines = [line for line in watcher.take() if line]
                for i in range(0, len(lines), 8):  # as a stream hands them over
                    _frame(child.stdin, (path, b"".join(lines[i:i + 8])))
    _frame(child.stdin, None)
    child.stdin.close()
    result: Result = json.loads(child.stdout.read().decode().strip().splitlines()[-1])
    child.wait()
    result.update(writes=state.rv - start, warmup_writes=warmup, warmup_cpu_s=warmup_s,
                  load_average_after=os.getloadavg())
    summary = soak_summary(result)
    save(args.name, {"machine": info, "code": code, "summary": summary, "run": result})
    print(json.dumps(summary, indent=1))


def soak_child_main(args: argparse.Namespace) -> None:
    """netsight's side of ``soak --piped``: list from the pages, then apply every chunk the
    pipe brings, with the collector handled as ClusterWatcher does (frozen after the sync,
    refrozen every InformerSettings.refreeze_interval, the heap's free pages released every
    InformerSettings.release_interval)."""
    from netsight.graph.ingest.discovery import NEVER_WATCHED, WatchedKind
    from netsight.graph.ingest.informers import Informer, InformerSettings
    from netsight.graph.runtime.allocator import release_free_memory
    from netsight.graph.store.footprint import census
    from netsight.graph.store.live import GraphStore, Source

    if args.trace:
        import tracemalloc
        tracemalloc.start()
    source = sys.stdin.buffer
    setup = _unframe(source)
    gc.disable()
    store = GraphStore(source=Source.CLUSTER, cluster_name="soak")
    store.state.never_arrive(NEVER_WATCHED)
    transport = ReplayTransport(setup.pop("pages"))
    # Kinds the churn never writes (Ingresses) stay silent for the whole soak.
    settings = InformerSettings(inactivity_timeout=1e9)
    informers = [Informer(transport, store, WatchedKind(*kind), settings)
                 for kind in setup["kinds"]]
    events = setup["events"]
    samples: list[tuple[float, int, int, int, int, int, int]] = []
    censuses: list[tuple[float, int, dict[str, int]]] = []

    def sample(received: int) -> None:
        samples.append((round(time.process_time(), 2), proc_status("VmRSS"), received, 0,
                        sum(map(len, store.state.identities.values())),
                        gc.get_freeze_count(),
                        tracemalloc.get_traced_memory()[0] if args.trace else 0))

    async def run() -> Result:
        versions = await asyncio.gather(*(i.list_and_reconcile() for i in informers))
        gc.freeze()
        gc.enable()
        release_free_memory()
        collector = asyncio.create_task(keep_young(settings))
        watches = [asyncio.create_task(i.watch(v))
                   for i, v in zip(informers, versions, strict=True)]
        await transport.watching.wait()
        transport.pages.clear()  # as an HTTP client keeps no page after the list
        release_free_memory()
        contents = transport.contents
        received = 0
        half: Any = None  # tracemalloc's snapshot at the first census past half the events
        rss_start = proc_status("VmRSS")
        sample(0)
        censuses.append((0.0, 0, census(store) | heap_free()))
        every = max(1000, events // 200)
        next_sample, next_census = every, events // 20
        while (frame := _unframe(source)) is not None:
            path, chunk = frame
            queue = contents[path].queue
            queue.put_nowait(chunk)
            await queue.join()
            received += chunk.count(b"\n") or 1
            if received >= next_sample:
                next_sample += every
                sample(received)
                if received >= next_census:
                    next_census += events // 20
                    censuses.append((samples[-1][0], received, census(store) | heap_free()))
                    if args.trace and half is None and received >= events // 2:
                        half = tracemalloc.take_snapshot()
        sample(received)
        censuses.append((samples[-1][0], received, census(store) | heap_free()))
        growth = traced_growth(half, tracemalloc.take_snapshot()) if half else []
        rss_end = proc_status("VmRSS")
        for content in contents.values():
            content.queue.put_nowait(b"")  # the server ends the streams
        await asyncio.gather(*watches)
        collector.cancel()
        gc.collect()
        rss_after_collect = proc_status("VmRSS")
        frozen, frozen_garbage, garbage_types = collect_frozen()
        rss_after_full = proc_status("VmRSS")
        trim_started = time.perf_counter()
        rss_after_trim = trimmed_rss()
        trim_ms = (time.perf_counter() - trim_started) * 1000
        return {"rss_start_bytes": rss_start, "rss_end_bytes": rss_end,
                "rss_after_collect_bytes": rss_after_collect, "frozen_at_end": frozen,
                "frozen_garbage": frozen_garbage, "frozen_garbage_types": garbage_types,
                "rss_after_full_collect_bytes": rss_after_full,
                "rss_after_trim_bytes": rss_after_trim, "trim_ms": trim_ms,
                "received": received, "rss_samples": samples, "censuses": censuses,
                "traced_growth_second_half": growth, "cpu_s": time.process_time()}

    print(json.dumps(asyncio.run(run())))


def traced_growth(before: Any, after: Any, top: int = 30) -> list[tuple[str, int, int]]:
    """(source line, bytes, blocks) of the ``top`` lines whose live allocations grew most
    between two tracemalloc snapshots, and the total as ``*``: live memory that grows
    while every structure's count is flat is what to read first."""
    import tracemalloc

    keep = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(keep).compare_to(before.filter_traces(keep), "lineno")
    total = sum(d.size_diff for d in diff), sum(d.count_diff for d in diff)
    return [("*", *total)] + [
        (f"{d.traceback[0].filename.rsplit('/', 2)[-1]}:{d.traceback[0].lineno}",
         d.size_diff, d.count_diff) for d in diff[:top]]


def tables(store: Any) -> dict[str, int]:
    """For a census: each family's container bytes (footprint.container_bytes; empty in a
    tree without it)."""
    try:
        from netsight.graph.store.footprint import container_bytes
    except ImportError:
        return {}
    return container_bytes(store)


def heap_free() -> dict[str, int]:
    """For a census: bytes glibc holds free in its heap, RSS that malloc_trim would give
    back (empty where glibc cannot tell, or in an older tree). Not for every sample: glibc
    walks its free lists for it (~1.5 ms per 1,000 free blocks)."""
    try:
        from netsight.graph.runtime.allocator import heap_usage
    except ImportError:
        return {}
    usage = heap_usage()
    return {} if usage is None else {"heap_free_bytes": usage.free}


def trimmed_rss() -> int:
    """RSS after glibc's malloc_trim: what the heap held free but kept (fragmentation, or
    the top of the heap pinned by a live block) is given back, what is live stays. A soak's
    RSS step that this takes back was the allocator's, not netsight's objects."""
    from netsight.graph.runtime.allocator import release_free_memory

    release_free_memory()
    return proc_status("VmRSS")


def _slope(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0


def command_list(args: argparse.Namespace) -> None:
    info = machine()
    results: dict[str, list[Result]] = defaultdict(list)
    with simulator(args) as sim:
        for _ in range(args.runs):
            for limit, parse in ((500, False), (500, True), (5000, False), (0, False)):
                result = spawn(sim, "list", limit=limit, parse=parse,
                               pods=sim.info["counts"]["Pod"])
                results[f"limit={limit}{' +parse' if parse else ''}"].append(result)
    summary = {
        name: {"runs": len(rs), "objects": rs[0]["objects"],
               "mb": round(rs[0]["bytes"] / 1e6, 1),
               "wall_s": round(median(rs, "wall_s"), 2),
               "objects_per_s": round(median(rs, "objects_per_s")),
               "mb_per_s": round(median(rs, "mb_per_s"), 1),
               "sim_cpu_s": round(median(rs, "sim_cpu_s"), 2),
               "parse_s": round(median(rs, "parse_s"), 2)}
        for name, rs in results.items()}
    save("list", {"machine": info, "sim": sim.info, "summary": summary, "runs": results})
    print(json.dumps(summary, indent=1))


class PagesTransport:
    """List pages served from memory, as the simulator would send them: the informers'
    list-and-apply work alone, without HTTP (``apply``)."""

    class Page:
        """An HTTP answer: a list page's body, or (``ReplayTransport``) a watch stream."""

        status, headers = 200, {}  # type: ignore[var-annotated]

        def __init__(self, body: bytes, content: Any = None) -> None:
            self.body, self.content = body, content

        async def read(self) -> bytes:
            return self.body

        def release(self) -> None:
            pass

    def __init__(self, pages: dict[str, list[bytes]]) -> None:
        self.pages = pages

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Any:
        cont = dict(params).get("continue")
        await asyncio.sleep(0)
        return self.Page(self.pages[path][int(cont) if cont else 0])


def command_apply(args: argparse.Namespace) -> None:
    """(a) CPU of listing and applying every watched kind in this process, pages from
    memory: A/B of the record and graph code while the machine is shared."""
    from netsight.graph.ingest.discovery import CORE_KINDS, WatchedKind
    from netsight.graph.ingest.informers import InformerSettings
    from netsight.sim.synthetic import generate

    gc.disable()
    cluster = generate(pods=args.pods, seed=args.seed,
                       policies_per_namespace=args.policies_per_namespace or None)
    kinds: dict[tuple[str, str], WatchedKind] = {}
    by_kind: dict[str, list[Any]] = defaultdict(list)
    for obj in cluster.objects():
        group, _, version = obj["apiVersion"].rpartition("/")
        if (group, obj["kind"]) not in CORE_KINDS:
            continue
        # The plural only keys the pages here: no server reads it.
        kind = kinds.setdefault((group, obj["kind"]), WatchedKind(
            group, version, obj["kind"], obj["kind"].lower() + "s",
            obj["kind"] not in ("Namespace", "IngressClass")))
        by_kind[kind.path].append({k: v for k, v in obj.items()
                                   if k not in ("kind", "apiVersion")})
    pages: dict[str, list[bytes]] = {}
    size = InformerSettings().page_size  # the pages the informers would ask for
    for path, items in by_kind.items():
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        pages[path] = [orjson.dumps({"metadata": {"resourceVersion": "1", **(
            {"continue": str(n + 1)} if n + 1 < len(chunks) else {})}, "items": chunk})
            for n, chunk in enumerate(chunks)]
    del cluster, by_kind
    runs: list[Result] = []
    modes = {"off": (False,), "on": (True,), "both": (False, True)}[args.list_worker]
    for _ in range(args.runs):
        for worker in modes:
            gc.collect()
            profiling = args.profile and not runs
            run = asyncio.run(_apply_once(pages, kinds, worker=worker, profile=profiling))
            runs.append(run)
            print(f"run {len(runs)} (worker {'on' if worker else 'off'}): "
                  f"{run['cpu_s']:.2f} s CPU here, {run['worker_cpu_s']:.2f} s in the worker, "
                  f"(peak RSS {run['worker_peak_rss_bytes'] / MiB:.0f} MiB), "
                  f"{run['wall_s']:.2f} s wall (idle {run['idle_s']:.2f} s), "
                  f"{run['objects']} objects, "
                  f"{run['us_per_object']:.1f} us each, {run['offloaded_pages']} pages "
                  f"offloaded", file=sys.stderr)
    summary: dict[str, Any] = {"runs": len(runs), "objects": runs[0]["objects"],
                               "load_average": os.getloadavg()}
    for worker in modes:
        mine = [r for r in runs if r["worker"] is worker]
        summary["worker_on" if worker else "worker_off"] = {
            "cpu_s_min": round(min(r["cpu_s"] for r in mine), 2),
            "cpu_s_median": round(median(mine, "cpu_s"), 2),
            "worker_cpu_s_median": round(median(mine, "worker_cpu_s"), 2),
            "wall_s_median": round(median(mine, "wall_s"), 2),
            "idle_s_median": round(median(mine, "idle_s"), 2)}
    save("apply", {"summary": summary, "runs": runs})
    print(json.dumps(summary, indent=1))


async def _list_all(informers: list[Any]) -> None:
    await asyncio.gather(*(informer.list_and_reconcile() for informer in informers))


async def _apply_once(pages: dict[str, list[bytes]], kinds: dict[Any, Any], *, worker: bool,
                      profile: bool) -> Result:
    """List every kind once into a new graph; with ``worker``, the Pod and EndpointSlice
    pages are built by a list worker (list_worker.py), as in an initial sync."""
    from netsight.graph.ingest.discovery import NEVER_WATCHED
    from netsight.graph.ingest.informers import Informer
    from netsight.graph.ingest.list_worker import PageWorker
    from netsight.graph.store.live import GraphStore, Source

    store = GraphStore(source=Source.CLUSTER)
    store.state.never_arrive(NEVER_WATCHED)
    page_worker = None
    if worker:
        page_worker = PageWorker()
        await page_worker.start()
    informers = [Informer(PagesTransport(pages), store, kind, worker=page_worker)
                 for kind in kinds.values()]
    profiler = None
    if profile:
        from pyinstrument import Profiler
        profiler = Profiler(interval=0.001, async_mode="disabled")
        profiler.start()
    idle = count_idle(asyncio.get_running_loop())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    idle[0] = 0.0
    await _list_all(informers)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    worker_cpu, offloaded, worker_rss = 0.0, 0, 0
    if page_worker is not None:
        worker_cpu, offloaded = cpu_seconds(page_worker.pid), page_worker.pages
        worker_rss = proc_status("VmHWM", page_worker.pid)
        await page_worker.close()
    if profiler is not None:
        profiler.stop()
        summary = profile_summary(profiler, OUT / "informers-profile-apply")
        print(json.dumps(summary["top_self"][:20], indent=1), file=sys.stderr)
    objects = sum(store.view().count(kind.kind_id) for kind in kinds.values())
    return {"worker": worker, "cpu_s": cpu, "worker_cpu_s": worker_cpu, "wall_s": wall,
            "idle_s": idle[0], "worker_peak_rss_bytes": worker_rss,
            "objects": objects, "us_per_object": cpu / objects * 1e6,
            "offloaded_pages": offloaded}


# --- (b) watch events in-process ----------------------------------------------------------------


def build_watch_input(args: argparse.Namespace, path: Path) -> Result:
    """Churn a simulated state in this process and keep what its watch streams would send:
    the list pages the informers start from, then every watch line in resourceVersion
    order, in chunks of consecutive lines of one kind (as a stream hands them over)."""
    import pickle

    from netsight.graph.ingest.discovery import CORE_KINDS
    from netsight.sim.churn import ChurnDriver
    from netsight.sim.selection import Selection

    gc.disable()
    state = loaded_state(args)
    kinds: list[tuple[str, str, str, str, bool]] = []
    pages: dict[str, list[bytes]] = {}
    watchers = {}
    size = 1000
    for rtype in state.registry:
        if (rtype.group, rtype.kind) not in CORE_KINDS:
            continue
        rv, items = state.list(rtype, Selection())
        kinds.append((rtype.group, rtype.version, rtype.kind, rtype.plural, rtype.namespaced))
        chunks = [items[i:i + size] for i in range(0, len(items), size)] or [[]]
        key = rtype.path()
        pages[key] = [orjson.dumps({"metadata": {"resourceVersion": str(rv), **(
            {"continue": str(n + 1)} if n + 1 < len(chunks) else {})}, "items": chunk})
            for n, chunk in enumerate(chunks)]
        watchers[key] = state.open_watch(rtype, Selection(), str(state.rv))
    start_rv = state.rv
    driver = ChurnDriver(state, seed=args.churn_seed, scale_workloads=False)
    while state.rv - start_rv < args.events:
        driver.step()
    lines: list[tuple[int, str, bytes]] = []
    for key, watcher in watchers.items():
        for line in watcher.take(len(watcher.pending)):
            assert line is not None
            lines.append((int(orjson.loads(line)["object"]["metadata"]["resourceVersion"]),
                          key, line))
    lines.sort()
    stream: list[tuple[str, bytes]] = []
    run: list[bytes] = []
    for n, (_, key, line) in enumerate(lines):
        run.append(line)
        following = lines[n + 1][1] if n + 1 < len(lines) else None
        if following != key or len(run) >= args.batch:
            stream.append((key, b"".join(run)))
            run = []
    data = {"kinds": kinds, "pages": pages, "stream": stream, "rv": str(start_rv),
            "writes": dict(Counter(f"{orjson.loads(line)['object']['kind']} "
                                   f"{orjson.loads(line)['type']}" for _, _, line in lines))}
    path.write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return data


class ReplayTransport:
    """List pages, then watch streams fed chunk by chunk from memory (``watch``)."""

    class Content:
        def __init__(self) -> None:
            self.queue: asyncio.Queue[bytes] = asyncio.Queue()

        async def readany(self) -> bytes:
            chunk = await self.queue.get()
            self.queue.task_done()
            return chunk

    def __init__(self, pages: dict[str, list[bytes]]) -> None:
        self.pages = pages
        self.contents: dict[str, ReplayTransport.Content] = {}
        self.watching = asyncio.Event()

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Any:
        query = dict(params)
        if query.get("watch"):
            content = self.contents[path] = self.Content()
            if len(self.contents) == len(self.pages):
                self.watching.set()
            return PagesTransport.Page(b"", content)
        cont = query.get("continue")
        return PagesTransport.Page(self.pages[path][int(cont) if cont else 0])


def replay_informers(kinds: list[tuple[str, str, str, str, bool]], transport: Any
                     ) -> tuple[Any, dict[str, Any]]:
    """A cluster store, and an informer of each recorded kind over ``transport``, by path."""
    from netsight.graph.ingest.discovery import NEVER_WATCHED, WatchedKind
    from netsight.graph.ingest.informers import Informer
    from netsight.graph.store.live import GraphStore, Source

    store = GraphStore(source=Source.CLUSTER, cluster_name="replay")
    store.state.never_arrive(NEVER_WATCHED)
    informers: dict[str, Any] = {}
    for group, version, kind, plural, namespaced in kinds:
        watched = WatchedKind(group, version, kind, plural, namespaced)
        informers[watched.path] = Informer(transport, store, watched)
    return store, informers


async def feed_recorded(stream: list[tuple[str, bytes]], contents: dict[str, Any]) -> None:
    """Every recorded watch chunk in order, each handled by its informer before the next."""
    for path, chunk in stream:
        queue = contents[path].queue
        queue.put_nowait(chunk)
        await queue.join()


def replay_main(args: argparse.Namespace) -> None:
    """One replay in this process: list, freeze (as ``wait_synced``), then every recorded
    watch chunk in order; CPU time for the whole replay and time per handled line."""
    import pickle

    import netsight
    from netsight.graph.ingest.informers import InformerSettings
    from netsight.graph.store.live import RELATED_LIMIT

    data = pickle.loads(Path(args.input).read_bytes())
    gc.disable()
    transport = ReplayTransport(data["pages"])
    store, informers = replay_informers(data["kinds"], transport)
    assert set(informers) == set(data["pages"]), (set(informers), set(data["pages"]))
    took: dict[str, list[float]] = defaultdict(list)

    def timed(informer: Any) -> Any:
        handle, kind = informer.handle_line, informer.kind.kind

        def _handle(line: bytes, resource_version: str) -> str:
            # CPU time of this thread: other processes on a shared machine do not count.
            began = time.thread_time()
            version = handle(line, resource_version)
            elapsed = time.thread_time() - began
            end = line.index(b'"', 9)
            took[f"{kind} {line[9:end].decode()}"].append(elapsed)
            return str(version)

        return _handle

    pauses = GcPauses(time.thread_time)

    async def replay() -> float:
        versions = await asyncio.gather(*(i.list_and_reconcile()
                                          for i in informers.values()))
        gc.freeze()
        gc.enable()
        # As ClusterWatcher.wait_synced starts it, with the tree's own settings.
        settings = InformerSettings()
        collector = asyncio.create_task(keep_young(settings, args.refreeze))
        for informer in informers.values():
            informer.handle_line = timed(informer)
        watches = [asyncio.create_task(i.watch(v))
                   for i, v in zip(informers.values(), versions, strict=True)]
        await transport.watching.wait()
        gc.callbacks.append(pauses.on_gc)
        profiler = None
        if args.profile:
            from pyinstrument import Profiler
            profiler = Profiler(interval=0.0002, async_mode="disabled")
            profiler.start()
        cpu0 = time.process_time()
        contents = transport.contents
        await feed_recorded(data["stream"], contents)
        cpu = time.process_time() - cpu0
        if profiler is not None:
            profiler.stop()
            summary = profile_summary(profiler, Path(args.profile))
            print(json.dumps(summary["top_self"], indent=1), file=sys.stderr)
        gc.callbacks.remove(pauses.on_gc)
        for content in contents.values():
            content.queue.put_nowait(b"")  # the server ends the streams
        await asyncio.gather(*watches)
        collector.cancel()
        return cpu

    cpu = asyncio.run(replay())
    events = sum(len(v) for v in took.values())
    handled = sum(sum(v) for v in took.values())
    changes_sha256, edges = graph_digests(store, RELATED_LIMIT)
    if args.dump:
        Path(args.dump).write_text("\n".join(
            repr((c.generation, str(c.type), c.key, c.fields, sorted(c.related)[:8]))
            for c in store.changes))
    print(json.dumps({
        "netsight": str(Path(netsight.__file__).parent),
        "events": events, "cpu_s": cpu, "us_per_event": cpu / events * 1e6,
        "handle_us_per_event": handled / events * 1e6,
        "outside_handle_us_per_event": (cpu - handled) / events * 1e6,
        "by_event": {name: {"n": len(v), "mean_us": round(sum(v) / len(v) * 1e6, 1),
                            "p50_us": round(statistics.median(v) * 1e6, 1),
                            "total_s": round(sum(v), 3)}
                     for name, v in sorted(took.items())},
        "gc": pauses.summary(),
        "generation": store.generation, "nodes": store.view().node_count,
        "edges": store.view().edge_count, "changes_sha256": changes_sha256,
        "edges_sha256": edges,
    }))


def command_watch(args: argparse.Namespace) -> None:
    """(b) CPU per watch event in-process: the same recorded watch streams replayed through
    the informers (stream splitting, decoding, GraphStore) of this tree and, with
    ``--baseline REF``, of a git ref's, alternated, each replay in a fresh process."""
    code = snapshot_code()
    source = OUT / (f"informers-watch-input-{args.pods}-{args.seed}-"
                    f"{args.policies_per_namespace}-{args.events}-{args.churn_seed}-"
                    f"{args.batch}.pickle")
    if not source.exists():
        print(f"recording {args.events} watch events ...", file=sys.stderr, flush=True)
        build_watch_input(args, source)
    trees = {"current": SNAPSHOT}
    if args.baseline:
        tree = OUT / "informers-baseline"
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", args.baseline, "netsight"], cwd=ROOT,
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        # The script's own directory comes first on sys.path: run a copy beside the tree.
        shutil.copy(SNAPSHOT / "informers.py", tree / "informers.py")
        trees = {"baseline": tree, **trees}
    runs: dict[str, list[Result]] = defaultdict(list)
    for n in range(args.runs):
        order = list(trees.items())
        for name, tree in order if n % 2 == 0 else reversed(order):
            env = {**CHILD_ENV, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
            profile = ["--profile", str(OUT / "informers-profile-watch")] if (
                args.profile and n == 0 and name == "current") else []
            done = subprocess.run(
                [sys.executable, str(tree / "informers.py"), "_replay", "--input",
                 str(source), *profile], capture_output=True, text=True, check=False,
                cwd=ROOT, env=env)
            if done.returncode != 0:
                sys.exit(f"replay of {name} failed:\n{done.stderr[-5000:]}")
            result: Result = json.loads(done.stdout.strip().splitlines()[-1])
            result["load_average_after"] = os.getloadavg()
            runs[name].append(result)
            print(f"run {n + 1} {name}: {result['us_per_event']:.1f} us/event CPU "
                  f"({result['events']} events; handle {result['handle_us_per_event']:.1f}, "
                  f"outside {result['outside_handle_us_per_event']:.1f}), load "
                  f"{result['load_average_after'][0]:.1f}", file=sys.stderr, flush=True)
    summary: Result = {}
    for name, results in runs.items():
        by_event: Result = {}
        for event in results[0]["by_event"]:
            by_event[event] = {
                "n": results[0]["by_event"][event]["n"],
                "p50_us": statistics.median(r["by_event"][event]["p50_us"] for r in results),
                "mean_us": statistics.median(r["by_event"][event]["mean_us"] for r in results)}
        summary[name] = {
            "us_per_event_median": round(median(results, "us_per_event"), 1),
            "us_per_event_min": round(min(r["us_per_event"] for r in results), 1),
            "outside_handle_us_median": round(median(results, "outside_handle_us_per_event"),
                                              1),
            "by_event": by_event,
            "gc": [r["gc"] for r in results],
            "changes_sha256": sorted({r["changes_sha256"] for r in results}),
            "edges_sha256": sorted({r.get("edges_sha256", "") for r in results}),
        }
    if len(runs) == 2:
        trees = list(summary.values())
        summary["same_changes"] = len({h for s in trees for h in s["changes_sha256"]}) == 1
        summary["same_edges"] = len({h for s in trees for h in s["edges_sha256"]}) == 1
    summary["load_average"] = os.getloadavg()
    save(args.name, {"machine": machine(), "code": code, "input": source.name,
                     "summary": summary, "runs": runs})
    print(json.dumps(summary, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def cluster_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--pods", type=int, default=100_000)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--policies-per-namespace", type=int, default=40,
                       help="40 at 100k pods: 250 namespaces, 10,000 NetworkPolicies")

    p = sub.add_parser("sync", help="(a) initial sync, netsight vs kubernetes-asyncio models")
    cluster_options(p)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--baseline-runs", type=int, default=1)
    p.add_argument("--baseline-pods", type=int, default=None,
                   help="stop the baseline after this many pods (it takes ~2 min at 100k)")
    p.add_argument("--page-sizes", type=_page_sizes, default=[None], metavar="N,M",
                   help="full syncs with these list page sizes, alternated in each run "
                        "(default: InformerSettings.page_size)")
    p.add_argument("--no-pods-runs", dest="pods_runs", action="store_false",
                   help="leave out the pods-only sync")
    p.add_argument("--list-worker", choices=("default", "off", "on", "both"),
                   default="default",
                   help="InformerSettings.list_worker for the full syncs; both: off and on "
                        "alternated in each run (variants netsight-worker-off/-on)")
    p.add_argument("--compare-code", type=Path, default=None, metavar="DIR",
                   help="a tree holding another netsight/ (a checkout of main): its full "
                        "syncs alternate with this tree's against the same simulator "
                        "(variant netsight-compare)")
    p.set_defaults(func=command_sync)
    p = sub.add_parser("apply", help="(a) list-and-apply CPU in-process, pages from memory "
                       "(no simulator, no HTTP): for A/B on a shared machine")
    cluster_options(p)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--list-worker", choices=("off", "on", "both"), default="off",
                   help="build Pod and EndpointSlice pages in a worker process (on), in "
                        "this one (off), or alternate the two in each run (both); the CPU "
                        "is this process's, the worker's is reported beside it")
    p.add_argument("--profile", action="store_true",
                   help="pyinstrument during the first run (its CPU figure is inflated); "
                        "to out/informers-profile-apply.{txt,html}")
    p.set_defaults(func=command_apply)
    p = sub.add_parser("profile", help="(a) pyinstrument and tracemalloc of one sync")
    cluster_options(p)
    p.set_defaults(func=command_profile)
    for name, func, events, runs in (("churn", command_churn, None, 3),
                                     ("soak", command_soak, 1_000_000, 1)):
        p = sub.add_parser(name, help="(b) latency under churn" if name == "churn"
                           else "(c) RSS over 1M events")
        cluster_options(p)
        p.add_argument("--rate", type=float, default=5_000.0 if events is None else 4_000.0,
                       help="writes per second")
        p.add_argument("--rates", type=float, nargs="+", default=None,
                       help="several rates in turn (a sweep), instead of --rate")
        p.add_argument("--name", default=name,
                       help=f"results go to out/informers-NAME.json (default {name})")
        p.add_argument("--churn-seed", type=int, default=1)
        p.add_argument("--drain-timeout", type=float, default=60.0 if events is None else 150.0,
                       help="how long to wait after churn for events still on their way")
        p.add_argument("--freeze-every", type=float, default=0.0, metavar="S",
                       help="experiment: gc.freeze() every S seconds in netsight's process")
        p.add_argument("--profile", action="store_true",
                       help="pyinstrument in netsight's process during the first run's churn "
                            "(it slows the event path: latencies are not comparable)")
        p.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop",
                       help="netsight's event loop: uvloop, as `netsight serve` runs "
                            "(default), or asyncio's own (as this benchmark ran before "
                            "2026-11-24; the soak --piped child still does)")
        if events is None:
            p.add_argument("--duration", type=float, default=45.0)
            p.add_argument("--runs", type=int, default=runs)
        else:
            p.add_argument("--events", type=int, default=events)
            p.add_argument("--trace", action="store_true",
                           help="tracemalloc in netsight's process: traced bytes beside RSS "
                                "(fragmentation); slows the event path")
            p.add_argument("--piped", action="store_true",
                           help="no HTTP: the churn in this process, netsight in a child fed "
                                "through a pipe in lockstep (every write applied whatever the "
                                "load; for a shared machine)")
            p.add_argument("--warmup-writes", type=int, default=None,
                           help="churn writes made before netsight lists the cluster, so the "
                                "soak starts from a churned cluster (default 20 per pod)")
        p.set_defaults(func=func)
    p = sub.add_parser("sim-churn", help="(e) the simulator's CPU per write under churn, "
                       "against a baseline git ref side by side")
    cluster_options(p)
    p.add_argument("--rate", type=float, default=2_500.0, help="writes per second")
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--runs", type=int, default=4, help="per variant, alternated")
    p.add_argument("--churn-seed", type=int, default=1)
    p.add_argument("--baseline", default=None, metavar="REF",
                   help="also run the simulator as committed at this git ref (e.g. main)")
    p.add_argument("--in-process", action="store_true",
                   help="the state path alone: driver, store, fan-out and encoding, no HTTP")
    p.add_argument("--writes", type=int, default=50_000, help="writes per --in-process run")
    p.add_argument("--profile", action="store_true",
                   help="pyinstrument in this tree's simulator (first run with --in-process)")
    p.add_argument("--name", default="sim-churn")
    p.set_defaults(func=command_sim_churn)
    p = sub.add_parser("_sim_in_process")
    cluster_options(p)
    p.add_argument("--writes", type=int, required=True)
    p.add_argument("--churn-seed", type=int, default=1)
    p.add_argument("--profile", default=None)
    p.set_defaults(func=sim_in_process_main)
    p = sub.add_parser("list", help="(d) the simulator's list throughput")
    cluster_options(p)
    p.add_argument("--runs", type=int, default=3)
    p.set_defaults(func=command_list)
    p = sub.add_parser("watch", help="(b) CPU per watch event in-process, recorded streams "
                       "replayed without HTTP: A/B against --baseline on a shared machine")
    cluster_options(p)
    p.add_argument("--events", type=int, default=30_000, help="watch events to record")
    p.add_argument("--churn-seed", type=int, default=1)
    p.add_argument("--batch", type=int, default=8,
                   help="at most this many lines of one kind per chunk read")
    p.add_argument("--baseline", metavar="REF", default=None,
                   help="also replay with netsight/ as of this git ref, alternated")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--name", default="watch",
                   help="results go to out/informers-NAME.json (default watch)")
    p.add_argument("--profile", action="store_true",
                   help="pyinstrument over this tree's first replay (its CPU figure is "
                        "inflated); to out/informers-profile-watch.{txt,html}")
    p.set_defaults(func=command_watch)
    p = sub.add_parser("_soak_child")
    p.add_argument("--trace", action="store_true")
    p.set_defaults(func=soak_child_main)
    p = sub.add_parser("_replay")
    p.add_argument("--input", required=True)
    p.add_argument("--dump", default=None, help="write the change ring to this file")
    p.add_argument("--refreeze", type=float, default=None,
                   help="refreeze interval (default: the tree's InformerSettings)")
    p.add_argument("--profile", default=None, metavar="STEM",
                   help="pyinstrument over the replayed stream (CPU inflated), to STEM.txt")
    p.set_defaults(func=replay_main)
    p = sub.add_parser("_sim")
    cluster_options(p)
    p.add_argument("--profile", default=None, metavar="STEM",
                   help="pyinstrument over the first churn, to STEM.txt")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--warmup-writes", type=int, default=0)
    p.add_argument("--warmup-seed", type=int, default=1001)
    p.set_defaults(func=sim_main)
    p = sub.add_parser("_worker")
    p.add_argument("--variant", required=True)
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--sim-pid", type=int, required=True)
    p.add_argument("--options", default="{}")
    p.set_defaults(func=worker_main)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
