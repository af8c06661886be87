"""The knowledge base's schema, as versioned migrations applied in order.

``schema_migrations`` holds the versions applied. A migration is never edited once
released: a change to the schema is a new version appended here. A store written by a newer
netsight (a version this one does not know) is refused rather than written to.
"""

from __future__ import annotations

import time

from netsight.knowledge.database import Database, DatabaseError

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        # One row per signature, across clusters.
        """CREATE TABLE patterns (
            signature TEXT PRIMARY KEY,
            code TEXT NOT NULL,
            pattern TEXT NOT NULL,
            first_seen DOUBLE PRECISION NOT NULL,
            last_seen DOUBLE PRECISION NOT NULL,
            occurrences BIGINT NOT NULL DEFAULT 0
        )""",
        # One row per appearance of a finding on an object, until it disappears.
        """CREATE TABLE occurrences (
            id TEXT PRIMARY KEY,
            signature TEXT NOT NULL,
            cluster TEXT NOT NULL,
            namespace TEXT NOT NULL,
            object TEXT NOT NULL,
            appeared DOUBLE PRECISION NOT NULL,
            last_seen DOUBLE PRECISION NOT NULL,
            resolved DOUBLE PRECISION,
            generation BIGINT NOT NULL
        )""",
        "CREATE INDEX occurrences_by_signature ON occurrences (signature, appeared)",
        "CREATE INDEX occurrences_by_cluster ON occurrences (signature, cluster, resolved)",
        "CREATE INDEX occurrences_open ON occurrences (cluster, resolved)",
        # How an occurrence ended: a fix (the changes that resolved it) or a coincidence.
        """CREATE TABLE resolutions (
            id TEXT PRIMARY KEY,
            signature TEXT NOT NULL,
            occurrence TEXT NOT NULL,
            cluster TEXT NOT NULL,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            fix TEXT NOT NULL,
            changes TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX resolutions_by_signature ON resolutions (signature, kind, fix)",
        "CREATE INDEX resolutions_by_occurrence ON resolutions (occurrence)",
        "CREATE INDEX patterns_by_code ON patterns (code)",
        # What operators wrote about a signature.
        """CREATE TABLE notes (
            id TEXT PRIMARY KEY,
            signature TEXT NOT NULL,
            cluster TEXT NOT NULL,
            namespace TEXT NOT NULL,
            text TEXT NOT NULL,
            author TEXT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX notes_by_signature ON notes (signature, at)",
    )),
    (2, (
        # explain_finding aggregates every occurrence and fix of a signature: covering
        # indexes let it read the index alone, not the table rows (the changes of a fix
        # stay out: a PostgreSQL index entry is limited to about 2.7 kB).
        "CREATE INDEX occurrences_summary ON occurrences"
        " (signature, namespace, cluster, resolved, appeared, last_seen)",
        "CREATE INDEX resolutions_fixes ON resolutions"
        " (signature, kind, namespace, fix, at, cluster)",
    )),
    (3, (
        # Totals kept by the writer as it writes, per signature, cluster and namespace (the
        # unit a restricted caller's view is cut by): explain_finding sums a few rows instead
        # of counting every occurrence and fix of the signature.
        """CREATE TABLE occurrence_totals (
            signature TEXT NOT NULL,
            cluster TEXT NOT NULL,
            namespace TEXT NOT NULL,
            occurrences BIGINT NOT NULL,
            open_count BIGINT NOT NULL,
            first_seen DOUBLE PRECISION NOT NULL,
            last_seen DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (signature, cluster, namespace)
        )""",
        """INSERT INTO occurrence_totals (signature, cluster, namespace, occurrences,
            open_count, first_seen, last_seen)
            SELECT signature, cluster, namespace, count(*),
                   sum(CASE WHEN resolved IS NULL THEN 1 ELSE 0 END), min(appeared),
                   max(last_seen)
            FROM occurrences GROUP BY signature, cluster, namespace""",
        """CREATE TABLE resolution_totals (
            signature TEXT NOT NULL,
            cluster TEXT NOT NULL,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            fix TEXT NOT NULL,
            count BIGINT NOT NULL,
            last_at DOUBLE PRECISION NOT NULL,
            changes TEXT NOT NULL,
            PRIMARY KEY (signature, cluster, namespace, kind, fix)
        )""",
        """INSERT INTO resolution_totals (signature, cluster, namespace, kind, fix, count,
            last_at, changes)
            SELECT signature, cluster, namespace, kind, fix, count(*), max(at), min(changes)
            FROM resolutions GROUP BY signature, cluster, namespace, kind, fix""",
        # Version 2's covering indexes served the counting the totals replace: ~70 MB of a
        # store after 1M writes, and a cost on every write.
        "DROP INDEX occurrences_summary",
        "DROP INDEX resolutions_fixes",
    )),
)

LATEST = MIGRATIONS[-1][0]


def migrate(db: Database) -> int:
    """Bring ``db`` to the latest schema; returns the version it is at."""
    with db.transaction():
        db.lock_schema()
        db.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                   "version BIGINT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
        applied = {int(row[0]) for row in db.query("SELECT version FROM schema_migrations")}
        if applied and max(applied) > LATEST:
            raise DatabaseError(
                f"the knowledge store is at schema version {max(applied)}, newer than this "
                f"netsight knows ({LATEST}): upgrade netsight or point KNOWLEDGE_DB elsewhere")
        for version, statements in MIGRATIONS:
            if version in applied:
                continue
            for statement in statements:
                db.execute(statement)
            db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                       (version, time.time()))
    return LATEST
