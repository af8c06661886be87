"""Secrets (and ConfigMaps) are watched for their names only, as PartialObjectMetadata: TLS
certificateRefs are checked on a live cluster, and no Secret data reaches netsight."""

from __future__ import annotations

import dataclasses
from typing import Any

import aiohttp
import orjson
import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.model.records import SecretRecord
from netsight.graph.store.sync_status import SyncState
from tests.watching.conftest import FAST, Cluster, crd, eventually, namespace

pytestmark = pytest.mark.anyio

METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


GATEWAY_API = [
    crd("gateway.networking.k8s.io", "Gateway", "gateways"),
    (lambda c: {**c, "spec": {**c["spec"], "scope": "Cluster"}})(
        crd("gateway.networking.k8s.io", "GatewayClass", "gatewayclasses")),
]
CLASS = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
         "metadata": {"name": "gc"}, "spec": {"controllerName": "example.com/gateway"}}


def secret(name: str, namespace: str = "infra") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "edge"}},
            "data": {"tls.crt": "c2VjcmV0", "tls.key": "c2VjcmV0"}}


def gateway(*certificates: str) -> dict[str, Any]:
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "edge", "namespace": "infra"},
            "spec": {"gatewayClassName": "gc", "listeners": [
                {"name": f"https-{i}", "port": 443, "protocol": "HTTPS",
                 "hostname": f"h{i}.example.com",
                 "tls": {"certificateRefs": [{"name": name}]}}
                for i, name in enumerate(certificates)]}}


def listener_refs(cluster: Cluster) -> dict[str, Any]:
    result = to_json(call_tool(cluster.store.view(), "check_gateway_status",
                               {"gateway": "infra/edge"}), detail=False)
    (found,) = result["gateways"]
    return {"refs": {listener["name"]: listener["conditions"]["ResolvedRefs"]["reason"]
                     for listener in found["listeners"]},
            "notEvaluated": result["notEvaluated"]}


async def test_the_simulator_answers_metadata_only_lists_without_secret_data(
        cluster: Cluster) -> None:
    cluster.sim.state.apply([namespace("infra"), secret("edge-tls")])
    async with aiohttp.ClientSession() as session, session.get(
            f"{cluster.sim.url}/api/v1/namespaces/infra/secrets",
            headers={"Accept": METADATA_LIST}) as response:
        body = orjson.loads(await response.read())
    assert body["kind"] == "PartialObjectMetadataList"
    (item,) = body["items"]
    assert item["kind"] == "PartialObjectMetadata"
    assert item["metadata"]["name"] == "edge-tls"
    assert set(item) == {"kind", "apiVersion", "metadata"}, "no data, no type"


async def test_certificate_refs_resolve_against_watched_secret_names(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("infra"), *GATEWAY_API,
                 secret("edge-tls"), gateway("edge-tls", "missing-tls"), CLASS])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    await eventually(lambda: cluster.store.view().exists("Gateway/infra/edge"))

    record = cluster.store.view().get("Secret/infra/edge-tls")
    assert isinstance(record, SecretRecord)
    assert record.type is None
    assert not record.tls_checked  # no data arrived to judge
    assert dict(record.labels) == {"app": "edge"}
    assert "/api/v1/secrets" in cluster.sim.api.metadata_requests  # list and watch alike
    assert "c2VjcmV0" not in repr(record)
    assert "kubernetes.io/tls" not in repr(record)

    assert listener_refs(cluster) == {
        "refs": {"https-0": "ResolvedRefs", "https-1": "InvalidCertificateRef"},
        "notEvaluated": []}

    # A Secret created later arrives through the metadata watch, and resolves the ref.
    state.apply([secret("missing-tls")])
    await eventually(lambda: cluster.store.view().exists("Secret/infra/missing-tls"))
    assert listener_refs(cluster)["refs"] == {"https-0": "ResolvedRefs",
                                              "https-1": "ResolvedRefs"}

    secrets = state.registry.for_kind("v1", "Secret")
    assert secrets is not None
    state.delete(secrets, "infra", "edge-tls")
    await eventually(lambda: not cluster.store.view().exists("Secret/infra/edge-tls"))
    assert listener_refs(cluster)["refs"]["https-0"] == "InvalidCertificateRef"


async def test_forbidden_secrets_leave_certificate_refs_unevaluated(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.faults.forbidden.add("secrets")
    state.apply([namespace("infra"), *GATEWAY_API,
                 gateway("edge-tls"), CLASS])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    await eventually(lambda: cluster.store.view().exists("Gateway/infra/edge"))
    assert cluster.store.sync["Secret"].state is SyncState.FORBIDDEN

    answer = listener_refs(cluster)
    assert answer["refs"] == {"https-0": "ResolvedRefs"}  # not failed on a guess
    (reason,) = answer["notEvaluated"]
    assert "Secret existence not evaluated (Secret: listing is forbidden" in reason


async def test_without_secret_metadata_secrets_are_not_watched(cluster: Cluster) -> None:
    settings = dataclasses.replace(FAST, metadata_only=frozenset())
    watcher = ClusterWatcher(cluster.transport, cluster.store, settings)
    state = cluster.sim.state
    state.apply([namespace("infra"), *GATEWAY_API,
                 secret("edge-tls"), gateway("edge-tls"), CLASS])
    try:
        await watcher.start()
        assert await watcher.wait_synced(10)
        await eventually(lambda: cluster.store.view().exists("Gateway/infra/edge"))
        assert "Secret" not in cluster.store.sync
        assert not cluster.sim.api.metadata_requests
        (reason,) = listener_refs(cluster)["notEvaluated"]
        assert reason.endswith("Secret existence not evaluated (Secret: not watched)")
    finally:
        await watcher.stop()
