"""recent_changes reads the change ring: what happened around a Service, newest first."""

from __future__ import annotations

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import call_tool
from tests.watching.conftest import Cluster, eventually, namespace, pod, service

pytestmark = pytest.mark.anyio


async def test_a_relabelled_pod_shows_up_around_the_service_it_left(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), service("web", app="web"), pod("w1", app="web"),
                 pod("other", app="db")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    state.apply([pod("w1", app="web-v2")])  # w1 leaves the Service
    state.apply([pod("other", app="db", tier="x")])  # unrelated to the Service
    view = cluster.store.view()
    await eventually(lambda: view.get("Pod/x/other").labels.get("tier") == "x")  # type: ignore[union-attr]

    answer = to_json(call_tool(view, "recent_changes", {"around": "Service/x/web"}), detail=False)
    latest = answer["changes"][0]
    assert (latest["type"], latest["resource"], latest["fields"]) == (
        "MODIFIED", "Pod/x/w1", ["labels"])
    resources = {c["resource"] for c in answer["changes"]}
    assert "Pod/x/other" not in resources
    assert "Service/x/web" in resources  # its own ADDED, from the initial list
    assert answer["oldestHeld"] is not None

    in_ns = to_json(call_tool(view, "recent_changes", {"namespace": "x", "limit": 2}),
                    detail=False)
    assert [c["resource"] for c in in_ns["changes"]] == ["Pod/x/other", "Pod/x/w1"]
    assert in_ns["page"]["remaining"] > 0

    # Paging holds still while changes keep arriving: page 2 continues page 1.
    state.apply([pod("late", app="db")])
    await eventually(lambda: view.exists("Pod/x/late"))
    page2 = to_json(call_tool(view, "recent_changes", {"namespace": "x", "limit": 2,
                                                       "cursor": in_ns["page"]["nextCursor"]}),
                    detail=False)
    first_two = {c["generation"] for c in in_ns["changes"]}
    assert all(c["generation"] < min(first_two) for c in page2["changes"])

    with pytest.raises(ToolFailure, match="around"):
        call_tool(view, "recent_changes", {"around": "Service/x/nope"})
    with pytest.raises(ToolFailure, match="around"):
        call_tool(view, "recent_changes", {"around": "just-a-name"})
    with pytest.raises(ToolFailure, match="minutes"):
        call_tool(view, "recent_changes", {"minutes": 0})
