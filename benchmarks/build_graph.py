"""How long netsight takes to build its graph from 10k pods of manifests, and how big it is.

Side by side, in one run: netsight (parse + ``load_manifests`` into a GraphStore) and a naive
baseline that keeps every parsed API object whole as a networkx node attribute and matches
every Service and NetworkPolicy selector against every pod of its namespace. Parsing alone is
timed for JSON and YAML so its share is visible. Every measurement runs in a fresh
subprocess, so one variant's heap never inflates another's figures:

- time runs (``--runs``, median reported): wall time with ``time.perf_counter``, time spent
  in the cycle collector (``gc.callbacks``), RSS growth and peak;
- one memory run per variant under ``tracemalloc`` (its figures do not vary between runs;
  its overhead would distort the timings): peak and retained bytes;
- one pyinstrument profile of the netsight load, with the collector paused so the profile
  shows netsight's own work (the ``gc s`` column measures the collector).

    .venv/bin/python benchmarks/build_graph.py            # 10k pods, 3 runs, ~2 minutes
    .venv/bin/python benchmarks/build_graph.py --pods 2000 --runs 1

Writes the manifests, ``results.json`` and the profile to ``benchmarks/out/`` (git-ignored).
Never part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import networkx as nx

from netsight.graph.ingest.manifests import load_manifests, read_documents
from netsight.graph.model.kinds import Kind, Rel, parse_key
from netsight.graph.model.lists import expand_lists
from netsight.graph.store.live import GraphStore
from netsight.sim.synthetic import generate

OUT = Path(__file__).resolve().parent / "out"
Result = dict[str, Any]

# name -> (input format, what the variant builds)
VARIANTS: dict[str, tuple[str, str]] = {
    "parse-json": ("json", "parse"),
    "parse-yaml": ("yaml", "parse"),
    "netsight": ("json", "netsight"),
    "netsight-gc-paused": ("json", "netsight"),
    "baseline": ("json", "baseline"),
    "baseline-gc-paused": ("json", "baseline"),
}
MEMORY_VARIANTS = ("netsight", "baseline")


# --- what is measured -----------------------------------------------------------------------


def parse(path: Path) -> list[Any]:
    """Read and parse a manifest file exactly as ``load_manifests`` does."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [item for doc in read_documents(str(path), text) for item in expand_lists(doc.body)]


def build_netsight(path: Path) -> GraphStore:
    store = GraphStore()
    load_manifests(store, [str(path)])
    return store


def describe_netsight(store: GraphStore) -> Result:
    """Counts to check against the baseline; taken after the clock stops."""
    view = store.view()
    to_pods: dict[str, int] = defaultdict(int)
    for _, target, data in store.state.graph.edges(data=True):
        if parse_key(target).kind == Kind.POD:  # workload templates left out
            for rel in {Rel.SELECTS, Rel.APPLIES_TO}.intersection(data):
                to_pods[rel] += 1
    return {
        "objects": view.node_count,
        "problems": len(view.problems()),
        "nodes": view.node_count,
        "edges": view.edge_count,
        "service_pod_edges": to_pods[Rel.SELECTS],
        "policy_pod_edges": to_pods[Rel.APPLIES_TO],
    }


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics, evaluated from the raw dict every time."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr["key"], expr["operator"], expr.get("values") or ()
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def build_baseline(objects: Iterable[dict[str, Any]]) -> nx.DiGraph:
    """Whole API objects as node attributes; selectors matched against every pod, no index."""
    graph = nx.DiGraph()
    pods: dict[str, list[tuple[str, dict[str, str]]]] = defaultdict(list)
    selectors: list[tuple[str, str, str, dict[str, Any]]] = []
    for obj in objects:
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        kind = obj["kind"]
        key = f"{kind}/{ns}/{meta['name']}" if ns else f"{kind}/{meta['name']}"
        graph.add_node(key, obj=obj)
        if kind == "Pod":
            pods[ns].append((key, meta.get("labels") or {}))
        elif kind == "Service" and obj["spec"].get("selector"):
            selectors.append((key, ns, "selects", {"matchLabels": obj["spec"]["selector"]}))
        elif kind == "NetworkPolicy":
            selectors.append((key, ns, "applies_to", obj["spec"].get("podSelector") or {}))
    for key, ns, rel, selector in selectors:
        for pod_key, labels in pods[ns]:
            if _matches(selector, labels):
                graph.add_edge(key, pod_key, rel=rel)
    return graph


def describe_baseline(graph: nx.DiGraph) -> Result:
    rels = [rel for _, _, rel in graph.edges(data="rel")]
    return {
        "objects": graph.number_of_nodes(),
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "service_pod_edges": rels.count("selects"),
        "policy_pod_edges": rels.count("applies_to"),
    }


# --- one variant, in its own process --------------------------------------------------------


def _proc_status(field: str) -> int:
    """VmRSS / VmHWM of this process in bytes (Linux); 0 elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class GcClock:
    """Wall time spent inside the cycle collector, and collections per generation."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.collections[info["generation"]] += 1


def run_variant(name: str, path: Path, *, memory: bool) -> Result:
    _, what = VARIANTS[name]
    gc.collect()
    clock = GcClock()
    gc.callbacks.append(clock)
    rss_before = _proc_status("VmRSS")
    if memory:
        tracemalloc.start()
    traced_before = tracemalloc.get_traced_memory()[0] if memory else 0
    if name.endswith("-gc-paused"):
        gc.disable()
    kept: Any
    phases: dict[str, float] = {}
    started = time.perf_counter()
    if what == "parse":
        kept = parse(path)
    elif what == "netsight":
        kept = build_netsight(path)
    else:
        objects = parse(path)
        phases["parse_s"] = time.perf_counter() - started
        kept = build_baseline(objects)
        del objects  # the graph keeps every object
        phases["build_s"] = time.perf_counter() - started - phases["parse_s"]
    total = time.perf_counter() - started
    gc.enable()
    gc.callbacks.remove(clock)
    if memory:
        facts: Result = {}  # counting would allocate under tracemalloc
    elif what == "parse":
        facts = {"objects": len(kept)}
    elif what == "netsight":
        facts = describe_netsight(kept)
    else:
        facts = describe_baseline(kept)
    result: Result = {"variant": name, "total_s": total, **phases, **facts,
                      "gc_s": clock.seconds, "gc_collections": clock.collections}
    if memory:
        gc.collect()
        retained, peak = tracemalloc.get_traced_memory()
        snapshot = tracemalloc.take_snapshot()
        tracemalloc.stop()
        by_file, by_line = _retained_sites(snapshot)
        result |= {"retained_bytes": retained - traced_before, "peak_bytes": peak - traced_before,
                   "retained_by_file": by_file, "retained_by_line": by_line}
    else:
        gc.collect()
        result |= {"rss_delta_bytes": _proc_status("VmRSS") - rss_before,
                   "rss_peak_delta_bytes": _proc_status("VmHWM") - rss_before}
    del kept
    return result


def _retained_sites(
    snapshot: tracemalloc.Snapshot,
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Where the retained bytes were allocated: top files and top lines, paths shortened."""
    by_file: dict[str, int] = defaultdict(int)
    by_line: list[tuple[str, int]] = []
    for stat in snapshot.statistics("lineno"):  # one grouping pass: each takes seconds
        frame = stat.traceback[0]
        parts = Path(frame.filename).parts
        anchor = next((i for i, p in enumerate(parts)
                       if p in ("netsight", "networkx", "benchmarks")), len(parts) - 1)
        where = "/".join(parts[anchor:])
        by_file[where] += stat.size
        by_line.append((f"{where}:{frame.lineno}", stat.size))
    return sorted(by_file.items(), key=lambda kv: -kv[1])[:8], by_line[:15]


def profile_netsight(path: Path, out: Path, *, gc_paused: bool) -> Result:
    """One pyinstrument profile of the netsight load.

    With the collector on, its pauses are charged to whichever line happened to allocate;
    the run with it paused shows where the Python work itself goes.
    """
    from pyinstrument import Profiler

    gc.collect()
    if gc_paused:
        gc.disable()
    profiler = Profiler(interval=0.001)
    profiler.start()
    build_netsight(path)
    profiler.stop()
    gc.enable()
    stem = "profile-netsight" + ("-gc-paused" if gc_paused else "")
    (out / f"{stem}.txt").write_text(
        profiler.output_text(unicode=False, color=False, show_all=False)
    )
    (out / f"{stem}.html").write_text(profiler.output_html())
    session = profiler.last_session
    assert session is not None
    root = session.root_frame()
    assert root is not None
    self_time: dict[str, float] = defaultdict(float)
    inclusive: dict[str, float] = defaultdict(float)

    def walk(frame: Any, on_stack: frozenset[str]) -> None:
        label = f"{frame.function} ({frame.file_path_short}:{frame.line_no})"
        if not frame.is_synthetic:
            self_time[label] += frame.total_self_time
            if label not in on_stack:  # recursion counts once
                inclusive[label] += frame.time
            on_stack = on_stack | {label}
        for child in frame.children:
            walk(child, on_stack)

    walk(root, frozenset())

    def top(table: dict[str, float]) -> list[tuple[str, float]]:
        return sorted(((k, round(v, 3)) for k, v in table.items()), key=lambda kv: -kv[1])[:15]

    return {"duration_s": session.duration, "top_self": top(self_time),
            "top_inclusive": top(inclusive),
            "top_inclusive_netsight": top({k: v for k, v in inclusive.items()
                                           if "netsight/" in k})}


def worker(args: argparse.Namespace) -> None:
    if args.worker.startswith("profile"):
        result = profile_netsight(Path(args.input), Path(args.out),
                                  gc_paused=args.worker.endswith("-gc-paused"))
    else:
        result = run_variant(args.worker, Path(args.input), memory=args.memory)
    print(json.dumps(result))


# --- the driver -----------------------------------------------------------------------------


def spawn(variant: str, path: Path, out: Path, *, memory: bool = False) -> Result:
    command = [sys.executable, __file__, "--worker", variant, "--input", str(path),
               "--out", str(out)]
    if memory:
        command.append("--memory")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{variant} failed:\n{done.stderr}")
    result: Result = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def machine() -> Result:
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model, "python": platform.python_version(),
            "platform": platform.platform(), "load_average": os.getloadavg()}


def prepare(
    pods: int, seed: int, namespaces: int | None, out: Path
) -> tuple[Result, dict[str, Path]]:
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    cluster = generate(pods=pods, seed=seed, namespaces=namespaces)
    generated = time.perf_counter() - started
    stem = f"cluster-{pods}-seed{seed}" + (f"-ns{namespaces}" if namespaces else "")
    paths = {"json": out / f"{stem}.json", "yaml": out / f"{stem}.yaml"}
    started = time.perf_counter()
    cluster.write_json(paths["json"])
    json_written = time.perf_counter() - started
    started = time.perf_counter()
    cluster.write_yaml(paths["yaml"])
    yaml_written = time.perf_counter() - started
    info = {
        "pods": pods, "seed": seed, "namespaces": len(cluster.namespaces),
        "objects": len(cluster), "counts": cluster.counts(),
        "generate_s": generated, "write_json_s": json_written, "write_yaml_s": yaml_written,
        "json_bytes": paths["json"].stat().st_size, "yaml_bytes": paths["yaml"].stat().st_size,
    }
    return info, paths


def summarize(runs: dict[str, list[Result]], memory: dict[str, Result]) -> dict[str, Result]:
    summary: dict[str, Result] = {}
    for name, results in runs.items():
        if not results:
            continue
        row: Result = {"runs": len(results)}
        for field in ("total_s", "parse_s", "build_s", "gc_s", "rss_delta_bytes",
                      "rss_peak_delta_bytes"):
            values = [r[field] for r in results if field in r]
            if values:
                row[field] = statistics.median(values)
        for field in ("objects", "nodes", "edges", "service_pod_edges", "policy_pod_edges",
                      "problems"):
            if field in results[0]:
                row[field] = results[0][field]
        if name in memory:
            row["retained_bytes"] = memory[name]["retained_bytes"]
            row["peak_bytes"] = memory[name]["peak_bytes"]
        summary[name] = row
    return summary


def _mb(value: float) -> str:
    return f"{value / 1e6:9.1f}"


def print_table(info: Result, summary: dict[str, Result]) -> None:
    objects, pods = info["objects"], info["pods"]
    print(f"\n{pods} pods in {info['namespaces']} namespaces, {objects} objects; "
          f"JSON {info['json_bytes'] / 1e6:.1f} MB, YAML {info['yaml_bytes'] / 1e6:.1f} MB")
    yaml_runs = summary["parse-yaml"]["runs"] if "parse-yaml" in summary else 0
    print(f"median of {summary['netsight']['runs']} runs (YAML parse: {yaml_runs}); "
          "retained and peak from one tracemalloc run\n")
    header = (f"{'variant':<20}{'wall s':>8}{'us/obj':>8}{'gc s':>7}{'retained MB':>12}"
              f"{'B/obj':>8}{'B/pod':>8}{'peak MB':>9}{'RSS+ MB':>9}{'RSS peak+':>10}")
    print(header)
    print("-" * len(header))
    for name, row in summary.items():
        line = (f"{name:<20}{row['total_s']:8.2f}{row['total_s'] / objects * 1e6:8.0f}"
                f"{row['gc_s']:7.2f}")
        retained = row.get("retained_bytes")
        if retained is None:
            line += " " * 37
        else:
            line += (f"{retained / 1e6:12.1f}{retained / objects:8.0f}{retained / pods:8.0f}"
                     f"{row['peak_bytes'] / 1e6:9.1f}")
        print(line + _mb(row["rss_delta_bytes"]) + _mb(row["rss_peak_delta_bytes"]))

    ns, base = summary["netsight"], summary["baseline"]
    ns_paused, base_paused = summary["netsight-gc-paused"], summary["baseline-gc-paused"]
    json_parse = summary["parse-json"]
    print(f"\nbaseline / netsight: wall {base['total_s'] / ns['total_s']:.2f}x "
          f"({base_paused['total_s'] / ns_paused['total_s']:.2f}x with the collector paused), "
          f"retained {base['retained_bytes'] / ns['retained_bytes']:.1f}x, "
          f"peak {base['peak_bytes'] / ns['peak_bytes']:.2f}x, "
          f"RSS {base['rss_delta_bytes'] / ns['rss_delta_bytes']:.2f}x")
    print(f"build alone: netsight ~{ns['total_s'] - json_parse['total_s']:.2f} s "
          f"(load minus parse-json), baseline {base['build_s']:.2f} s "
          f"(after its own parse of {base['parse_s']:.2f} s)")
    if "parse-yaml" in summary:
        yaml_s, json_s = summary["parse-yaml"]["total_s"], json_parse["total_s"]
        print(f"parse: YAML {yaml_s:.2f} s vs JSON {json_s:.2f} s ({yaml_s / json_s:.1f}x; "
              f"{info['yaml_bytes'] / yaml_s / 1e6:.1f} vs "
              f"{info['json_bytes'] / json_s / 1e6:.1f} MB/s)")
    print(f"edges to pods: netsight selects {ns['service_pod_edges']} / applies_to "
          f"{ns['policy_pod_edges']}; baseline {base['service_pod_edges']} / "
          f"{base['policy_pod_edges']}")


def driver(args: argparse.Namespace) -> None:
    out = Path(args.out)
    began = time.perf_counter()
    info, paths = prepare(args.pods, args.seed, args.namespaces, out)
    print(f"generated {info['objects']} objects in {info['generate_s']:.2f} s; wrote JSON in "
          f"{info['write_json_s']:.2f} s, YAML in {info['write_yaml_s']:.2f} s", flush=True)
    runs: dict[str, list[Result]] = {name: [] for name in VARIANTS}
    for run in range(args.runs):
        for name, (fmt, _) in VARIANTS.items():
            if fmt == "yaml" and run >= args.yaml_runs:
                continue
            result = spawn(name, paths[fmt], out)
            runs[name].append(result)
            print(f"run {run + 1} {name:<20} {result['total_s']:7.2f} s", flush=True)
    memory = {name: spawn(name, paths[VARIANTS[name][0]], out, memory=True)
              for name in MEMORY_VARIANTS}
    profiles: dict[str, Result] = {}
    if not args.no_profile:
        name = "profile" if args.profile_gc else "profile-gc-paused"
        profiles[name] = spawn(name, paths["json"], out)
    summary = summarize(runs, memory)
    print_table(info, summary)
    for name, profile in profiles.items():
        print(f"\npyinstrument, netsight load{name.removeprefix('profile')} "
              f"({profile['duration_s']:.2f} s), top self time:")
        for label, seconds in profile["top_self"][:10]:
            print(f"  {seconds:6.3f} s  {label}")
        print("  netsight functions by inclusive time:")
        for label, seconds in profile["top_inclusive_netsight"][:10]:
            print(f"  {seconds:6.3f} s  {label}")
    for name in ("netsight", "baseline"):
        print(f"\nretained by {name}, by file:")
        for where, size in memory[name]["retained_by_file"][:6]:
            print(f"  {size / 1e6:7.1f} MB  {where}")
    results = {"machine": machine(), "input": info, "summary": summary, "runs": runs,
               "memory_runs": memory, "profiles": profiles,
               "elapsed_s": time.perf_counter() - began}
    target = out / "results.json"
    target.write_text(json.dumps(results, indent=2))
    print(f"\nwrote {target} ({results['elapsed_s']:.0f} s in all)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--namespaces", type=int,
                        help="how many namespaces share the pods (default: one per 400 pods)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--yaml-runs", type=int, default=1,
                        help="time runs of the YAML parse (each takes ~30 s at 10k pods)")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--profile-gc", action="store_true",
                        help="profile with the cycle collector on; its pauses then land on "
                             "whichever line allocates")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
