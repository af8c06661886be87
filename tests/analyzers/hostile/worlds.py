"""Three graphs holding the same visible objects (``visible.yaml``, namespace ``shop``): one
where namespace ``edge`` holds objects (``hidden.yaml``), one where ``edge`` exists but is
empty, and one without it. A caller allowed ``shop`` only must get the same answers from
all three, whatever they ask about ``edge``."""

from __future__ import annotations

import functools
import io
import time

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store import live
from netsight.graph.store.live import GraphStore, Source
from tests.analyzers.hostile import HIDDEN, VISIBLE

EDGE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: edge}\n"
WORLDS = {"hidden": f"{VISIBLE}\n---\n{EDGE}---\n{HIDDEN}", "empty": f"{VISIBLE}\n---\n{EDGE}",
          "none": VISIBLE}
SCOPE = frozenset({"shop"})
TAKEN_IN = float(int(time.time()) - 60)  # when every graph took in every object


def build(name: str) -> GraphStore:
    """The graph called ``name``, every change taken in at one time (the change ring's
    times are then alike in every graph): a new one at each call, for tests that change it."""
    at = TAKEN_IN
    store = GraphStore(source=Source.CLUSTER, cluster_name="test", created_at=at)

    class Clock:
        @staticmethod
        def time() -> float:
            return at

    real = live.time
    live.time = Clock  # type: ignore[assignment]
    try:
        load_manifests(store, ["-"], stdin=io.StringIO(WORLDS[name]))
    finally:
        live.time = real
    return store


@functools.cache
def world(name: str) -> GraphStore:
    """The graph called ``name``, built once, for tests that only read it."""
    return build(name)
