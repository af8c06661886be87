"""Informers: keep the graph current from the API server's list and watch streams.

The loop per kind follows kopf's watching, in three layers:

1. :meth:`Informer.run` — forever: list if needed, then watch; on ``410 Gone`` re-list at
   once; on disconnects, 5xx and 429 retry with capped exponential backoff and full jitter;
   on 403 report the kind as forbidden and retry slowly (RBAC may change).
2. :meth:`Informer.list_and_reconcile` — a paginated list (``limit``/``continue``) applied
   to the graph, deleting what the graph held but the list no longer does (objects gone
   while the watch was down); returns the list's resourceVersion.
3. :meth:`Informer.watch` — one watch stream from a resourceVersion with bookmarks,
   consumed line by line under an inactivity timeout (a silent stream is a dead stream);
   returns the last resourceVersion seen when the server ends the stream normally.

Bodies are read raw and decoded with msgspec into only the fields the records read
(shapes.py), or in full with orjson for kinds without a shape; kubernetes-asyncio only provides
configuration, authentication and TLS. Its generated models are about 20 times slower.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import gc
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp
import orjson

from netsight.graph.ingest.decoding import decode_event, decode_page, list_metadata
from netsight.graph.ingest.list_worker import PageWorker, usable_cpus
from netsight.graph.ingest.typed_events import (
    PodEvent,
    TypedEvent,
    decode_typed_event,
    event_record,
    has_typed_events,
)
from netsight.graph.ingest.typed_pages import TypedPage, decode_typed_page
from netsight.graph.ingest.typed_records import pod_record
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import WORKLOAD_KINDS, kind_id, make_key
from netsight.graph.model.records import Record
from netsight.graph.runtime.allocator import release_free_memory
from netsight.graph.runtime.collector import keep_collections_young
from netsight.graph.store.live import EventType, GraphStore, KindStatus, SyncState

log = logging.getLogger(__name__)

META_GROUP = "meta.k8s.io"


class Gone(Exception):
    """410: the resourceVersion (or continue token) is too old; re-list."""


class Forbidden(Exception):
    """403: RBAC does not let netsight list or watch this kind."""


class NotServed(Exception):
    """404: the API server no longer serves this kind (its CRD was deleted)."""


class Transient(Exception):
    """5xx, 429 or an unreadable answer: retry after a backoff."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class WatchedKind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    # Listed and watched as PartialObjectMetadata: the object's identity and labels, never
    # its body (a Secret's data must not even reach netsight's memory).
    metadata_only: bool = False

    @property
    def accept(self) -> tuple[str, str] | None:
        """Accept headers asking for metadata only, for lists and for watches."""
        if not self.metadata_only:
            return None
        # No plain application/json fallback: a server that cannot answer with metadata
        # only must refuse (406) rather than send whole Secrets.
        return (f"application/json;as=PartialObjectMetadataList;g={META_GROUP};v=v1",
                f"application/json;as=PartialObjectMetadata;g={META_GROUP};v=v1")

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/{self.plural}"

    @property
    def kind_id(self) -> str:
        """The kind as graph keys spell it."""
        return kind_id(self.api_version, self.kind)


# Pages a list worker may be sent and not have answered; while it is this far behind, the
# informer builds the next page itself rather than wait (offloading.py).
WORKER_BACKLOG = 2
# How long the end of a list waits for the worker's answer to a page (it takes ~50 ms);
# then the page is built here and the worker is no longer used.
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
# loop. A page is ~100 ms of CPU at 1,000 pods: in slices, the next page's request goes out
# while this one is still being built, and the server answers probes and tools meanwhile.
LIST_SLICE = 100


class Response(Protocol):
    """The part of an aiohttp response the informers use."""

    status: int
    content: aiohttp.StreamReader

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def read(self) -> bytes: ...

    def release(self) -> Any: ...


class Transport(Protocol):
    """GET a path with query parameters and hand back the raw, unread response."""

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Response: ...


@dataclass
class Backoff:
    """Capped exponential backoff with full jitter (AWS architecture blog's variant)."""

    base: float = 0.5
    cap: float = 30.0
    attempt: int = 0

    def next_delay(self, retry_after: float | None = None) -> float:
        # The exponent is capped: 2.0 ** 1024 overflows, after hours of retries.
        delay = random.uniform(0, min(self.cap, self.base * 2.0 ** min(self.attempt, 32)))
        self.attempt += 1
        return max(delay, retry_after or 0.0)

    def reset(self) -> None:
        self.attempt = 0


@dataclass
class InformerSettings:
    # The initial list's ``limit``. 1000 rather than client-go's 500: fewer pages (each an
    # HTTP round trip, a call_api and a decoder call) cost ~5-8% less sync CPU at 30k-100k
    # pods for ~6 MiB more RSS; 5000 saved no more CPU and held 50 MiB more at 30k pods
    # (benchmarks/informers.py sync --page-sizes).
    page_size: int = 1000
    watch_timeout: tuple[int, int] = (240, 360)  # timeoutSeconds, drawn per watch
    inactivity_timeout: float = 420.0  # no byte for this long: the stream is dead
    forbidden_retry: float = 60.0
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    # After the initial sync: collect the youngest generation and freeze its survivors this
    # often (seconds), and run one full collection this often (collecting.py); 0 leaves the
    # collector alone. At 0.01 a tick's young collection pauses ~0.3 ms at 5,000 events/s
    # (0.025: ~0.7 ms, up to 3-5 ms); the automatic ones it replaces (every 700
    # allocations net of the old records each event frees) paused 7.5-13 ms at 100k pods,
    # for the same total CPU. Was 1 s, then 0.25 (a second's survivors made ~20 ms gen-1
    # collections), then 0.025 (a fixed 0.01 woke an idle server 100 times a second);
    # benchmarks/informers.py _replay --refreeze.
    refreeze_interval: float = 0.01
    # ... while collections have work; one that finds next to nothing (under 1/4 of
    # 0.25 ms) doubles the wait, up to this, so an idle server wakes 4 times a second.
    refreeze_idle_interval: float = 0.25
    full_collection_interval: float = 3600.0
    # Meanwhile, automatic young collections only after this many net allocations (the
    # default is 700): a safety net for code that holds the loop, never reached under churn.
    young_threshold: int = 10_000
    # And the heap's free pages given back to the OS this often, or within a second of RSS
    # rising 4 MiB (collecting.py): rebuilt hash tables leave holes of several MiB in
    # glibc's heap that RSS would keep (0: only after the sync).
    release_interval: float = 60.0
    # Kinds watched for their existence only (METADATA_ONLY_KINDS); empty: not watched.
    metadata_only: frozenset[tuple[str, str]] = field(
        default_factory=lambda: METADATA_ONLY_KINDS)
    # The initial sync's Pod pages are read and built into records by a worker process
    # (offloading.py) while this one applies them; None: when this process may use two
    # whole CPUs or more (its affinity, its cgroup's CPU quota). Re-lists after the sync
    # are built in this process. At 100k pods it took ~27% of this process's sync CPU and
    # 10-18% of the wall time, for ~5 s of its own CPU and ~67 MiB while it runs
    # (benchmarks/README.md).
    list_worker: bool | None = None
    # A list starts the worker when its first page says this many objects are left (or
    # that more pages follow, without a count): a process start costs ~0.5 s of the other
    # CPU and tens of MiB for its lifetime; until it is ready, pages are built here.
    list_worker_min_objects: int = 10_000

    @property
    def use_list_worker(self) -> bool:
        return usable_cpus() >= 2 if self.list_worker is None else self.list_worker


def _check(response: Response, body: bytes | None = None) -> None:
    status = response.status
    if 200 <= status < 300:
        return
    message = _status_message(body) or f"HTTP {status}"
    if status == 410:
        raise Gone(message)
    if status == 403:
        raise Forbidden(message)
    if status == 404:
        raise NotServed(message)
    retry_after = response.headers.get("Retry-After")
    raise Transient(f"HTTP {status}: {message}",
                    float(retry_after) if retry_after and retry_after.isdigit() else None)


def _status_message(body: bytes | None) -> str | None:
    if not body:
        return None
    with contextlib.suppress(orjson.JSONDecodeError, AttributeError):
        message = orjson.loads(body).get("message")
        return str(message) if message else None
    return None


_CLOCK_RESOLUTION = time.get_clock_info("monotonic").resolution


class _Inactivity:
    """Cancels the reading task once one read has waited ``seconds`` (a stalled stream).

    ``asyncio.timeout`` around every read costs a timer handle, a context and a heap push
    per chunk, on a stream that hands over thousands of chunks a second; this re-arms one
    timer only when it fires. A firing timer looks at the read then in progress: none (the
    lines are being applied) and the next read arms it again; one that began less than
    ``seconds`` ago, and it waits for the rest; else the task is cancelled, as
    ``asyncio.timeout`` would, and the reader turns that cancellation into a timeout.
    """

    __slots__ = ("_cancelling", "_handle", "_loop", "_task", "began", "expired", "seconds",
                 "waiting")

    def __init__(self, seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # called from a coroutine
        self._task = task
        self._cancelling = task.cancelling()  # cancellations already requested by others
        self._handle: asyncio.TimerHandle | None = None
        self.seconds = seconds
        self.began = 0.0
        self.waiting = self.expired = False

    def reading(self) -> None:
        """A read begins."""
        self.began = began = self._loop.time()
        self.waiting = True
        if self._handle is None:
            self._handle = self._loop.call_at(began + self.seconds, self._check)

    def _check(self) -> None:
        self._handle = None
        if not self.waiting:
            return
        due = self.began + self.seconds
        # The loop runs a timer up to its clock's resolution early.
        if self._loop.time() < due - _CLOCK_RESOLUTION:
            self._handle = self._loop.call_at(due, self._check)
            return
        self.expired = True
        self._task.cancel()

    def timed_out(self) -> bool:
        """For a CancelledError out of a read: True if this timer caused it alone (then
        the cancellation is withdrawn), False if someone else cancelled the task too."""
        return self.expired and self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def stream_lines(response: Response, inactivity: float) -> AsyncIterator[bytes]:
    """The lines of a watch stream; Transient if no byte arrives for ``inactivity`` seconds."""
    # Split chunks ourselves: StreamReader.readline caps a line at 128 KiB, and one large
    # object (a CRD with a big spec) would break it.
    # The unfinished line is kept as pieces: a large object arriving in many chunks is
    # joined once, not copied again with every chunk.
    pending: list[bytes] = []
    content = response.content
    timer = _Inactivity(inactivity)
    try:
        while True:
            timer.reading()
            try:
                chunk = await content.readany()
            except asyncio.CancelledError:
                if timer.timed_out():
                    raise Transient(f"no data for {inactivity:g}s: the stream stalled") from None
                raise
            finally:
                timer.waiting = False
            if not chunk:
                break
            # Lines found with find (memchr), not split: bytes.split walks the chunk a byte
            # at a time, ~3 us for a pod's line (5.5-7 KB) against ~0.2 for find; -2.4 to
            # -3.5 us an event in the replay (benchmarks/README.md, `watch-http`).
            end = chunk.find(b"\n")
            if end < 0:
                pending.append(chunk)
                continue
            if pending:
                pending.append(chunk[:end])
                line = b"".join(pending)
                pending = []
            else:
                line = chunk[:end]
            start = end + 1
            while True:
                if line.strip():
                    yield line
                end = chunk.find(b"\n", start)
                if end < 0:
                    break
                line = chunk[start:end]
                start = end + 1
            if start < len(chunk):
                pending.append(chunk[start:])
    finally:
        timer.close()
    tail = b"".join(pending)
    if tail.strip():
        yield tail


def raise_on_error(event: Mapping[str, Any]) -> None:
    """An ERROR event ends the stream: 410 means re-list, anything else retry."""
    if event.get("type") != "ERROR":
        return
    obj = event.get("object") or {}
    if obj.get("code") == 410:
        raise Gone(str(obj.get("message")))
    raise Transient(f"watch error {obj.get('code')}: {obj.get('message')}")


class Informer:
    """Keeps one kind of object in the graph in step with the API server."""

    def __init__(self, transport: Transport, store: GraphStore, kind: WatchedKind,
                 settings: InformerSettings | None = None, *,
                 worker: PageWorker | None = None) -> None:
        self.transport, self.store, self.kind = transport, store, kind
        # Builds list pages in another process while it is alive (the initial sync).
        self.worker = worker
        self.settings = settings or InformerSettings()
        self.status = store.sync.setdefault(kind.kind_id, KindStatus(kind.kind_id))
        self.backoff = Backoff(self.settings.backoff_base, self.settings.backoff_cap)
        self.synced = asyncio.Event()
        self.stopping = False
        self.resource_version: str | None = None  # where a resumed watch would start
        # Pods and slices: events decoded straight into records (typed.py).
        self._typed_events = has_typed_events(kind.kind_id) and not kind.metadata_only
        # Read for every event: computed once (WatchedKind derives them each time).
        self._kind_id, self._api_version = kind.kind_id, kind.api_version

    async def run(self) -> None:
        resource_version: str | None = None
        status = self.status
        gone_in_a_row = 0
        while not self.stopping:
            try:
                if resource_version is None:
                    resource_version = self.resource_version = await self.list_and_reconcile()
                    self._up()
                resource_version = await self.watch(resource_version)
                gone_in_a_row = 0
            except Gone:
                # 410 Gone: resourceVersion expired; re-list (and reconcile) at once — but
                # back off if it keeps happening, rather than re-list in a tight loop.
                status.relists += 1
                resource_version = None
                gone_in_a_row += 1
                if gone_in_a_row > 1:
                    await asyncio.sleep(self.backoff.next_delay())
            except Forbidden as exc:
                self._down(SyncState.FORBIDDEN, str(exc))
                resource_version = None
                self.synced.set()  # readiness does not wait for a kind it may not read
                await asyncio.sleep(self.settings.forbidden_retry)
            except NotServed as exc:
                self._down(SyncState.STOPPED, str(exc))
                self.synced.set()
                return
            except (Transient, aiohttp.ClientError, TimeoutError, OSError,
                    orjson.JSONDecodeError) as exc:
                self._down(SyncState.RETRYING, f"{type(exc).__name__}: {exc}")
                # Resume from the last event applied, not from where the failed stream began:
                # replaying applied events would flicker deleted objects back into the graph.
                if resource_version is not None:
                    resource_version = self.resource_version
                await asyncio.sleep(self.backoff.next_delay(getattr(exc, "retry_after", None)))

    def _up(self) -> None:
        status = self.status
        status.state, status.last_error, status.down_since = SyncState.SYNCED, None, None
        status.synced_at = time.time()
        self.backoff.reset()
        self.synced.set()

    def _down(self, state: SyncState, error: str) -> None:
        status = self.status
        if status.down_since is None:
            status.down_since = time.time()
        status.state, status.last_error = state, error
        log.warning("%s: %s: %s", self.kind.kind_id, state.value, error)

    async def list_and_reconcile(self) -> str:
        """List every object (paginated), apply it, delete what is gone; return the RV.

        The next page is requested before this one is applied, so the API server prepares
        it (and the network carries it) while the graph is being built. Building and
        applying a page's records is CPU work with no await in it: it is done in slices
        of ``LIST_SLICE`` objects with a turn of the event loop between them, or the next
        page's request (which takes a few turns to be written out) would leave only once
        the page is applied, and the server would prepare it while netsight waits.

        With a list worker (offloading.py) for the kind, a large list starts it; once it
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
        # first list there are none, and noting what was seen would only cost time.
        reconcile = store.view().count(kind.kind_id) > 0
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
                    # The core kinds come typed (typed.py) unless the page holds anything
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
            store.remove_kind(kind.kind_id, keep=seen)
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
        params = [("limit", str(self.settings.page_size))]
        if cont:
            params.append(("continue", cont))
        accept = self.kind.accept
        response = await self.transport.get(self.kind.path, params,
                                            accept=accept[0] if accept else None)
        try:
            body = await response.read()
        finally:
            response.release()
        _check(response, body)
        return body

    async def watch(self, resource_version: str) -> str:
        """Consume one watch stream; return the last resourceVersion when it ends."""
        low, high = self.settings.watch_timeout
        params = [("watch", "1"), ("resourceVersion", resource_version),
                  ("allowWatchBookmarks", "true"),
                  ("timeoutSeconds", str(random.randint(low, high)))]
        accept = self.kind.accept
        async with asyncio.timeout(self.settings.inactivity_timeout):
            response = await self.transport.get(self.kind.path, params,
                                                accept=accept[1] if accept else None)
        try:
            if response.status != 200:
                _check(response, await response.read())
            if self.status.state is not SyncState.SYNCED:
                self._up()  # the watch is back: the graph is current again
            async for line in stream_lines(response, self.settings.inactivity_timeout):
                resource_version = self.resource_version = self._handle(line, resource_version)
        finally:
            response.release()
        return resource_version

    def _handle(self, line: bytes, resource_version: str) -> str:
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
        if event_type in ("ADDED", "MODIFIED", "DELETED"):
            if self.kind.metadata_only:  # it says PartialObjectMetadata, meta.k8s.io/v1
                obj["kind"], obj["apiVersion"] = self.kind.kind, self.kind.api_version
            obj.setdefault("kind", self.kind.kind)
            obj.setdefault("apiVersion", self.kind.api_version)
            self.store.apply(EventType(event_type), obj, default_namespace="")
            self.status.events += 1
        return new_version

    def _apply_typed(self, event: TypedEvent) -> str | None:
        """Apply an event typed.py decoded; its resourceVersion ("" if none), or None if
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


# --- discovery and the set of informers ----------------------------------------------------

# Kinds watched whenever the API serves them.
CORE_KINDS: tuple[tuple[str, str], ...] = (
    ("", "Namespace"), ("", "Pod"), ("", "Service"),
    ("discovery.k8s.io", "EndpointSlice"), ("networking.k8s.io", "NetworkPolicy"),
    ("networking.k8s.io", "Ingress"), ("networking.k8s.io", "IngressClass"),
)

# Kinds whose objects only matter by name (a TLS certificateRef, a CA bundle reference):
# watched as metadata only, when the settings keep them.
METADATA_ONLY_KINDS: frozenset[tuple[str, str]] = frozenset({("", "Secret"), ("", "ConfigMap")})

# Provider API groups -> (provider name, kinds to watch; None: every kind in the group).
PROVIDER_GROUPS: dict[str, tuple[str, frozenset[str] | None]] = {
    "gateway.networking.k8s.io": ("gateway-api", None),
    "gateway.networking.x-k8s.io": ("gateway-api", None),
    "policy.networking.k8s.io": ("network-policy-api", None),
    "networking.istio.io": ("istio", frozenset({
        "VirtualService", "DestinationRule", "Gateway", "ServiceEntry", "Sidecar",
        "WorkloadEntry", "WorkloadGroup", "EnvoyFilter"})),
    "security.istio.io": ("istio", frozenset({
        "AuthorizationPolicy", "PeerAuthentication", "RequestAuthentication"})),
    # Istio's policies that attach to a Gateway through targetRefs, like the two above.
    "telemetry.istio.io": ("istio", frozenset({"Telemetry"})),
    "extensions.istio.io": ("istio", frozenset({"WasmPlugin"})),
    "cilium.io": ("cilium", frozenset({
        "CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy", "CiliumCIDRGroup"})),
    "crd.projectcalico.org": ("calico", frozenset({
        "NetworkPolicy", "GlobalNetworkPolicy", "NetworkSet", "GlobalNetworkSet", "Tier"})),
    # projectcalico.org (Calico's API server) serves the same objects as these CRDs: not
    # watched twice.
    "policy.linkerd.io": ("linkerd", frozenset({
        "Server", "ServerAuthorization", "AuthorizationPolicy", "MeshTLSAuthentication",
        "NetworkAuthentication", "HTTPRoute"})),
    "linkerd.io": ("linkerd", frozenset({"ServiceProfile"})),
    "kuma.io": ("kuma", frozenset({
        "Mesh", "MeshTrafficPermission", "MeshHTTPRoute", "MeshTCPRoute", "MeshService",
        "TrafficPermission", "TrafficRoute"})),
    "gateway.kgateway.dev": ("kgateway", None),
    # Envoy Gateway's policies attach to Gateways, listeners and routes through targetRefs.
    "gateway.envoyproxy.io": ("envoy-gateway", frozenset({
        "ClientTrafficPolicy", "BackendTrafficPolicy", "SecurityPolicy",
        "EnvoyExtensionPolicy"})),
}

# Kinds objects refer to (as owners) that no informer watches.
NEVER_WATCHED: frozenset[str] = WORKLOAD_KINDS | {"Node"}

CRD_KIND = WatchedKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                       "customresourcedefinitions", False)


async def discover(transport: Transport,
                   metadata_only: frozenset[tuple[str, str]] = METADATA_ONLY_KINDS
                   ) -> list[WatchedKind]:
    """The kinds to watch: core networking kinds, those of installed providers, and the
    ``metadata_only`` kinds (by name only)."""
    found: list[WatchedKind] = []
    core = await _get_json(transport, "/api/v1")
    found.extend(_kinds_of("", "v1", core, metadata_only))
    groups = await _get_json(transport, "/apis")
    for group in groups.get("groups") or ():
        name = group.get("name")
        preferred = str((group.get("preferredVersion") or {}).get("version"))
        if name in PROVIDER_GROUPS or any(g == name for g, _ in CORE_KINDS):
            try:
                resources = await _get_json(transport, f"/apis/{name}/{preferred}")
            except NotServed:
                continue
            found.extend(_kinds_of(name, preferred, resources, metadata_only))
    return [k for k in found if k.metadata_only or wanted(k.group, k.kind)]


def wanted(group: str, kind: str) -> bool:
    if (group, kind) in CORE_KINDS:
        return True
    provider = PROVIDER_GROUPS.get(group)
    return provider is not None and (provider[1] is None or kind in provider[1])


def providers_of(kinds: Iterable[WatchedKind]) -> set[str]:
    return {PROVIDER_GROUPS[k.group][0] for k in kinds if k.group in PROVIDER_GROUPS}


def _kinds_of(group: str, version: str, resources: Mapping[str, Any],
              metadata_only: frozenset[tuple[str, str]] = frozenset()) -> list[WatchedKind]:
    kinds = []
    for entry in resources.get("resources") or ():
        name = str(entry.get("name", ""))
        verbs = entry.get("verbs") or ()
        if "/" in name or "list" not in verbs or "watch" not in verbs:
            continue  # subresources (pods/status) and kinds that cannot be watched
        kind = str(entry["kind"])
        kinds.append(WatchedKind(group, version, kind, name, bool(entry.get("namespaced")),
                                 metadata_only=(group, kind) in metadata_only))
    return kinds


async def _get_json(transport: Transport, path: str,
                    params: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    response = await transport.get(path, params or [])
    try:
        body = await response.read()
    finally:
        response.release()
    _check(response, body)
    data: dict[str, Any] = orjson.loads(body)
    return data


@dataclass
class ClusterWatcher:
    """Runs the informers for every watched kind and follows CRDs as they come and go."""

    transport: Transport
    store: GraphStore
    settings: InformerSettings = field(default_factory=InformerSettings)
    on_providers_changed: Callable[[set[str]], None] | None = None
    informers: dict[WatchedKind, tuple[Informer, asyncio.Task[None]]] = field(
        default_factory=dict)
    providers: set[str] = field(default_factory=set)
    _crd_task: asyncio.Task[None] | None = None
    _gc_task: asyncio.Task[None] | None = None
    # Whether the initial sync started a list worker, and the pages whose records it built.
    list_worker_started: bool = False
    offloaded_pages: int = 0
    _worker: PageWorker | None = None
    _worker_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Discover, start every informer, and follow CRDs. Returns once started."""
        # Pods name their ReplicaSet (and others their Deployment, Node...) as owner; those
        # kinds are not watched, so such references are never waited on.
        self.store.state.never_arrive(NEVER_WATCHED)
        kinds = await discover(self.transport, self.settings.metadata_only)
        if self.settings.use_list_worker and any(PageWorker.handles(k.kind_id) for k in kinds):
            self._worker = PageWorker()  # started by the first large list
        for kind in kinds:
            self._start(kind)
        if self._worker is not None:
            self._worker_task = asyncio.create_task(self._retire_worker(),
                                                    name="informer:list-worker")
        self._publish_providers()
        self._crd_task = asyncio.create_task(self._follow_crds(), name="informer:crds")

    async def _retire_worker(self) -> None:
        """Stop the list worker once the informers of the kinds it builds have synced
        (those of other kinds never send it a page: a kind still retrying must not keep it).

        Re-lists after the sync (a 410, a reconnect) are of one kind at a time and rare;
        a worker kept for them would hold its memory (tens of MiB) for good, and one
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

        A bulk load of 100k+ objects allocates millions of long-lived containers; the
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
        return all(i.status.settled for i, _ in self.informers.values())

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
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                log.error("informer task %s did not stop in %ss", task.get_name(), timeout)
        self.informers.clear()
        self._crd_task = self._gc_task = self._worker_task = None

    def _start(self, kind: WatchedKind) -> None:
        if kind in self.informers:
            return
        informer = Informer(self.transport, self.store, kind, self.settings,
                            worker=self._worker)
        informer.status.state, informer.status.down_since = SyncState.SYNCING, None
        task = asyncio.create_task(informer.run(), name=f"informer:{kind.kind_id}")
        task.add_done_callback(functools.partial(self._finished, kind))
        self.informers[kind] = (informer, task)

    def _finished(self, kind: WatchedKind, task: asyncio.Task[None]) -> None:
        """An informer ended by itself (its kind is no longer served, or a bug): drop it,
        so the next discovery can start it again, and drop the objects it vouched for."""
        entry = self.informers.get(kind)
        if entry is None or entry[1] is not task or task.cancelled():
            return
        del self.informers[kind]
        error = task.exception()
        if error is not None:
            # A bug, not the API: keep the (now aging) objects and say they are stale.
            log.error("informer %s failed", kind.kind_id, exc_info=error)
            entry[0]._down(SyncState.RETRYING, f"informer failed: {error!r}")
        else:
            self.store.remove_kind(kind.kind_id)

    def _stop(self, kind: WatchedKind) -> None:
        entry = self.informers.pop(kind, None)
        if entry is None:
            return
        informer, task = entry
        informer.stopping = True
        task.cancel()
        informer.status.state = SyncState.STOPPED
        informer.status.down_since = None
        self.store.remove_kind(kind.kind_id)

    def _publish_providers(self) -> None:
        providers = providers_of(self.informers)
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
            except Gone:
                resource_version = None
            except (Forbidden, NotServed) as exc:
                log.warning("cannot watch CRDs (%s); providers are fixed at start", exc)
                return
            except (Transient, aiohttp.ClientError, TimeoutError, OSError,
                    orjson.JSONDecodeError) as exc:
                log.warning("CRD watch: %s", exc)
                resource_version = None
                await asyncio.sleep(backoff.next_delay(getattr(exc, "retry_after", None)))

    async def _crd_version(self) -> str:
        data = await _get_json(self.transport, CRD_KIND.path, [("limit", "1")])
        return str((data.get("metadata") or {}).get("resourceVersion") or "")

    async def _watch_crds(self, resource_version: str) -> str:
        params = [("watch", "1"), ("resourceVersion", resource_version),
                  ("allowWatchBookmarks", "true"),
                  ("timeoutSeconds", str(random.randint(*self.settings.watch_timeout)))]
        response = await self.transport.get(CRD_KIND.path, params)
        try:
            if response.status != 200:
                _check(response, await response.read())
            async for line in stream_lines(response, self.settings.inactivity_timeout):
                event = orjson.loads(line)
                raise_on_error(event)
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
        current = set(await discover(self.transport, self.settings.metadata_only))
        for kind in current - set(self.informers):
            self._start(kind)
        for kind in set(self.informers) - current:
            self._stop(kind)
        self._publish_providers()
