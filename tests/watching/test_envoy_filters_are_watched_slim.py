"""From a live cluster, Istio's EnvoyFilters are watched once their CRD exists, kept as
slim records (the patch bodies, Lua code and all, are dropped), and check_mesh_config
judges their patches as they change: the finding follows a MODIFIED event and leaves with
the object."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.model.records import GenericRecord
from tests.watching.conftest import Cluster, eventually, namespace

pytestmark = pytest.mark.anyio

ISTIO = "networking.istio.io"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": f"envoyfilters.{ISTIO}"},
       "spec": {"group": ISTIO, "scope": "Namespaced",
                "names": {"kind": "EnvoyFilter", "plural": "envoyfilters"},
                "versions": [{"name": "v1alpha3", "served": True, "storage": True}]}}
HCM = "envoy.filters.network.http_connection_manager"
LUA = "function envoy_on_request(handle) handle:logInfo('secret-token-123') end"


def envoy_filter(operation: str, priority: int = 0) -> dict[str, Any]:
    return {"apiVersion": f"{ISTIO}/v1alpha3", "kind": "EnvoyFilter",
            "metadata": {"name": "lua", "namespace": "x"},
            "spec": {"priority": priority, "configPatches": [{
                "applyTo": "HTTP_FILTER",
                "match": {"context": "SIDECAR_INBOUND",
                          "listener": {"portNumber": 8080, "filterChain": {
                              "filter": {"name": HCM}}}},
                "patch": {"operation": operation, "value": {
                    "name": "x.lua", "typed_config": {"inlineCode": LUA}}}}]}}


def codes(cluster: Cluster) -> list[str]:
    answer = to_json(call_tool(cluster.store.view(), "check_mesh_config", {}), detail=False)
    return [f"{f['code']} {f['resource']['name']}" for f in answer["findings"]]


async def test_an_envoy_filter_is_watched_slim_and_judged_as_it_changes(
        cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), CRD])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert "istio" in cluster.watcher.providers

    state.apply([envoy_filter("INSERT_BEFORE")])
    await eventually(lambda: cluster.store.view().exists("EnvoyFilter/x/lua"))
    record = cluster.store.view().get("EnvoyFilter/x/lua")
    assert isinstance(record, GenericRecord)
    assert record.spec is not None
    assert record.spec["configPatches"][0]["patch"] == {
        "operation": "INSERT_BEFORE", "value": {"name": "x.lua"}}
    assert "secret-token-123" not in repr(record)
    assert codes(cluster) == ["NS0720 lua"]

    state.apply([envoy_filter("INSERT_BEFORE", priority=10)])
    await eventually(lambda: codes(cluster) == [])

    rtype = state.registry.for_kind(f"{ISTIO}/v1alpha3", "EnvoyFilter")
    assert rtype is not None
    state.apply([{**envoy_filter("ADD"), "spec": {"configPatches": [
        {"applyTo": "HTTP_ROUTE", "patch": {"operation": "ADD"}}]}}])
    await eventually(lambda: codes(cluster) == ["NS0722 lua"])
    state.delete(rtype, "x", "lua")
    await eventually(lambda: not cluster.store.view().exists("EnvoyFilter/x/lua"))
    assert codes(cluster) == []
