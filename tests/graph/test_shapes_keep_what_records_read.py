"""Informers decode Pods, EndpointSlices and the other core kinds into only the fields the
records read (graph/ingest/decoding.py). A record built from a shaped body must equal the
record built from the full body — and a malformed object must fail the same way — whatever
the body holds."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.graph.ingest.decoding import decode_event, decode_page
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import Kind
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import Record
from netsight.sim.synthetic import generate

SHAPED_KINDS = (Kind.POD, Kind.ENDPOINT_SLICE, Kind.SERVICE, Kind.NETWORK_POLICY,
                Kind.NAMESPACE, Kind.INGRESS, Kind.INGRESS_CLASS)


def outcome(raw: dict[str, Any]) -> Record | tuple[str, str]:
    try:
        return to_record(raw, "")
    except MalformedObject as exc:
        return exc.field_path, exc.message


def page(items: list[dict[str, Any]]) -> bytes:
    # As the API server lists them: items without kind and apiVersion.
    return orjson.dumps({"kind": "List", "apiVersion": "v1",
                         "metadata": {"resourceVersion": "7"},
                         "items": [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
                                   for o in items]})


def as_listed(item: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    return {**item, "kind": template["kind"], "apiVersion": template["apiVersion"]}


def test_records_from_shaped_pages_equal_records_from_full_pages() -> None:
    cluster = generate(pods=400, seed=3, policies_per_namespace=4)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in cluster.objects():
        by_kind.setdefault(obj["kind"], []).append(obj)
    for kind in SHAPED_KINDS:
        objects = by_kind.get(kind)
        if not objects:
            continue
        body = page(objects)
        shaped, full = decode_page(kind, body), orjson.loads(body)
        assert shaped["metadata"] == full["metadata"]
        assert len(shaped["items"]) == len(objects)
        for original, small, whole in zip(objects, shaped["items"], full["items"], strict=True):
            assert outcome(as_listed(small, original)) == outcome(as_listed(whole, original))
            assert len(orjson.dumps(small)) <= len(orjson.dumps(whole))
        if kind == Kind.POD:  # the point of it: the noise is gone
            assert "managedFields" not in shaped["items"][0]["metadata"]
            # Of a container's status, only its waiting reason is read (PodRecord.waiting).
            statuses = [c for item in shaped["items"]
                        for c in item["status"].get("containerStatuses") or ()]
            assert statuses
            assert all(set(c) <= {"state"} and set(c.get("state") or {}) <= {"waiting"}
                       for c in statuses)
        event = orjson.dumps({"type": "MODIFIED", "object": objects[0]})
        assert outcome(decode_event(kind, event)["object"]) == outcome(objects[0])


def test_an_error_event_keeps_its_status() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": "too old resource version", "reason": "Expired", "code": 410}
    line = orjson.dumps({"type": "ERROR", "object": status})
    for kind in SHAPED_KINDS:
        assert decode_event(kind, line) == {"type": "ERROR", "object": status}


scalars = st.one_of(st.none(), st.booleans(), st.integers(-1, 70000), st.sampled_from(
    ["", "x", "TCP", "UDP", "Always", "Ready", "True", "Running", "Pending", "10.0.0.9",
     "web", "http", "node-1", "2026-01-01T00:00:00Z"]))
junk: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                     st.dictionaries(st.sampled_from(["a", "name", "kind"]),
                                                     inner, max_size=2)), max_leaves=4)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the well-formed value, one time in 20 anything (a malformed object): most
    bodies are then well-formed throughout, and their records are compared field by field."""
    return st.integers(0, 19).flatmap(lambda i: junk if i == 0 else strategy)


def optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={**fields, "extra": junk})


container_ports = st.lists(maybe(st.fixed_dictionaries(
    {"containerPort": maybe(st.integers(1, 65535))},
    optional={"protocol": maybe(st.sampled_from(["TCP", "UDP"])),
              "name": maybe(st.sampled_from(["http", "metrics"])), "hostPort": junk})),
    max_size=2)
containers = st.lists(maybe(st.fixed_dictionaries(
    {"name": maybe(st.sampled_from(["app", "proxy"])), "ports": maybe(container_ports)},
    optional={"restartPolicy": maybe(st.sampled_from(["Always", "OnFailure"])), "env": junk,
              "image": junk})), min_size=1, max_size=2)
metadata = st.fixed_dictionaries(
    {"name": st.sampled_from(["p", "q"]), "namespace": st.just("ns")},
    optional={"labels": maybe(st.dictionaries(st.sampled_from(["app", "tier"]),
                                              st.sampled_from(["a", "b"]), max_size=2)),
              "annotations": maybe(st.dictionaries(st.sampled_from(
                  ["kubectl.kubernetes.io/last-applied-configuration", "x"]), st.just("v"))),
              "ownerReferences": maybe(st.lists(maybe(optional(
                  apiVersion=st.just("apps/v1"), kind=st.just("ReplicaSet"),
                  name=st.just("rs"), controller=st.booleans(), uid=junk)), max_size=2)),
              "creationTimestamp": maybe(st.just("2026-01-01T00:00:00Z")),
              "deletionTimestamp": maybe(st.just("2026-01-02T00:00:00Z")),
              "managedFields": junk, "generation": junk, "uid": junk})
waiting = optional(reason=maybe(st.sampled_from(["CrashLoopBackOff", "ContainerCreating"])))
container_statuses = st.lists(maybe(optional(
    state=maybe(optional(waiting=maybe(waiting))), image=junk)), max_size=2)
pods = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod"), "metadata": metadata,
     "spec": maybe(st.fixed_dictionaries({"containers": maybe(containers)}, optional={
         "initContainers": maybe(containers), "nodeName": maybe(st.just("node-1")),
         "hostNetwork": maybe(st.booleans()), "serviceAccountName": maybe(st.just("sa")),
         "hostname": maybe(st.just("h")), "subdomain": maybe(st.just("s")), "volumes": junk}))},
    optional={
        "status": maybe(optional(
            podIP=maybe(st.just("10.0.0.1")),
            podIPs=maybe(st.lists(maybe(optional(ip=maybe(st.just("10.0.0.2")))), max_size=2)),
            phase=maybe(st.sampled_from(["Running", "Pending"])),
            conditions=maybe(st.lists(maybe(optional(
                type=maybe(st.sampled_from(["Ready", "Initialized"])),
                status=maybe(st.sampled_from(["True", "False"])))), max_size=2)),
            containerStatuses=maybe(st.one_of(junk, container_statuses)))),
        "extra": junk})
endpoints = st.lists(maybe(optional(
    addresses=maybe(st.lists(st.sampled_from(["10.0.0.1", "fd00::1"]), max_size=2)),
    conditions=maybe(optional(ready=maybe(st.booleans()), serving=st.booleans(),
                              terminating=st.booleans())),
    targetRef=maybe(optional(kind=maybe(st.sampled_from(["Pod", "Node"])),
                             name=maybe(st.just("web-1")), uid=junk)),
    nodeName=maybe(st.just("node-1")), zone=junk, hints=junk)), max_size=3)
slices = st.fixed_dictionaries(
    {"apiVersion": st.just("discovery.k8s.io/v1"), "kind": st.just("EndpointSlice"),
     "metadata": metadata},
    optional={"addressType": maybe(st.just("IPv4")), "endpoints": maybe(endpoints),
              "ports": maybe(st.lists(maybe(optional(port=maybe(st.integers(1, 65535)),
                                                     name=maybe(st.just("http")),
                                                     protocol=maybe(st.just("TCP")))),
                                      max_size=2))})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(pods, slices), min_size=1, max_size=3))
def test_any_body_gives_the_same_records_or_the_same_errors(objects: list[Any]) -> None:
    for obj in objects:
        kind = obj["kind"]
        shaped = decode_page(kind, page([obj]))["items"][0]
        assert outcome(as_listed(shaped, obj)) == outcome(obj)
        event = decode_event(kind, orjson.dumps({"type": "ADDED", "object": obj}))
        assert outcome(event["object"]) == outcome(obj)
