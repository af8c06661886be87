"""EndpointSlice endpoints take a fast path for the usual shapes; it must build exactly what
the checked path builds, and leave every unusual shape to the checked path's errors."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from netsight.graph.model.core_records import checked_slice_endpoint, slice_endpoint
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import Endpoint, EndpointSliceRecord

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(
    ["", "10.0.0.1", "node-1", "Pod", "Service", "web-1"]))
values: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                     st.dictionaries(st.sampled_from(
                                         ["kind", "name", "ready", "serving", "terminating"]),
                                         inner, max_size=3)), max_leaves=6)
endpoints = st.one_of(values, st.fixed_dictionaries({}, optional={
    "addresses": st.one_of(st.lists(st.sampled_from(["10.0.0.1", "fd00::1"]), max_size=2),
                           values),
    "conditions": st.one_of(st.fixed_dictionaries({}, optional={
        "ready": st.one_of(st.booleans(), st.none()),
        "serving": st.booleans(), "terminating": st.booleans()}), values),
    "targetRef": st.one_of(st.fixed_dictionaries(
        {"kind": st.sampled_from(["Pod", "Node"]), "name": st.sampled_from(["web-1", "n"])}),
        values),
    "nodeName": st.one_of(st.sampled_from(["node-1", ""]), values),
}))


def build(function: Any, *args: Any) -> object:
    try:
        return function(*args)
    except MalformedObject as exc:
        return ("error", exc.field_path)


@given(endpoint=endpoints)
def test_fast_path_equals_checked_path(endpoint: Any) -> None:
    assert build(slice_endpoint, endpoint, 3) == build(checked_slice_endpoint, endpoint,
                                                       "endpoints[3]")


usual = st.fixed_dictionaries({
    "addresses": st.lists(st.sampled_from(["10.0.0.1", "fd00::1"]), max_size=2),
    "conditions": st.fixed_dictionaries({}, optional={
        "ready": st.one_of(st.booleans(), st.none(), st.just("yes")), "serving": st.booleans(),
        "terminating": st.booleans()})},
    optional={"targetRef": st.fixed_dictionaries({"kind": st.sampled_from(["Pod", "Node"]),
                                                  "name": st.sampled_from(["web-1", "n"])}),
              "nodeName": st.sampled_from(["node-1", "", None])})


@given(endpoint=endpoints, before=endpoints)
def test_a_previous_endpoint_never_changes_what_is_built(endpoint: Any, before: Any) -> None:
    previous = build(slice_endpoint, before, 3)
    if isinstance(previous, Endpoint):
        assert build(slice_endpoint, endpoint, 3, previous) == build(slice_endpoint, endpoint, 3)


@given(endpoint=usual, before=usual)
def test_an_unchanged_endpoint_is_the_previous_object(endpoint: Any, before: Any) -> None:
    previous = slice_endpoint(before, 3)
    fresh, reused = slice_endpoint(endpoint, 3), slice_endpoint(endpoint, 3, previous)
    assert reused == fresh
    assert (reused is previous) == (fresh == previous)


def test_a_slice_update_reuses_the_endpoints_that_did_not_change() -> None:
    def slice_(ready: bool) -> dict[str, Any]:
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "web-1", "namespace": "x",
                             "labels": {"kubernetes.io/service-name": "web"}},
                "endpoints": [{"addresses": [f"10.0.0.{i}"], "conditions": {"ready": i != 1
                                                                           or ready},
                               "targetRef": {"kind": "Pod", "name": f"web-{i}"}}
                              for i in range(3)]}

    first = to_record(slice_(True))
    second = to_record(slice_(False), previous=first)
    assert second == to_record(slice_(False))
    assert isinstance(first, EndpointSliceRecord)
    assert isinstance(second, EndpointSliceRecord)
    old, new = first.group.endpoints, second.group.endpoints
    assert new[0] is old[0]
    assert new[2] is old[2]
    assert new[1] != old[1]
