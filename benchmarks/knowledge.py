"""The knowledge base's overhead: event cost with it on vs off, store size, explain latency.

    events   informer event cost (CPU per applied watch event) at a paced event rate, with the
             knowledge base's observer running on the same loop vs without it
    size     the store's size after N writes (occurrences appearing and ending, fixes, sightings)
    explain  explain_finding's lookup p50/p99 with N occurrences of one signature in the store

Run from the repository root: ``.venv/bin/python benchmarks/knowledge.py events --pods 5000``;
``--tiny`` runs each at a size that finishes in seconds (a functional check, not a figure).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from netsight.analyzers.core.knowledge import Query
from netsight.graph.store.live import EventType, GraphStore, Source
from netsight.knowledge import lookups
from netsight.knowledge.database import connect
from netsight.knowledge.migrations import migrate
from netsight.knowledge.observer import Observer
from netsight.knowledge.write_queue import Appeared, Resolved, StillSeen, WriteQueue
from netsight.sim.synthetic import generate


def _store(pods: int) -> tuple[GraphStore, list[dict]]:
    cluster = generate(pods=pods, seed=3)
    store = GraphStore(source=Source.CLUSTER, cluster_name="bench")
    for obj in cluster.objects():
        store.apply(EventType.ADDED, obj)
    return store, cluster.pods


async def _paced(store: GraphStore, pods: list[dict], rate: int, seconds: float) -> int:
    """Apply pod MODIFIED events (a label flip) at ``rate`` per second, catching up after
    the loop was held (as informers drain a stream that waited); returns how many."""
    applied, tick, started = 0, 0.01, time.monotonic()
    versions = [copy.deepcopy(p) for p in pods]
    while (elapsed := time.monotonic() - started) < seconds:
        for _ in range(int(rate * elapsed) - applied):
            pod = versions[applied % len(versions)]
            pod["metadata"].setdefault("labels", {})["bench"] = str(applied)
            store.apply(EventType.MODIFIED, pod)
            applied += 1
        await asyncio.sleep(tick)
    return applied


async def _events_once(pods: int, rate: int, seconds: float, knowledge: bool) -> float:
    store, objects = _store(pods)
    task = None
    with tempfile.TemporaryDirectory() as tmp:
        db = connect(str(Path(tmp) / "kb.db"))
        migrate(db)
        writes = WriteQueue(db)
        if knowledge:
            task = asyncio.create_task(Observer(store, writes).run())
        cpu = time.process_time()
        applied = await _paced(store, objects, rate, seconds)
        cpu = time.process_time() - cpu
        if task is not None:
            task.cancel()
        writes.close()
        db.close()
    return cpu / applied * 1e6


def events(args: argparse.Namespace) -> None:
    """Alternates off/on runs; CPU µs per event (the writer thread's CPU included)."""
    results: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(args.repeats):
        for label, on in (("off", False), ("on", True)):
            results[label].append(asyncio.run(_events_once(args.pods, args.rate, args.seconds, on)))
    off, on = statistics.median(results["off"]), statistics.median(results["on"])
    print(json.dumps({"pods": args.pods, "rate": args.rate, "seconds": args.seconds,
                      "cpu_us_per_event_off": round(off, 1), "cpu_us_per_event_on": round(on, 1),
                      "overhead": round(on / off - 1, 4), "runs": results}))


def _fill(db_path: str, writes: int, signatures: int = 50) -> None:
    db = connect(db_path)
    migrate(db)
    queue = WriteQueue(db, size=max(writes, 10))
    now, open_ = time.time(), []
    for i in range(writes):
        signature = f"{i % signatures:012x}"
        if i % 3 == 2 and open_:
            oid, sig = open_.pop()
            queue.put(Resolved(uuid.uuid4().hex, oid, sig, "bench", f"ns-{i % 40}", "fix",
                               f"Service.selector[app]: changed {i % 4}",
                               '["Service.selector[app]: changed"]', now + i))
        elif i % 1000 == 999:
            queue.put(StillSeen("bench", tuple(f"{s:012x}" for s in range(signatures)), now + i))
        else:
            oid = uuid.uuid4().hex
            open_.append((oid, signature))
            queue.put(Appeared(oid, signature, "NS0101", "NS0101::Service(...)", "bench",
                               f"ns-{i % 40}", f"Service/ns-{i % 40}/svc-{i}", now + i, i))
    queue.close(timeout=3600)
    db.close()


def size(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "kb.db")
        started = time.monotonic()
        _fill(path, args.writes)
        db = connect(path)
        print(json.dumps({"writes": args.writes, "bytes": db.size_bytes(),
                          "seconds": round(time.monotonic() - started, 1)}))
        db.close()


def explain(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "kb.db")
        _fill(path, args.occurrences * 3 // 2, signatures=1)  # one signature holds them all
        db = connect(path)
        queries = {"signature": Query("000000000000", None, None, 3),
                   "signature-scoped": Query("000000000000", None, frozenset({"ns-1", "ns-2"}), 3),
                   "code": Query(None, "NS0101", None, 3)}
        out: dict[str, object] = {"occurrences": db.query("SELECT count(*) FROM occurrences")[0][0]}
        for name, query in queries.items():
            times = []
            for _ in range(args.calls):
                started = time.perf_counter()
                lookups.explain(db, query)
                times.append((time.perf_counter() - started) * 1e3)
            times.sort()
            out[name] = {"p50_ms": round(times[len(times) // 2], 2),
                         "p99_ms": round(times[int(len(times) * 0.99) - 1], 2)}
        print(json.dumps(out))
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tiny", action="store_true", help="small sizes: a functional check")
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("events")
    e.add_argument("--pods", type=int, default=5000)
    e.add_argument("--rate", type=int, default=5000)
    e.add_argument("--seconds", type=float, default=30.0)
    e.add_argument("--repeats", type=int, default=3)
    s = sub.add_parser("size")
    s.add_argument("--writes", type=int, default=1_000_000)
    x = sub.add_parser("explain")
    x.add_argument("--occurrences", type=int, default=100_000)
    x.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    if args.tiny:
        args.pods, args.rate, args.seconds, args.repeats = 200, 500, 1.0, 1
        args.writes, args.occurrences, args.calls = 2000, 1000, 50
    {"events": events, "size": size, "explain": explain}[args.command](args)


if __name__ == "__main__":
    main()
