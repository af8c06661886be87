"""A generated cluster loaded ``owned`` is stored as the generator built it: one object per
object, its unchanging parts shared, and a later write still leaves the stored version as
it was (the simulator copies on write)."""

from __future__ import annotations

from netsight.sim.scenarios import synthetic
from netsight.sim.state import SimState


def test_owned_objects_are_stored_without_a_copy() -> None:
    objects = synthetic(40, seed=1)
    pod = next(o for o in objects if o["kind"] == "Pod")
    containers = pod["spec"]["containers"]
    state = SimState()
    assert state.apply(objects, owned=True) == len(objects)
    rtype = state.registry.for_kind("v1", "Pod")
    assert rtype is not None
    meta = pod["metadata"]
    stored = state.get(rtype, meta["namespace"], meta["name"])
    assert stored is pod
    assert stored["metadata"]["resourceVersion"]

    state.patch(rtype, meta["namespace"], meta["name"],
                {"spec": {"containers": [{"name": "other", "image": "x"}]}},
                "application/merge-patch+json")
    assert pod["spec"]["containers"] is containers
    assert state.get(rtype, meta["namespace"], meta["name"]) is not pod


def test_objects_not_owned_are_copied() -> None:
    objects = synthetic(40, seed=1)
    pod = next(o for o in objects if o["kind"] == "Pod")
    state = SimState()
    state.apply(objects)
    rtype = state.registry.for_kind("v1", "Pod")
    assert rtype is not None
    meta = pod["metadata"]
    stored = state.get(rtype, meta["namespace"], meta["name"])
    assert stored is not pod
    assert stored["spec"] == pod["spec"]
