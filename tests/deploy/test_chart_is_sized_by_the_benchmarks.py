"""The chart's sizes follow the project's measurements, and its startup probe outlasts a sync.

The sizing table of helm/netsight/README.md is checked against the model it states, built
from benchmarks/README.md "Current figures" (the constants below, each named after its row);
the values' default resources are its mid-size row; the startup probe's window covers the
sync bound of its largest row; and the default CPU limit is one netsight's own CPU count
reads as room for the list worker.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.graph.ingest.informers import InformerSettings
from netsight.graph.ingest.list_worker import usable_cpus
from tests.deploy.conftest import CHART, VALUES_SETS, Render, only

# benchmarks/README.md, "Current figures" (measured at 100k pods against the simulator).
SOAK_RSS_MIB = (449, 497)  # informers soak: RSS after the sync .. flat under churn (494)
SYNC_GROWTH_MIB = 289.3  # informers sync: RSS growth over the sync
WORKER_PEAK_MIB = 79  # informers sync: the list worker's peak (68-79)
EXPORT_MIB = 25  # export_memory: one whole-graph export over idle (14.5-23.7, rounded up)
SYNC_S = 10.47  # informers sync: the slowest sitting's median, with the worker
SYNC_CPU_S = (4.9, 3.7)  # netsight's and the worker's CPU in the quiet sitting's sync
SYNC_WALL_S = 6.27  # that sitting's wall time
# Assumptions the README states: a real API server lists up to 4x slower than the simulator;
# limits leave 25% over the peak.
API_SERVER_SLOWDOWN = 4
HEADROOM = 1.25

MIB = {"Mi": 1, "Gi": 1024}


def mib(quantity: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", quantity).groups()  # type: ignore[union-attr]
    return int(number) * MIB[unit]


def cpus(quantity: str) -> float:
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def sizing_rows() -> list[dict[str, Any]]:
    """The README's sizing table: pods, requests and limits per row."""
    text = (CHART / "README.md").read_text()
    section = text.partition("## Sizing")[2].partition("\n## ")[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not re.match(r"[<\d]", cells[1]):
            continue
        pods = int(re.sub(r"[^\d]", "", cells[1])) * 1000
        requests = [c.strip() for c in cells[5].split("/")]
        limits = [c.strip() for c in cells[6].split("/")]
        rows.append({"name": cells[0], "pods": pods,
                     "requests": {"cpu": requests[0], "memory": requests[1]},
                     "limits": {"cpu": limits[0], "memory": limits[1]}})
    return rows


def steady_mib(pods: int) -> float:
    base = SOAK_RSS_MIB[0] - SYNC_GROWTH_MIB
    return base + (SOAK_RSS_MIB[1] - base) * pods / 100_000


def test_the_table_has_the_sizes_the_issue_asks_for() -> None:
    assert [r["pods"] for r in sizing_rows()] == [1_000, 10_000, 50_000, 100_000, 150_000]


@pytest.mark.parametrize("row", sizing_rows(), ids=lambda r: r["name"])
def test_each_size_has_room_for_the_measured_peaks(row: dict[str, Any]) -> None:
    pods = row["pods"]
    steady = steady_mib(pods)
    worker_runs = cpus(row["limits"]["cpu"]) >= 2 and \
        pods >= InformerSettings.list_worker_min_objects
    peak = steady + (WORKER_PEAK_MIB if worker_runs else 0) + EXPORT_MIB * pods / 100_000
    assert mib(row["requests"]["memory"]) >= steady
    assert mib(row["limits"]["memory"]) >= HEADROOM * peak
    # Not far beyond it either: a size that wastes a node's memory is not "backed".
    assert mib(row["limits"]["memory"]) < HEADROOM * peak + 128
    assert cpus(row["requests"]["cpu"]) <= cpus(row["limits"]["cpu"])
    if pods >= 50_000:
        assert worker_runs, "large syncs should get the list worker's second core"


def test_the_100k_row_holds_the_measured_rss() -> None:
    (row,) = [r for r in sizing_rows() if r["pods"] == 100_000]
    assert mib(row["requests"]["memory"]) >= SOAK_RSS_MIB[1]
    assert mib(row["limits"]["memory"]) >= SOAK_RSS_MIB[1] + WORKER_PEAK_MIB + EXPORT_MIB


def test_the_defaults_are_the_mid_size_row() -> None:
    defaults = yaml.safe_load((CHART / "values.yaml").read_text())["resources"]
    (row,) = [r for r in sizing_rows() if "defaults" in r["name"]]
    assert row["pods"] == 50_000
    assert defaults == {"requests": row["requests"], "limits": row["limits"]}


def test_the_default_cpu_limit_lets_the_list_worker_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: set(range(8)))
    limit = cpus(yaml.safe_load((CHART / "values.yaml").read_text())["resources"]["limits"]
                 ["cpu"])
    (tmp_path / "cpu.max").write_text(f"{int(limit * 100_000)} 100000\n")
    assert usable_cpus(tmp_path) == 2
    # The issue's old default, 500m, left netsight one CPU: no worker.
    (tmp_path / "cpu.max").write_text("50000 100000\n")
    assert usable_cpus(tmp_path) == 1


def sync_bound_s(pods: int) -> float:
    """The slowest measured sync, on one core, scaled to ``pods`` and a real API server."""
    one_core = SYNC_S * sum(SYNC_CPU_S) / SYNC_WALL_S
    return one_core * pods / 100_000 * API_SERVER_SLOWDOWN


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_the_startup_probe_allows_twice_the_largest_sync(
        render: Render, values_file: str) -> None:
    (container,) = only(render(values_file), "Deployment")["spec"]["template"]["spec"][
        "containers"]
    startup = container["startupProbe"]
    assert startup["httpGet"] == {"path": "/readyz", "port": "http"}
    window = startup.get("initialDelaySeconds", 0) + \
        startup["periodSeconds"] * startup["failureThreshold"]
    largest = max(r["pods"] for r in sizing_rows())
    assert window >= 2 * sync_bound_s(largest)
    # The README states the bound it was sized for.
    text = (CHART / "README.md").read_text()
    assert f"~{round(sync_bound_s(largest))} s" in text
    # Liveness only starts after it, so it needs no delay of its own to outwait the sync.
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
