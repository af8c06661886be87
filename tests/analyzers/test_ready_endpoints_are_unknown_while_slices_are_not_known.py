"""A backend's ready endpoint count is read from EndpointSlices only where they are known:
from manifests without slices, or from a cluster whose slices are not watched, forbidden or
not listed yet, it is unknown (None), never a guessed zero."""

from __future__ import annotations

from netsight.analyzers.routing.references import ready_endpoints
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphStore, Source
from netsight.graph.store.sync_status import KindStatus, SyncState
from tests.graph.factories import apply_all, endpoint_slice, namespace, pod, service


def web(store: GraphStore) -> int | None:
    record = store.view().get("Service/shop/web")
    assert isinstance(record, ServiceRecord)
    return ready_endpoints(store.view(), record)


def test_no_slices_on_a_cluster_is_unknown_until_slices_are_synced() -> None:
    store = GraphStore(source=Source.CLUSTER)
    apply_all(store, namespace("shop"), service("web", ns="shop", selector={"app": "web"}))
    assert web(store) is None  # EndpointSlices not watched
    store.sync["EndpointSlice"] = KindStatus("EndpointSlice", state=SyncState.SYNCING)
    assert web(store) is None  # not listed yet
    store.sync["EndpointSlice"] = KindStatus("EndpointSlice", state=SyncState.FORBIDDEN,
                                             last_error="403")
    assert web(store) is None
    store.sync["EndpointSlice"] = KindStatus("EndpointSlice", state=SyncState.SYNCED,
                                             synced_at=1.0)
    assert web(store) == 0  # listed, and none belongs to the Service


def test_slices_present_are_counted_from_manifests_and_clusters() -> None:
    for source in (Source.MANIFESTS, Source.CLUSTER):
        store = GraphStore(source=source)
        apply_all(store, namespace("shop"), pod("web-1", ns="shop", labels={"app": "web"}),
                  service("web", ns="shop", selector={"app": "web"}),
                  endpoint_slice("web-abc", "web", ["web-1"], ns="shop", owned=True))
        assert web(store) == 1
    store = GraphStore(source=Source.MANIFESTS)
    apply_all(store, namespace("shop"), service("web", ns="shop", selector={"app": "web"}))
    assert web(store) is None
