"""A group's kinds need not share its preferred version: each kind is watched once, in the
preferred version if that serves it, else in the highest-priority version that does."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from aiohttp import ClientResponse

from netsight.analyzers.core.calling import answer, to_json
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.discovery import discover
from netsight.graph.model.api_versions import by_priority
from netsight.graph.store.sync_status import SyncState
from netsight.sim.demo import load_demo
from netsight.sim.scenarios import GATEWAY_API_CRDS
from tests.watching.conftest import Cluster, crd, eventually, namespace

pytestmark = pytest.mark.anyio

GATEWAY = "gateway.networking.k8s.io"


def served_in(definition: dict[str, Any], *versions: str) -> dict[str, Any]:
    """``definition`` serving each of ``versions`` (the first one stored)."""
    definition["spec"]["versions"] = [{"name": v, "served": True, "storage": i == 0}
                                      for i, v in enumerate(versions)]
    return definition


def grant(name: str = "g", namespace: str = "x", version: str = "v1beta1") -> dict[str, Any]:
    return {"apiVersion": f"{GATEWAY}/{version}", "kind": "ReferenceGrant",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"from": [{"group": GATEWAY, "kind": "HTTPRoute", "namespace": "edge"}],
                     "to": [{"group": "", "kind": "Service"}]}}


@pytest.fixture(params=["aggregated", "plain"])
def discovery(request: pytest.FixtureRequest, cluster: Cluster) -> str:
    """Discovery served aggregated (one answer for every group, Kubernetes >= 1.27) or as
    the plain lists of older servers, one request per group version."""
    cluster.sim.api.config.aggregated_discovery = request.param == "aggregated"
    return str(request.param)


class Counting:
    """The real transport, noting the paths asked for."""

    def __init__(self, transport: KubeTransport) -> None:
        self.transport, self.paths = transport, list[str]()

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> ClientResponse:
        self.paths.append(path)
        return await self.transport.get(path, params, accept=accept)


def watched(cluster: Cluster, kind: str) -> list[str]:
    return sorted(k.api_version for k, _ in cluster.watcher.informers if k.kind == kind)


def test_versions_sort_as_kubernetes_orders_them() -> None:
    # apimachinery's CompareKubeAwareVersionStrings example order.
    order = ["v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2",
             "foo1", "foo10"]
    assert by_priority(reversed(order)) == order
    assert by_priority(["v1beta1", "v1", "v1beta1"]) == ["v1", "v1beta1"]


async def test_a_kind_served_only_outside_the_preferred_version_is_watched(
        cluster: Cluster, discovery: str) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), *GATEWAY_API_CRDS])
    state.apply([grant(), {"apiVersion": f"{GATEWAY}/v1", "kind": "HTTPRoute",
                           "metadata": {"name": "r", "namespace": "x"}}])
    group = orjson.loads(await (await cluster.transport.get(f"/apis/{GATEWAY}", [])).read())
    assert group["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]

    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert watched(cluster, "ReferenceGrant") == [f"{GATEWAY}/v1beta1"]
    assert watched(cluster, "HTTPRoute") == [f"{GATEWAY}/v1"]
    view = cluster.store.view()
    assert view.exists("ReferenceGrant/x/g")
    assert view.exists("HTTPRoute/x/r")
    assert cluster.store.sync["ReferenceGrant"].state is SyncState.SYNCED


async def test_a_kind_served_in_two_versions_is_watched_once_in_the_preferred(
        cluster: Cluster, discovery: str) -> None:
    state = cluster.sim.state
    # Listed beta first: the preferred version is the highest priority, not the first.
    state.apply([namespace("x"), served_in(crd(GATEWAY, "HTTPRoute", "httproutes"),
                                           "v1beta1", "v1")])
    state.apply([{"apiVersion": f"{GATEWAY}/v1", "kind": "HTTPRoute",
                  "metadata": {"name": "r", "namespace": "x"}}])
    kinds = [k for k in await discover(cluster.transport) if k.kind == "HTTPRoute"]
    assert [k.api_version for k in kinds] == [f"{GATEWAY}/v1"]

    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert watched(cluster, "HTTPRoute") == [f"{GATEWAY}/v1"]
    # Synced once listed: its watch reaches the simulator a moment later.
    await eventually(lambda: [w.rtype.version for w in state.watchers
                              if w.rtype.kind == "HTTPRoute"] == ["v1"])
    assert cluster.store.view().exists("HTTPRoute/x/r")


async def test_a_crd_gaining_a_preferred_version_moves_its_informer(
        cluster: Cluster, discovery: str) -> None:
    state = cluster.sim.state
    state.apply([namespace("x"), *GATEWAY_API_CRDS])
    state.apply([grant()])
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(5)
    assert watched(cluster, "ReferenceGrant") == [f"{GATEWAY}/v1beta1"]

    # As Gateway API v1.3 serves it: v1 beside v1beta1.
    state.apply([served_in(crd(GATEWAY, "ReferenceGrant", "referencegrants"),
                           "v1", "v1beta1")])
    await eventually(lambda: watched(cluster, "ReferenceGrant") == [f"{GATEWAY}/v1"])
    await eventually(lambda: cluster.store.sync["ReferenceGrant"].state is SyncState.SYNCED)
    state.apply([grant("h", version="v1")])
    view = cluster.store.view()
    await eventually(lambda: view.exists("ReferenceGrant/x/h"))
    assert view.exists("ReferenceGrant/x/g")


def route_findings(cluster: Cluster) -> set[tuple[str, str]]:
    result = to_json(answer(TOOLS["check_route_resolution"], cluster.store.view(),
                            {"limit": 500}), detail=False)
    return {(f["code"], f"{f['resource']['kind']}/{f['resource'].get('namespace')}/"
             f"{f['resource']['name']}") for f in result.get("findings") or ()}


async def test_a_reference_grant_created_live_fixes_the_demos_route(cluster: Cluster
                                                                    ) -> None:
    load_demo(cluster.sim.state)
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    fault = ("NS0503", "HTTPRoute/edge/storefront")
    assert fault in route_findings(cluster)

    # Through the API, as kubectl apply would: the informers carry it into the graph.
    response = await cluster.transport.request(
        "POST", f"/apis/{GATEWAY}/v1beta1/namespaces/shop/referencegrants",
        grant("storefront", "shop"))
    assert response.status == 201, await response.read()
    response.release()
    await eventually(lambda: fault not in route_findings(cluster))
    assert cluster.store.view().exists("ReferenceGrant/shop/storefront")


async def test_discovery_asks_for_other_versions_only_where_they_can_add_a_kind(
        cluster: Cluster) -> None:
    load_demo(cluster.sim.state)
    found = {}
    for aggregated in (True, False):
        cluster.sim.api.config.aggregated_discovery = aggregated
        counting = Counting(cluster.transport)
        found[aggregated] = sorted((k.api_version, k.kind, k.only or ("", ""))
                                   for k in await discover(counting, dns_config=True))
        if aggregated:
            assert counting.paths == ["/apis", "/api"]
        else:
            # Gateway API is watched whole: each of its versions is read; so is Linkerd's
            # policy group, whose kinds are served in two versions. Istio's groups and the
            # built-ins have one version each.
            assert counting.paths == [
                "/apis", "/api/v1", "/apis/discovery.k8s.io/v1", "/apis/networking.k8s.io/v1",
                f"/apis/{GATEWAY}/v1", f"/apis/{GATEWAY}/v1beta1",
                "/apis/networking.istio.io/v1", "/apis/security.istio.io/v1",
                "/apis/policy.linkerd.io/v1beta3", "/apis/policy.linkerd.io/v1alpha1"]
    assert found[True] == found[False]
    assert (f"{GATEWAY}/v1beta1", "ReferenceGrant", ("", "")) in found[True]
