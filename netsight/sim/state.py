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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from netsight.graph.model.selectors import LabelSelector
from netsight.sim.resources import CRD_TYPE, Registry, ResourceType, types_from_crd

StorageKey = tuple[str, str]  # (group, kind): all versions of a kind share storage
Obj = dict[str, Any]


class ApiError(Exception):
    """A failure the API server reports as a Status object."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message

    def status(self) -> Obj:
        return status_object(self.code, self.reason, self.message)


def status_object(code: int, reason: str, message: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


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
class FieldRequirement:
    path: tuple[str, ...]
    value: str
    equal: bool

    def matches(self, obj: Mapping[str, Any]) -> bool:
        current: Any = obj
        for part in self.path:
            current = current.get(part) if isinstance(current, dict) else None
        actual = "" if current is None else str(current)
        return (actual == self.value) == self.equal


def parse_field_selector(text: str) -> tuple[FieldRequirement, ...]:
    requirements = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        if "!=" in term:
            path, _, value = term.partition("!=")
            equal = False
        elif "=" in term:
            path, _, value = term.replace("==", "=").partition("=")
            equal = True
        else:
            raise ValueError(f"cannot read field selector term {term!r}")
        requirements.append(FieldRequirement(tuple(path.strip().split(".")), value.strip(),
                                             equal))
    return tuple(requirements)


@dataclass(frozen=True, slots=True)
class Selection:
    """What one list or watch asks for: a namespace and label/field selectors."""

    namespace: str | None = None
    labels: LabelSelector | None = None
    fields: tuple[FieldRequirement, ...] = ()

    @property
    def everything(self) -> bool:
        return not self.namespace and self.labels is None and not self.fields

    def matches(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        if self.labels is not None and not self.labels.matches(meta.get("labels") or {}):
            return False
        return all(req.matches(obj) for req in self.fields)


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
    last_rv: int = 0

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
        kind = event.type if self.selection.everything else _visible_type(event,
                                                                          self.selection)
        if kind is not None:
            self.put(self.line(kind, event.new, encodings))
            self.last_rv = event.rv

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



@dataclass
class Failure:
    status: int
    remaining: int
    path_contains: str = ""
    watch_only: bool = False


@dataclass
class Faults:
    """Misbehaviour to inject, as a real API server or network sometimes shows it."""

    latency: float = 0.0  # seconds added to every request
    failures: list[Failure] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)  # plurals answered with 403
    stalled: bool = False  # watches stay open but send nothing (events wait), not even bookmarks

    def fail(self, status: int, count: int = 1, *, path_contains: str = "",
             watch_only: bool = False) -> None:
        self.failures.append(Failure(status, count, path_contains, watch_only))

    def take_failure(self, path: str, *, watch: bool) -> int | None:
        for failure in self.failures:
            if failure.path_contains in path and (watch or not failure.watch_only):
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self.failures.remove(failure)
                return failure.status
        return None


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
        return self._commit(rtype, "MODIFIED", object_key(namespace, name), current, obj)

    def patch(self, rtype: ResourceType, namespace: str | None, name: str, patch: Any,
              content_type: str) -> Obj:
        current = self.get(rtype, namespace, name)
        if "json-patch" in content_type:
            patched = _json_patch(copy.deepcopy(current), patch)
        else:  # merge-patch and strategic-merge-patch (merged as a JSON merge patch)
            if not isinstance(patch, dict):
                raise ApiError(400, "BadRequest", "a merge patch must be a JSON object")
            patched = _merge_patch(copy.deepcopy(current), patch)
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

    def apply(self, objects: Iterable[Obj]) -> int:
        """Create or replace each object, in order (loading a scenario or synthetic cluster)."""
        count = 0
        for obj in objects:
            rtype = self.registry.for_kind(str(obj.get("apiVersion")), str(obj.get("kind")))
            if rtype is None:
                raise ApiError(404, "NotFound", f"no resource for {obj.get('apiVersion')} "
                               f"{obj.get('kind')}; create its CRD first")
            meta = obj.get("metadata") or {}
            namespace = self._namespace_of(rtype, meta, None)
            try:
                self.create(rtype, obj, namespace)
            except ApiError as exc:
                if exc.code != 409:
                    raise
                self.replace(rtype, obj, namespace, meta["name"])
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
                self.delete(rtype, namespace, key[len(prefix):])

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
            watcher.last_rv = self.rv
        else:
            for event in self._events_after(since):
                if event.storage == storage_key(rtype):
                    watcher.offer(event)
            watcher.last_rv = max(watcher.last_rv, since)
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


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = _merge_patch(target.get(key), value)
    return target


def _json_patch(target: Obj, operations: Any) -> Obj:
    """RFC 6902 JSON patch: add, remove, replace (enough for kubectl and tests)."""
    if not isinstance(operations, list):
        raise ApiError(400, "BadRequest", "a JSON patch must be a list of operations")
    for op in operations:
        if not isinstance(op, dict):
            raise ApiError(400, "BadRequest", "a JSON patch operation must be an object")
        parts = [p.replace("~1", "/").replace("~0", "~")
                 for p in str(op.get("path", "")).split("/")[1:]]
        if not parts:
            raise ApiError(400, "BadRequest", "JSON patch path must not be empty")
        parent: Any = target
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent.setdefault(part, {})
        last = parts[-1]
        action = op.get("op")
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if action == "add":
                parent.insert(index, op.get("value"))
            elif action == "remove":
                parent.pop(index)
            elif action == "replace":
                parent[index] = op.get("value")
        elif action in ("add", "replace"):
            parent[last] = op.get("value")
        elif action == "remove":
            parent.pop(last, None)
        else:
            raise ApiError(400, "BadRequest", f"unsupported JSON patch op {action!r}")
    return target
