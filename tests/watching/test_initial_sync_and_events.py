"""Initial sync is a paginated list; afterwards every event type reaches the graph."""

from __future__ import annotations

import asyncio

import pytest

from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.store.sync_status import SyncState
from tests.watching.conftest import Cluster, eventually, namespace, pod, service

pytestmark = pytest.mark.anyio


async def test_initial_sync_lists_in_pages_and_marks_every_kind_synced(cluster: Cluster) -> None:
    cluster.sim.state.apply([namespace("x"), *(pod(f"p{i}", app="a") for i in range(120))])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert cluster.kind_count(Kind.POD) == 120
    assert cluster.watcher.ready
    assert {s.state for s in cluster.store.sync.values()} == {SyncState.SYNCED}
    # 120 pods at 50 a page: three list requests, each but the first with a continue token.
    lists = [query for method, path, query in cluster.sim.api.request_log
             if path == "/api/v1/pods" and "watch" not in query]
    assert [q["limit"] for q in lists] == ["50", "50", "50"]
    assert ["continue" in q for q in lists] == [False, True, True]
    # ...then one watch, from the list's resourceVersion.
    await eventually(lambda: any(p == "/api/v1/pods" for p, _ in cluster.sim.api.watch_log))


async def test_added_modified_deleted_reach_the_graph(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), service("web", app="web")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    view = cluster.store.view()

    state.apply([pod("w1", app="web")])
    await eventually(lambda: view.exists("Pod/x/w1"))
    await eventually(lambda: any(True for _ in view.neighbors("Service/x/web", Rel.SELECTS)))

    state.apply([pod("w1", app="other")])  # MODIFIED: labels change, the Service lets go
    await eventually(lambda: not any(True for _ in view.neighbors("Service/x/web", Rel.SELECTS)))

    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    state.delete(pods, "x", "w1")
    await eventually(lambda: not view.exists("Pod/x/w1"))
    changes = [(c.type.value, c.key) for c in view.changes_since(0) if c.key == "Pod/x/w1"]
    assert changes == [("ADDED", "Pod/x/w1"), ("MODIFIED", "Pod/x/w1"), ("DELETED", "Pod/x/w1")]
    modified = next(c for c in view.changes_since(0)
                    if c.key == "Pod/x/w1" and c.type.value == "MODIFIED")
    assert modified.fields == ("labels",)


async def test_bookmarks_move_the_resume_point_forward(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), pod("a")])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    # Many changes to *other* kinds: the pod watch sees none of them, only bookmarks.
    state.apply([service(f"s{i}") for i in range(30)])
    latest = state.rv
    informer = next(i for i, _ in cluster.watcher.informers.values() if i.kind.kind == "Pod")
    await eventually(lambda: int(informer.resource_version or 0) >= latest)
    state.compact()  # anything older than now is gone
    state.close_all_watches()
    await eventually(lambda: sum(p.endswith("/pods") for p, _ in cluster.sim.api.watch_log) >= 2)
    await asyncio.sleep(0.5)  # time for a 410, had the resume point been too old
    resumed = [rv for p, rv in cluster.sim.api.watch_log if p.endswith("/pods")][-1]
    assert resumed is not None
    assert int(resumed) >= latest, "the bookmark's resourceVersion was not used"
    pod_status = cluster.store.sync[Kind.POD]
    assert pod_status.relists == 0, "a bookmarked informer resumes without re-listing"
