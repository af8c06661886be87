"""Pod and EndpointSlice list pages decoded into typed Structs (graph/typed.py) build the
same records as the checked path (shapes.py + to_record), and whatever the typed path
refuses, the checked path still reads: a page is typed only when every object in it is
usual."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.graph.model import Kind
from netsight.graph.records import Record
from netsight.graph.typed import (
    EndpointSlicePage,
    decode_pod_page,
    decode_typed_page,
    object_id,
    pod_record,
)
from netsight.sim.synthetic import generate
from tests.graph.test_shapes_keep_what_records_read import outcome, page, pods, slices


def test_generated_pods_are_read_typed_into_the_same_records() -> None:
    cluster = generate(pods=400, seed=5, policies_per_namespace=4)
    objects = [o for o in cluster.objects() if o["kind"] == "Pod"]
    typed = decode_pod_page(page(objects))
    assert typed is not None
    assert typed.items is not None
    assert len(typed.items) == len(objects)
    for obj, pod in zip(objects, typed.items, strict=True):
        record = pod_record(pod)
        assert record == outcome(obj)
        assert record.key == object_id(pod).key


def test_a_page_with_one_malformed_pod_is_not_read_typed() -> None:
    cluster = generate(pods=20, seed=5)
    objects = [o for o in cluster.objects() if o["kind"] == "Pod"]
    bad = {**objects[3], "spec": {"containers": [{"name": "c",
                                                  "ports": [{"containerPort": 0}]}]}}
    assert decode_pod_page(page([*objects[:3], bad, *objects[4:]])) is None
    assert decode_pod_page(page(objects)) is not None


def test_a_pod_without_namespace_takes_the_default() -> None:
    body = page([{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}])
    typed = decode_pod_page(body)
    assert typed is not None
    assert typed.items
    assert pod_record(typed.items[0], "dflt").key == f"{Kind.POD}/dflt/p"


@settings(max_examples=400, deadline=None)
@given(st.lists(pods, min_size=1, max_size=3))
def test_any_pod_typed_gives_the_checked_record(objects: list[Any]) -> None:
    typed = decode_pod_page(page(objects))
    if typed is None:
        return  # read the checked way, which the shapes test covers
    assert typed.items is not None
    for obj, pod in zip(objects, typed.items, strict=True):
        checked = outcome(obj)
        # The typed path accepts only what the checked path reads without complaint.
        assert isinstance(checked, Record), checked
        assert pod_record(pod) == checked


def test_generated_slices_are_read_typed_into_the_same_records() -> None:
    cluster = generate(pods=400, seed=5, policies_per_namespace=4)
    objects = [o for o in cluster.objects() if o["kind"] == "EndpointSlice"]
    typed = decode_typed_page(Kind.ENDPOINT_SLICE, page(objects))
    assert isinstance(typed, EndpointSlicePage)
    records = list(typed.records("discovery.k8s.io/v1"))
    assert len(records) == len(objects)
    for obj, record in zip(objects, records, strict=True):
        assert record == outcome(obj)


def test_a_slice_with_a_spec_that_is_not_an_object_is_not_read_typed() -> None:
    body = page([{"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
                  "metadata": {"name": "s", "namespace": "x"}, "spec": "x"}])
    assert decode_typed_page(Kind.ENDPOINT_SLICE, body) is None


def test_kinds_without_a_typed_shape_are_not_read_typed() -> None:
    body = page([{"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s"}}])
    assert decode_typed_page(Kind.SERVICE, body) is None


@settings(max_examples=400, deadline=None)
@given(st.lists(slices, min_size=1, max_size=3))
def test_any_slice_typed_gives_the_checked_record(objects: list[Any]) -> None:
    typed = decode_typed_page(Kind.ENDPOINT_SLICE, page(objects))
    if typed is None:
        return  # read the checked way, which the shapes test covers
    for obj, record in zip(objects, typed.records("discovery.k8s.io/v1"), strict=True):
        checked = outcome(obj)
        assert isinstance(checked, Record), checked
        assert record == checked


def test_kept_annotations_and_owners_are_read_alike_the_second_time() -> None:
    def pod(name: str, annotations: dict[str, Any], owners: list[dict[str, Any]]
            ) -> dict[str, Any]:
        return {"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": "x", "annotations": annotations,
                             "ownerReferences": owners}}

    rs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "controller": True}]
    two: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Node", "name": "n"},
                                 {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d",
                                  "controller": True}]
    cases: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        ({"x": "1"}, rs), ({"x": "2"}, rs),
        ({"sidecar.istio.io/inject": "true", "x": "3"}, two),
        ({"sidecar.istio.io/inject": "false", "x": "4"}, two),
        ({"x": "5", "sidecar.istio.io/inject": "true"}, [])]
    objects = [pod(f"p{i}", annotations, owners)
               for i, (annotations, owners) in enumerate(cases)]
    for _ in range(2):  # the second page finds everything in the caches
        typed = decode_pod_page(page(objects))
        assert typed is not None
        assert typed.items is not None
        assert [pod_record(p) for p in typed.items] == [outcome(o) for o in objects]
