"""Each core kind's fields are declared once, by the Structs of graph/ingest/api_objects.py.

The typed list pages and watch events decode into those Structs, and the shapes of the
checked path's decoder (decoding.py) are derived from them. This table checks the rest
against the same declaration, kind by kind: the checked path (to_record) reads nothing that
is not declared (a field it read would be dropped by the fast decoders), nothing is declared
that no record reads, the shapes keep exactly the declared fields, the typed path builds the
checked record, and the list worker's rows carry exactly a PodRecord's fields.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Iterator
from dataclasses import fields
from typing import Any, Union, get_args, get_origin

import msgspec
import orjson
import pytest

from netsight.graph.ingest.api_objects import DECLARED
from netsight.graph.ingest.decoding import decode_event, decode_page
from netsight.graph.ingest.typed_pages import list_page_records
from netsight.graph.ingest.worker_rows import PodRow
from netsight.graph.model.kinds import Kind
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import PodRecord

# What every object carries besides its kind's fields: its identity (list items come
# without kind and apiVersion), the resourceVersion a watch resumes from, and generateName,
# which the checked path names when a name is missing.
ENVELOPE = {"apiVersion", "kind", "metadata.resourceVersion", "metadata.generateName"}

META = {"name": "web-1", "namespace": "shop", "labels": {"app": "web"},
        "annotations": {"sidecar.istio.io/inject": "true", "note": "x"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7",
                             "controller": True},
                            {"apiVersion": "v1", "kind": "Node", "name": "node-1"}],
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "deletionTimestamp": "2026-01-02T00:00:00Z"}
CONTAINER = {"name": "istio-proxy", "restartPolicy": "Always",
             "ports": [{"containerPort": 15090, "protocol": "TCP", "name": "metrics"}]}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": META,
       "spec": {"containers": [CONTAINER], "initContainers": [CONTAINER],
                "nodeName": "node-1", "hostNetwork": False, "serviceAccountName": "web",
                "hostname": "web-1", "subdomain": "web", "dnsPolicy": "None",
                "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["a.example"],
                              "options": [{"name": "ndots", "value": "2"},
                                          {"name": "edns0"}]}},
       "status": {"podIPs": [{"ip": "10.0.0.1"}], "phase": "Running",
                  "conditions": [{"type": "Ready", "status": "True"}],
                  "initContainerStatuses": [{"state": {"terminated": {"exitCode": 0}}}],
                  "containerStatuses": [{"state": {"waiting": {
                      "reason": "CrashLoopBackOff"}}}]}}
# The pod IP is read when there is no list of them.
POD_WITH_ONE_IP = {**POD, "status": {"podIP": "10.0.0.2"}}
SLICE = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": META,
         "spec": {}, "addressType": "IPv4",
         "endpoints": [{"addresses": ["10.0.0.1"], "nodeName": "node-1",
                        "conditions": {"ready": True, "serving": True, "terminating": False},
                        "targetRef": {"kind": "Pod", "name": "web-1"}}],
         "ports": [{"port": 8080, "protocol": "TCP", "name": "http", "appProtocol": "http"}]}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": META,
           "spec": {"type": "NodePort", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
                    "selector": {"app": "web"}, "externalName": "web.example",
                    "publishNotReadyAddresses": True,
                    "ports": [{"port": 80, "targetPort": "http", "protocol": "TCP",
                               "name": "http", "nodePort": 30080, "appProtocol": "http"}]}}
POLICY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": META,
          "spec": {"podSelector": {"matchLabels": {"app": "web"}},
                   "policyTypes": ["Ingress", "Egress"],
                   "ingress": [{"from": [{"podSelector": {}}]}], "egress": [{}]}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {**META, "namespace": ""},
             "spec": {"finalizers": ["kubernetes"]}}

# kind id -> its apiVersion, and objects that between them hold every field its record reads
TABLE: dict[str, tuple[str, list[dict[str, Any]]]] = {
    Kind.POD: ("v1", [POD, POD_WITH_ONE_IP]),
    Kind.ENDPOINT_SLICE: ("discovery.k8s.io/v1", [SLICE]),
    Kind.SERVICE: ("v1", [SERVICE]),
    Kind.NETWORK_POLICY: ("networking.k8s.io/v1", [POLICY]),
    Kind.NAMESPACE: ("v1", [NAMESPACE]),
}


def declared(struct: type[msgspec.Struct], prefix: str = ""
             ) -> Iterator[tuple[str, bool, tuple[type[msgspec.Struct], str]]]:
    """(path, is a leaf, (the Struct declaring it, its name)) of every field ``struct``
    declares, nested ones included; ``[]`` marks a list's items."""
    for field in msgspec.structs.fields(struct):
        path = f"{prefix}{field.encode_name}"
        nested = _struct_in(field.type)
        yield path, nested is None, (struct, field.name)
        if nested is not None:
            inner, listed = nested
            yield from declared(inner, f"{path}[]." if listed else f"{path}.")


def split(kind: str) -> tuple[set[str], set[str]]:
    """A kind's declared leaves (with the envelope) and its declared containers."""
    paths = {path: leaf for path, leaf, _ in declared(DECLARED[kind])}
    containers = {p for p, leaf in paths.items() if not leaf}
    containers |= {f"{p}[]" for p in containers}  # a list's items, where it holds Structs
    return {p for p, leaf in paths.items() if leaf} | ENVELOPE, containers


def _struct_in(annotation: Any) -> tuple[type[msgspec.Struct], bool] | None:
    """The Struct a field holds (and whether in a list), or None for a leaf."""
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        others = [a for a in get_args(annotation) if a is not type(None)]
        return _struct_in(others[0]) if len(others) == 1 else None
    if origin in (list, tuple):
        inner = _struct_in(get_args(annotation)[0])
        return None if inner is None else (inner[0], True)
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return annotation, False
    return None


class RecordingDict(dict[str, Any]):
    """A JSON object that notes the path of every field read from it."""

    def __init__(self, data: dict[str, Any], path: str, reads: set[str]) -> None:
        super().__init__(data)
        self.path, self.reads = path, reads

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def get(self, key: str, default: Any = None) -> Any:
        self.reads.add(self._at(key))
        if not dict.__contains__(self, key):
            return default
        return recording(dict.__getitem__(self, key), self._at(key), self.reads)

    def __getitem__(self, key: str) -> Any:
        self.reads.add(self._at(key))
        return recording(dict.__getitem__(self, key), self._at(key), self.reads)

    def __contains__(self, key: object) -> bool:
        self.reads.add(self._at(str(key)))
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self.reads.add(self._at("*"))  # every field at once
        return dict.__iter__(self)

    def items(self) -> Any:
        self.reads.add(self._at("*"))
        return dict.items(self)


class RecordingList(list[Any]):
    def __init__(self, data: list[Any], path: str, reads: set[str]) -> None:
        super().__init__(data)
        self.path, self.reads = path, reads

    def __iter__(self) -> Iterator[Any]:
        self.reads.add(f"{self.path}[]")
        for item in list.__iter__(self):
            yield recording(item, f"{self.path}[]", self.reads)

    def __getitem__(self, index: Any) -> Any:
        self.reads.add(f"{self.path}[]")
        return recording(list.__getitem__(self, index), f"{self.path}[]", self.reads)


def recording(value: Any, path: str, reads: set[str]) -> Any:
    if type(value) is dict:
        return RecordingDict(value, path, reads)
    if type(value) is list:
        return RecordingList(value, path, reads)
    return value


def reads_of(obj: dict[str, Any]) -> set[str]:
    """The paths the checked path reads to build ``obj``'s record."""
    reads: set[str] = set()
    to_record(RecordingDict(copy.deepcopy(obj), "", reads), "")
    return reads


def paths_of(value: Any, prefix: str = "") -> Iterator[str]:
    """Every path present in a JSON value (``[]`` for a list's items)."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}{key}"
            yield path
            yield from paths_of(item, f"{path}.")
    elif isinstance(value, list) and prefix:
        for item in value:
            yield f"{prefix[:-1]}[]"
            yield from paths_of(item, f"{prefix[:-1]}[].")


def covered(path: str, leaves: set[str], containers: set[str]) -> bool:
    """Whether ``path`` is declared, or lies within a declared leaf (read as a whole)."""
    if path in leaves or path in containers:
        return True
    return any(path.startswith((f"{leaf}.", f"{leaf}[]")) for leaf in leaves)


def noisy(obj: Any, containers: set[str], path: str = "") -> Any:
    """``obj`` with an undeclared field in every object that declared fields belong to."""
    if isinstance(obj, dict) and (not path or path in containers):
        at = f"{path}." if path else ""
        return {**{k: noisy(v, containers, f"{at}{k}") for k, v in obj.items()},
                "managedFields": [{"manager": "kubectl"}]}
    if isinstance(obj, list) and f"{path}[]" in containers:
        return [noisy(item, containers, f"{path}[]") for item in obj]
    return obj


@pytest.mark.parametrize("kind", list(TABLE))
def test_the_checked_path_reads_only_declared_fields(kind: str) -> None:
    leaves, containers = split(kind)
    for obj in TABLE[kind][1]:
        undeclared = {p for p in reads_of(obj) if not covered(p, leaves, containers)}
        assert not undeclared, f"{kind} records read fields api_objects does not declare"


def test_every_declared_field_is_read_by_a_record() -> None:
    # A Struct serves at several places (ObjectMeta in every kind, a pod's containers and
    # init containers): each of its fields must be read at one of them at least.
    fields_at: dict[str, tuple[type[msgspec.Struct], str]] = {}
    read: set[tuple[type[msgspec.Struct], str]] = set()
    for kind, (_, objects) in TABLE.items():
        fields_at = {path: field for path, _, field in declared(DECLARED[kind])}
        for obj in objects:
            read |= {fields_at[path] for path in reads_of(obj) if path in fields_at}
    unread = {f"{struct.__name__}.{name}" for kind in TABLE
              for _, _, (struct, name) in declared(DECLARED[kind])} - {
        f"{struct.__name__}.{name}" for struct, name in read}
    assert not unread


@pytest.mark.parametrize("kind", list(TABLE))
def test_the_shapes_keep_exactly_the_declared_fields(kind: str) -> None:
    leaves, containers = split(kind)
    for obj in TABLE[kind][1]:
        full = noisy(obj, containers)
        body = orjson.dumps({"metadata": {}, "items": [full]})
        (item,) = decode_page(kind, body)["items"]
        event = decode_event(kind, orjson.dumps({"type": "ADDED", "object": full}))["object"]
        expected = {p for p in paths_of(obj) if covered(p, leaves, containers)}
        for shaped in (item, event):
            kept = set(paths_of(shaped))
            assert {p for p in kept if not covered(p, leaves, containers)} == set()
            assert kept == expected


@pytest.mark.parametrize("kind", list(TABLE))
def test_the_typed_path_builds_the_checked_record(kind: str) -> None:
    api_version, objects = TABLE[kind]
    _, containers = split(kind)
    for obj in objects:
        listed = {k: v for k, v in noisy(obj, containers).items()
                  if k not in ("kind", "apiVersion")}
        found = list_page_records(kind, orjson.dumps({"metadata": {}, "items": [listed]}),
                                  api_version)
        assert found is not None, f"the typed {kind} refuses a well-formed object"
        assert found[1] == [to_record(obj, "")]


def test_the_worker_rows_carry_a_pod_records_fields() -> None:
    # Each listed pod's kind and apiVersion are Pod and v1; the rest travels in its row.
    record_fields = [f.name for f in fields(PodRecord) if f.init]
    row_fields = list(msgspec.structs.fields(PodRow))
    assert [f.name for f in row_fields] == [n for n in record_fields
                                           if n not in ("kind", "api_version")]
