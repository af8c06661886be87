"""A NetworkPolicy's podSelector picks the pods (and pod templates) it applies to; an empty
or absent podSelector means every pod in the policy's namespace, and no other namespace."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.factories import apply_all, deployment, network_policy, pod, targets

ALL_IN_PROD = {"Pod/prod/a", "Pod/prod/b", "Pod/prod/bare", "Deployment/prod/web"}


@pytest.fixture
def store() -> GraphStore:
    store = GraphStore()
    apply_all(
        store,
        pod("a", ns="prod", labels={"app": "a"}),
        pod("b", ns="prod", labels={"app": "b", "tier": "x"}),
        pod("bare", ns="prod"),
        deployment("web", ns="prod", template_labels={"app": "web"}),
        pod("a", ns="dev", labels={"app": "a"}),
    )
    return store


@pytest.mark.parametrize(
    "pod_selector",
    [
        pytest.param({}, id="empty"),
        pytest.param(None, id="absent"),
        pytest.param({"matchLabels": {}}, id="empty matchLabels"),
        pytest.param({"matchLabels": {}, "matchExpressions": []}, id="empty both"),
    ],
)
def test_empty_pod_selector_applies_to_every_pod_in_namespace(
    store: GraphStore, pod_selector: dict[str, Any] | None
) -> None:
    store.apply("ADDED", network_policy("deny-all", ns="prod", pod_selector=pod_selector))

    assert targets(store, "NetworkPolicy/prod/deny-all", Rel.APPLIES_TO) == ALL_IN_PROD


def test_empty_pod_selector_covers_pods_created_later(store: GraphStore) -> None:
    store.apply("ADDED", network_policy("deny-all", ns="prod", pod_selector={}))
    apply_all(store, pod("late", ns="prod", labels={"any": "thing"}), pod("late", ns="dev"))

    assert targets(store, "NetworkPolicy/prod/deny-all", Rel.APPLIES_TO) == ALL_IN_PROD | {
        "Pod/prod/late"
    }


@pytest.mark.parametrize(
    ("pod_selector", "expected"),
    [
        ({"matchLabels": {"app": "a"}}, {"Pod/prod/a"}),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
         {"Pod/prod/a", "Pod/prod/b"}),
        ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
         {"Pod/prod/b", "Pod/prod/bare", "Deployment/prod/web"}),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, {"Pod/prod/b"}),
        ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, {"Pod/prod/bare"}),
        ({"matchLabels": {"app": "b"},
          "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]}, set()),
    ],
)
def test_pod_selector_terms_narrow_the_pods(
    store: GraphStore, pod_selector: dict[str, Any], expected: set[str]
) -> None:
    store.apply("ADDED", network_policy("np", ns="prod", pod_selector=pod_selector))

    assert targets(store, "NetworkPolicy/prod/np", Rel.APPLIES_TO) == expected
