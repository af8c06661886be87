"""How an informer lists, watches, backs off and tunes the collector: one settings object
shared by every informer of a watcher (informers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from netsight.graph.ingest.discovery import METADATA_ONLY_KINDS
from netsight.graph.ingest.list_worker import usable_cpus


@dataclass
class InformerSettings:
    # The initial list's ``limit``. 1000 rather than client-go's 500: fewer pages (each an
    # HTTP round trip and a decoder call) cost less sync CPU for a little more RSS; larger
    # pages save no more CPU and hold much more memory.
    page_size: int = 1000
    watch_timeout: tuple[int, int] = (240, 360)  # timeoutSeconds, drawn per watch
    # No byte for this long on a watch that has sent no line yet: the stream is dead. Until
    # then a quiet kind may rightly say nothing: kube-apiserver's watch cache sends a watch
    # no bookmark before its storage has moved past the watch's start, which on a kind
    # nobody writes waits for etcd's progress notifications (every 10 minutes by default).
    # Longer than watch_timeout: such a watch ends at the server's timeout first.
    inactivity_timeout: float = 420.0
    # How often the API server sends a bookmark on a watch once it has sent it a line:
    # kube-apiserver's watch cache does every minute (its bookmarkFrequency). Silence for
    # stall_timeout after a line is a stall: the kind is reported stale and its watch
    # restarted.
    bookmark_interval: float = 60.0
    forbidden_retry: float = 60.0
    # NAMESPACE mode without list on Namespaces: each watched one is read (get) this often.
    namespace_poll: float = 30.0
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    # After the initial sync: collect the youngest generation and freeze its survivors this
    # often (seconds), and run one full collection this often (runtime/collector.py); 0
    # leaves the collector alone. A short interval keeps each pause short under churn,
    # for the same total CPU as the automatic collections it replaces.
    refreeze_interval: float = 0.01
    # ... while collections have work; one that finds next to nothing doubles the wait, up
    # to this, so an idle server seldom wakes.
    refreeze_idle_interval: float = 0.25
    full_collection_interval: float = 3600.0
    # Meanwhile, automatic young collections only after this many net allocations (the
    # default is 700): a safety net for code that holds the loop, never reached under churn.
    young_threshold: int = 10_000
    # And the heap's free pages given back to the OS this often, or within a second of RSS
    # rising (runtime/collector.py): rebuilt hash tables leave holes in glibc's heap that
    # RSS would keep (0: only after the sync).
    release_interval: float = 60.0
    # Kinds watched for their existence only (METADATA_ONLY_KINDS); empty: not watched.
    metadata_only: frozenset[tuple[str, str]] = field(
        default_factory=lambda: METADATA_ONLY_KINDS)
    # Watch events.k8s.io Events into the store's event ring (event_watching.py).
    events: bool = True
    # Watch the cluster DNS ConfigMaps whole, each by name (DNS_CONFIG).
    dns_config: bool = False
    # Watch what provider health and the CNI detection read (discovery.PROVIDER_KINDS).
    provider_status: bool = False
    # The initial sync's Pod pages are read and built into records by a worker process
    # (list_worker.py) while this one applies them; None: when this process may use two
    # whole CPUs or more (its affinity, its cgroup's CPU quota). Re-lists after the sync
    # are built in this process.
    list_worker: bool | None = None
    # A list starts the worker when its first page says this many objects are left (or
    # that more pages follow, without a count): a process start costs the other CPU and
    # memory for its lifetime; until it is ready, pages are built here.
    list_worker_min_objects: int = 10_000

    @property
    def stall_timeout(self) -> float:
        """1.5 bookmark intervals: a bookmark missed by half an interval, far beyond the
        second or two the server's dispatch and the network may delay one."""
        return min(self.inactivity_timeout, 1.5 * self.bookmark_interval)

    @property
    def use_list_worker(self) -> bool:
        return usable_cpus() >= 2 if self.list_worker is None else self.list_worker
