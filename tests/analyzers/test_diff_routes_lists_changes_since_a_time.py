"""diff_routes with against=<RFC 3339 time or duration>: the changes the ring took in since
then; when the ring (or netsight's own graph) does not reach back that far, the answer says
so instead of presenting a partial list as complete."""

from __future__ import annotations

import copy
import dataclasses
import time
from collections import deque
from datetime import UTC, datetime
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType, GraphStore
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml

CASE = TESTDATA / "diff_routes" / "longest-prefix-wins"
REQUEST = {"host": "shop.example.com", "path": "/api/v2/x"}


def _rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat()


def _reweighted(store: GraphStore, name: str, weight: int) -> dict[str, Any]:
    record = store.view().get(f"HTTPRoute/shop/{name}")
    assert record is not None
    raw = {"apiVersion": record.api_version, "kind": "HTTPRoute",
           "metadata": {"name": name, "namespace": "shop",
                        "creationTimestamp": record.created},
           "spec": copy.deepcopy(dict(record.spec))}  # type: ignore[attr-defined]
    raw["spec"]["rules"][0]["backendRefs"][0]["weight"] = weight
    return raw


def _age(store: GraphStore, seconds: float) -> None:
    """Pretend everything so far happened ``seconds`` earlier (the ring's clock)."""
    store.changes = deque((dataclasses.replace(c, at=c.at - seconds) for c in store.changes),
                          maxlen=store.changes.maxlen)
    store.created_at -= seconds


def _answer(store: GraphStore, against: str) -> dict[str, Any]:
    return to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "against": against}),
                   detail=False)


def test_a_duration_lists_the_changes_made_within_it() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    _age(store, 3600)
    store.apply(EventType.MODIFIED, _reweighted(store, "api", 5))

    recent = _answer(store, "10m")
    assert [(c["type"], c["object"]) for c in recent["changes"]] == [
        ("MODIFIED", "HTTPRoute/shop/api")]
    assert recent["changes"][0]["at"].endswith("Z")
    assert len(_answer(store, "2h")["changes"]) > 1  # the load an hour ago too


def test_an_rfc3339_time_lists_the_changes_after_it() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    _age(store, 600)
    between = time.time() - 300
    store.apply(EventType.MODIFIED, _reweighted(store, "api", 5))

    answer = _answer(store, _rfc3339(between))
    assert [c["object"] for c in answer["changes"]] == ["HTTPRoute/shop/api"]
    assert not any(n.startswith("against:") for n in answer["notEvaluated"])


def test_a_time_before_the_ring_says_what_is_no_longer_held() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    store.changes = deque(store.changes, maxlen=2)  # a small ring, already full
    _age(store, 600)
    store.apply(EventType.MODIFIED, _reweighted(store, "api", 5))

    answer = _answer(store, "1h")
    notes = [n for n in answer["notEvaluated"] if n.startswith("against:")]
    assert notes, answer["notEvaluated"]
    assert "no longer held" in notes[0]
    assert [c["object"] for c in answer["changes"]] == ["HTTPRoute/shop/api"]


def test_a_generation_before_the_ring_says_what_is_no_longer_held() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    store.changes = deque(store.changes, maxlen=2)
    store.apply(EventType.MODIFIED, _reweighted(store, "api", 5))
    answer = to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "against": 1}),
                     detail=False)
    assert any("no longer held" in n for n in answer["notEvaluated"])


def test_a_time_before_netsight_started_says_so() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    answer = _answer(store, "1d")
    assert any("netsight's graph starts at" in n for n in answer["notEvaluated"])


@pytest.mark.parametrize(("against", "says"), [
    ("yesterday", "is neither a graph generation, an RFC 3339 time"),
    ("2025-06-01T10:00:00", "has no time zone"),
    ("2999-01-01T00:00:00Z", "is in the future"),
])
def test_an_unreadable_or_future_time_is_refused(against: str, says: str) -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    with pytest.raises(ToolFailure) as failure:
        _answer(store, against)
    assert failure.value.code is ErrorCode.INVALID_INPUT
    assert failure.value.message.startswith("against: ")
    assert says in failure.value.message


def test_a_negative_generation_is_refused() -> None:
    store = store_from_yaml((CASE / "cluster.yaml").read_text())
    with pytest.raises(ToolFailure) as failure:
        to_json(call_tool(store.view(), "diff_routes", {**REQUEST, "against": -1}),
                detail=False)
    assert failure.value.code is ErrorCode.INVALID_INPUT
    assert failure.value.message.startswith("against: generation -1 is negative")
