"""Pod list pages decoded into typed Structs (graph/typed.py) build the same records as the
checked path (shapes.py + to_record), and whatever the typed path refuses, the checked path
still reads: a page is typed only when every object in it is usual."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.graph.model import Kind
from netsight.graph.records import Record
from netsight.graph.typed import decode_pod_page, object_id, pod_record
from netsight.sim.synthetic import generate
from tests.graph.test_shapes_keep_what_records_read import outcome, page, pods


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
