"""Keep the graph current from a cluster: one informer per watched kind, started and
stopped as CRDs come and go, the list worker of the initial sync, and the collector's keeper
once the graph is loaded.

Watching chosen namespaces (NAMESPACE=a,b), a namespaced kind gets one informer per
namespace, listing and watching ``/namespaces/{ns}/{plural}`` only (what a Role grants); a
cluster-scoped kind one informer as ever, where RBAC lets it read (a 403 then marks it not
visible, for good). Namespaces that may not be listed are read one by one where a Role lets
netsight get its own namespaces: their labels decide namespaceSelectors.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from netsight.graph.ingest import api_responses
from netsight.graph.ingest.api_responses import Transport
from netsight.graph.ingest.backoff import Backoff
from netsight.graph.ingest.discovery import (
    CRD_KIND,
    NEVER_WATCHED,
    PROVIDER_GROUPS,
    WatchedKind,
    discover,
    providers_of,
)
from netsight.graph.ingest.event_watching import FIELD_SELECTORS, watch_events
from netsight.graph.ingest.informers import Informer, InformerSettings
from netsight.graph.ingest.list_worker import PageWorker
from netsight.graph.ingest.watch_stream import not_older_than, stream_lines, watch_params
from netsight.graph.model.kinds import make_key
from netsight.graph.runtime.allocator import release_free_memory
from netsight.graph.runtime.collector import keep_collections_young
from netsight.graph.store.live import EventType, GraphStore
from netsight.graph.store.sync_status import KindStatus, NamespacedKindStatus, SyncState

log = logging.getLogger(__name__)


@dataclass
class ClusterWatcher:
    """Runs the informers for every watched kind and follows CRDs as they come and go."""

    transport: Transport
    store: GraphStore
    settings: InformerSettings = field(default_factory=InformerSettings)
    on_providers_changed: Callable[[set[str]], None] | None = None
    # The namespaces to watch; None: the whole cluster.
    namespaces: tuple[str, ...] | None = None
    # (kind, namespace or None for the whole cluster) -> its informer and task.
    informers: dict[tuple[WatchedKind, str | None], tuple[Informer, asyncio.Task[None]]] = \
        field(default_factory=dict)
    providers: set[str] = field(default_factory=set)
    _crd_task: asyncio.Task[None] | None = None
    _namespace_task: asyncio.Task[None] | None = None
    _namespace_status: NamespacedKindStatus | None = None
    _gc_task: asyncio.Task[None] | None = None
    # Whether the initial sync started a list worker, and the pages whose records it built.
    list_worker_started: bool = False
    offloaded_pages: int = 0
    _worker: PageWorker | None = None
    _worker_task: asyncio.Task[None] | None = None
    # The Events watches (event_watching.py): one per field selector and namespace.
    _event_tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def start(self) -> None:
        """Discover, start every informer, and follow CRDs. Returns once started."""
        # Pods name their ReplicaSet (and others their Deployment, Node...) as owner; those
        # kinds are not watched, so such references are never waited on.
        self.store.state.never_arrive(NEVER_WATCHED)
        kinds = await discover(self.transport, self.settings.metadata_only,
                               self.settings.dns_config, self.settings.provider_status)
        if self.settings.use_list_worker and any(PageWorker.handles(k.kind_id) for k in kinds):
            self._worker = PageWorker()  # started by the first large list
        self.store.namespaces = self.namespaces
        for kind in kinds:
            self._start(kind)
        if self._worker is not None:
            self._worker_task = asyncio.create_task(self._retire_worker(),
                                                    name="informer:list-worker")
        self._publish_providers()
        self._crd_task = asyncio.create_task(self._follow_crds(), name="informer:crds")
        if self.settings.events:
            self._event_tasks = [
                asyncio.create_task(watch_events(self.transport, self.store.events,
                                                 self.settings, namespace, selector),
                                    name=f"informer:events:{namespace or ''}:{selector}")
                for namespace in self.namespaces or (None,) for selector in FIELD_SELECTORS]

    async def _retire_worker(self) -> None:
        """Stop the list worker once the informers of the kinds it builds have synced
        (those of other kinds never send it a page: a kind still retrying must not keep it).

        Re-lists after the sync (a 410, a reconnect) are of one kind at a time and rare;
        a worker kept for them would hold its memory for good, and one
        started for each would cost a process start and its imports.
        """
        worker = self._worker
        assert worker is not None
        try:
            await asyncio.gather(*(i.synced.wait() for i, _ in self.informers.values()
                                   if worker.handles(i.kind.kind_id)))
        finally:
            for informer, _ in self.informers.values():
                informer.worker = None
            self._worker = None
            self.list_worker_started |= worker.started
            self.offloaded_pages += worker.pages
            await worker.close()

    async def list_worker_done(self) -> None:
        """Wait until the list worker, if one was started, has stopped."""
        if self._worker_task is not None:
            await self._worker_task

    async def wait_synced(self, timeout: float | None = None) -> bool:
        """Wait for the initial sync of every kind, with the garbage collector held off.

        A bulk load allocates millions of long-lived containers; the
        cyclic GC would rescan them again and again. After the load, ``gc.freeze()``
        moves them out of its reach for good.
        """
        enabled = gc.isenabled()
        gc.disable()
        try:
            await asyncio.wait_for(
                asyncio.gather(*(i.synced.wait() for i, _ in self.informers.values())),
                timeout)
            return True
        except TimeoutError:
            return False
        finally:
            gc.freeze()
            if enabled:
                gc.enable()
            release_free_memory()
            if self._gc_task is None and self.settings.refreeze_interval > 0:
                self._gc_task = asyncio.create_task(keep_collections_young(
                    self.settings.refreeze_interval, self.settings.full_collection_interval,
                    self.settings.young_threshold, self.settings.release_interval,
                    idle_interval=self.settings.refreeze_idle_interval),
                    name="informer:gc")

    @property
    def ready(self) -> bool:
        # The Namespaces read one by one (NAMESPACE mode) report apart from any informer.
        return all(i.status.settled for i, _ in self.informers.values()) and (
            self._namespace_status is None or self._namespace_status.settled)

    async def stop(self, timeout: float = 5.0) -> None:
        tasks = [task for _, task in self.informers.values()]
        for informer, _ in self.informers.values():
            informer.stopping = True
        if self._crd_task is not None:
            tasks.append(self._crd_task)
        if self._gc_task is not None:
            tasks.append(self._gc_task)
        if self._worker_task is not None:
            tasks.append(self._worker_task)
        if self._namespace_task is not None:
            tasks.append(self._namespace_task)
        tasks.extend(self._event_tasks)
        self._event_tasks = []
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                log.error("informer task %s did not stop in %ss", task.get_name(), timeout)
        self.informers.clear()
        self._crd_task = self._gc_task = self._worker_task = self._namespace_task = None

    def _scopes(self, kind: WatchedKind) -> tuple[str | None, ...]:
        """Where ``kind`` is watched: the whole cluster, or each chosen namespace (one
        object watched by name, a cluster DNS ConfigMap, is read where it lives; a
        provider's workloads in its namespaces, those among the chosen ones)."""
        if kind.namespaces is not None:  # a provider's namespaces, where they are watched
            return tuple(ns for ns in kind.namespaces
                         if self.namespaces is None or ns in self.namespaces)
        if self.namespaces is None or not kind.namespaced or kind.only is not None:
            return (None,)
        return self.namespaces

    def _start(self, kind: WatchedKind) -> None:
        for namespace in self._scopes(kind):
            key = (kind, namespace)
            if key in self.informers:
                continue
            informer = Informer(self.transport, self.store, kind, self.settings,
                                worker=self._worker, namespace=namespace,
                                retry_forbidden=self.namespaces is None)
            informer.on_storage_reset = self._storage_went_back
            informer.on_forbidden = self._forbidden
            informer.status.state, informer.status.down_since = SyncState.SYNCING, None
            task = asyncio.create_task(informer.run(), name=f"informer:{informer.name}")
            task.add_done_callback(functools.partial(self._finished, key))
            self.informers[key] = (informer, task)

    def _forbidden(self, informer: Informer) -> None:
        """A kind is not visible for good; for Namespaces, read the watched ones instead."""
        kind = informer.kind
        if (kind.group, kind.kind) == ("", "Namespace") and self.namespaces is not None \
                and self._namespace_task is None:
            # The kind's status is replaced now, not in the task: between the 403 and the
            # first get, the graph must not read as synced without its Namespaces.
            group = NamespacedKindStatus(kind.kind_id)
            parts = {ns: group.parts.setdefault(ns, KindStatus(kind.kind_id))
                     for ns in self.namespaces}
            self.store.sync[kind.kind_id] = self._namespace_status = group
            self._namespace_task = asyncio.create_task(
                self._get_namespaces(kind.kind_id, parts), name="informer:namespaces")

    async def _get_namespaces(self, kind_id: str, parts: dict[str, KindStatus]) -> None:
        """Get each watched Namespace every ``namespace_poll`` seconds (what a Role granting
        ``get`` on namespaces in that namespace allows; no watch can be scoped to one), as
        the kind's status, part by part: a 403 leaves that one not visible, for good."""
        while True:
            for namespace, status in list(parts.items()):
                try:
                    found = await api_responses.get_json(self.transport,
                                                         f"/api/v1/namespaces/{namespace}")
                    self.store.apply(EventType.MODIFIED, {**found, "kind": "Namespace",
                                                          "apiVersion": "v1"})
                except api_responses.NotServed:  # 404: no such namespace (any more)
                    self.store.apply_deleted(make_key(kind_id, "", namespace))
                except api_responses.Forbidden as exc:
                    log.warning("%s %s: forbidden: %s", kind_id, namespace, exc)
                    status.state, status.last_error = SyncState.FORBIDDEN, str(exc)
                    del parts[namespace]
                    continue
                except api_responses.RETRYABLE as exc:
                    status.state, status.last_error = SyncState.RETRYING, str(exc)
                    status.down_since = status.down_since or time.time()
                    continue
                status.state, status.last_error, status.down_since = SyncState.SYNCED, None, None
                status.synced_at = time.time()
            await asyncio.sleep(self.settings.namespace_poll)

    def _storage_went_back(self, origin: Informer) -> None:
        """A kind listed at a lower resourceVersion than it had seen: the API server's
        storage went back (etcd restored from a backup). Every other kind may hold objects
        from the history the server lost, and its watch, resumed where the server has
        caught up again, would not say so: they all re-list, and the CRDs are read again."""
        reason = f"re-listing: the API server's storage went back (seen by {origin.kind.kind_id})"
        for informer, _ in self.informers.values():
            if informer is not origin:
                informer.relist_soon(reason)
        if self._crd_task is not None:  # list them again: discovery may have changed too
            self._crd_task.cancel()
            self._crd_task = asyncio.create_task(self._follow_crds(), name="informer:crds")

    def _finished(self, key: tuple[WatchedKind, str | None], task: asyncio.Task[None]
                  ) -> None:
        """An informer ended by itself (its kind is no longer served, or a bug): drop it,
        so the next discovery can start it again, and drop the objects it vouched for."""
        entry = self.informers.get(key)
        if entry is None or entry[1] is not task or task.cancelled():
            return
        del self.informers[key]
        error = task.exception()
        if error is not None:
            # A bug, not the API: keep the (now aging) objects and say they are stale.
            log.error("informer %s failed", entry[0].name, exc_info=error)
            entry[0].down(SyncState.RETRYING, f"informer failed: {error!r}")
        else:
            self.store.remove_kind(key[0].kind_id, namespace=key[1], keep=key[0].kept_elsewhere(
                self.store.state.keys_of(key[0].kind_id)))

    def _stop(self, kind: WatchedKind) -> None:
        for namespace in self._scopes(kind):
            entry = self.informers.pop((kind, namespace), None)
            if entry is None:
                continue
            informer, task = entry
            informer.stopping = True
            task.cancel()
            informer.status.state = SyncState.STOPPED
            informer.status.down_since = None
            self.store.remove_kind(kind.kind_id, namespace=namespace, keep=kind.kept_elsewhere(
                self.store.state.keys_of(kind.kind_id)))

    def _publish_providers(self) -> None:
        self.store.served = {kind.kind_id: kind.api_version for kind, _ in self.informers}
        providers = providers_of(kind for kind, _ in self.informers)
        if providers != self.providers:
            self.providers = providers
            if self.on_providers_changed is not None:
                self.on_providers_changed(set(providers))

    async def _follow_crds(self) -> None:
        """Re-discover whenever CRDs change; start and stop informers to match."""
        backoff = Backoff(self.settings.backoff_base, self.settings.backoff_cap)
        resource_version: str | None = None
        while True:
            try:
                if resource_version is None:
                    resource_version = await self._crd_version()
                    await self._rediscover()
                resource_version = await self._watch_crds(resource_version)
                backoff.reset()
                if resource_version:  # resumed only from a version the server has reached
                    await api_responses.get_json(self.transport, CRD_KIND.path,
                                                 not_older_than(resource_version))
            except (api_responses.Gone, api_responses.TooLargeResourceVersion):
                resource_version = None
            except (api_responses.Forbidden, api_responses.NotServed) as exc:
                log.warning("cannot watch CRDs (%s); providers are fixed at start", exc)
                if isinstance(exc, api_responses.Forbidden):  # said in answers' scope
                    self.store.sync[CRD_KIND.kind_id] = KindStatus(
                        CRD_KIND.kind_id, SyncState.FORBIDDEN, str(exc))
                return
            except api_responses.RETRYABLE as exc:
                log.warning("CRD watch: %s", exc)
                resource_version = None
                await asyncio.sleep(backoff.next_delay(getattr(exc, "retry_after", None)))

    async def _crd_version(self) -> str:
        data = await api_responses.get_json(self.transport, CRD_KIND.path, [("limit", "1")])
        return str((data.get("metadata") or {}).get("resourceVersion") or "")

    async def _watch_crds(self, resource_version: str) -> str:
        params = watch_params(resource_version, self.settings.watch_timeout)
        response = await self.transport.get(CRD_KIND.path, params)
        try:
            if response.status != 200:
                api_responses.check_response(response, await response.read())
            async for line in stream_lines(response, self.settings.inactivity_timeout):
                event = orjson.loads(line)
                api_responses.raise_on_error(event)
                meta = (event.get("object") or {}).get("metadata") or {}
                resource_version = str(meta.get("resourceVersion") or resource_version)
                if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    spec = (event.get("object") or {}).get("spec") or {}
                    if spec.get("group") in PROVIDER_GROUPS:
                        await self._rediscover()
        finally:
            response.release()
        return resource_version

    async def _rediscover(self) -> None:
        current = set(await discover(self.transport, self.settings.metadata_only,
                                     self.settings.dns_config, self.settings.provider_status))
        started = {kind for kind, _ in self.informers}
        # Stopped first: a kind now served in a version of higher priority (a CRD gained
        # v1) is the same graph kind, whose status and objects the new informer takes over.
        for kind in started - current:
            self._stop(kind)
        for kind in current - started:
            self._start(kind)
        self._publish_providers()
