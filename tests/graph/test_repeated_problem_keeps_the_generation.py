"""A malformed object sent again unchanged (a re-list, a resync) is the same problem: the
graph's generation — and every ETag and cached answer built on it — does not move."""

from __future__ import annotations

from netsight.graph.store.live import GraphStore

BROKEN = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "x"},
          "spec": {"ports": [{"port": "eighty"}]}}


def test_the_same_problem_twice_is_one_change() -> None:
    store = GraphStore()
    store.apply("ADDED", BROKEN)
    generation = store.generation
    assert len(store.problems) == 1
    store.apply("MODIFIED", BROKEN)
    assert store.generation == generation
    fixed = {**BROKEN, "spec": {"ports": [{"port": 80}]}}
    store.apply("MODIFIED", fixed)
    assert store.generation > generation
    assert store.problems == {}


def test_a_different_problem_is_a_change() -> None:
    store = GraphStore()
    store.apply("ADDED", BROKEN)
    generation = store.generation
    store.apply("MODIFIED", {**BROKEN, "spec": {"ports": [{"port": -1}]}})
    assert store.generation == generation + 1
