"""An OverlayView of a graph and a delta answers every read as the graph with the delta
applied would, while the graph beneath stays untouched (no copy, no write)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from netsight.graph.model.kinds import Rel
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import Record
from netsight.graph.store.live import EventType, GraphStore, GraphView
from netsight.graph.store.overlay import OverlayView
from netsight.graph.store.record_edges import record_selector
from tests.conftest import store_from_yaml
from tests.graph.snapshots import snapshot
from tests.graph.universe import Step, event_sequences


def applied(steps: list[Step]) -> GraphStore:
    store = GraphStore()
    for step in steps:
        store.apply(step.event, step.raw)
    return store


def delta_of(store: GraphStore, steps: list[Step]) -> dict[str, Record | None]:
    """What ``steps`` change, as an overlay takes it: the last valid version, or None."""
    delta: dict[str, Record | None] = {}
    for step in steps:
        if step.event == EventType.DELETED:
            delta[step.key] = None
        elif step.valid:
            delta[step.key] = to_record(step.raw)
    # Deleting what never existed changes nothing.
    return {k: r for k, r in delta.items() if r is not None or store.view().exists(k)}


def reads(view: GraphView, keys: set[str]) -> dict[str, object]:
    """Every read an analyzer can make, as comparable values."""
    found: dict[str, object] = {"namespaces": view.namespaces(), "kinds": view.kinds(),
                                "nodes": view.node_count, "edges": view.edge_count}
    for kind in view.kinds():
        found[f"each {kind}"] = sorted(r.key for r in view.for_each(kind))
        found[f"count {kind}"] = view.count(kind)
        for namespace in view.namespaces() | {""}:
            found[f"each {kind} {namespace}"] = sorted(
                r.key for r in view.for_each(kind, namespace))
            found[f"count {kind} {namespace}"] = view.count(kind, namespace)
    for key in sorted(keys):
        record = view.get(key)
        found[f"get {key}"] = record
        found[f"exists {key}"] = view.exists(key)
        found[f"out {key}"] = sorted(view.out_edges(key))
        found[f"adjacent {key}"] = sorted(set(view.adjacent_keys(key)))
        found[f"pending {key}"] = sorted(set(view.pending_references(key)))
        for rel in Rel:
            for incoming in (False, True):
                found[f"{rel} {incoming} {key}"] = sorted(
                    r.key for r in view.neighbors(key, rel, incoming=incoming))
        selected = record_selector(record) if record is not None else None
        if selected is not None:
            found[f"matching {key}"] = sorted(
                r.key for r in view.matching(record.namespace, selected[1]))  # type: ignore[union-attr]
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=event_sequences(), change=event_sequences(max_size=8))
def test_an_overlay_reads_as_the_graph_with_the_delta_applied(base: list[Step],
                                                              change: list[Step]) -> None:
    store = applied(base)
    before = snapshot(store.state)
    delta = delta_of(store, change)
    overlay = OverlayView(store.view(), delta)
    expected = applied(base + [s for s in change if s.valid])
    keys = set(expected.state.graph) | set(store.state.graph) | set(delta)
    keys |= set(store.state.pending)

    assert reads(overlay, keys) == reads(expected.view(), keys)
    assert snapshot(store.state) == before  # the graph beneath is untouched


ROUTES = """
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
"""


def test_a_proposed_gateway_takes_the_routes_already_naming_it() -> None:
    store = store_from_yaml(ROUTES)
    gateway = to_record({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                         "metadata": {"name": "edge", "namespace": "infra"},
                         "spec": {"gatewayClassName": "c", "listeners": []}})
    overlay = OverlayView(store.view(), {gateway.key: gateway})

    attached = [r.key for r in overlay.neighbors(gateway.key, Rel.ATTACHES_TO, incoming=True)]
    assert attached == ["HTTPRoute/shop/web"]
    assert not store.view().exists(gateway.key)


def test_a_deleted_service_leaves_its_routes_pending() -> None:
    store = store_from_yaml(ROUTES)
    overlay = OverlayView(store.view(), {"Service/shop/web": None})

    route = "HTTPRoute/shop/web"
    assert list(overlay.neighbors(route, Rel.ROUTES_TO)) == []
    assert list(overlay.pending_references("Service/shop/web")) == [(route, Rel.ROUTES_TO)]
    assert [r.key for r in store.view().neighbors(route, Rel.ROUTES_TO)] == ["Service/shop/web"]


def test_every_public_read_of_graph_view_is_overridden() -> None:
    public = {name for name in dir(GraphView) if not name.startswith("_")}
    assert public <= set(vars(OverlayView))
