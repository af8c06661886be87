"""The observer: a run that overran is dropped whole, occurrences a previous process left
open are adopted or closed, and a run waits for the graph to be listed."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from netsight.analyzers.core.knowledge import Query
from netsight.knowledge import lookups
from netsight.knowledge.database import connect
from netsight.knowledge.migrations import migrate
from netsight.knowledge.observer import Observer
from netsight.knowledge.write_queue import WriteQueue
from tests.analyzers.test_signatures_abstract_names import service_and_pod
from tests.conftest import store_from_yaml

TYPO = service_and_pod("shop", "cart", {"app": "cartt"}, {"app": "cart"})


def test_a_run_past_its_time_limit_records_nothing(location: str) -> None:
    db = connect(location)
    migrate(db)
    queue = WriteQueue(db)
    store = store_from_yaml(TYPO)
    observer = Observer(store, queue, time_limit=0.0)
    assert observer.observe() is False
    assert (observer.overruns, observer.runs, observer.active) == (1, 0, {})
    queue.close()
    assert db.query("SELECT count(*) FROM occurrences")[0][0] == 0
    db.close()


def test_open_occurrences_are_adopted_or_closed_at_start(location: str) -> None:
    db = connect(location)
    migrate(db)
    queue = WriteQueue(db)
    first = Observer(store_from_yaml(TYPO), queue)
    assert first.observe()
    queue.flush()
    inherited = lookups.open_occurrences(db, first.cluster)
    assert len(inherited) >= 1
    # A process restarted: the typo is still there, a made-up occurrence is not.
    inherited[("ffffffffffff", "Service/shop/gone")] = "stale"
    second = Observer(store_from_yaml(TYPO), queue, inherited=dict(inherited))
    assert second.observe()
    queue.flush()
    assert {a.occurrence for a in second.active.values()} >= \
        {oid for key, oid in inherited.items() if key[0] != "ffffffffffff"}
    ended = db.query("SELECT kind FROM resolutions WHERE occurrence = 'stale'")
    assert ended == [("unobserved",)]
    signature = next(iter(second.active.values())).signature
    found = lookups.explain(db, Query(signature, None, None, 5))
    assert found is not None
    assert found.occurrences == 1
    queue.close()
    db.close()


@pytest.mark.anyio
async def test_runs_wait_for_the_graph_to_be_listed(location: str) -> None:
    db = connect(location)
    migrate(db)
    queue = WriteQueue(db)
    listed = itertools.chain([False, False], itertools.repeat(True))
    observer = Observer(store_from_yaml(TYPO), queue, interval=0.0,
                        ready=lambda: next(listed))

    task = asyncio.create_task(observer.run())
    for _ in range(200):
        await asyncio.sleep(0.005)
        if observer.runs:
            break
    task.cancel()
    assert observer.runs >= 1
    queue.close()
    db.close()
