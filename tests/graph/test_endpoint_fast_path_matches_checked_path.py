"""EndpointSlice endpoints take a fast path for the usual shapes; it must build exactly what
the checked path builds, and leave every unusual shape to the checked path's errors."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from netsight.graph.errors import MalformedObject
from netsight.graph.records import _checked_endpoint, _endpoint

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
    assert build(_endpoint, endpoint, 3) == build(_checked_endpoint, endpoint, "endpoints[3]")
