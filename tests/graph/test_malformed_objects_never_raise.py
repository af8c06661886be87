"""A malformed object never raises out of ``apply`` and never corrupts the graph: either it is
read, or it is refused with a problem and the graph keeps what it had."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from netsight.graph.store.live import EventType, GraphStore, ProblemKind
from tests.graph.snapshots import diff, empty_index_entries, snapshot
from tests.graph.universe import Identity, Raw, bodies, identities, key_of

IDENTITY_FIELDS = {("apiVersion",), ("kind",), ("metadata",), ("metadata", "name"),
                   ("metadata", "namespace")}
# Fields junk may also be put in when the object does not have them.
ADDED_FIELDS = [("spec",), ("status",), ("endpoints",), ("subsets",), ("ports",),
                ("metadata", "labels"), ("metadata", "annotations"),
                ("metadata", "ownerReferences"), ("metadata", "creationTimestamp")]

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 70000) | st.floats(allow_nan=False)
    | st.sampled_from(["", "80", "http", "TCP", "HTTP", "True", "In", "Pod", "a", "-"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["name", "port", "kind", "key", "app", "ip", "0"]),
                      inner, max_size=3),
    max_leaves=6,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (dict keys and list indexes)."""
    found: list[tuple[Any, ...]] = []
    children: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    for key, child in children:
        path = (*prefix, key)
        found.append(path)
        found.extend(paths(child, path))
    return found


def replaced(raw: Raw, path: tuple[Any, ...], value: Any) -> Raw:
    broken = copy.deepcopy(raw)
    parent: Any = broken
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return broken


@st.composite
def corrupted_objects(draw: st.DrawFn) -> tuple[Identity, Raw, Raw]:
    """An object's valid version and a version with one field replaced by junk."""
    identity = draw(identities())
    raw = draw(bodies(identity))
    # Fields that only carry the object's identity decide its key; corrupting them is the
    # business of the identity tests below.
    candidates = [p for p in paths(raw) if p not in IDENTITY_FIELDS]
    candidates.extend(p for p in ADDED_FIELDS if p not in candidates)
    path = draw(st.sampled_from(candidates))
    return identity, raw, replaced(raw, path, draw(junk))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=corrupted_objects(), first=st.booleans())
def test_junk_in_any_field_is_read_or_refused_cleanly(
    case: tuple[Identity, Raw, Raw], first: bool
) -> None:
    identity, valid, broken = case
    key = key_of(*identity)
    store = GraphStore()
    if not first:
        assert store.apply(EventType.ADDED, valid)
    before = snapshot(store.state)

    store.apply(EventType.MODIFIED, broken)  # must not raise

    event("refused" if key in store.problems else "read")
    if key in store.problems:
        problem = store.problems[key]
        assert problem.kind is ProblemKind.MALFORMED
        assert problem.field_path
        after = snapshot(store.state)
        assert after == before, diff(after, before)
    else:
        assert store.state.record(key) is not None
        fresh = GraphStore()
        assert fresh.apply(EventType.ADDED, broken)
        assert snapshot(store.state) == snapshot(fresh.state)
    assert empty_index_entries(store.state) == []


def test_keys_json_cannot_hold_are_a_problem_not_a_crash() -> None:
    """YAML lets a rule hold `80: x`; such a policy is reported, and the rest goes on."""
    store = GraphStore()
    bad = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": "np", "namespace": "x"},
           "spec": {"podSelector": {}, "ingress": [{80: "x"}]}}
    route = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
             "metadata": {"name": "r", "namespace": "x"}, "spec": {"rules": [{1: 2}]}}
    assert store.apply("ADDED", bad) is False
    assert store.apply("ADDED", route) is False
    assert {p.field_path for p in store.problems.values()} == {"spec.ingress", "spec"}
    assert store.apply("ADDED", {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "x"}}) is True


def test_a_reader_bug_is_a_problem_for_that_object_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a record builder must not stop a whole kind's informer: that object is
    reported and left out, every other object still arrives."""
    from netsight.graph.model import core_records

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setitem(core_records.BUILDERS, "Service", broken)
    store = GraphStore()
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "web", "namespace": "x"}, "spec": {}}
    assert store.apply("ADDED", service) is False
    (problem,) = store.problems.values()
    assert problem.kind is ProblemKind.MALFORMED
    assert "RuntimeError" in problem.message
    assert store.apply("ADDED", {"apiVersion": "v1", "kind": "Pod",
                                 "metadata": {"name": "p", "namespace": "x"}}) is True


def test_shared_label_maps_refuse_writes() -> None:
    store = GraphStore()
    store.apply("ADDED", {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "p", "namespace": "x", "labels": {"a": "b"}}})
    record = store.state.record("Pod/x/p")
    assert record is not None
    with pytest.raises(TypeError, match="read-only"):
        record.labels["a"] = "c"  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        record.labels.update(a="c")  # type: ignore[attr-defined]
    assert copy.deepcopy(record.labels) == {"a": "b"}
