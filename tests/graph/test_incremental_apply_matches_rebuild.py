"""Applying any sequence of watch events leaves the graph a fresh build of the survivors gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.graph.store.live import EventType, GraphStore
from tests.graph.snapshots import diff, empty_index_entries, snapshot
from tests.graph.universe import Step, event_sequences, final_state

PROPERTY_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def rebuild(objects: list[dict[str, object]]) -> GraphStore:
    store = GraphStore()
    for raw in objects:
        assert store.apply(EventType.ADDED, raw)
    return store


@PROPERTY_SETTINGS
@given(sequence=event_sequences(), data=st.data())
def test_incremental_apply_equals_rebuild_of_live_objects(
    sequence: list[Step], data: st.DataObject
) -> None:
    store = GraphStore()
    for step in sequence:
        store.apply(step.event, step.raw)

    live, problem_keys = final_state(sequence)
    # Any order of arrival must give the same graph: references to objects that arrive
    # later stay pending and are linked when their target appears.
    order = data.draw(st.permutations(sorted(live)), label="rebuild order")
    fresh = rebuild([live[key] for key in order])

    incremental, expected = snapshot(store.state), snapshot(fresh.state)
    assert incremental == expected, diff(incremental, expected)
    assert set(incremental["nodes"]) == set(live)
    assert empty_index_entries(store.state) == []
    assert empty_index_entries(fresh.state) == []
    assert set(store.problems) == problem_keys
    assert fresh.problems == {}


@settings(PROPERTY_SETTINGS, max_examples=100)
@given(sequence=event_sequences())
def test_generation_only_increases_and_counts_every_change(sequence: list[Step]) -> None:
    store = GraphStore()
    for step in sequence:
        generation = store.generation
        before, problems_before = snapshot(store.state), dict(store.problems)
        changed = store.apply(step.event, step.raw)
        after = snapshot(store.state)
        assert store.generation >= generation
        if changed:
            assert store.generation == generation + 1
            assert (after, store.problems) != (before, problems_before)
        elif step.valid:
            # Nothing changed, so nothing a reader could see may differ.
            assert store.generation == generation
            assert after == before, diff(after, before)
            assert store.problems == problems_before
        else:
            # A refused version: the graph keeps the last valid record, the problem is noted
            # — a change only when it is not the very problem already noted.
            assert after == before, diff(after, before)
            assert step.key in store.problems
            new_problem = store.problems[step.key] != problems_before.get(step.key)
            assert store.generation == generation + new_problem
