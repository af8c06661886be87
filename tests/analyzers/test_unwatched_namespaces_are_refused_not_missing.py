"""Watching some namespaces (NAMESPACE), a tool asked about another one refuses, saying it
is not watched, rather than answering as if nothing were there; a watched namespace whose
existence cannot be read answers empty; metadata.scope says what netsight cannot see."""

from __future__ import annotations

import time

import pytest

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType, GraphStore, Source
from netsight.graph.store.sync_status import KindStatus, SyncState


def scoped_store(namespace_state: SyncState) -> GraphStore:
    store = GraphStore(source=Source.CLUSTER, namespaces=("a", "e"))
    for kind in ("Pod", "Service", "EndpointSlice"):
        store.sync[kind] = KindStatus(kind, SyncState.SYNCED, synced_at=time.time())
    store.sync["Namespace"] = KindStatus(
        "Namespace", namespace_state, "namespaces is forbidden" if namespace_state
        is SyncState.FORBIDDEN else None, synced_at=time.time())
    store.apply(EventType.ADDED, {"apiVersion": "v1", "kind": "Service",
                                  "metadata": {"name": "web", "namespace": "a"},
                                  "spec": {"ports": [{"port": 80}]}})
    return store


@pytest.mark.parametrize(("tool", "args", "argument"), [
    ("diagnose_service", {"service": "c/web"}, "service"),
    ("list_services", {"namespace": "c"}, "namespace"),
    ("find_blocking_policies", {"source": "a/x", "destination": "web.c.svc", "port": 80},
     "destination"),
    ("reachability_matrix", {"namespaces": ["a", "c"], "ports": [80]}, "namespaces"),
])
def test_a_namespace_not_watched_is_refused_by_name(tool: str, args: dict[str, object],
                                                    argument: str) -> None:
    view = scoped_store(SyncState.FORBIDDEN).view()
    with pytest.raises(ToolFailure) as refused:
        call_tool(view, tool, args)
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert refused.value.message.startswith(
        f"{argument}: namespace 'c' is not watched: this netsight watches only a, e")


def test_a_watched_namespace_answers_empty_when_its_existence_is_unknown() -> None:
    hidden = call_tool(scoped_store(SyncState.FORBIDDEN).view(), "list_services",
                       {"namespace": "e"})
    assert hidden.model_dump(by_alias=True)["services"] == []
    assert hidden.metadata.scope is not None
    assert hidden.metadata.scope.namespaces == ["a", "e"]
    assert hidden.metadata.scope.not_visible == ["Namespace"]
    with pytest.raises(ToolFailure) as missing:  # Namespaces readable: e does not exist
        call_tool(scoped_store(SyncState.SYNCED).view(), "list_services", {"namespace": "e"})
    assert missing.value.code is ErrorCode.NOT_FOUND


def test_the_whole_cluster_says_nothing_of_scope() -> None:
    store = scoped_store(SyncState.SYNCED)
    store.namespaces = None
    answer = call_tool(store.view(), "list_services", {})
    assert answer.metadata.scope is None
    assert "scope" not in answer.model_dump(mode="json", by_alias=True)["metadata"]
