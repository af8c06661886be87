"""Labels and annotations reach clients with their keys sorted, as the API server writes
them (Go maps, in key order): in lists and in watch events, whatever order a write sent.
netsight's decoders look a label map up as listed (graph/ingest/shared_parts.py), so a
simulator that kept a writer's order would measure a cache the real server never sees."""

from __future__ import annotations

from typing import Any

import orjson

from netsight.sim.selection import Selection
from netsight.sim.state import SimState

UNSORTED = {"tier": "web", "app": "cart", "pod-template-hash": "5d8f"}
SORTED = ["app", "pod-template-hash", "tier"]


def pod(name: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "x", **metadata}}


def keys_of(line: bytes, field: str) -> list[str]:
    # orjson keeps a JSON object's key order in the dict it builds
    return list(orjson.loads(line)["object"]["metadata"][field])


def test_created_and_patched_labels_are_served_sorted() -> None:
    state = SimState()
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    watcher = state.open_watch(pods, Selection(), None)
    state.apply([pod("a", labels=UNSORTED, annotations={"z": "1", "b": "2"})])
    state.patch(pods, "x", "a", {"metadata": {"labels": {"quarantined": "true"}}},
                "application/merge-patch+json")
    added, modified = watcher.take()
    assert added is not None
    assert modified is not None
    assert keys_of(added, "labels") == SORTED
    assert keys_of(added, "annotations") == ["b", "z"]
    assert keys_of(modified, "labels") == ["app", "pod-template-hash", "quarantined", "tier"]
    _, items = state.list(pods, Selection())
    assert list(items[0]["metadata"]["labels"]) == \
        ["app", "pod-template-hash", "quarantined", "tier"]


def test_a_writer_s_dict_is_not_reordered_in_place() -> None:
    state = SimState()
    pods = state.registry.for_kind("v1", "Pod")
    assert pods is not None
    labels = dict(UNSORTED)
    state.create(pods, pod("a", labels=labels), owned=True)
    assert list(labels) == list(UNSORTED)  # shared with whoever built it: left alone
