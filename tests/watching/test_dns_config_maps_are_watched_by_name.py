"""With DNS_CONFIG, the cluster DNS ConfigMaps (kube-system/coredns, kube-dns) are watched
whole, each on its own by name (a metadata.name field selector, which RBAC's resourceNames
authorizes), never every ConfigMap; the ConfigMaps watched by name only leave them alone,
and check_dns_resolution reads the Corefile as it changes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.model.records import ConfigMapRecord
from netsight.graph.store.sync_status import SyncState
from tests.watching.conftest import FAST, Cluster, eventually, namespace

pytestmark = pytest.mark.anyio

COREFILE = """.:53 {
    kubernetes cluster.local {
       pods insecure
    }
    forward . 10.0.0.53
}
"""


def config_map(name: str, namespace_: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace_}, "data": data}


def upstream(cluster: Cluster) -> str:
    answer = to_json(call_tool(cluster.store.view(), "check_dns_resolution",
                               {"name": "example.org."}), detail=False)
    (query,) = answer["queries"]
    return str(query["by"])


async def test_the_corefile_is_read_and_followed(cluster: Cluster) -> None:
    watcher = ClusterWatcher(cluster.transport, cluster.store,
                             dataclasses.replace(FAST, dns_config=True))
    state = cluster.sim.state
    state.apply([namespace("kube-system"), namespace("shop"),
                 config_map("coredns", "kube-system", {"Corefile": COREFILE}),
                 config_map("settings", "shop", {"Corefile": "not read"}),
                 config_map("coredns", "shop", {"Corefile": "not read either"})])
    try:
        await watcher.start()
        assert await watcher.wait_synced(10)
        view = cluster.store.view()
        record = view.get("ConfigMap/kube-system/coredns")
        assert isinstance(record, ConfigMapRecord)
        assert record.dns_data == {"Corefile": COREFILE}
        # Every other ConfigMap is known by name only, as SECRET_METADATA watches it.
        for other in ("ConfigMap/shop/settings", "ConfigMap/shop/coredns"):
            kept = view.get(other)
            assert isinstance(kept, ConfigMapRecord)
            assert kept.dns_data is None
        assert cluster.store.sync["ConfigMap/kube-system/coredns"].state is SyncState.SYNCED
        assert cluster.store.sync["ConfigMap/kube-system/kube-dns"].state is SyncState.SYNCED
        # Only the named objects were asked for whole; ConfigMaps as a whole by name only.
        whole = [(path, query) for method, path, query in cluster.sim.api.request_log
                 if "configmaps" in path and path not in cluster.sim.api.metadata_requests]
        assert whole
        assert all(path == "/api/v1/namespaces/kube-system/configmaps"
                   and query.get("fieldSelector") in ("metadata.name=coredns",
                                                      "metadata.name=kube-dns")
                   for path, query in whole), whole
        assert upstream(cluster) == "forward . to 10.0.0.53"

        # A change arrives through the watch; the ConfigMaps' own watch leaves it whole.
        state.apply([config_map("coredns", "kube-system",
                                {"Corefile": COREFILE.replace("10.0.0.53", "10.0.0.54")})])
        await eventually(lambda: upstream(cluster) == "forward . to 10.0.0.54")
        for informer, _ in watcher.informers.values():
            informer.relist_soon("test")
        await eventually(lambda: all(i.status.state is SyncState.SYNCED
                                     for i, _ in watcher.informers.values()))
        assert upstream(cluster) == "forward . to 10.0.0.54"
        record = cluster.store.view().get("ConfigMap/kube-system/coredns")
        assert isinstance(record, ConfigMapRecord)
        assert record.dns_data is not None

        config_maps = state.registry.for_kind("v1", "ConfigMap")
        assert config_maps is not None
        state.delete(config_maps, "kube-system", "coredns")
        await eventually(
            lambda: not cluster.store.view().exists("ConfigMap/kube-system/coredns"))
        assert cluster.store.view().exists("ConfigMap/shop/coredns")
        assert upstream(cluster) == "cluster DNS, forwarding upstream (Corefile not read)"
    finally:
        await watcher.stop()


async def test_without_dns_config_the_corefile_is_said_not_read(cluster: Cluster) -> None:
    cluster.sim.state.apply([namespace("kube-system"),
                             config_map("coredns", "kube-system", {"Corefile": COREFILE})])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    record = cluster.store.view().get("ConfigMap/kube-system/coredns")
    assert isinstance(record, ConfigMapRecord)
    assert record.dns_data is None  # by name only: SECRET_METADATA's watch
    answer = to_json(call_tool(cluster.store.view(), "check_dns_resolution",
                               {"name": "example.org."}), detail=False)
    assert answer["clusterDns"]["source"] == "none"
    assert "cluster DNS ConfigMap not read: ConfigMap/kube-system/coredns: not watched " \
        "(its data is read with DNS_CONFIG=true)" in answer["notEvaluated"]
