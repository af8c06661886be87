"""The store, the same on SQLite and PostgreSQL: migrations, the writer's queue, reads."""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import pytest

from netsight.analyzers.core.knowledge import Query
from netsight.knowledge import lookups
from netsight.knowledge.database import Database, DatabaseError, connect
from netsight.knowledge.migrations import LATEST, MIGRATIONS, migrate
from netsight.knowledge.write_queue import Appeared, Noted, Resolved, StillSeen, WriteQueue


def test_migrations_apply_once_and_refuse_a_newer_store(location: str) -> None:
    db = connect(location)
    try:
        assert migrate(db) == LATEST
        assert migrate(db) == LATEST  # a second start changes nothing
        assert sorted(r[0] for r in db.query("SELECT version FROM schema_migrations")) \
            == [version for version, _ in MIGRATIONS]
        with db.transaction():
            db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                       (LATEST + 1, time.time()))
        with pytest.raises(DatabaseError, match="newer than this netsight knows"):
            migrate(db)
    finally:
        db.close()


def test_a_store_at_an_older_version_is_brought_up_to_date(location: str) -> None:
    """A store written at version 1 keeps its rows and gains the indexes and the totals,
    counted from the rows it holds."""
    db = connect(location)
    try:
        with db.transaction():
            db.execute("CREATE TABLE schema_migrations ("
                       "version BIGINT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
            for statement in MIGRATIONS[0][1]:
                db.execute(statement)
            db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)")
            # The rows as version 1 wrote them: two occurrences, one fixed.
            db.execute("INSERT INTO patterns VALUES ('a1b2c3d4e5f6', 'NS0101', 'p', 100, 300, 2)")
            for oid, appeared_at, resolved in (("o1", 100.0, 200.0), ("o2", 150.0, None)):
                db.execute("INSERT INTO occurrences VALUES (?, 'a1b2c3d4e5f6', 'one', 'shop',"
                           " ?, ?, ?, ?, 1)", (oid, f"Service/shop/{oid}", appeared_at,
                                               resolved or 300.0, resolved))
            db.execute("INSERT INTO resolutions VALUES ('r1', 'a1b2c3d4e5f6', 'o1', 'one',"
                       " 'shop', 'fix', 'selector fixed', '[\"selector fixed\"]', 200)")
        assert migrate(db) == LATEST
        explanation = lookups.explain(db, Query("a1b2c3d4e5f6", None, None, 3))
        assert explanation is not None
        assert (explanation.occurrences, explanation.open, explanation.resolutions) == (2, 1, 1)
        assert (explanation.first_seen, explanation.last_seen) == (100.0, 300.0)
        assert [(f.fix, f.count) for f in explanation.fixes] == [("selector fixed", 1)]
        # Written after the migration, the totals move on from the counted ones.
        queue = WriteQueue(db)
        queue.put(fixed("o2", "selector fixed", at=400.0))
        queue.close()
        explanation = lookups.explain(db, Query("a1b2c3d4e5f6", None, None, 3))
        assert explanation is not None
        assert (explanation.open, explanation.resolutions, explanation.last_seen) == (0, 2, 400.0)
        assert sorted(r[0] for r in db.query("SELECT version FROM schema_migrations")) \
            == [version for version, _ in MIGRATIONS]
    finally:
        db.close()


def appeared(occurrence: str, signature: str = "a1b2c3d4e5f6", namespace: str = "shop",
             cluster: str = "one", at: float = 100.0) -> Appeared:
    return Appeared(occurrence, signature, "NS0101", "NS0101::Service(...)", cluster,
                    namespace, f"Service/{namespace}/{occurrence}", at, 1)


def fixed(occurrence: str, fix: str, signature: str = "a1b2c3d4e5f6", namespace: str = "shop",
          cluster: str = "one", kind: str = "fix", at: float = 200.0) -> Resolved:
    return Resolved(f"r-{occurrence}", occurrence, signature, cluster, namespace, kind, fix,
                    f'["{fix}"]', at)


def test_occurrences_fixes_and_notes_are_read_back_per_caller(location: str) -> None:
    db = connect(location)
    migrate(db)
    queue = WriteQueue(db)
    for write in (appeared("o1"), appeared("o2", cluster="two"), appeared("o3"),
                  appeared("o4", namespace="data"),
                  StillSeen("one", ("a1b2c3d4e5f6",), 150.0),
                  fixed("o1", "Service.selector[version]: changed"),
                  fixed("o2", "Service.selector[version]: changed", cluster="two"),
                  fixed("o4", "deleted Service", namespace="data", kind="coincidence"),
                  Noted("n1", "a1b2c3d4e5f6", "one", "shop", "check the rollout", "ops", 300.0),
                  Noted("n2", "a1b2c3d4e5f6", "one", "data", "secret plans", "ops", 301.0)):
        assert queue.put(write)
    assert queue.flush()
    reader = connect(location)
    try:
        everything = lookups.explain(reader, Query("a1b2c3d4e5f6", None, None, 10))
        assert everything is not None
        assert (everything.occurrences, everything.open, everything.clusters) == (4, 1, 2)
        assert (everything.resolutions, everything.coincidences) == (2, 1)
        assert [(f.fix, f.count, f.clusters) for f in everything.fixes] == \
            [("Service.selector[version]: changed", 2, 2)]
        assert [n.text for n in everything.notes] == ["secret plans", "check the rollout"]
        assert everything.first_seen == 100.0
        # A caller who may see only shop: nothing of data, not even in the counts.
        shop = lookups.explain(reader, Query("a1b2c3d4e5f6", None, frozenset({"shop"}), 10))
        assert shop is not None
        assert (shop.occurrences, shop.coincidences) == (3, 0)
        assert {o.object.split("/")[1] for o in shop.recent} == {"shop"}
        assert [n.text for n in shop.notes] == ["check the rollout"]
        by_code = lookups.explain(reader, Query(None, "NS0101", None, 2))
        assert by_code is not None
        assert by_code.occurrences == 4
        assert len(by_code.recent) == 2
        assert lookups.explain(reader, Query("ffffffffffff", None, None, 10)) is None
        assert lookups.open_occurrences(reader, "one") == {
            ("a1b2c3d4e5f6", "Service/shop/o3"): "o3"}
    finally:
        queue.close()
        reader.close()
        db.close()


class SlowDatabase:
    """A database whose writes wait for a gate: the queue fills behind them."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.gate = threading.Event()
        self.engine = "slow"

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def execute(self, sql: str, params: object = ()) -> None:
        self.gate.wait(10)
        self.inner.execute(sql, params)  # type: ignore[attr-defined]


def test_a_full_queue_drops_and_counts_without_waiting(location: str) -> None:
    db = connect(location)
    migrate(db)
    slow = SlowDatabase(db)
    queue = WriteQueue(slow, size=5)  # type: ignore[arg-type]
    started = time.monotonic()
    accepted = sum(queue.put(appeared(f"o{i}")) for i in range(50))
    assert time.monotonic() - started < 0.5  # never stalls the caller
    assert queue.dropped == 50 - accepted
    assert queue.dropped >= 40
    slow.gate.set()
    queue.close(timeout=10)  # what was queued is flushed at shutdown
    stored = db.query("SELECT count(*) FROM occurrences")[0][0]
    assert stored == accepted
    db.close()


def test_by_code_the_newest_occurrences_of_all_its_signatures_are_listed(location: str) -> None:
    db = connect(location)
    migrate(db)
    try:
        with db.transaction():
            for write in (appeared("a1", "aaaaaaaaaaaa", at=100.0),
                          appeared("a2", "aaaaaaaaaaaa", at=110.0),
                          appeared("a3", "aaaaaaaaaaaa", at=120.0),
                          appeared("b1", "bbbbbbbbbbbb", at=115.0),
                          appeared("b2", "bbbbbbbbbbbb", at=130.0),
                          appeared("b3", "bbbbbbbbbbbb", namespace="data", at=140.0)):
                write.apply(db)
        every = lookups.explain(db, Query(None, "NS0101", None, 3))
        assert every is not None
        assert [o.appeared for o in every.recent] == [140.0, 130.0, 120.0]
        shop = lookups.explain(db, Query(None, "NS0101", frozenset({"shop"}), 3))
        assert shop is not None
        assert [o.appeared for o in shop.recent] == [130.0, 120.0, 115.0]
        assert (every.occurrences, shop.occurrences) == (6, 5)
    finally:
        db.close()


def test_the_totals_the_writer_keeps_equal_a_count_of_the_rows(location: str) -> None:
    """explain_finding reads the writer's totals; after any sequence of writes — repeated
    resolutions and resolutions of occurrences whose appearance was dropped included —
    they equal a recount of the rows, for every caller's view."""
    rng = random.Random(7)
    db = connect(location)
    migrate(db)
    queue = WriteQueue(db)
    opened: list[tuple[str, str, str, str]] = []
    at = 0.0
    for i in range(400):
        at += rng.choice((0.5, 1.0, -0.25))  # clocks of two replicas: not always monotonic
        roll = rng.random()
        if roll < 0.5 or not opened:
            signature = rng.choice(("a1b2c3d4e5f6", "0f0f0f0f0f0f"))
            entry = (f"o{i}", signature, rng.choice(("one", "two")),
                     rng.choice(("shop", "data", "")))
            opened.append(entry)
            queue.put(appeared(entry[0], signature, entry[3], entry[2], at))
        elif roll < 0.6:
            queue.put(StillSeen(rng.choice(("one", "two")), ("a1b2c3d4e5f6",), at))
        else:
            oid, signature, cluster, namespace = rng.choice(opened)
            if rng.random() < 0.1:
                oid = f"dropped-{i}"  # its Appeared never reached the store
            queue.put(Resolved(f"r{i}", oid, signature, cluster, namespace,
                               rng.choice(("fix", "fix", "coincidence")),
                               rng.choice(("selector fixed", "port fixed")),
                               f'["change {i % 3}"]', at))
    queue.close()
    try:
        for signature in ("a1b2c3d4e5f6", "0f0f0f0f0f0f"):
            for spaces in (None, frozenset({"shop"}), frozenset({"data", "nowhere"})):
                got = lookups.explain(db, Query(signature, None, spaces, 3))
                assert got is not None
                assert (got.occurrences, got.open, got.clusters, got.first_seen, got.last_seen,
                        got.resolutions, got.coincidences,
                        [(f.fix, f.count, f.last, f.clusters, f.changes) for f in got.fixes]) \
                    == recount(db, signature, spaces)
    finally:
        db.close()


def recount(db: Database, signature: str,
            spaces: frozenset[str] | None) -> tuple[object, ...]:
    """What version 2 computed: every occurrence and resolution row of the signature."""
    def visible(namespace: str) -> bool:
        return spaces is None or namespace in spaces | {""}
    rows = [r for r in db.query("SELECT namespace, cluster, appeared, last_seen, resolved"
                                " FROM occurrences WHERE signature = ?", (signature,))
            if visible(r[0])]
    ends = [r for r in db.query("SELECT namespace, cluster, kind, fix, at, changes"
                                " FROM resolutions WHERE signature = ?", (signature,))
            if visible(r[0])]
    fixes: dict[str, list[tuple[Any, ...]]] = {}
    for end in ends:
        if end[2] == "fix":
            fixes.setdefault(end[3], []).append(end)
    ranked = sorted(fixes.items(), key=lambda item: (-len(item[1]), -max(e[4] for e in item[1])))
    return (len(rows), sum(r[4] is None for r in rows), len({r[1] for r in rows}),
            min((r[2] for r in rows), default=None), max((r[3] for r in rows), default=None),
            sum(e[2] == "fix" for e in ends), sum(e[2] == "coincidence" for e in ends),
            [(fix, len(es), max(e[4] for e in es), len({e[1] for e in es}),
              tuple(json.loads(min(e[5] for e in es)))) for fix, es in ranked])
