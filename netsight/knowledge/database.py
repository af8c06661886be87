"""The knowledge base's storage: SQLite (a file, the default) or PostgreSQL (a URL).

One small interface over both, blocking — every caller runs it off the event loop (the
writer thread, the reader's executor). SQL is written once with ``?`` placeholders and
types both engines read alike (TEXT, BIGINT, DOUBLE PRECISION); PostgreSQL gets ``%s``.
The schema is applied by versioned migrations (:mod:`netsight.knowledge.migrations`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

Row = tuple[Any, ...]


class DatabaseError(Exception):
    """The store could not be opened or migrated; says what to change."""


class Database(Protocol):
    """A connection to one knowledge store; one thread uses one connection at a time."""

    engine: str  # "sqlite" or "postgresql"

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...
    @contextmanager
    def transaction(self) -> Iterator[None]: ...
    def lock_schema(self) -> None: ...
    def size_bytes(self) -> int: ...
    def close(self) -> None: ...


class SqliteDatabase:
    engine = "sqlite"

    def __init__(self, path: str) -> None:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            # isolation_level=None: transactions are begun explicitly (transaction()).
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                       timeout=30)
            # WAL: the reader's connection reads while the writer writes.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise DatabaseError(f"KNOWLEDGE_DB: cannot open SQLite file {path!r}: {exc}") \
                from None
        self._lock = threading.Lock()
        self.path = path

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._db.execute(sql, tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._db.executemany(sql, (tuple(r) for r in rows))

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self._db.execute(sql, tuple(params)).fetchall())

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def lock_schema(self) -> None:
        pass  # BEGIN IMMEDIATE already holds the file's write lock

    def size_bytes(self) -> int:
        pages = self.query("PRAGMA page_count")[0][0]
        size = self.query("PRAGMA page_size")[0][0]
        return int(pages) * int(size)

    def close(self) -> None:
        self._db.close()


class PostgresDatabase:
    engine = "postgresql"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise DatabaseError("KNOWLEDGE_DB: a postgresql:// URL needs psycopg "
                                "(pip install 'netsight[postgres]')") from None
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise DatabaseError(f"KNOWLEDGE_DB: cannot connect to PostgreSQL: "
                                f"{str(exc).strip()[:300]}") from None
        self._lock = threading.Lock()

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("?", "%s")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._db.execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._db.cursor() as cursor:
            cursor.executemany(self._sql(sql), [tuple(r) for r in rows])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._db.cursor() as cursor:
            cursor.execute(self._sql(sql), tuple(params))
            return [tuple(row) for row in cursor.fetchall()]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock, self._db.transaction():
            yield

    def lock_schema(self) -> None:
        # Replicas sharing one database start together: one migrates, the others wait.
        self.execute("SELECT pg_advisory_xact_lock(7165617)")

    def size_bytes(self) -> int:
        return int(self.query("SELECT pg_database_size(current_database())")[0][0])

    def close(self) -> None:
        self._db.close()


def connect(location: str) -> Database:
    """``postgresql://…`` (or ``postgres://…``) opens PostgreSQL; anything else is a SQLite
    file path (``sqlite:///path`` accepted too)."""
    if location.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(location)
    return SqliteDatabase(location.removeprefix("sqlite://") or ":memory:")


def describe(location: str) -> str:
    """``location`` for logs: a PostgreSQL URL without its password."""
    if location.startswith(("postgresql://", "postgres://")):
        scheme, _, rest = location.partition("://")
        credentials, at, host = rest.rpartition("@")
        if at:
            return f"{scheme}://{credentials.partition(':')[0]}@{host}"
    return location
