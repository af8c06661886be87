"""The benchmark suite, run as CI runs it: a tiny cluster, --quick. It asserts that the run
completes and writes its outputs, never a timing: figures come from a quiet machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.report import END, START
from netsight.analyzers.tools import TOOLS

ROOT = Path(__file__).resolve().parents[2]


def test_a_quick_run_writes_its_json_and_the_readme_tables(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Benchmarks\n\n{START}\nstale table\n{END}\n\n## How to reproduce\n")
    out = tmp_path / "results"
    done = subprocess.run(
        # The per-call design and the peer have tests of their own, and take longer.
        [sys.executable, "-m", "benchmarks", "--scale", "200", "--quick", "--out", str(out),
         "--readme", str(readme), "--only", "tools,mcp,export,churn"],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-4000:]

    result = json.loads((out / "200.json").read_text())
    assert result["cluster"]["counts"]["Pod"] >= 200
    assert {"ready_s", "ready_cpu_s", "rss_bytes", "rss_per_pod_bytes"} <= set(result["ready"])
    assert result["ready"]["pods"] == result["cluster"]["counts"]["Pod"]
    phases = result["phases"]
    assert set(phases["tools"]) == set(TOOLS)
    failed = {name: f["error"] for name, f in phases["tools"].items() if "error" in f}
    assert failed == {}
    assert all({"p50_ms", "p99_ms", "first_ms"} <= set(f) for f in phases["tools"].values())
    assert set(phases["mcp"]["questions"]) == {"reach", "no_endpoints"}
    assert phases["mcp"]["tools_list_bytes"] > 0
    assert {"whole_ms", "whole_bytes", "whole_peak_rss_growth_bytes", "around_ms"} <= set(
        phases["export"])
    assert phases["churn"]["missing"] == 0
    assert {"events_per_s", "visible_ms", "histogram_ms"} <= set(phases["churn"])
    assert "baseline" not in phases

    text = readme.read_text()
    assert "stale table" not in text
    assert text.startswith("# Benchmarks\n")
    assert text.endswith("## How to reproduce\n")
    assert "| time to ready, s (CPU s) |" in text
    assert "| `find_blocking_policies` |" in text
    assert "| vs per-call design, find_blocking_policies (cold / warm cache) | - (not run) |" \
        in text
