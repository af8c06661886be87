"""A malformed new version of an object leaves its last valid record, edges and indexes in
place; a later valid version replaces the record and clears the problem."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import EventType, GraphStore, ProblemKind
from tests.graph.factories import apply_all, pod, service, targets
from tests.graph.snapshots import snapshot

SERVICE = "Service/default/web"


def broken_service() -> dict[str, object]:
    raw = service("web", selector={"app": "api"})
    raw["spec"]["ports"] = [{"port": 80, "targetPort": "8080"}]
    return raw


def test_malformed_modification_keeps_last_valid_record_and_edges() -> None:
    store = GraphStore()
    apply_all(store, pod("w", labels={"app": "web"}), pod("a", labels={"app": "api"}),
              service("web", selector={"app": "web"}))
    before, generation = snapshot(store.state), store.generation

    assert store.apply(EventType.MODIFIED, broken_service()) is False

    assert snapshot(store.state) == before
    assert targets(store, SERVICE, Rel.SELECTS) == {"Pod/default/w"}
    problem = store.problems[SERVICE]
    assert problem.kind is ProblemKind.MALFORMED
    assert problem.field_path == "spec.ports[0].targetPort"
    assert store.generation == generation + 1


def test_valid_version_clears_the_problem() -> None:
    store = GraphStore()
    apply_all(store, pod("a", labels={"app": "api"}), service("web", selector={"app": "web"}))
    store.apply(EventType.MODIFIED, broken_service())
    generation = store.generation

    assert store.apply(EventType.MODIFIED, service("web", selector={"app": "api"})) is True

    assert store.problems == {}
    assert targets(store, SERVICE, Rel.SELECTS) == {"Pod/default/a"}
    assert store.generation == generation + 1


def test_resending_the_last_valid_version_still_clears_the_problem() -> None:
    # The graph does not change, but the problem goes: that is a change readers must see.
    store = GraphStore()
    valid = service("web", selector={"app": "web"})
    store.apply(EventType.ADDED, valid)
    store.apply(EventType.MODIFIED, broken_service())
    generation = store.generation

    assert store.apply(EventType.MODIFIED, valid) is True
    assert store.problems == {}
    assert store.generation == generation + 1


def test_deleting_clears_the_problem_of_an_object_never_read() -> None:
    store = GraphStore()
    store.apply(EventType.ADDED, broken_service())
    assert SERVICE in store.problems
    generation = store.generation

    assert store.apply(EventType.DELETED, broken_service()) is True
    assert store.problems == {}
    assert store.generation == generation + 1


def test_deleting_after_a_malformed_version_removes_record_and_problem() -> None:
    store = GraphStore()
    apply_all(store, service("web", selector={"app": "web"}), broken_service())

    store.apply(EventType.DELETED, service("web"))

    assert store.problems == {}
    assert SERVICE not in store.state.graph
    assert store.state.selectors == {}


def test_record_is_the_valid_version_not_the_malformed_one() -> None:
    store = GraphStore()
    apply_all(store, service("web", selector={"app": "web"}), broken_service())

    record = store.state.record(SERVICE)
    assert isinstance(record, ServiceRecord)
    assert record.selector == {"app": "web"}
    assert [p.target_port for p in record.ports] == [8080]
