"""How current the graph is: where its objects come from, and, from a cluster, each watched
kind's sync state as the informers report it."""

from __future__ import annotations

from dataclasses import dataclass, field
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


# Worst first: a kind watched namespace by namespace is as current as its least current part.
_WORST = (SyncState.SYNCING, SyncState.FORBIDDEN, SyncState.RETRYING, SyncState.STOPPED)


@dataclass
class NamespacedKindStatus:
    """A namespaced kind watched one namespace at a time (NAMESPACE=a,b): each namespace's
    informer reports in a KindStatus of its own, and the kind reads as its least current
    one. A kind RBAC forbids in one watched namespace is forbidden: what the graph holds of
    it is not all there is in the watched namespaces."""

    kind: str
    parts: dict[str, KindStatus] = field(default_factory=dict)

    @property
    def state(self) -> SyncState:
        states = {part.state for part in self.parts.values()}
        if states == {SyncState.STOPPED}:
            return SyncState.STOPPED
        return next((s for s in _WORST[:-1] if s in states), SyncState.SYNCED)

    @property
    def last_error(self) -> str | None:
        errors = [f"in {ns}: {part.last_error}" for ns, part in sorted(self.parts.items())
                  if part.last_error]
        return "; ".join(errors) or None

    @property
    def down_since(self) -> float | None:
        return min((p.down_since for p in self.parts.values() if p.down_since is not None),
                   default=None)

    @property
    def synced_at(self) -> float | None:
        times = [p.synced_at for p in self.parts.values()]
        return None if not times or None in times else min(t for t in times if t is not None)

    @property
    def relists(self) -> int:
        return sum(p.relists for p in self.parts.values())

    @property
    def events(self) -> int:
        return sum(p.events for p in self.parts.values())

    @property
    def settled(self) -> bool:
        return all(p.settled for p in self.parts.values())


AnyKindStatus = KindStatus | NamespacedKindStatus


def reporting_status(sync: dict[str, AnyKindStatus], kind: str, namespace: str | None
                     ) -> KindStatus:
    """The status an informer of ``kind`` (in ``namespace``, or the whole cluster) reports
    in, made the first time and kept across its restarts."""
    if namespace is None:
        found = sync.get(kind)
        if not isinstance(found, KindStatus):  # (watched per namespace before a restart)
            found = sync[kind] = KindStatus(kind)
        return found
    group = sync.get(kind)
    if not isinstance(group, NamespacedKindStatus):
        group = sync[kind] = NamespacedKindStatus(kind)
    return group.parts.setdefault(namespace, KindStatus(kind))
