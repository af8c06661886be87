"""Keeping Python's cyclic garbage collector out of the way of a large, live graph.

The graph is millions of long-lived, acyclic objects that reference counting frees on its
own. After the initial sync ``gc.freeze()`` takes them out of the collector's reach, but
every watch event replaces records with new ones, which the collector does track: within
a few hundred thousand events most of the graph is unfrozen again, and each full
collection rescans all of it (pauses of 0.3-1 s at 100k pods, measured under churn).

So, while the informers run, the youngest generation is collected on a clock rather than by
allocation count, and its survivors frozen at once: every ``interval`` one ``gc.collect(0)``
and a ``gc.freeze()`` (which only splices lists). The clock follows the work: under churn it
ticks every ``InformerSettings.refreeze_interval`` (10 ms), so a pause covers 10 ms of
survivors; when a collection finds next to nothing to do it slows down, doubling up to
``refreeze_idle_interval`` (0.25 s), so an idle server wakes 4 times a second rather than
100 (on a fixed 10 ms clock ~19 ms of CPU a second idle, measured). Every young object is
traversed exactly once, as with automatic young collections, but a pause only ever covers
one interval's survivors. The automatic trigger is a poor bound at 100k pods: it counts
allocations *net of deallocations*, and every event frees old, frozen records, so the young
list grew to 3,000-8,000 objects (15-36k references, each a likely cache miss into the old
heap) before a collection started: 5-12 ms pauses, more than the 5 ms an event may take from
the API server to the graph. Measured with ``benchmarks/informers.py _replay`` (30k events
at 100k pods, collector time in thread CPU; benchmarks/README.md, "watch-gc"): automatic
collections at the default threshold 700, refrozen every 0.25 s: pauses p50 0.8-1.3 ms, max
5-13 ms, plus the odd 6-16 ms gen-1 collection; on a 25 ms clock: p50 0.5-0.9 ms, max
1.3-2.0 ms; the same total either way (0.17-0.25 s against 0.18-0.23 s).

The automatic trigger stays as a safety net at ``young_threshold`` (10,000 net
allocations): code that holds the event loop for long (a re-list's page, a 1 s analysis)
is still collected as it goes, while the clock never lets it fire under churn. It collects
the youngest generation only: when the loop is held through more than ten automatic young
collections (the middle generation's threshold; a tick's freeze resets the count), the
eleventh would take the middle generation too, which then holds everything that survived
the ten, all of it frozen at the next tick anyway. In the 1M-event soak at 5,000 events/s
(netsight behind, long loop turns) 19 such collections took 29-41 ms each; so while a
keeper runs the middle generation's threshold is out of reach (``_NEVER``), and the older
generations are left to the hourly full collection.

Cyclic garbage stays bounded: a cycle that dies young is freed by the next clock tick's
(or, with the loop held, the safety net's) collection; one that dies after being frozen
is freed by the full collection every ``full_every`` seconds (an hour), which unfreezes
everything first. The event path makes none (every young collection in the replays found
0 unreachable objects), and after 1M-event soaks a full collection found 6-8 among the
frozen objects. Collecting the two young generations before each freeze was tried and
dropped: at 2,500 events/s it cost 20-40 ms a second.

The keeper also gives the heap's free pages back to the OS (``allocator.release_free_memory``)
every ``release_every`` seconds (a minute by default), and within a second of RSS rising by
``release_rise`` bytes (4 MiB) since the last release: the graph's large hash tables are
rebuilt now and then under churn, and the old table's block stays in RSS as a hole in
glibc's heap (a 7.5 MiB step near 865k events in the 1M-event soak at 100k pods, which a
release a minute later took back). A rise that is live memory costs one release (a few ms)
and becomes the new mark.
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
