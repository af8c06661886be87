"""The suite's outputs from its JSON files: ratios, the README's tables, the plots.

``regenerate(results, readme)`` rewrites what lies between the markers in the README and,
where matplotlib is installed (the ``bench`` extra), the PNG plots beside the JSON files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- bench:tables:start -->", "<!-- bench:tables:end -->"
PLOTS = ("latency.png", "rss.png", "churn.png")
Result = dict[str, Any]
KiB, MiB = 1024, 1024 * 1024


def load(results: Path) -> list[Result]:
    """Every ``<scale>.json`` in ``results``, smallest cluster first."""
    found = [json.loads(path.read_text()) for path in sorted(results.glob("*.json"))]
    return sorted(found, key=lambda r: r.get("ready", {}).get("pods", r["pods_asked"]))


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def peer_figures(figures: Result) -> tuple[float | None, int | None]:
    """The peer's wall ms and bytes for one question: ``{"wall_ms", "bytes", ...}``, or
    ``{"peer": {"wall_ms_p50", "bytes", ...}, "netsight": ..., ...}``."""
    inner = figures.get("peer", figures)
    return inner.get("wall_ms", inner.get("wall_ms_p50")), inner.get("bytes")


def ratios(result: Result) -> Result:
    """netsight against the per-call design (per tool, cold and warm cache: the design's
    p50 over netsight's warm analyzer p50) and against the peer server (per question: its
    wall time and bytes over netsight's MCP call's)."""
    phases = result.get("phases", {})
    found: Result = {}
    tools = phases.get("tools", {})
    baseline = phases.get("baseline", {})
    if baseline.get("available", True) and "tools" in baseline:
        per_tool: Result = {}
        for name, figures in baseline["tools"].items():
            # netsight on the design's own arguments where timed (suite.same_arguments),
            # else on the tools phase's sampled ones
            ours = _get(figures, "netsight", "p50_ms") or _get(tools, name, "p50_ms")
            if not ours:
                continue
            per_tool[name] = {cache: round(theirs["p50_ms"] / ours, 1)
                              for cache, theirs in figures.items()
                              if cache in ("cold", "warm") and isinstance(theirs, dict)
                              and theirs.get("p50_ms")}
        found["baseline_p50"] = per_tool
    peer = phases.get("peer", {})
    if peer.get("available") and "questions" in peer:
        per_question: Result = {}
        for name, figures in peer["questions"].items():
            if "faster" in figures:  # the module timed netsight's call beside the peer's
                per_question[name] = {"time": figures.get("faster"),
                                      "bytes": figures.get("fewer_bytes")}
                continue
            ours = _get(phases, "mcp", "questions", name) or {}
            theirs_ms, theirs_bytes = peer_figures(figures)
            per_question[name] = {
                "time": round(theirs_ms / ours["p50_ms"], 1)
                if theirs_ms and ours.get("p50_ms") else None,
                "bytes": round(theirs_bytes / ours["bytes"], 1)
                if theirs_bytes and ours.get("bytes") else None}
        found["peer"] = per_question
    return found


def _num(value: Any, digits: int = 1, scale: float = 1.0) -> str:
    if value is None:
        return "-"
    number = value / scale
    return f"{number:,.{digits}f}"


def _slot(result: Result, phase: str) -> str | None:
    """Why a baseline or peer slot is empty, if it is."""
    data = _get(result, "phases", phase)
    if data is None:
        return "not run"
    if data.get("available") is False:
        return str(data.get("reason") or "unavailable")
    return None


def summary_table(results: list[Result]) -> list[str]:
    head = ["figure", *(f"{r['scale']} ({_num(_get(r, 'ready', 'pods'), 0)} pods)"
                        for r in results)]
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, values: Iterable[str]) -> None:
        rows.append((label, list(values)))

    row("time to ready, s (CPU s)", (f"{_num(_get(r, 'ready', 'ready_s'), 2)} "
                                     f"({_num(_get(r, 'ready', 'ready_cpu_s'), 2)})"
                                     for r in results))
    row("RSS, MiB", (_num(_get(r, "ready", "rss_bytes"), 0, MiB) for r in results))
    row("RSS per pod over the empty process, KiB",
        (_num(_get(r, "ready", "rss_per_pod_bytes"), 2, KiB) for r in results))
    row("find_blocking_policies analyzer p50 / p99, ms",
        (f"{_num(_get(r, 'phases', 'tools', 'find_blocking_policies', 'p50_ms'), 3)} / "
         f"{_num(_get(r, 'phases', 'tools', 'find_blocking_policies', 'p99_ms'), 3)}"
         for r in results))
    for name in ("reach", "no_endpoints"):
        row(f"MCP end-to-end '{name}' p50 / p99, ms",
            (f"{_num(_get(r, 'phases', 'mcp', 'questions', name, 'p50_ms'), 2)} / "
             f"{_num(_get(r, 'phases', 'mcp', 'questions', name, 'p99_ms'), 2)}"
             for r in results))
    row("netsight CPU per MCP call, ms",
        (_num(_get(r, "phases", "mcp", "server_cpu_ms_per_call"), 2) for r in results))
    row("churn, events/s (event→visible p99, ms)",
        (f"{_num(_get(r, 'phases', 'churn', 'events_per_s'), 0)} "
         f"({_num(_get(r, 'phases', 'churn', 'visible_ms', 'p99_ms'), 1)})" for r in results))
    row("full export, ms / MB / peak +MiB",
        (f"{_num(_get(r, 'phases', 'export', 'whole_ms', 'p50_ms'), 0)} / "
         f"{_num(_get(r, 'phases', 'export', 'whole_bytes'), 1, 1e6)} / "
         f"{_num(_get(r, 'phases', 'export', 'whole_peak_rss_growth_bytes'), 0, MiB)}"
         for r in results))
    row("`around` export p50, ms",
        (_num(_get(r, "phases", "export", "around_ms", "p50_ms"), 2) for r in results))
    row("tools/list, bytes",
        (_num(_get(r, "phases", "mcp", "tools_list_bytes"), 0) for r in results))

    def baseline(r: Result) -> str:
        why = _slot(r, "baseline")
        if why:
            return f"- ({why})"
        figures = ratios(r).get("baseline_p50", {}).get("find_blocking_policies")
        if not figures:
            return "-"
        return f"{_num(figures.get('cold'), 0)}x / {_num(figures.get('warm'), 0)}x"

    def peer(r: Result) -> str:
        why = _slot(r, "peer")
        if why:
            return f"- ({why})"
        figures = ratios(r).get("peer", {}).get("reach")
        if not figures:
            return "-"
        return f"{_num(figures.get('time'), 0)}x / {_num(figures.get('bytes'), 0)}x"

    row("vs per-call design, find_blocking_policies (cold / warm cache)",
        (baseline(r) for r in results))
    row("vs kubernetes-mcp-server, 'reach' (time / bytes)", (peer(r) for r in results))
    def load_at(r: Result, when: str) -> str:
        figures = _get(r, "machine", f"load_average_{when}") or [None]
        return _num(figures[0], 1)

    row("1-min load average before → after", (f"{load_at(r, 'before')} → {load_at(r, 'after')}"
                                               for r in results))
    return _markdown(head, rows)


def _at(results: list[Result], scale: str) -> Result | None:
    return next((r for r in results if r["scale"] == scale), None)


def targets_table(results: list[Result]) -> list[str]:
    """Issue 24's targets, each beside its figure at the scale it names (a dash: that
    scale's JSON is not there yet)."""
    xl, s, large = _at(results, "XL"), _at(results, "S"), _at(results, "L")

    def figure(r: Result | None, text: str, met: bool | None) -> list[str]:
        if r is None:
            return ["-", "not measured"]
        return [text, "yes" if met else "no" if met is not None else "-"]

    def value(r: Result | None, *path: str) -> Any:
        return _get(r, *path) if r is not None else None

    rows: list[tuple[str, list[str]]] = []
    ready = value(xl, "ready", "ready_s")
    rows.append(("ready at XL (150k pods)", ["<= 10 s", *figure(
        xl, f"{_num(ready, 2)} s", ready is not None and ready <= 10)]))
    per_pod = value(xl, "ready", "rss_per_pod_bytes")
    rows.append(("RSS per pod at XL, all kinds", ["<= 2.5 KiB", *figure(
        xl, f"{_num(per_pod, 2, KiB)} KiB", per_pod is not None and per_pod <= 2.5 * KiB)]))
    rate = value(xl, "phases", "churn", "events_per_s")
    p99 = value(xl, "phases", "churn", "visible_ms", "p99_ms")
    rows.append(("churn at XL", [">= 5,000 events/s, event->visible p99 <= 5 ms", *figure(
        xl, f"{_num(rate, 0)} events/s, p99 {_num(p99, 2)} ms",
        rate is not None and p99 is not None and rate >= 5000 and p99 <= 5)]))
    find = value(xl, "phases", "tools", "find_blocking_policies", "p99_ms")
    rows.append(("find_blocking_policies analyzer p99 at XL", ["<= 1 ms", *figure(
        xl, f"{_num(find, 3)} ms", find is not None and find <= 1)]))
    e2e50 = value(xl, "phases", "mcp", "questions", "reach", "p50_ms")
    e2e99 = value(xl, "phases", "mcp", "questions", "reach", "p99_ms")
    rows.append(("MCP end-to-end p50 / p99 at XL, SDK client", ["<= 3 ms / <= 8 ms", *figure(
        xl, f"{_num(e2e50, 2)} / {_num(e2e99, 2)} ms",
        e2e50 is not None and e2e99 is not None and e2e50 <= 3 and e2e99 <= 8)]))
    for name, r, target in (("S", s, 100), ("L", large, 1000)):
        warm = _get(ratios(r), "baseline_p50", "find_blocking_policies", "warm") if r else None
        why = _slot(r, "baseline") if r else None
        rows.append((f"speed-up vs the per-call design, warm cache, at {name}",
                     [f">= {target:,}x", *figure(r, f"{_num(warm, 0)}x" if warm else
                                                 f"- ({why})", None if warm is None
                                                 else warm >= target)]))
    biggest = results[-1] if results else None
    peer = _get(ratios(biggest), "peer", "reach") if biggest else None
    why = _slot(biggest, "peer") if biggest else None
    rows.append(("vs kubernetes-mcp-server, same question", [
        ">= 100x faster, >= 100x fewer bytes", *figure(
            biggest, f"{_num(peer.get('time'), 0)}x, {_num(peer.get('bytes'), 0)}x at "
                     f"{biggest['scale'] if biggest else ''}" if peer else f"- ({why})",
            None if not peer else (peer.get("time") or 0) >= 100
            and (peer.get("bytes") or 0) >= 100)]))
    whole = value(xl, "phases", "export", "whole_ms", "p50_ms")
    near = value(xl, "phases", "export", "around_ms", "p50_ms")
    peak = value(xl, "phases", "export", "whole_peak_rss_growth_bytes")
    rows.append(("full export at XL / `around`", ["<= 3 s / <= 20 ms, peak +50 MiB", *figure(
        xl, f"{_num(whole, 0, 1000)} s / {_num(near, 1)} ms, +{_num(peak, 0, MiB)} MiB",
        None if whole is None or near is None or peak is None
        else whole <= 3000 and near <= 20 and peak <= 50 * MiB)]))
    return _markdown(["figure", "target", "measured", "met"], rows)


def tools_table(results: list[Result]) -> list[str]:
    """Per tool: netsight's analyzer p50 / p99 at each scale, and the per-call design's
    warm-cache ratio where measured."""
    names: list[str] = []
    for r in results:
        for name in _get(r, "phases", "tools") or {}:
            if name not in names:
                names.append(name)
    head = ["tool, analyzer p50 / p99 ms", *(r["scale"] for r in results)]
    rows = []
    for name in names:
        cells = []
        for r in results:
            figures = _get(r, "phases", "tools", name)
            if figures is None:
                cells.append("-")
            elif figures.get("error"):
                cells.append("error: " + figures["error"].split(":")[0])
            else:
                cell = f"{_num(figures.get('p50_ms'), 3)} / {_num(figures.get('p99_ms'), 3)}"
                warm = _get(ratios(r), "baseline_p50", name, "warm")
                cells.append(cell + (f" ({_num(warm, 0)}x)" if warm else ""))
        rows.append((f"`{name}`", cells))
    return _markdown(head, rows)


def _markdown(head: list[str], rows: list[tuple[str, list[str]]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join([label, *cells]) + " |" for label, cells in rows]
    return lines


def tables(results: list[Result], plotted: bool) -> str:
    if not results:
        return "No results yet: run `python -m benchmarks --scale S`."
    runs = ", ".join(f"{r['scale']}: commit {_get(r, 'machine', 'commit')}"
                     f"{' (--quick)' if r.get('quick') else ''}" for r in results)
    parts = [f"Runs: {runs}.", "", *summary_table(results), "",
             "Issue 24's targets (2-core machine):", "", *targets_table(results), "",
             "Per tool, netsight's analyzer on arguments drawn from the cluster (in brackets: "
             "the per-call design's warm-cache p50 over netsight's, both on the design's "
             "arguments):",
             "", *tools_table(results)]
    if plotted:
        parts += ["", *(f"![{name[:-4]}](results/{name})" for name in PLOTS)]
    return "\n".join(parts)


def write_readme(readme: Path, body: str) -> None:
    text = readme.read_text()
    before, start, rest = text.partition(START)
    _, end, after = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{readme}: the markers {START} and {END} are missing")
    readme.write_text(f"{before}{START}\n{body}\n{END}{after}")


def plot(results: list[Result], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display
    import matplotlib.pyplot as plt

    pods = [_get(r, "ready", "pods") or r["pods_asked"] for r in results]

    def series(*path: str) -> tuple[list[int], list[float]]:
        points = [(p, _get(r, *path)) for p, r in zip(pods, results, strict=True)]
        kept = [(p, v) for p, v in points if isinstance(v, int | float) and v > 0]
        return [p for p, _ in kept], [v for _, v in kept]

    figure, axes = plt.subplots(figsize=(7, 4.5))
    lines = [
        ("netsight find_blocking_policies, analyzer (random pairs)", ("phases", "tools",
                                                       "find_blocking_policies", "p50_ms")),
        ("netsight 'reach' over MCP (SDK client)", ("phases", "mcp", "questions", "reach",
                                                    "p50_ms")),
        ("per-call design, warm cache", ("phases", "baseline", "tools",
                                         "find_blocking_policies", "warm", "p50_ms")),
        ("per-call design, cold cache", ("phases", "baseline", "tools",
                                         "find_blocking_policies", "cold", "p50_ms")),
    ]
    for label, path in lines:
        xs, ys = series(*path)
        if xs:
            axes.plot(xs, ys, marker="o", label=label)
    peer: list[tuple[int, float]] = []
    for p, r in zip(pods, results, strict=True):
        ms = peer_figures(_get(r, "phases", "peer", "questions", "reach") or {})[0]
        if ms:
            peer.append((p, ms))
    if peer:
        axes.plot([p for p, _ in peer], [ms for _, ms in peer], marker="o",
                  label="kubernetes-mcp-server 'reach' (every call it needs)")
    axes.set(xscale="log", yscale="log", xlabel="pods", ylabel="p50 latency, ms",
             title="Can x/a reach y/b on port 80? (latency vs cluster size)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "latency.png", dpi=100)
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(7, 4.5))
    xs, ys = series("ready", "rss_bytes")
    axes.plot(xs, [y / MiB for y in ys], marker="o", label="netsight RSS, MiB")
    xs, ys = series("ready", "sim_rss_bytes")
    axes.plot(xs, [y / MiB for y in ys], marker="s", label="simulator RSS, MiB (not netsight)")
    axes.set(xscale="log", yscale="log", xlabel="pods", ylabel="MiB",
             title="Memory vs cluster size")
    per_pod = axes.twinx()
    xs, ys = series("ready", "rss_per_pod_bytes")
    per_pod.plot(xs, [y / KiB for y in ys], marker="^", color="tab:green", linestyle="--",
                 label="netsight KiB per pod")
    per_pod.set_ylabel("KiB per pod")
    per_pod.set_ylim(bottom=0)
    handles = axes.get_legend_handles_labels()
    extra = per_pod.get_legend_handles_labels()
    axes.legend(handles[0] + extra[0], handles[1] + extra[1], fontsize=8, loc="upper left")
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(out / "rss.png", dpi=100)
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for r in results:
        counts = _get(r, "phases", "churn", "histogram_ms")
        if not counts:
            continue
        total = sum(counts.values())
        bounds = [float(b) for b in counts]
        running, cumulative = 0, []
        for value in counts.values():
            running += value
            cumulative.append(running / total)
        axes.step(bounds, cumulative, where="post",
                  label=f"{r['scale']}: {_num(_get(r, 'phases', 'churn', 'events_per_s'), 0)}"
                        " events/s")
    axes.set(xscale="log", xlabel="event → visible in the graph, ms (bucket upper bound)",
             ylabel="share of events", title="Churn: event → visible latency (cumulative)")
    axes.grid(True, which="both", alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "churn.png", dpi=100)
    plt.close(figure)


def regenerate(results_dir: Path, readme: Path) -> list[str]:
    """The README's tables (and the plots where matplotlib is installed) from every JSON
    file in ``results_dir``; returns what it did, a line each."""
    results = load(results_dir) if results_dir.is_dir() else []
    said = []
    try:
        import matplotlib  # noqa: F401 - only whether it is installed
    except ImportError:
        plotted = False
        said.append("plots skipped: matplotlib is not installed "
                    "(pip install -e '.[bench]' to draw them)")
    else:
        plotted = bool(results)
        if plotted:
            plot(results, results_dir)
            said.append(f"plots written: {', '.join(str(results_dir / p) for p in PLOTS)}")
    # The README shows the committed plots; a run without matplotlib leaves them be.
    shown = plotted or all((results_dir / p).exists() for p in PLOTS)
    write_readme(readme, tables(results, shown))
    said.append(f"tables regenerated in {readme} from {len(results)} result(s)")
    return said
