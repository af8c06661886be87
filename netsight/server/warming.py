"""Keeping the policy analyzers' models built: after the first sync, and after changes.

The policy tools keep a model per policy across calls, with the graph they describe
(``analyzers/policy/kept_models.py``), built on the first question about its namespace: that
call pays for it, and in a large cluster most calls of the first minutes are such first
questions. Here the models are built once the informers have synced, namespace by namespace,
yielding the loop between two namespaces so tool calls and watch events are never held up by
more than one namespace's models. Not part of readiness: waiting for the pass would only
delay ``/readyz``, and a call arriving first builds what it needs itself.

A change to a policy kind (or a Namespace) replaces records, and a replaced record's model
is rebuilt on its next use; the admin tiers are rebuilt on any admin policy change. So the
pass runs again when one of those kinds' generation moved; over a warm graph it builds only
what changed and costs a dictionary lookup per policy.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from netsight.analyzers.policy.engine import MODEL_KINDS, warm
from netsight.graph.store.live import GraphStore

if TYPE_CHECKING:  # cluster.py starts keep_warm
    from netsight.server.cluster import LiveGraph

log = logging.getLogger(__name__)

CHECK_INTERVAL = 1.0  # seconds between looks at the policy kinds' generations


async def keep_warm(graph: LiveGraph, *, interval: float = CHECK_INTERVAL) -> None:
    """Run for as long as the graph: wait for the first sync, warm every namespace, then
    warm again whenever a policy kind changed. ``graph.warmed`` is the graph generation
    the last complete pass started from."""
    while not graph.ready:
        await asyncio.sleep(0.05)
    seen: tuple[int, ...] | None = None
    while True:
        view = graph.store.view()
        generations = tuple(view.kind_generation(kind) for kind in sorted(MODEL_KINDS))
        if generations != seen:
            generation = view.generation
            try:
                await warm_all(graph.store)
            except Exception:  # a model that fails to build fails its calls, not the server
                log.exception("warming the policy models failed; calls build them instead")
            seen, graph.warmed = generations, generation
        await asyncio.sleep(interval)


async def warm_all(store: GraphStore) -> int:
    """One pass over the cluster-scoped policies and every namespace; how many models it
    built. Each namespace is warmed on a view taken after the previous yield."""
    started = time.process_time()
    built = warm(store.view(), None)
    namespaces = sorted(store.view().namespaces())
    cpu = time.process_time() - started
    for namespace in namespaces:
        await asyncio.sleep(0)  # tool calls and watch events go first
        started = time.process_time()
        built += warm(store.view(), namespace)
        cpu += time.process_time() - started
    log.info("policy models: %d built over %d namespaces in %.0f ms of CPU", built,
             len(namespaces), 1000 * cpu)
    return built
