"""Informers: keep the graph current from the API server's list and watch streams.

The loop per kind follows kopf's watching, in three layers:

1. :meth:`Informer.run` — forever: list if needed, then watch; on ``410 Gone`` re-list at
   once; on disconnects, 5xx and 429 retry with capped exponential backoff and full jitter;
   on 403 report the kind as forbidden and retry slowly (RBAC may change; watching chosen
   namespaces only, ``retry_forbidden`` off: never ask again). A watch resumes
   only from a version the server has reached: "Too large resource version" means its
   storage went back, and the kind re-lists (every kind, once a list shows it).
2. :meth:`Informer.list_and_reconcile` — a paginated list (``limit``/``continue``) applied
   to the graph, deleting what the graph held but the list no longer does (objects gone
   while the watch was down); returns the list's resourceVersion.
3. :meth:`Informer.watch` — one watch stream from a resourceVersion with bookmarks,
   consumed line by line under an inactivity timeout (a silent stream is a dead stream),
   shorter once the server has sent a line and owes a bookmark every interval; returns the
   last resourceVersion seen when the server ends the stream normally.

An informer lists and watches its kind in the whole cluster, or in one namespace
(NAMESPACE=a,b: one informer per kind and namespace, each reconciling only its own
namespace's objects and reporting in a status of its own).

Bodies are read raw and decoded with msgspec into only the fields the records read
(typed_pages.py, typed_events.py, decoding.py), or in full with orjson for kinds without a
shape; kubernetes-asyncio only provides configuration, authentication and TLS, as its
generated models would cost many times what the decoding does.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from netsight.graph.ingest.api_responses import (
    RETRYABLE,
    Forbidden,
    Gone,
    NotServed,
    Stalled,
    TooLargeResourceVersion,
    Transport,
    check_response,
    raise_on_error,
)
from netsight.graph.ingest.backoff import Backoff
from netsight.graph.ingest.decoding import decode_event, decode_page, list_metadata
from netsight.graph.ingest.discovery import WatchedKind
from netsight.graph.ingest.informer_settings import InformerSettings as InformerSettings
from netsight.graph.ingest.list_worker import PageWorker
from netsight.graph.ingest.typed_events import (
    PodEvent,
    TypedEvent,
    decode_typed_event,
    event_record,
    has_typed_events,
)
from netsight.graph.ingest.typed_pages import TypedPage, decode_typed_page
from netsight.graph.ingest.typed_records import pod_record
from netsight.graph.ingest.watch_stream import (
    not_older_than,
    stream_lines,
    watch_params,
    went_back,
)
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import make_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import EventType, GraphStore
from netsight.graph.store.sync_status import SyncState, reporting_status

log = logging.getLogger(__name__)


# Pages a list worker may be sent and not have answered; while it is this far behind, the
# informer builds the next page itself rather than wait (list_worker.py).
WORKER_BACKLOG = 2
# How long the end of a list waits for the worker's answer to a page (many times what a
# page takes it); then the page is built here and the worker is no longer used.
WORKER_PATIENCE = 2.0


@dataclass(slots=True)
class _ListedPage:
    """A list page read and not applied yet: its records (built here), its items (to apply
    the checked way), or the list worker's answer to come, with the bytes it was sent."""

    body: bytes = b""
    future: asyncio.Future[list[Record] | None] | None = None
    records: list[Record] | None = None
    items: Iterable[dict[str, Any]] | None = None

    @property
    def ready(self) -> bool:
        return self.future is None or self.future.done()


# Objects of a list page built into records, or applied, between two turns of the event
# loop. A page holds the loop for long: in slices, the next page's request goes out while
# this one is still being built, and the server answers probes and tools meanwhile.
LIST_SLICE = 100


class Informer:
    """Keeps one kind of object in the graph in step with the API server."""

    def __init__(self, transport: Transport, store: GraphStore, kind: WatchedKind,
                 settings: InformerSettings | None = None, *,
                 worker: PageWorker | None = None, namespace: str | None = None,
                 retry_forbidden: bool = True) -> None:
        self.transport, self.store, self.kind = transport, store, kind
        # Builds list pages in another process while it is alive (the initial sync).
        self.worker = worker
        self.settings = settings or InformerSettings()
        # None: the whole cluster; else only this namespace's objects of a namespaced kind.
        self.namespace = namespace
        self.path = kind.path if namespace is None else kind.path_in(namespace)
        self.name = kind.kind_id if namespace is None else f"{kind.kind_id} in {namespace}"
        # False: a 403 is final (the operator chose namespaces because cluster-wide reads
        # are not granted; asking again every minute would only fill the audit log).
        self.retry_forbidden = retry_forbidden
        self.status = reporting_status(store.sync, kind.status_key, namespace)
        self.backoff = Backoff(self.settings.backoff_base, self.settings.backoff_cap)
        self.synced = asyncio.Event()
        self.stopping = False
        self.resource_version: str | None = None  # where a resumed watch would start
        # Set by the ClusterWatcher: a list found the server's storage gone back; a final 403.
        self.on_storage_reset: Callable[[Informer], None] | None = None
        self.on_forbidden: Callable[[Informer], None] | None = None
        self.relist_requested = False
        self.stalled = False  # the last watch went silent, and none has sent a line since
        self._watching: asyncio.Future[str] | None = None
        # Pods and slices: events decoded straight into records (typed_events.py).
        self._typed_events = has_typed_events(kind.kind_id) and not kind.metadata_only \
            and kind.only is None and not kind.excluded
        # Read for every event: computed once (WatchedKind derives them each time).
        self._kind_id, self._api_version = kind.kind_id, kind.api_version

    async def run(self) -> None:
        resource_version: str | None = None
        status = self.status
        gone_in_a_row = 0
        listed = False  # the next watch starts where a list just ended
        while not self.stopping:
            try:
                if resource_version is None or self.relist_requested:
                    resource_version = await self._list()
                    listed = True
                elif not listed:
                    await self._check_not_behind(resource_version)
                listed = False
                resource_version = await self._watch_until_it_ends(resource_version)
                gone_in_a_row = 0
            except Gone:
                # 410 Gone: resourceVersion expired; re-list (and reconcile) at once — but
                # back off if it keeps happening, rather than re-list in a tight loop.
                status.relists += 1
                resource_version = None
                gone_in_a_row += 1
                if gone_in_a_row > 1:
                    await asyncio.sleep(self.backoff.next_delay())
            except TooLargeResourceVersion as exc:
                # The server has not reached a version it gave us: the graph may hold what
                # its storage no longer has. Stale until a re-list has reconciled it.
                status.relists += 1
                self.down(SyncState.RETRYING, f"re-listing: {exc}")
                resource_version = None
            except asyncio.CancelledError:
                # relist_soon() cancelled the watch, not stop() this task.
                task = asyncio.current_task()
                if not self.relist_requested or task is None or task.cancelling():
                    raise
                resource_version = None
            except Forbidden as exc:
                self.down(SyncState.FORBIDDEN, str(exc))
                resource_version = None
                self.synced.set()  # readiness does not wait for a kind it may not read
                if not self.retry_forbidden:
                    # Not visible for good: the task stays (so no rediscovery starts the
                    # kind again) and sends nothing more, until stopped.
                    if self.on_forbidden is not None:
                        self.on_forbidden(self)
                    await asyncio.Future()
                await asyncio.sleep(self.settings.forbidden_retry)
            except NotServed as exc:
                self.down(SyncState.STOPPED, str(exc))
                self.synced.set()
                return
            except RETRYABLE as exc:
                self.down(SyncState.RETRYING, f"{type(exc).__name__}: {exc}")
                self.stalled |= isinstance(exc, Stalled)
                # Resume from the last event applied, not from where the failed stream began:
                # replaying applied events would flicker deleted objects back into the graph.
                if resource_version is not None:
                    resource_version = self.resource_version
                await asyncio.sleep(self.backoff.next_delay(getattr(exc, "retry_after", None)))

    async def list_once(self, attempts: int = 3) -> None:
        """List the kind once and stop, without a watch (``netsight call`` on a cluster).

        A kind RBAC forbids, or no longer served, is reported in the status as :meth:`run`
        reports it; a list that keeps failing otherwise (410, 5xx, a dropped connection)
        raises after ``attempts`` tries.
        """
        for attempt in range(1, attempts + 1):
            try:
                self.resource_version = await self.list_and_reconcile()
            except Forbidden as exc:
                self.down(SyncState.FORBIDDEN, str(exc))
            except NotServed as exc:
                self.down(SyncState.STOPPED, str(exc))
            except (Gone, *RETRYABLE) as exc:
                if attempt == attempts:
                    raise
                await asyncio.sleep(self.backoff.next_delay(getattr(exc, "retry_after", None)))
                continue
            else:
                self._up()
            self.synced.set()
            return

    async def _list(self) -> str:
        """List and reconcile; a resourceVersion lower than the last one seen means the API
        server's storage went back, which the other kinds must hear of (on_storage_reset)."""
        previous, self.relist_requested = self.resource_version, False
        resource_version = self.resource_version = await self.list_and_reconcile()
        if went_back(previous, resource_version):
            log.warning("%s: listed at resourceVersion %s after %s: the API server's storage "
                        "went back", self.name, resource_version, previous)
            if self.on_storage_reset is not None:
                self.on_storage_reset(self)
        self._up()
        return resource_version

    def relist_soon(self, reason: str) -> None:
        """Re-list now, ending the watch if one is open: another kind found the server's
        storage gone back, so this kind's graph may hold objects from a history the server
        has lost, and a watch resumed where the server has caught up would not say so."""
        if self.status.state in (SyncState.FORBIDDEN, SyncState.STOPPED):
            return
        self.relist_requested, self.resource_version = True, None
        self.status.relists += 1
        self.down(SyncState.RETRYING, reason)
        if self._watching is not None:
            self._watching.cancel()

    async def _watch_until_it_ends(self, resource_version: str) -> str:
        """:meth:`watch` in a task of its own, which relist_soon() may cancel."""
        watching = self._watching = asyncio.ensure_future(self.watch(resource_version))
        try:
            return await watching
        finally:
            self._watching = None

    async def _check_not_behind(self, resource_version: str) -> None:
        """Before resuming a watch: a list of at most one object no older than the version it
        resumes from. A server whose storage went back refuses it as "Too large resource
        version", where it would accept the watch and send nothing on it."""
        if resource_version:
            await self._get_list([*not_older_than(resource_version), *self.kind.selection])

    def _up(self) -> None:
        status = self.status
        status.state, status.last_error, status.down_since = SyncState.SYNCED, None, None
        status.synced_at = time.time()
        self.stalled = False
        self.backoff.reset()
        self.synced.set()

    def down(self, state: SyncState, error: str) -> None:
        status = self.status
        if status.down_since is None:
            status.down_since = time.time()
        # Said once: a kind refused again every minute is no news.
        repeated = (status.state, status.last_error) == (state, error)
        status.state, status.last_error = state, error
        log.log(logging.DEBUG if repeated else logging.WARNING, "%s: %s: %s", self.name,
                state.value, error)

    async def list_and_reconcile(self) -> str:
        """List every object (paginated), apply it, delete what is gone; return the RV.

        The next page is requested before this one is applied, so the API server prepares
        it (and the network carries it) while the graph is being built. Building and
        applying a page's records is CPU work with no await in it: it is done in slices
        of ``LIST_SLICE`` objects with a turn of the event loop between them, or the next
        page's request (which takes a few turns to be written out) would leave only once
        the page is applied, and the server would prepare it while netsight waits.

        With a list worker (list_worker.py) for the kind, a large list starts it; once it
        is ready, pages go to it as they arrive, and those it has built are applied here
        meanwhile. While it is ``WORKER_BACKLOG`` pages behind, the next page is built
        here instead. Pages are applied in list order; one the worker has not answered
        when this process would otherwise hold more than ``WORKER_BACKLOG + 2`` pages is
        built here from the bytes kept (its answer is dropped), as is one it cannot
        build (the typed shape refuses it, or the worker is gone). Only the last pages
        of a list wait for the worker's answer.
        """
        seen: set[str] = set()
        resource_version = ""
        store, kind = self.store, self.kind
        # Only objects in the graph before this list can be gone from the cluster: on the
        # first list there are none, and noting what was seen would only cost time. Only
        # this informer's namespace: another namespace's objects are another informer's.
        namespace = self.namespace
        reconcile = store.view().count(kind.kind_id, namespace) > 0
        noted = seen if reconcile else None
        worker = self.worker
        if worker is not None and not worker.handles(kind.kind_id):
            worker = None
        body = await self._page(None)
        following: asyncio.Task[bytes] | None = None
        # Pages read and not applied yet, in list order.
        queue: collections.deque[_ListedPage] = collections.deque()
        try:
            while True:
                metadata = None
                if worker is not None and worker.alive:
                    metadata = list_metadata(body)
                    if metadata is not None:
                        worker.start_for(metadata, self.settings.list_worker_min_objects)
                        if not worker.ready or worker.backlog >= WORKER_BACKLOG:
                            metadata = None
                typed: TypedPage | None = None
                if metadata is not None and worker is not None:
                    listed = _ListedPage(body, worker.submit(kind.kind_id, kind.api_version,
                                                             body))
                else:
                    # The core kinds come typed (typed_pages.py) unless the page holds anything
                    # unusual.
                    typed = decode_typed_page(kind.kind_id, body)
                    page = decode_page(kind.kind_id, body) if typed is None else {
                        "metadata": typed.metadata}
                    metadata = page.get("metadata") or {}
                    listed = _ListedPage(items=page.get("items") or ())
                resource_version = str(metadata.get("resourceVersion") or resource_version)
                cont = metadata.get("continue") or None
                if cont:
                    following = asyncio.create_task(self._page(cont))
                if typed is not None:
                    listed.records, listed.items = await self._build_here(body, typed)
                queue.append(listed)
                # Apply the pages whose records are ready, in order. At the end, wait for
                # the worker's last pages (it is building them); before, while it is so far
                # behind that this process would hold more pages, build its first one here.
                while queue and (queue[0].ready or following is None
                                 or len(queue) > WORKER_BACKLOG + 2):
                    await self._apply_listed(queue.popleft(), noted,
                                             wait=following is None)
                if following is None:
                    break
                body = await following
                following = None
        finally:
            if following is not None:  # cancelled, or a page failed: drop the prefetch
                following.cancel()
                with contextlib.suppress(BaseException):
                    await following
        if reconcile:
            # Objects another informer of the kind keeps are not this list's to delete.
            store.remove_kind(kind.kind_id, namespace=namespace, keep=seen | kind.kept_elsewhere(
                store.state.keys_of(kind.kind_id)))
        return resource_version

    async def _apply_listed(self, listed: _ListedPage, noted: set[str] | None, *,
                            wait: bool = False) -> None:
        """Apply a page's records: the worker's (``wait``: when it answers), those built
        here, or its items the checked way (which reports what the typed path refused)."""
        records, items = listed.records, listed.items
        future = listed.future
        if future is not None:
            kind_id = self.kind.kind_id
            if wait and self.worker is not None:
                with contextlib.suppress(Exception):  # WorkerGone: built below
                    await asyncio.wait([future], timeout=WORKER_PATIENCE)
                if not future.done():  # alive but stuck: never ask it again
                    self.worker.give_up(f"no answer in {WORKER_PATIENCE:g} s")
            if future.done() and not future.cancelled() and future.exception() is None:
                records = future.result()
                if records is None:  # the typed records refuse a value: the checked way
                    items = decode_page(kind_id, listed.body).get("items") or ()
            else:
                # The worker has not answered (it is behind, or had less of a CPU than
                # this process) or is gone: build the page here rather than wait for it.
                future.cancel()
                records, items = await self._build_here(
                    listed.body, decode_typed_page(kind_id, listed.body))
        if records is not None:
            for start in range(0, len(records), LIST_SLICE):
                self.store.apply_listed(records[start:start + LIST_SLICE], noted)
                await asyncio.sleep(0)
        else:
            await self._apply_checked(items or (), noted)

    async def _build_here(self, body: bytes, typed: TypedPage | None
                          ) -> tuple[list[Record] | None, Iterable[dict[str, Any]] | None]:
        """A page built in this process: its typed records, or (no typed shape, or a value
        the typed records refuse) its items, to apply the checked way."""
        records = None if typed is None else await self._typed_records(typed)
        if records is None:
            return None, decode_page(self.kind.kind_id, body).get("items") or ()
        return records, None

    async def _typed_records(self, page: TypedPage) -> list[Record] | None:
        """The records of a typed page, built ``LIST_SLICE`` at a time; None if one of
        its values is refused (MalformedObject): the page is then read the checked way,
        which reports it."""
        records: list[Record] = []
        try:
            for record in page.records(self.kind.api_version):
                records.append(record)
                if len(records) % LIST_SLICE == 0:
                    await asyncio.sleep(0)
        except MalformedObject:
            return None
        return records

    async def _apply_checked(self, items: Iterable[dict[str, Any]],
                             seen: set[str] | None) -> None:
        """Apply list items decoded as dicts, one at a time, ``LIST_SLICE`` per turn."""
        store, kind = self.store, self.kind
        for n, item in enumerate(items, 1):
            if not self.kind.keeps_object(item):
                continue
            # List items come without kind/apiVersion; the list knows them.
            item["kind"], item["apiVersion"] = kind.kind, kind.api_version
            # From a cluster, a namespaced object always names its namespace; one
            # without is cluster-scoped (a CRD's scope is not in the static list).
            store.apply(EventType.ADDED, item, default_namespace="")
            if seen is not None:
                meta = item.get("metadata") or {}
                name = meta.get("name")
                if isinstance(name, str):
                    seen.add(make_key(kind.kind_id, meta.get("namespace") or "", name))
            if n % LIST_SLICE == 0:
                await asyncio.sleep(0)

    async def _page(self, cont: str | None) -> bytes:
        params = [("limit", str(self.settings.page_size)), *self.kind.selection]
        if cont:
            params.append(("continue", cont))
        return await self._get_list(params)

    async def _get_list(self, params: list[tuple[str, str]]) -> bytes:
        accept = self.kind.accept
        response = await self.transport.get(self.path, params,
                                            accept=accept[0] if accept else None)
        try:
            body = await response.read()
        finally:
            response.release()
        check_response(response, body)
        return body

    async def watch(self, resource_version: str) -> str:
        """Consume one watch stream; return the last resourceVersion when it ends."""
        settings = self.settings
        params = [*watch_params(resource_version, settings.watch_timeout),
                  *self.kind.selection]
        accept = self.kind.accept
        # The server answers a watch's request at once; its events come later.
        async with asyncio.timeout(settings.stall_timeout):
            response = await self.transport.get(self.path, params,
                                                accept=accept[1] if accept else None)
        try:
            if response.status != 200:
                check_response(response, await response.read())
            lines = stream_lines(response, settings.inactivity_timeout, settings.stall_timeout)
            if self.status.state is not SyncState.SYNCED:
                if self.stalled:
                    # The last stream was accepted too, then went silent: this one is
                    # trusted once a line (or the server's end of it) shows it flows.
                    async for line in lines:
                        resource_version = self.resource_version = self.handle_line(
                            line, resource_version)
                        break
                self._up()  # the watch is back: the graph is current again
            async for line in lines:
                resource_version = self.resource_version = self.handle_line(line, resource_version)
        finally:
            response.release()
        return resource_version

    def handle_line(self, line: bytes, resource_version: str) -> str:
        if self._typed_events:
            typed = decode_typed_event(self._kind_id, line)
            if typed is not None and typed.type in _OBJECT_EVENTS:
                applied = self._apply_typed(typed)
                if applied is not None:
                    return applied or resource_version
        event = decode_event(self._kind_id, line)
        event_type, obj = event.get("type"), event.get("object") or {}
        raise_on_error(event)
        meta = obj.get("metadata") or {}
        new_version = str(meta.get("resourceVersion") or resource_version)
        if event_type == "BOOKMARK":
            return new_version
        if event_type in ("ADDED", "MODIFIED", "DELETED") and self.kind.keeps_object(obj):
            if self.kind.metadata_only:  # it says PartialObjectMetadata, meta.k8s.io/v1
                obj["kind"], obj["apiVersion"] = self.kind.kind, self.kind.api_version
            obj.setdefault("kind", self.kind.kind)
            obj.setdefault("apiVersion", self.kind.api_version)
            self.store.apply(EventType(event_type), obj, default_namespace="")
            self.status.events += 1
        return new_version

    def _apply_typed(self, event: TypedEvent) -> str | None:
        """Apply an event typed_events.py decoded; its resourceVersion ("" if none), or None if
        the event must go the checked way after all (an object of another kind or version,
        or a record the typed path failed to build)."""
        obj, store, api_version = event.object, self.store, self._api_version
        if obj.kind not in (None, self.kind.kind) or obj.apiVersion not in (None, api_version):
            return None
        meta = obj.metadata
        if event.type == "DELETED":
            store.apply_deleted(self._key(meta.namespace, meta.name))
        else:
            try:
                if type(event) is PodEvent:  # built from the event alone (event_record)
                    record: Record = pod_record(event.object)
                else:  # a slice takes its unchanged endpoints from its previous version
                    record = event_record(event, api_version, store.state.record(
                        self._key(meta.namespace, meta.name)))
            except Exception:  # a reader bug: the checked path reports the object
                log.exception("reading %s the typed way failed",
                              self._key(meta.namespace, meta.name))
                return None
            store.apply_record(record)
        self.status.events += 1
        return meta.resourceVersion or ""

    def _key(self, namespace: str | None, name: str) -> str:
        """A watched object's key; from a cluster, a namespaced object always names its
        namespace. Made only where needed: a pod's record is built without it."""
        return make_key(self._kind_id, namespace or "", name)


# Watch event types that carry an object of the watched kind.
_OBJECT_EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED"})
