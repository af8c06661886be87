"""The ratios the report derives from what the designs beside netsight return."""

from __future__ import annotations

from typing import Any, cast

from benchmarks.context import BenchContext
from benchmarks.report import ratios
from benchmarks.suite import beside

NETSIGHT_PHASES: dict[str, Any] = {
    "tools": {"find_blocking_policies": {"p50_ms": 0.2}},
    "mcp": {"questions": {"reach": {"p50_ms": 3.0, "bytes": 600}}},
}


def test_the_per_call_design_is_compared_on_its_own_arguments_where_timed() -> None:
    baseline = {"tools": {"find_blocking_policies": {
        "cold": {"p50_ms": 50.0}, "warm": {"p50_ms": 2.0}, "netsight": {"p50_ms": 0.1},
        "args": {}, "agrees": True}}}
    found = ratios({"phases": {**NETSIGHT_PHASES, "baseline": baseline}})
    assert found["baseline_p50"] == {"find_blocking_policies": {"cold": 500.0, "warm": 20.0}}
    del baseline["tools"]["find_blocking_policies"]["netsight"]
    found = ratios({"phases": {**NETSIGHT_PHASES, "baseline": baseline}})
    assert found["baseline_p50"] == {"find_blocking_policies": {"cold": 250.0, "warm": 10.0}}


def test_the_peer_is_compared_in_either_shape() -> None:
    flat = {"available": True, "questions": {"reach": {"wall_ms": 600.0, "bytes": 60_000,
                                                       "tokens": 15_000, "calls": 9}}}
    assert ratios({"phases": {**NETSIGHT_PHASES, "peer": flat}})["peer"] == {
        "reach": {"time": 200.0, "bytes": 100.0}}
    nested = {"available": True, "questions": {"reach": {
        "peer": {"wall_ms_p50": 600.0, "bytes": 60_000}, "netsight": {"wall_ms_p50": 2.0},
        "faster": 300.0, "fewer_bytes": 90.0}}}
    assert ratios({"phases": {**NETSIGHT_PHASES, "peer": nested}})["peer"] == {
        "reach": {"time": 300.0, "bytes": 90.0}}


def test_an_empty_slot_gives_no_ratio() -> None:
    empty = {"available": False, "reason": "module not present"}
    assert ratios({"phases": {**NETSIGHT_PHASES, "baseline": empty, "peer": empty}}) == {}


def test_a_missing_module_leaves_its_slot_saying_so() -> None:
    ctx = cast(BenchContext, None)  # never reached: the module is not there
    assert beside("no_such_design", ctx) == {"available": False,
                                             "reason": "module not present"}
