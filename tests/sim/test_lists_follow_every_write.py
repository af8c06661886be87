"""A list answers in name order with exactly the stored objects, also when it is served
from the keys sorted for an earlier list (SimState keeps them while nothing is written)."""

from __future__ import annotations

from typing import Any

from netsight.sim.selection import Selection
from netsight.sim.state import SimState


def pod(name: str, namespace: str = "x") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace}}


def names(state: SimState, namespace: str | None = None) -> list[str]:
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    _, items = state.list(pods, Selection(namespace=namespace))
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items]


def test_a_list_after_creates_and_deletes_holds_what_is_stored_in_order() -> None:
    state = SimState()
    state.apply([pod("c"), pod("a"), pod("b", "w")])
    assert names(state) == ["w/b", "x/a", "x/c"]
    assert names(state) == ["w/b", "x/a", "x/c"]  # unchanged: served sorted already
    state.apply([pod("b")])
    assert names(state) == ["w/b", "x/a", "x/b", "x/c"]
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    state.delete(pods, "x", "a")
    assert names(state) == ["w/b", "x/b", "x/c"]
    assert names(state, "x") == ["x/b", "x/c"]


def test_a_replaced_object_is_listed_in_its_new_version() -> None:
    state = SimState()
    state.apply([pod("a")])
    assert names(state) == ["x/a"]
    state.apply([{**pod("a"), "metadata": {"name": "a", "namespace": "x",
                                             "labels": {"v": "2"}}}])
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    _, items = state.list(pods, Selection())
    assert [o["metadata"].get("labels") for o in items] == [{"v": "2"}]
