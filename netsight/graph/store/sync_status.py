"""How current the graph is: where its objects come from, and, from a cluster, each watched
kind's sync state as the informers report it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Source(StrEnum):
    MANIFESTS = "manifests"
    CLUSTER = "cluster"
    DEMO = "demo"


class SyncState(StrEnum):
    SYNCING = "syncing"  # listing for the first time
    SYNCED = "synced"  # listed, and the watch is up
    RETRYING = "retrying"  # the list or watch failed; retrying with backoff
    FORBIDDEN = "forbidden"  # RBAC denies list/watch of this kind
    STOPPED = "stopped"  # the kind's CRD went away


@dataclass
class KindStatus:
    """How current the graph is for one watched kind (written by the informers)."""

    kind: str
    state: SyncState = SyncState.SYNCING
    last_error: str | None = None
    down_since: float | None = None  # time.time() when the watch went down
    synced_at: float | None = None
    relists: int = 0
    events: int = 0

    @property
    def settled(self) -> bool:
        """Synced, or never going to be (forbidden, stopped): readiness stops waiting."""
        return self.state in (SyncState.SYNCED, SyncState.FORBIDDEN, SyncState.STOPPED)
