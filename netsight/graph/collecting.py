"""Keeping Python's cyclic garbage collector out of the way of a large, live graph.

The graph is millions of long-lived, acyclic objects that reference counting frees on its
own. After the initial sync ``gc.freeze()`` takes them out of the collector's reach, but
every watch event replaces records with new ones, which the collector does track: within
a few hundred thousand events most of the graph is unfrozen again, and each full
collection rescans all of it (pauses of 0.3-1 s at 100k pods, measured under churn).

So, while the informers run, objects that survived the automatic young collections are
frozen again every quarter of a second (``InformerSettings.refreeze_interval``;
``gc.freeze()`` only splices lists), after a collection of the youngest generation alone
(at most a few hundred objects), so fresh garbage cycles are not frozen with them; once
an hour everything is unfrozen for one full collection, which frees the cycles that became
garbage after they were frozen. Collecting the two young generations
before each freeze was tried and dropped: at 2,500 events/s it cost 20-40 ms a second.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger(__name__)


async def keep_collections_young(interval: float = 1.0, full_every: float = 3600.0) -> None:
    """Run until cancelled: refreeze every ``interval`` s, a full collection every
    ``full_every`` s."""
    last_full = time.monotonic()
    while True:
        await asyncio.sleep(interval)
        if time.monotonic() - last_full >= full_every:
            started = time.perf_counter()
            gc.unfreeze()
            found = gc.collect()
            log.info("full collection: %d unreachable objects in %.0f ms", found,
                     (time.perf_counter() - started) * 1000)
            last_full = time.monotonic()
        else:
            gc.collect(0)
        gc.freeze()
