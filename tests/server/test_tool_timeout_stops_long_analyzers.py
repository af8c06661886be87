"""TOOL_TIMEOUT stops a long analyzer: it checks the deadline in its long loops, so a call
over the limit answers the error contract's timeout (INTERNAL_ERROR for an analyzer) instead
of holding the event loop until it is done — with the items it finished, where it has any."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from typing import Any

import orjson
import pytest
from starlette.requests import Request

from netsight.analyzers.core import deadline
from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphStore, Source
from netsight.server import dashboard
from netsight.server.draining import ARRIVED
from netsight.server.mcp_tools import ToolHost, run_tool, timed_out
from netsight.sim.synthetic import generate

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def store() -> GraphStore:
    cluster = generate(pods=2_000, namespaces=4, policies_per_namespace=10, seed=6)
    built = GraphStore(source=Source.CLUSTER)
    for obj in cluster.objects():
        built.apply("ADDED", obj)
    return built


def pods_by_identity_size(store: GraphStore) -> tuple[list[Record], list[Record]]:
    """The pods (by key) that share their labels with another pod of their namespace, and
    the pods alone in their identity. Chosen by key: the store's iteration order changes
    with the process's hash seed (one pod in 36 of this cluster is alone)."""
    pods = sorted(store.view().for_each(Kind.POD), key=lambda p: p.key)
    sizes = Counter((p.namespace, tuple(sorted(p.labels.items()))) for p in pods)
    shared = [p for p in pods if sizes[(p.namespace, tuple(sorted(p.labels.items())))] > 1]
    alone = [p for p in pods if sizes[(p.namespace, tuple(sorted(p.labels.items())))] == 1]
    return shared, alone


def a_pod(store: GraphStore) -> tuple[str, str]:
    """A pod of a several-pod identity: who_can_reach asks the per-pod path (its long loop,
    where the deadline is checked) about the destination's own identity, the pods apart
    from it; the set evaluation answers the rest without a loop."""
    pod = pods_by_identity_size(store)[0][0]
    return pod.namespace, f"{pod.namespace}/{pod.name}"


def long_questions(store: GraphStore) -> list[tuple[str, dict[str, Any]]]:
    namespace, pod = a_pod(store)
    return [
        ("reachability_matrix", {"namespaces": [namespace], "ports": [80, 443, 8080]}),
        ("who_can_reach", {"destination": pod, "port": 80}),
        ("what_can_reach", {"source": pod}),
        ("analyze_config", {}),
    ]


@pytest.mark.parametrize("index", range(4))
async def test_a_call_over_tool_timeout_answers_the_timeout_error(
        store: GraphStore, index: int) -> None:
    name, arguments = long_questions(store)[index]
    host = ToolHost(store=store, tools=TOOLS, timeout=1e-6)
    answer = await run_tool(host, name, arguments)
    assert answer.is_error, name
    error = orjson.loads(answer.content[0].text)  # type: ignore[union-attr]
    assert error["code"] == "INTERNAL_ERROR"
    assert error["tool"] == name
    assert "TOOL_TIMEOUT" in error["message"]

    relaxed = ToolHost(store=store, tools=TOOLS, timeout=600)  # the same question answers
    assert not (await run_tool(relaxed, name, arguments)).is_error


async def test_a_call_done_without_a_long_loop_answers_in_full_over_tool_timeout(
        store: GraphStore) -> None:
    # A pod alone in its identity: the set evaluation decides every source, so no loop that
    # checks the deadline runs. The answer is complete when the call ends: it is returned
    # (run_tool logs the overrun) rather than thrown away for a timeout error.
    pod = pods_by_identity_size(store)[1][0]
    arguments = {"destination": f"{pod.namespace}/{pod.name}", "port": 80}
    host = ToolHost(store=store, tools=TOOLS, timeout=1e-6)
    answer = await run_tool(host, "who_can_reach", arguments)
    assert not answer.is_error
    relaxed = ToolHost(store=store, tools=TOOLS, timeout=600)
    full = (await run_tool(relaxed, "who_can_reach", arguments)).structured_content
    assert answer.structured_content is not None
    assert full is not None
    assert answer.structured_content["peers"] == full["peers"]
    assert answer.structured_content["summary"] == full["summary"]


def test_a_stopped_page_hands_back_the_entries_it_finished(store: GraphStore) -> None:
    namespace, _ = a_pod(store)
    arguments = {"namespaces": [namespace], "ports": [80, 443], "limit": 500}
    whole = call_tool(store.view(), "reachability_matrix", arguments)
    ticks = itertools.count()  # a clock that advances one tick per deadline check
    with deadline.within(40, clock=lambda: next(ticks)), \
            pytest.raises(deadline.DeadlineExceeded) as raised:
        call_tool(store.view(), "reachability_matrix", arguments)
    finished = raised.value.finished
    assert 0 < len(finished) < len(whole.entries)  # type: ignore[attr-defined]
    assert finished == whole.entries[:len(finished)]  # type: ignore[attr-defined]

    host = ToolHost(store=store, tools=TOOLS, timeout=1)
    failure = timed_out(host, "reachability_matrix", finished)
    assert failure.code == "INTERNAL_ERROR"
    assert failure.detail is not None
    expected = to_json(whole, detail=False)["entries"][:len(finished)]
    assert orjson.loads(failure.detail) == {"finished": expected}


def test_without_a_deadline_nothing_is_checked(store: GraphStore) -> None:
    deadline.check()  # no deadline set: the CLI's case
    with deadline.within(-1), pytest.raises(deadline.DeadlineExceeded):
        deadline.check()
    deadline.check()


def test_a_long_run_of_items_is_checked_every_so_often() -> None:
    ticks = itertools.count()  # one tick per deadline check
    with deadline.within(3, clock=lambda: next(ticks)), \
            pytest.raises(deadline.DeadlineExceeded):
        for _ in deadline.checked(range(1_000), every=100):
            pass
    with deadline.within(-1):  # a run shorter than ``every`` is never checked
        assert list(deadline.checked(range(99), every=100)) == list(range(99))


async def test_tool_timeout_counts_from_the_requests_admission(store: GraphStore) -> None:
    """The SDK reads an MCP body before the call starts, on the loop: that time counts."""
    _, pod = a_pod(store)
    arguments = {"destination": pod, "port": 80}
    admitted = Request({"type": "http", ARRIVED: time.monotonic() - 10})
    host = ToolHost(store=store, tools=TOOLS, timeout=5)
    answer = await run_tool(host, "who_can_reach", arguments, request=admitted)
    assert answer.is_error
    assert "TOOL_TIMEOUT" in answer.content[0].text  # type: ignore[union-attr]
    assert not (await run_tool(host, "who_can_reach", arguments)).is_error


async def test_the_dashboards_calls_stop_at_tool_timeout(store: GraphStore) -> None:
    host = ToolHost(store=store, tools=TOOLS, timeout=1e-6)
    with pytest.raises(ToolFailure, match="TOOL_TIMEOUT"):
        await dashboard.call(host, store.view(), "analyze_config", {"limit": 500})


def test_analyze_config_hands_back_its_findings_wherever_it_stops(store: GraphStore) -> None:
    """Stopped inside one of its checks too (their own long loops check the deadline)."""
    ticks = itertools.count()
    with deadline.within(1e9, clock=lambda: next(ticks)):
        call_tool(store.view(), "analyze_config", {})
    finished = []
    # Ticks 0..N-1: the deadline's own start reads tick 0, the last check reads N-1, which
    # passes a deadline at N-2 or before (at N-1 nothing is left to stop).
    for at in range(1, next(ticks) - 1, 7):
        clock = itertools.count()
        with deadline.within(at, clock=lambda c=clock: next(c)), \
                pytest.raises(deadline.DeadlineExceeded) as raised:
            call_tool(store.view(), "analyze_config", {})
        finished.append(len(raised.value.finished))
    assert finished == sorted(finished)
    assert finished[-1] > 0
