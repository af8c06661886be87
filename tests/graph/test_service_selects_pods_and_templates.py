"""A Service selects the pods and workload templates of its own namespace that its selector
matches, and nothing when it has no selector or is an ExternalName."""

from __future__ import annotations

import pytest

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, deployment, pod, service, targets


@pytest.fixture
def store() -> GraphStore:
    store = GraphStore()
    apply_all(
        store,
        pod("web-1", labels={"app": "web", "tier": "front"}),
        pod("web-2", labels={"app": "web"}),
        pod("db", labels={"app": "db"}),
        pod("unlabelled"),
        pod("web-other-ns", ns="other", labels={"app": "web"}),
        deployment("web", template_labels={"app": "web", "tier": "front"}),
        deployment("web-sts", template_labels={"app": "web"}, kind="StatefulSet"),
        deployment("db", template_labels={"app": "db"}),
        deployment("web-other-ns", ns="other", template_labels={"app": "web"}),
    )
    return store


def test_service_selects_matching_pods_and_templates_in_its_namespace(store: GraphStore) -> None:
    store.apply("ADDED", service("web", selector={"app": "web"}))

    assert targets(store, "Service/default/web", Rel.SELECTS) == {
        "Pod/default/web-1",
        "Pod/default/web-2",
        "Deployment/default/web",
        "StatefulSet/default/web-sts",
    }


def test_every_selector_label_must_match(store: GraphStore) -> None:
    store.apply("ADDED", service("front", selector={"app": "web", "tier": "front"}))

    assert targets(store, "Service/default/front", Rel.SELECTS) == {
        "Pod/default/web-1",
        "Deployment/default/web",
    }


def test_template_labels_count_not_the_workload_own_labels() -> None:
    store = GraphStore()
    workload = deployment("api", template_labels={"app": "api"})
    workload["metadata"]["labels"] = {"app": "web"}
    apply_all(store, workload, service("web", selector={"app": "web"}),
              service("api", selector={"app": "api"}))

    assert targets(store, "Service/default/web", Rel.SELECTS) == set()
    assert targets(store, "Service/default/api", Rel.SELECTS) == {"Deployment/default/api"}


def test_service_in_other_namespace_selects_only_there(store: GraphStore) -> None:
    store.apply("ADDED", service("web", ns="other", selector={"app": "web"}))

    assert targets(store, "Service/other/web", Rel.SELECTS) == {
        "Pod/other/web-other-ns",
        "Deployment/other/web-other-ns",
    }


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(service("manual"), id="no selector"),
        pytest.param(service("manual", selector={}), id="empty selector"),
        pytest.param(
            service("ext", selector={"app": "web"}, type="ExternalName",
                    externalName="db.example.com"),
            id="ExternalName with a selector",
        ),
    ],
)
def test_service_without_usable_selector_selects_nothing(
    store: GraphStore, raw: dict[str, object]
) -> None:
    store.apply("ADDED", raw)

    assert not any(Rel.SELECTS in rels for _, _, rels in store.state.edges())
    assert store.state.selectors == {}


def test_pods_arriving_after_the_service_are_selected() -> None:
    store = GraphStore()
    apply_all(store, service("web", selector={"app": "web"}), pod("late", labels={"app": "web"}),
              pod("late-db", labels={"app": "db"}))

    assert targets(store, "Service/default/web", Rel.SELECTS) == {"Pod/default/late"}
