"""Keeping Python's cyclic garbage collector out of the way of a large, live graph.

The graph is millions of long-lived, acyclic objects that reference counting frees on its
own. After the initial sync ``gc.freeze()`` takes them out of the collector's reach, but
every watch event replaces records with new ones, which the collector does track: under
churn most of the graph is soon unfrozen again, and each full collection rescans all of it.

So, while the informers run, the youngest generation is collected on a clock rather than by
allocation count, and its survivors frozen at once: every ``interval`` one ``gc.collect(0)``
and a ``gc.freeze()`` (which only splices lists). Every young object is traversed exactly
once, as with automatic young collections, but a pause only ever covers one interval's
survivors. The clock follows the work: under churn it ticks every
``InformerSettings.refreeze_interval``; when a collection finds next to nothing to do it
slows down, doubling up to ``refreeze_idle_interval``, so an idle server seldom wakes. The
automatic trigger is a poor bound for a large graph: it counts allocations *net of
deallocations*, and every event frees old, frozen records, so the young list grows long
before a collection starts, and that pause is longer than an event may take from the API
server to the graph.

The automatic trigger stays as a safety net at ``young_threshold`` net allocations: code
that holds the event loop for long (a re-list's page, a long analysis) is still collected
as it goes, while the clock never lets it fire under churn. It collects the youngest
generation only: when the loop is held through more than ten automatic young collections
(the middle generation's threshold; a tick's freeze resets the count), the eleventh would
take the middle generation too, which then holds everything that survived the ten, all of
it frozen at the next tick anyway. So while a keeper runs the middle generation's threshold
is out of reach (``_NEVER``), and the older generations are left to the full collection.

Cyclic garbage stays bounded: a cycle that dies young is freed by the next clock tick's
(or, with the loop held, the safety net's) collection; one that dies after being frozen
is freed by the full collection every ``full_every`` seconds, which unfreezes everything
first. The event path makes next to none.

The keeper also gives the heap's free pages back to the OS (``allocator.release_free_memory``)
every ``release_every`` seconds, and within a second of RSS rising by ``release_rise`` bytes
since the last release: the graph's large hash tables are rebuilt now and then under churn,
and the old table's block stays in RSS as a hole in glibc's heap. A rise that is live
memory costs one release and becomes the new mark.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Iterator

from netsight.graph.runtime.allocator import release_free_memory, resident_bytes

log = logging.getLogger(__name__)

# The collector's thresholds are the process's: with several keepers running (one per
# ClusterWatcher), the first one in saves them and the last one out restores them.
_running = 0
_saved_thresholds = gc.get_threshold()
# A threshold the middle generation's count (young collections since its last one, or
# since the last freeze) never reaches.
_NEVER = 2**31 - 1


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Hold the cyclic garbage collector off during a bulk load.

    A load allocates hundreds of thousands of long-lived containers, and each allocation
    burst would trigger collections that rescan them all. Reference counting still frees
    garbage meanwhile.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def keep_collections_young(interval: float = 1.0, full_every: float = 3600.0,
                                 young_threshold: int | None = None,
                                 release_every: float = 0.0,
                                 release_rise: int = 4 << 20,
                                 idle_interval: float | None = None,
                                 pause_target: float = 0.25e-3) -> None:
    """Run until cancelled: collect the youngest generation and freeze its survivors every
    ``interval`` s, a full collection every ``full_every`` s; meanwhile, automatic
    collections wait for ``young_threshold`` net allocations and take the youngest
    generation only (None: the thresholds are left as they are). Every ``release_every``
    s, or within a second of RSS rising ``release_rise`` bytes above what it was after the
    last release, the heap's free pages go back to the OS (0: never).

    With an ``idle_interval`` longer than ``interval`` the clock follows the work: a young
    collection that took under a quarter of ``pause_target`` doubles the wait before the
    next (up to ``idle_interval``: an idle server wakes a few times a second), one that
    took longer than ``pause_target`` halves it (down to ``interval``: under churn each
    pause covers a short interval's survivors)."""
    global _running, _saved_thresholds
    if _running == 0:
        _saved_thresholds = gc.get_threshold()
    _running += 1
    if young_threshold is not None:
        gc.set_threshold(young_threshold, _NEVER, _saved_thresholds[2])
    longest = max(interval, idle_interval or interval)
    wait = interval
    try:
        last_full = last_release = last_look = time.monotonic()
        mark = resident_bytes()
        while True:
            await asyncio.sleep(wait)
            now = time.monotonic()
            look = now - last_look >= 1.0  # RSS read once a second, not each tick
            if look:
                last_look = now
            if release_every and (now - last_release >= release_every
                                  or (look and _risen(mark, release_rise))):
                release_free_memory()
                last_release = time.monotonic()
                mark = resident_bytes()
            if time.monotonic() - last_full >= full_every:
                started = time.perf_counter()
                gc.unfreeze()
                found = gc.collect()
                log.info("full collection: %d unreachable objects in %.0f ms", found,
                         (time.perf_counter() - started) * 1000)
                last_full = time.monotonic()
            else:
                started = time.perf_counter()
                gc.collect(0)
                wait = next_wait(wait, time.perf_counter() - started, interval, longest,
                                 pause_target)
            gc.freeze()
    finally:
        _running -= 1
        if _running == 0:
            gc.set_threshold(*_saved_thresholds)


def next_wait(wait: float, pause: float, shortest: float, longest: float,
              pause_target: float) -> float:
    """The keeper's next wait after a young collection that paused ``pause`` s: halved
    (down to ``shortest``) when it took longer than ``pause_target``, doubled (up to
    ``longest``) when it took under a quarter of it, else the same."""
    if pause > pause_target:
        return max(shortest, wait / 2)
    if pause < pause_target / 4:
        return min(longest, wait * 2)
    return wait


def _risen(mark: int | None, rise: int) -> bool:
    now = resident_bytes()
    return mark is not None and now is not None and now - mark >= rise
