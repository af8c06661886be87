"""The graph's index sets give back the table a busy moment grew them to: a set never
shrinks on removal, so under churn each would keep the table its largest membership needed
(the soak's slow rise; building.compacted)."""

from __future__ import annotations

import sys

from netsight.graph.store.building import compacted
from netsight.graph.store.live import GraphStore
from tests.graph.factories import network_policy, pod

SMALL = sys.getsizeof(set())  # a set of up to 4 members, in its built-in table


def test_a_set_emptied_down_to_a_few_members_is_copied_small() -> None:
    grown = set(range(100))
    for i in range(97):
        grown.discard(i)
    small = compacted(grown)
    assert small == {97, 98, 99}
    assert sys.getsizeof(small) == SMALL < sys.getsizeof(grown)


def test_a_set_sized_for_its_members_is_kept_as_it_is() -> None:
    for n in (0, 3, 40, 1000):
        members = set(range(n))
        assert compacted(members) is members
        members.discard(0)  # one removal does not make it worth a copy
        assert compacted(members) is members


def test_a_set_back_to_four_members_returns_to_its_built_in_table() -> None:
    members = set(range(5))  # the fifth member took a table of 32 slots
    members.discard(0)
    assert sys.getsizeof(compacted(members)) == SMALL < sys.getsizeof(members)


def test_identity_members_and_index_sets_shrink_once_pods_leave() -> None:
    store = GraphStore()
    store.apply("ADDED", network_policy("web", pod_selector={"matchLabels": {"app": "web"}}))
    for i in range(60):  # one identity: 60 pods with the same labels
        store.apply("ADDED", pod(f"web-{i}", labels={"app": "web"}))
    for i in range(60):  # and one identity per pod: the label index's set for app=api
        store.apply("ADDED", pod(f"api-{i}", labels={"app": "api", "pod": str(i)}))
    for i in range(58):
        store.apply("DELETED", pod(f"web-{i}", labels={"app": "web"}))
        store.apply("DELETED", pod(f"api-{i}", labels={"app": "api", "pod": str(i)}))

    (web,) = store.state.by_label[("default", "app", "web")]
    assert web.members == {"Pod/default/web-58", "Pod/default/web-59"}
    assert sys.getsizeof(web.members) == SMALL
    api = store.state.by_label[("default", "app", "api")]
    assert {key for identity in api for key in identity.members} == {
        "Pod/default/api-58", "Pod/default/api-59"}
    assert sys.getsizeof(api) == SMALL
    assert sys.getsizeof(store.state.by_label_key[("default", "pod")]) == SMALL
    # The policy still selects the identity left, through the compacted sets.
    assert store.state.selected["NetworkPolicy/default/web"] == {web}
