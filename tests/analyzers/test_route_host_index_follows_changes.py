"""The index of routes by hostname answers as a scan of every route would, after routes are
added, renamed to other hostnames and deleted (moved forward from the change ring, or
rebuilt when the ring no longer reaches back), and under an overlay of proposed routes."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.analyzers.routing.gateway_objects import GRPC_ROUTE, HTTP_ROUTE
from netsight.analyzers.routing.hostindex import covers, routes_for_host
from netsight.graph.model.reading import to_record
from netsight.graph.store.live import EventType, GraphStore, GraphView
from netsight.graph.store.overlay import OverlayView

HOSTNAMES = ["a.example.com", "b.example.com", "*.example.com", "x.a.example.com",
             "*.a.example.com", "other.org"]
HOSTS = ["a.example.com", "b.example.com", "x.a.example.com", "y.x.a.example.com",
         "other.org", "example.com"]


def route(name: str, names: list[str], kind: str = HTTP_ROUTE) -> dict[str, Any]:
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"parentRefs": [{"name": "edge"}], "hostnames": names}}


def scan(view: GraphView, host: str) -> set[str]:
    return {r.key for kind in (HTTP_ROUTE, GRPC_ROUTE) for r in view.for_each(kind)
            if covers(r, host)}


steps = st.lists(st.tuples(st.sampled_from(["r1", "r2", "r3", "r4"]),
                           st.sampled_from([HTTP_ROUTE, GRPC_ROUTE]),
                           st.lists(st.sampled_from(HOSTNAMES), max_size=3),
                           st.booleans()), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=steps, ring=st.sampled_from([2, 10_000]), proposal=steps)
def test_lookups_equal_a_scan_of_every_route(changes: list[tuple[str, str, list[str], bool]],
                                             ring: int,
                                             proposal: list[tuple[str, str, list[str], bool]],
                                             ) -> None:
    store = GraphStore()
    store.changes = deque(maxlen=ring)
    for name, kind, names, delete in changes:
        store.apply(EventType.DELETED if delete else EventType.ADDED, route(name, names, kind))
        for host in HOSTS:
            assert {r.key for r in routes_for_host(store.view(), host)} == \
                scan(store.view(), host)
    delta = {}
    for name, kind, names, delete in proposal:
        record = to_record(route(f"p{name}", names, kind))
        delta[record.key] = None if delete and store.view().exists(record.key) else record
    overlay = OverlayView(store.view(), delta)
    for host in HOSTS:
        assert {r.key for r in routes_for_host(overlay, host)} == scan(overlay, host)


@pytest.mark.parametrize("host", HOSTS)
def test_wildcards_cover_one_or_more_labels(host: str) -> None:
    store = GraphStore()
    store.apply(EventType.ADDED, route("wild", ["*.example.com"]))
    found = [r.name for r in routes_for_host(store.view(), host)]
    assert found == (["wild"] if host.endswith(".example.com") else [])
