"""diff_routes with against=<generation>: the changes since then to the objects on the
request's path (entry Gateway, routes taken or shadowed, backend Services, and what relates
to them), not to the rest of the graph."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml

CASE = TESTDATA / "diff_routes" / "longest-prefix-wins"
REQUEST = {"host": "shop.example.com", "path": "/api/v2/x"}


def _route(store: Any, name: str) -> dict[str, Any]:
    record = store.view().get(f"HTTPRoute/shop/{name}")
    return {"apiVersion": record.api_version, "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": "shop",
                         "creationTimestamp": record.created},
            "spec": copy.deepcopy(dict(record.spec))}


def test_changes_to_the_path_are_listed_and_others_are_not() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    before = store.generation
    api = _route(store, "api")
    api["spec"]["rules"][0]["backendRefs"][0]["weight"] = 5
    store.apply(EventType.MODIFIED, api)
    unrelated = _route(store, "same-old")
    unrelated["spec"]["rules"][0]["backendRefs"][0]["weight"] = 5
    store.apply(EventType.MODIFIED, unrelated)

    answer = to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "against": before}),
                     detail=False)

    assert [(c["type"], c["object"]) for c in answer["changes"]] == [
        ("MODIFIED", "HTTPRoute/shop/api")]
    assert answer["changes"][0]["fields"] == ["spec"]


def test_without_against_there_are_no_changes() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    answer = to_json(call_tool(store.view(), "diff_routes", REQUEST), detail=False)
    assert answer["changes"] is None


def test_a_generation_ahead_of_the_graph_is_refused() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    with pytest.raises(ToolFailure) as failure:
        call_tool(store.view(), "diff_routes", {**REQUEST, "against": store.generation + 1})
    assert failure.value.code is ErrorCode.INVALID_INPUT
    assert failure.value.message.startswith("against:")
