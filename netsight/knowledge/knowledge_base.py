"""The knowledge base a server runs: its store, its writer, its reader, its observer.

Opened with a location (``KNOWLEDGE_DB``: a SQLite file path, or a ``postgresql://`` URL)
and the cluster's name. Two connections: the writer thread's (write_queue.py) and the
reader's, used by one worker thread, so explain_finding's reads never wait for a batch of
writes (SQLite in WAL mode) and never hold the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from netsight.analyzers.core.knowledge import Explanation, Query
from netsight.graph.store.live import GraphStore
from netsight.knowledge import lookups
from netsight.knowledge.database import Database, connect, describe
from netsight.knowledge.migrations import migrate
from netsight.knowledge.observer import INTERVAL, TIME_LIMIT, Observer
from netsight.knowledge.write_queue import QUEUE_SIZE, Noted, WriteQueue

log = logging.getLogger(__name__)
T = TypeVar("T")


class KnowledgeBase:
    """Implements the analyzers' ``KnowledgeReader`` (explain_finding's reads and notes)."""

    def __init__(self, writer_db: Database, reader_db: Database, cluster: str, *,
                 queue_size: int = QUEUE_SIZE) -> None:
        self.cluster = cluster
        self.writes = WriteQueue(writer_db, queue_size)
        self._reader = reader_db
        self._reading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="netsight-kb-read")
        self.observer: Observer | None = None
        self._observing: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, location: str, cluster: str, *,
                   queue_size: int = QUEUE_SIZE) -> KnowledgeBase:
        """Connect and migrate, off the loop; DatabaseError says what to change."""
        def opened() -> tuple[Database, Database]:
            writer = connect(location)
            try:
                migrate(writer)
                return writer, connect(location)
            except BaseException:
                writer.close()
                raise

        writer, reader = await asyncio.get_running_loop().run_in_executor(None, opened)
        log.info("knowledge base at %s", describe(location))
        return cls(writer, reader, cluster, queue_size=queue_size)

    async def _read(self, read: Callable[[Database], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(
            self._reading, functools.partial(read, self._reader))

    async def explain(self, query: Query) -> Explanation | None:
        return await self._read(functools.partial(_explain, query=query))

    async def add_note(self, signature: str, code: str, pattern: str, text: str,
                       author: str, namespace: str) -> bool:
        return self.writes.put(Noted(uuid.uuid4().hex, signature, self.cluster, namespace,
                                     text, author, time.time()))

    async def observe(self, store: GraphStore, interval: float = INTERVAL,
                      time_limit: float = TIME_LIMIT,
                      ready: Callable[[], bool] = lambda: True) -> Observer:
        """Start watching ``store``'s findings (open occurrences a previous process left are
        read first, to be adopted or closed)."""
        inherited = await self._read(functools.partial(lookups.open_occurrences,
                                                       cluster=self.cluster))
        observer = self.observer = Observer(store, self.writes, interval=interval,
                                            time_limit=time_limit, inherited=inherited,
                                            ready=ready)
        self._observing = asyncio.create_task(observer.run(), name="knowledge:observer")
        return observer

    async def flush(self, timeout: float = 5.0) -> bool:
        return await asyncio.get_running_loop().run_in_executor(None, self.writes.flush,
                                                                timeout)

    async def close(self, timeout: float = 5.0) -> None:
        """Stop observing, apply the queued writes (within ``timeout``), disconnect."""
        if self._observing is not None:
            self._observing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._observing
            self._observing = None
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.writes.close, timeout)
        await loop.run_in_executor(self._reading, self._reader.close)
        self._reading.shutdown(wait=False)
        await loop.run_in_executor(None, self.writes.db.close)


def _explain(db: Database, query: Query) -> Explanation | None:
    return lookups.explain(db, query)


@contextlib.asynccontextmanager
async def knowledge_base(location: str | None, store: GraphStore, *,
                         interval: float = INTERVAL, time_limit: float = TIME_LIMIT,
                         ready: Callable[[], bool] = lambda: True
                         ) -> AsyncIterator[KnowledgeBase | None]:
    """The server's knowledge base over ``store`` while the block runs; None when off.
    ``time_limit``: how long one findings run may hold the loop (the server passes
    TOOL_TIMEOUT, the bound every call is held to)."""
    if location is None:
        yield None
        return
    base = await KnowledgeBase.open(location, store.cluster_name)
    try:
        await base.observe(store, interval, time_limit, ready)
        yield base
    finally:
        await base.close()
