"""Writes to the knowledge store: queued by whoever observes, applied by one writer thread.

Nothing that answers a tool call or applies a watch event ever waits on the database: it
puts a write on a bounded queue and goes on. One thread drains the queue, applying what it
finds in one transaction. A full queue drops the write and counts it (``dropped``; the
server exports it as ``netsight.knowledge.writes.dropped``); it never stalls the caller.
``close`` flushes what is queued, within a timeout, at shutdown.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from netsight.knowledge.database import Database

log = logging.getLogger(__name__)

QUEUE_SIZE = 10_000  # writes waiting at most; past that new ones are dropped
BATCH = 500  # writes applied in one transaction at most


def _greatest(a: str, b: str) -> str:
    """The larger of two SQL values, in the SQL both engines read (SQLite has no GREATEST,
    PostgreSQL's max() is an aggregate only). A ``?`` operand takes two parameters."""
    return f"CASE WHEN {a} >= {b} THEN {a} ELSE {b} END"


def _least(a: str, b: str) -> str:
    return f"CASE WHEN {a} <= {b} THEN {a} ELSE {b} END"


class Write:
    """One change to the store."""

    def apply(self, db: Database) -> None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Appeared(Write):
    """A finding appeared on an object: a new occurrence of its signature."""

    occurrence: str
    signature: str
    code: str
    pattern: str
    cluster: str
    namespace: str
    object: str
    at: float
    generation: int

    def apply(self, db: Database) -> None:
        db.execute(
            "INSERT INTO patterns (signature, code, pattern, first_seen, last_seen, occurrences)"
            " VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (signature) DO UPDATE SET"
            " last_seen = excluded.last_seen, occurrences = patterns.occurrences + 1",
            (self.signature, self.code, self.pattern, self.at, self.at))
        db.execute(
            "INSERT INTO occurrences (id, signature, cluster, namespace, object, appeared,"
            " last_seen, resolved, generation) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
            (self.occurrence, self.signature, self.cluster, self.namespace, self.object,
             self.at, self.at, self.generation))
        db.execute(
            "INSERT INTO occurrence_totals (signature, cluster, namespace, occurrences,"
            " open_count, first_seen, last_seen) VALUES (?, ?, ?, 1, 1, ?, ?)"
            " ON CONFLICT (signature, cluster, namespace) DO UPDATE SET"
            " occurrences = occurrence_totals.occurrences + 1,"
            " open_count = occurrence_totals.open_count + 1,"
            f" first_seen = {_least('occurrence_totals.first_seen', 'excluded.first_seen')},"
            f" last_seen = {_greatest('occurrence_totals.last_seen', 'excluded.last_seen')}",
            (self.signature, self.cluster, self.namespace, self.at, self.at))


@dataclass(frozen=True, slots=True)
class StillSeen(Write):
    """Every open occurrence of ``cluster`` held at ``at``."""

    cluster: str
    signatures: tuple[str, ...]
    at: float

    def apply(self, db: Database) -> None:
        db.execute("UPDATE occurrences SET last_seen = ? WHERE cluster = ? AND resolved IS NULL",
                   (self.at, self.cluster))
        db.execute(f"UPDATE occurrence_totals SET last_seen = {_greatest('last_seen', '?')}"
                   " WHERE cluster = ? AND open_count > 0", (self.at, self.at, self.cluster))
        db.executemany("UPDATE patterns SET last_seen = ? WHERE signature = ?",
                       [(self.at, s) for s in self.signatures])


@dataclass(frozen=True, slots=True)
class Resolved(Write):
    """An occurrence ended: ``kind`` says how (fix, coincidence, unobserved)."""

    resolution: str
    occurrence: str
    signature: str
    cluster: str
    namespace: str
    kind: str
    fix: str  # the normalised description learned fixes are counted by
    changes: str  # JSON: the abstracted changes
    at: float

    def apply(self, db: Database) -> None:
        # Only an occurrence still open leaves the open count (its Appeared may have been
        # dropped by a full queue, or it may be resolved twice).
        db.execute(
            "UPDATE occurrence_totals SET open_count = open_count - (SELECT count(*) FROM"
            " occurrences WHERE id = ? AND resolved IS NULL),"
            f" last_seen = {_greatest('last_seen', '?')}"
            " WHERE signature = ? AND cluster = ? AND namespace = ?",
            (self.occurrence, self.at, self.at, self.signature, self.cluster, self.namespace))
        db.execute("UPDATE occurrences SET resolved = ?, last_seen = ? WHERE id = ?",
                   (self.at, self.at, self.occurrence))
        db.execute(
            "INSERT INTO resolutions (id, signature, occurrence, cluster, namespace, kind, fix,"
            " changes, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.resolution, self.signature, self.occurrence, self.cluster, self.namespace,
             self.kind, self.fix, self.changes, self.at))
        db.execute(
            "INSERT INTO resolution_totals (signature, cluster, namespace, kind, fix, count,"
            " last_at, changes) VALUES (?, ?, ?, ?, ?, 1, ?, ?)"
            " ON CONFLICT (signature, cluster, namespace, kind, fix) DO UPDATE SET"
            " count = resolution_totals.count + 1,"
            f" last_at = {_greatest('resolution_totals.last_at', 'excluded.last_at')},"
            f" changes = {_least('resolution_totals.changes', 'excluded.changes')}",
            (self.signature, self.cluster, self.namespace, self.kind, self.fix, self.at,
             self.changes))


@dataclass(frozen=True, slots=True)
class Noted(Write):
    """An operator's note on how a signature is fixed."""

    note: str
    signature: str
    cluster: str
    namespace: str
    text: str
    author: str
    at: float

    def apply(self, db: Database) -> None:
        db.execute("INSERT INTO notes (id, signature, cluster, namespace, text, author, at)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (self.note, self.signature, self.cluster, self.namespace, self.text,
                    self.author, self.at))


_STOP = object()


class WriteQueue:
    """The bounded queue and its one writer thread."""

    def __init__(self, db: Database, size: int = QUEUE_SIZE) -> None:
        self.db = db
        self._queue: queue.Queue[Write | object | threading.Event] = queue.Queue(size)
        self.dropped = 0  # writes refused because the queue was full
        self.failed = 0  # writes the database refused (logged)
        self.written = 0
        self._thread = threading.Thread(target=self._run, name="netsight-knowledge-writer",
                                        daemon=True)
        self._thread.start()

    @property
    def depth(self) -> int:
        return self._queue.qsize()

    def put(self, write: Write) -> bool:
        """Queue ``write``; False (and counted) when the queue is full."""
        try:
            self._queue.put_nowait(write)
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait (blocking: call it off the loop) until every write queued so far is
        applied; False when ``timeout`` passed first."""
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Apply what is queued (within ``timeout``), then stop the writer."""
        deadline = time.monotonic() + timeout
        self.flush(timeout)
        try:
            self._queue.put(_STOP, timeout=max(0.0, deadline - time.monotonic()))
        except queue.Full:
            log.warning("knowledge base: %d writes not flushed at shutdown", self.depth)
            return
        self._thread.join(max(0.0, deadline - time.monotonic()))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            batch: list[Write] = []
            waiters: list[threading.Event] = []
            stop = self._take(item, batch, waiters)
            while not stop and len(batch) < BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                stop = self._take(item, batch, waiters)
            if batch:
                self._apply(batch)
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    @staticmethod
    def _take(item: object, batch: list[Write], waiters: list[threading.Event]) -> bool:
        if item is _STOP:
            return True
        if isinstance(item, threading.Event):
            waiters.append(item)
        elif isinstance(item, Write):
            batch.append(item)
        return False

    def _apply(self, batch: list[Write]) -> None:
        try:
            with self.db.transaction():
                for write in batch:
                    write.apply(self.db)
            self.written += len(batch)
        except Exception:
            # One bad write must not lose the batch: apply them one by one.
            for write in batch:
                self._apply_one(write.apply)

    def _apply_one(self, apply: Callable[[Database], None]) -> None:
        try:
            with self.db.transaction():
                apply(self.db)
            self.written += 1
        except Exception:
            self.failed += 1
            log.exception("knowledge base: a write failed")
