"""No call holds ``netsight serve``'s event loop longer than TOOL_TIMEOUT plus 100 ms.

Analyzers run on the loop and cannot be interrupted: they check a deadline in their long
loops (``analyzers/core/deadline.py``), and everything else a call does must be short. This
runs every tool with its largest legal input over the whole cluster, catastrophic
backtracking patterns in live and proposed routes on the longest request an MCP body holds,
YAML alias and merge-key bombs, deeply nested arguments, a proposal at its 1 MiB bound and
the HTTP endpoints that read the whole graph, one at a time, against a real ``netsight
serve`` (``loop_latency.py``), and fails if a ``/healthz`` round trip during any of them
took longer than the bound. A round trip is counted less the time serve's loop thread and
the probe's thread spent runnable but waiting for a core (Linux schedstat): on a loaded
machine that wait is the machine's, and it would fail the test for nothing the code did.
TOOL_TIMEOUT is 1 s here, so the bound is near what the calls need on this small cluster;
``-m scale`` runs the same calls at 100k pods (a few minutes), writing the figures to
``benchmarks/out/loop-latency-100k.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.tools import TOOLS
from tests.server.loop_latency import (
    Names,
    Outcome,
    Probe,
    calls,
    hostile_objects,
    idle,
    read_names,
    report,
    run_calls,
    serving,
)

pytestmark = pytest.mark.anyio

TOOL_TIMEOUT = 1.0
BOUND = TOOL_TIMEOUT + 0.1
OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "out"


async def measured(tmp: Path, *, pods: int, ready_timeout: float) -> dict[str, Any]:
    async with serving(tmp, pods=pods, tool_timeout=TOOL_TIMEOUT, objects=hostile_objects(),
                       ready_timeout=ready_timeout) as running:
        names = await read_names(running.url)
        with Probe(running.port, running.pid) as probe:
            quiet = await idle(probe)
            outcomes = await run_calls(running.url, probe, calls(names))
        log = running.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]
    return {"pods": pods, "outcomes": outcomes, **report(outcomes, quiet, BOUND)}


def held_too_long(outcomes: list[Outcome]) -> list[str]:
    return [f"{o.label}: held the loop {o.held:.3f}s ({o.held_wall:.3f}s with the waits "
            f"for a core; answer {o.answer}, whole call {o.seconds:.3f}s)"
            for o in outcomes if o.held > BOUND]


def unexpected(outcomes: list[Outcome]) -> list[str]:
    """Answers no call should get: a 5xx other than a timeout, a JSON-RPC error, a body
    that is not JSON, an INTERNAL_ERROR that is not TOOL_TIMEOUT's."""
    allowed = ("ok", "HTTP 200", "INVALID_INPUT", "INTERNAL_ERROR (TOOL_TIMEOUT)",
               "HTTP 500 INTERNAL_ERROR (TOOL_TIMEOUT)", "HTTP 400")
    return [f"{o.label}: {o.answer}" for o in outcomes if not o.answer.startswith(allowed)]


def test_every_tool_is_asked_its_largest_question() -> None:
    names = Names(["a"], "a/p", "a/s", 80, ["a/p"])
    assert {c.tool for c in calls(names) if c.tool} == set(TOOLS), \
        "add the new tool's largest legal input to loop_latency.calls"


async def test_no_call_holds_the_loop_past_tool_timeout(tmp_path: Path) -> None:
    figures = await measured(tmp_path, pods=2_000, ready_timeout=60)
    outcomes: list[Outcome] = figures["outcomes"]
    assert sum(o.probes for o in outcomes) >= len(outcomes), "the probe stopped"
    assert not unexpected(outcomes), unexpected(outcomes)
    assert not held_too_long(outcomes), "\n".join(held_too_long(outcomes))


@pytest.mark.scale
async def test_no_call_holds_the_loop_at_100k_pods(tmp_path: Path) -> None:
    figures = await measured(tmp_path, pods=100_000, ready_timeout=900)
    OUT.mkdir(exist_ok=True)
    shown = {k: v for k, v in figures.items() if k != "outcomes"}
    (OUT / "loop-latency-100k.json").write_text(json.dumps(shown, indent=1))
    outcomes: list[Outcome] = figures["outcomes"]
    assert not unexpected(outcomes), unexpected(outcomes)
    assert not held_too_long(outcomes), "\n".join(held_too_long(outcomes))
