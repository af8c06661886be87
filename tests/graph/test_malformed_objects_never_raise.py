"""A malformed object never raises out of ``apply`` and never corrupts the graph: either it is
read, or it is refused with a problem and the graph keeps what it had."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from netsight.graph.store import EventType, GraphStore, ProblemKind
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
