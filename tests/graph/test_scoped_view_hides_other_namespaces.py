"""A ScopedView reads like the graph of the visible namespaces alone: every read of GraphView
hides objects in other namespaces (and their Namespace objects), cluster-scoped objects stay,
and a read nobody has scoped yet fails instead of answering from the whole graph."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store import scoped as scoping
from netsight.graph.store.live import EventType, GraphStore, GraphView, Source
from netsight.graph.store.scoped import ScopedView, UnscopedRead
from tests.graph.factories import (
    Raw,
    apply_all,
    endpoint_slice,
    meta,
    namespace,
    network_policy,
    pod,
    service,
)

VISIBLE = "shop"
HIDDEN = "pay"


def ingress(name: str, ns: str, backend: str) -> Raw:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta(name, ns),
            "spec": {"ingressClassName": "nginx", "defaultBackend": {
                "service": {"name": backend, "port": {"number": 80}}}}}


def team(ns: str) -> list[Raw]:
    node_pod = pod("agent", ns=ns)
    node_pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "u", "controller": True}]
    return [namespace(ns), pod("web-1", ns=ns, labels={"app": "web"}), node_pod,
            service("web", ns=ns, selector={"app": "web"}),
            endpoint_slice("web-abc", "web", ["web-1"], ns=ns, owned=True),
            ingress("front", ns, "web")]


CLUSTER_SCOPED: list[Raw] = [
    {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta("nginx", None),
     "spec": {"controller": "k8s.io/ingress-nginx"}},
    {"apiVersion": "v1", "kind": "Node", "metadata": meta("node-1", None)},
]
# Only the hidden namespace has these: their kinds must not show either.
HIDDEN_ONLY: list[Raw] = [
    network_policy("deny-all", ns=HIDDEN),
    {"apiVersion": "v1", "kind": "Service", "metadata": meta("broken", HIDDEN),
     "spec": {"ports": "not a list"}},  # a problem in the hidden namespace
]
VISIBLE_PROBLEM: Raw = {"apiVersion": "v1", "kind": "Service", "metadata": meta("odd", VISIBLE),
                        "spec": {"ports": "not a list"}}


def build(*groups: list[Raw]) -> GraphStore:
    store = GraphStore(source=Source.CLUSTER, cluster_name="c1")
    for objects in groups:
        apply_all(store, *objects)
    return store


@pytest.fixture
def full() -> GraphStore:
    store = build(CLUSTER_SCOPED, team(VISIBLE), team(HIDDEN), HIDDEN_ONLY, [VISIBLE_PROBLEM])
    assert store.view().count(Kind.POD, HIDDEN) == 2
    assert any(p.namespace == HIDDEN for p in store.problems.values())
    return store


@pytest.fixture
def scoped(full: GraphStore) -> ScopedView:
    return ScopedView(full.view(), {VISIBLE})


@pytest.fixture
def alone() -> GraphView:
    """What the caller should see: a graph that never held the hidden namespace."""
    return build(CLUSTER_SCOPED, team(VISIBLE), [VISIBLE_PROBLEM]).view()


def every_key(store: GraphStore) -> list[str]:
    return [*sorted(store.state.graph), f"Pod/{HIDDEN}/ghost", "Namespace/ghost"]


def test_every_public_read_of_graph_view_is_overridden() -> None:
    public = {name for name in dir(GraphView) if not name.startswith("_")}
    assert public <= set(vars(ScopedView)), "scope these in netsight/graph/store/scoped.py"
    assert not scoping.UNSCOPED


def test_a_read_nobody_scoped_fails_loudly(scoped: ScopedView) -> None:
    wider = type("Wider", (ScopedView,), {"peek": scoping.refusing_read("peek")})
    with pytest.raises(UnscopedRead, match=r"GraphView\.peek"):
        _ = wider(scoped, {VISIBLE}).peek
    with pytest.raises(AttributeError):  # the raw store and state are not reachable
        _ = scoped._store
    with pytest.raises(AttributeError):
        _ = scoped._state


def test_lookups_hide_the_other_namespace(full: GraphStore, scoped: ScopedView,
                                          alone: GraphView) -> None:
    for key in every_key(full):
        assert scoped.get(key) == alone.get(key), key
        assert scoped.exists(key) == alone.exists(key), key
    assert scoped.get(f"Service/{HIDDEN}/web") is None
    assert not scoped.exists(f"Namespace/{HIDDEN}")
    assert scoped.exists("IngressClass/nginx")
    assert scoped.exists("Node/node-1")


def test_listing_and_counting_hide_the_other_namespace(scoped: ScopedView,
                                                       alone: GraphView) -> None:
    kinds = {*alone.kinds(), Kind.NETWORK_POLICY, Kind.NAMESPACE, "Node", "IngressClass"}
    for kind in kinds:
        for ns in (None, VISIBLE, HIDDEN, ""):
            assert sorted(r.key for r in scoped.for_each(kind, ns)) == \
                sorted(r.key for r in alone.for_each(kind, ns)), (kind, ns)
            assert scoped.count(kind, ns) == alone.count(kind, ns), (kind, ns)
    assert scoped.kinds() == alone.kinds()
    assert Kind.NETWORK_POLICY not in scoped.kinds()
    assert scoped.namespaces() == alone.namespaces() == {VISIBLE}
    assert scoped.node_count == alone.node_count
    assert scoped.edge_count == alone.edge_count


def test_relationships_stop_at_the_other_namespace(full: GraphStore, scoped: ScopedView,
                                                   alone: GraphView) -> None:
    for key in every_key(full):
        for rel in Rel:
            for incoming in (False, True):
                assert sorted(r.key for r in scoped.neighbors(key, rel, incoming=incoming)) == \
                    sorted(r.key for r in alone.neighbors(key, rel, incoming=incoming)), \
                    (key, rel, incoming)
        assert sorted(scoped.adjacent_keys(key)) == sorted(alone.adjacent_keys(key)), key
        assert sorted(scoped.out_edges(key)) == sorted(alone.out_edges(key)), key
        assert [(t, rel) for rel, targets in scoped.out_edge_runs(key) for t in targets] == \
            list(scoped.out_edges(key)), key
    users = {r.key for r in scoped.neighbors("IngressClass/nginx", Rel.USES_CLASS,
                                             incoming=True)}
    assert users == {f"Ingress/{VISIBLE}/front"}


def test_selector_matches_only_in_visible_namespaces(scoped: ScopedView) -> None:
    web = LabelSelector(match_labels=(("app", "web"),))
    assert [r.key for r in scoped.matching(VISIBLE, web)] == [f"Pod/{VISIBLE}/web-1"]
    assert list(scoped.matching(HIDDEN, web)) == []


def test_problems_and_changes_of_the_other_namespace_are_hidden(full: GraphStore,
                                                                scoped: ScopedView) -> None:
    assert {p.namespace for p in scoped.problems()} == {VISIBLE}
    assert any(p.namespace == HIDDEN for p in full.view().problems())
    start = full.generation
    apply_all(full, CLUSTER_SCOPED[0], event=EventType.DELETED)  # related: both ingresses
    apply_all(full, pod("new", ns=HIDDEN), pod("new", ns=VISIBLE))
    changes = list(scoped.changes_since(start))
    assert [c.key for c in changes] == ["IngressClass/nginx", f"Pod/{VISIBLE}/new"]
    assert f"Ingress/{HIDDEN}/front" in next(full.view().changes_since(start)).related
    assert all(not k.startswith(("Ingress/pay", "Pod/pay", "Namespace/pay"))
               for c in changes for k in c.related)
    assert all(scoped.shows(c.key) for c in scoped.changes_since(0))
    newest_first = list(scoped.changes_since(start, newest_first=True))
    assert newest_first == changes[::-1]


def test_what_is_not_about_objects_passes_through(full: GraphStore,
                                                  scoped: ScopedView) -> None:
    view = full.view()
    same: list[tuple[Any, Any]] = [
        (scoped.generation, view.generation), (scoped.source, view.source),
        (scoped.cluster_name, view.cluster_name), (scoped.staleness(), view.staleness()),
        (scoped.unreadable(Kind.POD), view.unreadable(Kind.POD)),
        (scoped.kind_generation(Kind.POD), view.kind_generation(Kind.POD)),
    ]
    for mine, theirs in same:
        assert mine == theirs
    assert scoped.scope == {VISIBLE}
    assert scoped.scope_digest == ScopedView(view, [VISIBLE]).scope_digest
    assert scoped.scope_digest != ScopedView(view, [VISIBLE, HIDDEN]).scope_digest


def test_no_namespace_at_all_leaves_cluster_scoped_objects(full: GraphStore) -> None:
    nothing = ScopedView(full.view(), ())
    assert nothing.namespaces() == set()
    assert {r.key for r in nothing.for_each("IngressClass")} == {"IngressClass/nginx"}
    assert nothing.count(Kind.POD) == 0
    assert nothing.count(Kind.NAMESPACE) == 0
    assert nothing.problems() == []
