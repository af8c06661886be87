"""Read a cluster once: discover what it serves, list only the wanted kinds through the
informers' list path (raw bodies, typed decoding, pagination), and watch nothing.

``netsight call`` on a cluster answers one question and exits: it needs the kinds its tool
reads, listed once, not a live graph of everything. Given namespaces (NAMESPACE=a,b), a
namespaced kind is listed in each of them only, as the watcher does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field

from netsight.graph.ingest.api_responses import Transport
from netsight.graph.ingest.discovery import NEVER_WATCHED, WatchedKind, discover, providers_of
from netsight.graph.ingest.event_watching import list_events_once
from netsight.graph.ingest.informers import Informer, InformerSettings
from netsight.graph.store.live import GraphStore

# Lists under way at once: a few round trips overlap without crowding the API server.
CONCURRENT_LISTS = 4


@dataclass
class SnapshotProgress:
    """How far a snapshot is, for a caller that shows it."""

    kinds: int = 0  # kinds to list
    listed: list[str] = field(default_factory=list)  # kinds done, in the order they finished


@dataclass(frozen=True, slots=True)
class Snapshot:
    providers: frozenset[str]  # providers whose CRDs the cluster serves
    kinds: tuple[str, ...]  # kinds listed (as graph keys spell them)


async def take_snapshot(transport: Transport, store: GraphStore, wanted: Collection[str], *,
                        settings: InformerSettings | None = None,
                        progress: SnapshotProgress | None = None,
                        namespaces: tuple[str, ...] | None = None,
                        events: bool = False) -> Snapshot:
    """List into ``store``, once, the served kinds whose ids are in ``wanted`` (namespaced
    ones only in ``namespaces``, if given), and with ``events`` the Events."""
    settings = settings or InformerSettings(list_worker=False)
    progress = progress or SnapshotProgress()
    store.state.never_arrive(NEVER_WATCHED)
    store.namespaces = namespaces
    served = await discover(transport, settings.metadata_only)
    kinds = [kind for kind in served if kind.kind_id in wanted]
    progress.kinds = len(kinds)
    slots = asyncio.Semaphore(CONCURRENT_LISTS)

    async def list_kind(kind: WatchedKind) -> None:
        scopes = namespaces if namespaces is not None and kind.namespaced else (None,)
        for namespace in scopes:
            async with slots:
                await Informer(transport, store, kind, settings,
                               namespace=namespace).list_once()
        progress.listed.append(kind.kind_id)

    try:
        async with asyncio.TaskGroup() as group:
            for kind in kinds:
                group.create_task(list_kind(kind), name=f"list:{kind.kind_id}")
            if events:  # the recent Warnings an answer shows
                for namespace in namespaces or (None,):
                    group.create_task(list_events_once(transport, store.events, settings,
                                                       namespace), name="list:events")
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None  # the first list that failed; the rest stopped
    return Snapshot(frozenset(providers_of(served)), tuple(k.kind_id for k in kinds))
