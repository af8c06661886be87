"""When a pod's (or pod template's) labels change, the selectors in its namespace are
re-evaluated: SELECTS and APPLIES_TO edges follow the labels; other edges stay."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import (
    apply_all,
    deployment,
    endpoint_slice,
    network_policy,
    pod,
    service,
    sources,
)

POD = "Pod/default/p"


def members(store: GraphStore, entry: tuple[str, str, str]) -> set[str]:
    """The pod-like keys the label index lists under one (namespace, key, value)."""
    return {key for identity in store.state.by_label[entry] for key in identity.members}


def store_with_selectors() -> GraphStore:
    store = GraphStore()
    apply_all(
        store,
        service("web", selector={"app": "web"}),
        service("api", selector={"app": "api"}),
        network_policy("web-only", pod_selector={"matchLabels": {"app": "web"}}),
        network_policy("not-web", pod_selector={
            "matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}),
        endpoint_slice("web-abc", "web", ["p"]),
    )
    return store


def test_relabelled_pod_moves_from_one_service_to_another() -> None:
    store = store_with_selectors()
    store.apply("ADDED", pod("p", labels={"app": "web"}))
    assert sources(store, POD, Rel.SELECTS) == {"Service/default/web"}
    assert sources(store, POD, Rel.APPLIES_TO) == {"NetworkPolicy/default/web-only"}

    store.apply("MODIFIED", pod("p", labels={"app": "api"}))

    assert sources(store, POD, Rel.SELECTS) == {"Service/default/api"}
    assert sources(store, POD, Rel.APPLIES_TO) == {"NetworkPolicy/default/not-web"}
    # The slice's reference to the pod by name does not depend on labels.
    assert sources(store, POD, Rel.TARGETS) == {"EndpointSlice/default/web-abc"}
    assert store.state.by_label.get(("default", "app", "web")) is None
    assert members(store, ("default", "app", "api")) == {POD}


def test_removing_labels_drops_selections() -> None:
    store = store_with_selectors()
    store.apply("ADDED", pod("p", labels={"app": "web"}))
    store.apply("MODIFIED", pod("p"))

    assert sources(store, POD, Rel.SELECTS) == set()
    assert sources(store, POD, Rel.APPLIES_TO) == {"NetworkPolicy/default/not-web"}
    assert store.state.by_label == {}
    assert store.state.by_label_key == {}
    # The pod now shares the identity of every unlabelled pod-like of its namespace.
    assert [g.members for g in store.state.identities["default"].values()] == [{POD}]


def test_relabelled_template_moves_too() -> None:
    store = store_with_selectors()
    store.apply("ADDED", deployment("d", template_labels={"app": "web"}))
    store.apply("MODIFIED", deployment("d", template_labels={"app": "api"}))

    assert sources(store, "Deployment/default/d", Rel.SELECTS) == {"Service/default/api"}


def test_changing_the_service_selector_moves_edges() -> None:
    store = store_with_selectors()
    apply_all(store, pod("w", labels={"app": "web"}), pod("a", labels={"app": "api"}))
    store.apply("MODIFIED", service("web", selector={"app": "api"}))

    assert sources(store, "Pod/default/w", Rel.SELECTS) == set()
    assert sources(store, "Pod/default/a", Rel.SELECTS) == {
        "Service/default/web", "Service/default/api"
    }


def test_labels_mutated_in_place_by_the_caller_are_seen_as_a_change() -> None:
    # A watch client may reuse and update the dict it handed over; the graph must compare
    # against what it stored, not against the caller's live object.
    store = store_with_selectors()
    raw = pod("p", labels={"app": "web"})
    store.apply("ADDED", raw)
    raw["metadata"]["labels"]["app"] = "api"
    store.apply("MODIFIED", raw)

    assert sources(store, POD, Rel.SELECTS) == {"Service/default/api"}
    assert store.state.by_label.get(("default", "app", "web")) is None
    assert members(store, ("default", "app", "api")) == {POD}
