"""The simulated cluster's state: objects, resourceVersions, the event log and watchers.

It behaves like the API server's watch cache: every write gets the next resourceVersion
and an event in a bounded log; a watch from an old resourceVersion replays the log, and one
from before the log's start gets ``410 Gone``. Selectors on a watch turn MODIFIED events
into ADDED/DELETED as objects enter or leave the selection, as the real server does.
"""

from __future__ import annotations

import asyncio
import copy
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from netsight.sim.dataplane.network import Network
from netsight.sim.faults import Faults
from netsight.sim.patching import PatchError, json_patch, merge_patch
from netsight.sim.resources import CRD_TYPE, Registry, ResourceType, types_from_crd
from netsight.sim.selection import Selection

StorageKey = tuple[str, str]  # (group, kind): all versions of a kind share storage
Obj = dict[str, Any]
Listed = list[Obj]  # SimState.list names a method


class ApiError(Exception):
    """A failure the API server reports as a Status object."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None
                 ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> Obj:
        status = status_object(self.code, self.reason, self.message)
        if self.details:
            status["details"] = self.details
        return status

    @property
    def retry_after(self) -> int | None:
        """Seconds the client should wait (the API server sends them as Retry-After too)."""
        seconds = (self.details or {}).get("retryAfterSeconds")
        return seconds if isinstance(seconds, int) and seconds > 0 else None


def status_object(code: int, reason: str, message: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def too_large(requested: int, current: int, retry_seconds: int = 0) -> ApiError:
    """A read at a resourceVersion the storage has not reached, as kube-apiserver refuses it
    (k8s.io/apiserver storage.NewTooLargeResourceVersionError): 504 with reason Timeout and
    the cause ResourceVersionTooLarge; its watch cache, having waited, asks for a retry in
    1 s, its etcd path (retry 0) says nothing of retrying."""
    details: Obj = {"causes": [{"reason": "ResourceVersionTooLarge",
                                "message": "Too large resource version"}]}
    if retry_seconds:
        details["retryAfterSeconds"] = retry_seconds
    return ApiError(504, "Timeout", f"Timeout: Too large resource version: {requested}, "
                    f"current: {current}", details)


def storage_key(rtype: ResourceType) -> StorageKey:
    return (rtype.group, rtype.kind)


def object_key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def clone(obj: Obj) -> Obj:
    """A deep copy; JSON round-trips are several times faster than copy.deepcopy."""
    copied: Obj = orjson.loads(orjson.dumps(obj))
    return copied


def sort_metadata_maps(meta: Obj) -> None:
    """Labels and annotations with their keys sorted, as the API server writes them: they
    are Go maps, which encoding/json writes in key order, whatever order a client sent.
    Clients may rely on it (netsight's decoders look label maps up as listed). New dicts
    replace the old ones: a stored object's metadata is its own, its maps may be shared."""
    for name in ("labels", "annotations"):
        value = meta.get(name)
        if type(value) is dict and len(value) > 1:
            keys = list(value)
            if keys != sorted(keys):
                meta[name] = {key: value[key] for key in sorted(keys)}


_last_second: list[Any] = [None, ""]  # (second, its RFC 3339 form): writes come in bursts


def now() -> str:
    second = int(time.time())
    if second != _last_second[0]:
        _last_second[:] = [second, datetime.fromtimestamp(second, UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ")]
    text: str = _last_second[1]
    return text


@dataclass(frozen=True, slots=True)
class Event:
    rv: int
    storage: StorageKey
    type: str  # ADDED, MODIFIED, DELETED
    old: Obj | None
    new: Obj


# A watch line is this prefix, the object's JSON, and b"}\n": one encoding of an object
# serves every event type and every watcher of its kind.
_PREFIXES: Final = {t: b'{"type":"%s","object":' % t.encode()
                    for t in ("ADDED", "MODIFIED", "DELETED")}
Encodings = dict[tuple[str, bool], bytes]  # (apiVersion, metadata only) -> the object's JSON


@dataclass(eq=False)
class Watcher:
    """One open watch: the lines it has yet to send, and a flag its stream waits on.

    Lines wait in ``pending`` until the stream takes them all at once, as the API server
    sends whatever is queued in one write; ``None`` there ends the stream.
    """

    rtype: ResourceType
    selection: Selection
    metadata_only: bool = False  # objects cut down to PartialObjectMetadata
    pending: list[bytes | None] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set: pending has lines
    # The resourceVersion the watch starts after: as kube-apiserver's watch cache, it sends
    # no event at or below it, and no bookmark until the storage has reached it.
    after: int = 0

    def put(self, line: bytes | None) -> None:
        self.pending.append(line)
        self.ready.set()

    def take(self, most: int = 1000) -> list[bytes | None]:
        """Up to ``most`` pending lines, oldest first, and ready cleared if that was all."""
        pending = self.pending
        if len(pending) <= most:
            self.pending = []
            self.ready.clear()
            return pending
        lines = pending[:most]
        del pending[:most]
        return lines

    def offer(self, event: Event, encodings: Encodings | None = None) -> None:
        """Queue the event as this watch sees it (through its selection), if it does;
        ``encodings`` caches the object's JSON across the watchers of one event."""
        if event.rv <= self.after:
            return
        kind = event.type if self.selection.everything else _visible_type(event,
                                                                          self.selection)
        if kind is not None:
            self.put(self.line(kind, event.new, encodings))

    def line(self, event_type: str, obj: Obj, encodings: Encodings | None = None) -> bytes:
        """The watch line of an event of ``obj``, as this watch sends it."""
        rtype = self.rtype
        key = (rtype.api_version, self.metadata_only)
        body = None if encodings is None else encodings.get(key)
        if body is None:
            if self.metadata_only:
                body = orjson.dumps(partial_metadata(obj))
            elif obj.get("apiVersion") == rtype.api_version and obj.get("kind") == rtype.kind:
                body = orjson.dumps(obj)
            else:
                body = orjson.dumps(with_type_meta(rtype, obj))
            if encodings is not None:
                encodings[key] = body
        return _PREFIXES[event_type] + body + b"}\n"


META_V1 = "meta.k8s.io/v1"


def partial_metadata(obj: Obj) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": META_V1,
            "metadata": obj.get("metadata") or {}}


def _visible_type(event: Event, selection: Selection) -> str | None:
    now_in = selection.matches(event.new)
    if event.type == "DELETED":
        return "DELETED" if now_in else None
    was_in = event.old is not None and selection.matches(event.old)
    if now_in:
        return "MODIFIED" if was_in else "ADDED"
    return "DELETED" if was_in else None


def with_type_meta(rtype: ResourceType, obj: Obj) -> Obj:
    return {"apiVersion": rtype.api_version, "kind": rtype.kind,
            **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}}



@dataclass(frozen=True)
class Checkpoint:
    """What :meth:`SimState.restore` goes back to."""

    rv: int
    objects: dict[StorageKey, dict[str, Obj]]
    types: dict[tuple[str, str, str], ResourceType]


@dataclass
class SimState:
    registry: Registry = field(default_factory=Registry.with_builtins)
    log_window: int = 50_000  # events kept for watch resumption; older ones are compacted
    rv: int = 1
    objects: dict[StorageKey, dict[str, Obj]] = field(default_factory=dict)
    log: deque[Event] = field(default_factory=deque)
    compacted_rv: int = 1  # a watch from below this gets 410 Gone
    watchers: set[Watcher] = field(default_factory=set)
    faults: Faults = field(default_factory=Faults)
    # What the cluster's objects do not say about its network (the CNI, listeners, data-plane
    # faults): read by the simulated data plane, which decides what probe pods observe.
    network: Network = field(default_factory=Network)
    # Called with every committed event, after the watchers: the controllers that run in
    # the simulated cluster (the endpoint-slice controller) and may write in turn.
    observers: list[Callable[[Event], None]] = field(default_factory=list)
    # The open watchers by the storage they watch: a write offers its event to these only.
    _watching: dict[StorageKey, set[Watcher]] = field(default_factory=dict, init=False,
                                                      repr=False)
    # storage -> ((rv, size) when ordered, its keys and objects in name order): list()
    # serves every list of an unchanged store from these; never changed in place.
    _ordered: dict[StorageKey, tuple[tuple[int, int], list[str], list[Obj]]] = field(
        default_factory=dict, init=False, repr=False)

    # --- reads ---------------------------------------------------------------------------

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> Obj:
        obj = self.objects.get(storage_key(rtype), {}).get(object_key(namespace, name))
        if obj is None:
            raise ApiError(404, "NotFound", f'{rtype.plural} "{name}" not found')
        return obj

    def list(self, rtype: ResourceType, selection: Selection) -> tuple[int, list[Obj]]:
        """Matching objects in name order, with the resourceVersion they are current at.
        The list may be the one kept for the next caller: read it, never change it."""
        storage = storage_key(rtype)
        store = self.objects.get(storage, {})
        # Kept in name order between writes, as the API server's watch cache keeps its
        # objects ordered: a list's first page then needs no sort of every key.
        version = (self.rv, len(store))
        ordered = self._ordered.get(storage)
        if ordered is None or ordered[0] != version:
            keys = sorted(store)
            ordered = self._ordered[storage] = (version, keys, [store[k] for k in keys])
        _, keys, items = ordered
        if selection.namespace:
            prefix = f"{selection.namespace}/"
            items = [store[k] for k in keys if k.startswith(prefix)]
        if selection.labels is not None or selection.fields:
            items = [o for o in items if selection.matches(o)]
        return self.rv, items

    def list_at(self, rtype: ResourceType, selection: Selection, rv: int) -> Listed:
        """Matching objects as they were at ``rv`` (an Exact read), rebuilt by undoing the
        logged events after it; 410 once the log no longer reaches back that far."""
        if rv > self.rv:
            raise too_large(rv, self.rv)
        if rv < self.compacted_rv:
            raise ApiError(410, "Expired", "The resourceVersion for the provided list is "
                           "too old.")
        storage = storage_key(rtype)
        objects = dict(self.objects.get(storage, {}))
        for event in reversed(self.log):
            if event.rv <= rv:
                break
            if event.storage == storage:
                meta = event.new["metadata"]
                key = object_key(meta.get("namespace"), meta["name"])
                if event.old is None:
                    objects.pop(key, None)
                else:
                    objects[key] = event.old
        return [objects[k] for k in sorted(objects) if selection.matches(objects[k])]

    # --- writes --------------------------------------------------------------------------

    def create(self, rtype: ResourceType, obj: Obj, namespace: str | None = None, *,
               owned: bool = False) -> Obj:
        """Store a new object. The state keeps a deep copy of ``obj``, unless ``owned``:
        then the caller hands ``obj`` over, its top level and ``metadata`` dicts its own
        to give, and whatever else it shares (nested parts of other stored objects, say)
        is never changed in place by anyone."""
        obj = obj if owned else clone(obj)
        meta = obj.setdefault("metadata", {})
        name = meta.get("name")
        if not name and meta.get("generateName"):
            name = meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        if not isinstance(name, str) or not name:
            raise ApiError(422, "Invalid", "metadata.name: Required value")
        namespace = self._namespace_of(rtype, meta, namespace)
        store = self.objects.setdefault(storage_key(rtype), {})
        key = object_key(namespace, name)
        if key in store:
            raise ApiError(409, "AlreadyExists", f'{rtype.plural} "{name}" already exists')
        if rtype == CRD_TYPE:
            obj = self._register_crd(obj)
        if "uid" not in meta:  # not setdefault: a uuid4 costs as much as a small write
            meta["uid"] = str(uuid.uuid4())
        if "creationTimestamp" not in meta:
            meta["creationTimestamp"] = now()
        meta.pop("resourceVersion", None)
        return self._commit(rtype, "ADDED", key, None, obj)

    def replace(self, rtype: ResourceType, obj: Obj, namespace: str | None, name: str, *,
                owned: bool = False) -> Obj:
        """Replace a stored object; ``owned`` as for :meth:`create`."""
        current = self.get(rtype, namespace, name)
        obj = obj if owned else clone(obj)
        meta = obj.setdefault("metadata", {})
        given = meta.get("resourceVersion")
        if given and given != current["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {rtype.plural} '
                           f'"{name}": the object has been modified; please apply your '
                           "changes to the latest version and try again")
        meta["name"], meta["uid"] = name, current["metadata"]["uid"]
        meta["creationTimestamp"] = current["metadata"]["creationTimestamp"]
        if rtype.namespaced:
            meta["namespace"] = namespace
        if rtype == CRD_TYPE:
            obj = self._reregister_crd(current, obj)
        return self._commit(rtype, "MODIFIED", object_key(namespace, name), current, obj)

    def patch(self, rtype: ResourceType, namespace: str | None, name: str, patch: Any,
              content_type: str) -> Obj:
        current = self.get(rtype, namespace, name)
        try:
            if "json-patch" in content_type:
                patched = json_patch(copy.deepcopy(current), patch)
            else:  # merge-patch and strategic-merge-patch (merged as a JSON merge patch)
                if not isinstance(patch, dict):
                    raise PatchError("a merge patch must be a JSON object")
                patched = merge_patch(copy.deepcopy(current), patch)
        except PatchError as exc:
            raise ApiError(400, "BadRequest", str(exc)) from None
        patched.setdefault("metadata", {})["resourceVersion"] = None
        return self.replace(rtype, patched, namespace, name, owned=True)

    def delete(self, rtype: ResourceType, namespace: str | None, name: str) -> Obj:
        current = self.get(rtype, namespace, name)
        key = object_key(namespace, name)
        if rtype == CRD_TYPE:
            self._unregister_crd(current)
        if rtype.kind == "Namespace" and not rtype.group:
            self._delete_namespace_contents(name)
        del self.objects[storage_key(rtype)][key]
        # Stored objects are never changed in place below their top level and metadata,
        # the only parts _commit writes to.
        gone = {**current, "metadata": dict(current["metadata"])}
        return self._commit(rtype, "DELETED", key, current, gone, store=False)

    def apply(self, objects: Iterable[Obj], *, owned: bool = False) -> int:
        """Create or replace each object, in order (loading a scenario or synthetic cluster);
        ``owned`` as for :meth:`create`, for every object: a generated cluster's objects
        then stay as the generator built them, sharing their unchanging parts, rather than
        each deep-copied apart."""
        count = 0
        for obj in objects:
            rtype = self.registry.for_kind(str(obj.get("apiVersion")), str(obj.get("kind")))
            if rtype is None:
                raise ApiError(404, "NotFound", f"no resource for {obj.get('apiVersion')} "
                               f"{obj.get('kind')}; create its CRD first")
            meta = obj.get("metadata") or {}
            namespace = self._namespace_of(rtype, meta, None)
            try:
                self.create(rtype, obj, namespace, owned=owned)
            except ApiError as exc:
                if exc.code != 409:
                    raise
                self.replace(rtype, obj, namespace, meta["name"], owned=owned)
            count += 1
        return count

    def _namespace_of(self, rtype: ResourceType, meta: Mapping[str, Any],
                      namespace: str | None) -> str | None:
        if not rtype.namespaced:
            return None
        namespace = namespace or meta.get("namespace") or "default"
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise ApiError(400, "BadRequest", "the namespace of the object does not match "
                           "the namespace of the request")
        return str(namespace)

    def _commit(self, rtype: ResourceType, event_type: str, key: str, old: Obj | None,
                new: Obj, *, store: bool = True) -> Obj:
        self.rv += 1
        meta = new.setdefault("metadata", {})
        sort_metadata_maps(meta)
        meta["resourceVersion"] = str(self.rv)
        if rtype.namespaced:
            meta["namespace"] = key.partition("/")[0]
        new["apiVersion"], new["kind"] = rtype.api_version, rtype.kind
        storage = (rtype.group, rtype.kind)
        if store:
            self.objects.setdefault(storage, {})[key] = new
        event = Event(self.rv, storage, event_type, old, new)
        log = self.log
        log.append(event)
        if len(log) > self.log_window:
            while len(log) > self.log_window:
                self.compacted_rv = log.popleft().rv
        watchers = self._watching.get(storage)
        if watchers:
            encodings: Encodings = {}
            for watcher in watchers:
                watcher.offer(event, encodings)
        for observe in self.observers:
            observe(event)
        return new

    # --- CRDs and namespaces -------------------------------------------------------------

    def _register_crd(self, crd: Obj) -> Obj:
        try:
            types = types_from_crd(crd)
        except ValueError as exc:
            raise ApiError(422, "Invalid", f"CustomResourceDefinition: {exc}") from None
        for rtype in types:
            self.registry.add(rtype)
        crd["status"] = {
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
            ],
            "acceptedNames": crd["spec"]["names"],
            "storedVersions": [types[0].version],
        }
        return crd

    def _reregister_crd(self, current: Obj, crd: Obj) -> Obj:
        """An updated CRD serves the versions it now lists, and no others; its objects are
        kept (every version shares their storage)."""
        crd = self._register_crd(crd)
        served = {(t.group, t.version, t.plural) for t in types_from_crd(crd)}
        for rtype in types_from_crd(current):
            if (rtype.group, rtype.version, rtype.plural) not in served:
                self.registry.remove(rtype)
        stored = (current.get("status") or {}).get("storedVersions") or []
        crd["status"]["storedVersions"] = list(dict.fromkeys(
            [*stored, *crd["status"]["storedVersions"]]))
        return crd

    def _unregister_crd(self, crd: Obj) -> None:
        types = types_from_crd(crd)
        store = self.objects.get(storage_key(types[0]), {})
        for key in sorted(store):
            namespace, _, name = key.rpartition("/")
            self.delete(types[0], namespace or None, name)
        for rtype in types:
            self.registry.remove(rtype)

    def _delete_namespace_contents(self, namespace: str) -> None:
        prefix = f"{namespace}/"
        for rtype in list(self.registry):
            if not rtype.namespaced:
                continue
            store = self.objects.get(storage_key(rtype), {})
            for key in [k for k in store if k.startswith(prefix)]:
                if key in store:  # a controller may have deleted it meanwhile
                    self.delete(rtype, namespace, key[len(prefix):])

    # --- storage -------------------------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """The objects and resourceVersion now, as a backup of etcd would hold them."""
        # Stored objects are never changed in place (writes store new dicts): a copy of
        # each store's index is a copy of the state.
        return Checkpoint(self.rv, {s: dict(objs) for s, objs in self.objects.items()},
                          dict(self.registry.by_path))

    def restore(self, checkpoint: Checkpoint) -> int:
        """Fault: the storage goes back to ``checkpoint`` (etcd restored from a backup under a
        restarted API server). Objects, CRDs and resourceVersion are as they were then, with
        no event history: a watch from before it gets 410, one from after it is accepted
        and hears nothing until the resourceVersion catches up, as kube-apiserver's watch
        cache does. Every open watch ends; returns how many."""
        self.objects = {s: dict(objs) for s, objs in checkpoint.objects.items()}
        self.registry = Registry(dict(checkpoint.types))
        self.rv = self.compacted_rv = checkpoint.rv
        self.log.clear()
        self._ordered.clear()  # keyed by (rv, size): the old keys would match again
        return self.close_all_watches()

    # --- watches -------------------------------------------------------------------------

    def check_watch_from(self, resource_version: str | None) -> None:
        """Raise what open_watch would for this resourceVersion (400, 410), registering
        nothing."""
        self._watch_start(resource_version)

    def _watch_start(self, resource_version: str | None) -> int | None:
        """The resourceVersion a watch resumes after; None: it starts from the current
        state. Raises 400 for a malformed one, 410 for one the log no longer holds."""
        if resource_version in (None, "", "0"):
            return None
        try:
            since = int(resource_version)
        except ValueError:
            raise ApiError(400, "BadRequest",
                           f"invalid resourceVersion {resource_version!r}") from None
        if since < self.compacted_rv:
            raise ApiError(410, "Expired",
                           f"too old resource version: {since} ({self.compacted_rv})")
        return since

    def open_watch(self, rtype: ResourceType, selection: Selection,
                   resource_version: str | None, *, metadata_only: bool = False) -> Watcher:
        """Register a watcher, queueing what it must see first. Raises 410 when too old."""
        watcher = Watcher(rtype, selection, metadata_only)
        since = self._watch_start(resource_version)
        if since is None:
            # "Get state and start at most recent": synthetic ADDED for current objects.
            _, items = self.list(rtype, selection)
            for obj in items:
                watcher.put(watcher.line("ADDED", obj))
            watcher.after = self.rv
        else:
            watcher.after = since
            for event in self._events_after(since):
                if event.storage == storage_key(rtype):
                    watcher.offer(event)
        self.watchers.add(watcher)
        self._watching.setdefault(storage_key(rtype), set()).add(watcher)
        return watcher

    def _events_after(self, rv: int) -> Iterator[Event]:
        for event in self.log:
            if event.rv > rv:
                yield event

    def close_watch(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)
        watching = self._watching.get(storage_key(watcher.rtype))
        if watching is not None:
            watching.discard(watcher)

    def close_all_watches(self) -> int:
        """Fault: the server ends every watch stream (as on an API server restart)."""
        count = len(self.watchers)
        for watcher in list(self.watchers):
            watcher.put(None)
        return count

    def expire_all_watches(self) -> int:
        """Fault: compact the log and tell every watcher 410 Gone, mid-stream."""
        self.compacted_rv = self.rv
        self.log.clear()
        line = orjson.dumps({"type": "ERROR", "object": status_object(
            410, "Expired", "too old resource version (compacted)")}) + b"\n"
        count = len(self.watchers)
        for watcher in list(self.watchers):
            watcher.put(line)
            watcher.put(None)
        return count

    def compact(self) -> None:
        """Fault: drop the whole event log; resuming from any earlier version gets 410."""
        self.compacted_rv = self.rv
        self.log.clear()
