"""With PROVIDER_STATUS, the providers' controllers and agents are watched where providers
install them, never every Deployment of the cluster: Deployments and DaemonSets of the
provider namespaces only (those among NAMESPACE=a,b when set), Nodes and Istio's webhooks
as metadata (the webhooks by their istio.io/rev label); check_provider_status and the CNI
detection answer from them, and follow their changes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.ingest.discovery import PROVIDER_NAMESPACES
from netsight.sim.cni import install_cni
from netsight.sim.control_planes import install_istio
from netsight.sim.dataplane.enforcement import Profile
from tests.watching.conftest import FAST, Cluster, eventually, namespace

pytestmark = pytest.mark.anyio

ON = dataclasses.replace(FAST, provider_status=True)


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {"podCIDR": "10.244.0.0/24"},
            "status": {"addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}}


def deployment(name: str, ns: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "a", "image": "a:1"}]}}}}


def status(cluster: Cluster, provider: str) -> dict[str, Any]:
    return to_json(call_tool(cluster.store.view(), "check_provider_status",
                             {"provider": provider}), detail=False)


def setup(cluster: Cluster) -> None:
    state = cluster.sim.state
    state.apply([namespace("kube-system"), namespace("istio-system"), namespace("shop"),
                 node("node-a"), node("node-b"), deployment("web", "shop"),
                 {"apiVersion": "admissionregistration.k8s.io/v1",
                  "kind": "MutatingWebhookConfiguration",
                  "metadata": {"name": "unrelated"}, "webhooks": []}])
    install_cni(state, Profile.NONE)  # Flannel's DaemonSet and Node annotations
    install_istio(state, "1.27.0")


async def test_only_provider_namespaces_and_labelled_webhooks_are_watched(
        cluster: Cluster) -> None:
    setup(cluster)
    watcher = ClusterWatcher(cluster.transport, cluster.store, ON)
    try:
        await watcher.start()
        assert await watcher.wait_synced(10)
        view = cluster.store.view()
        assert view.exists("Deployment/istio-system/istiod")
        assert view.exists("DaemonSet/kube-system/kube-flannel-ds")
        assert not view.exists("Deployment/shop/web")  # not a provider namespace
        assert view.exists("MutatingWebhookConfiguration/istio-sidecar-injector")
        assert not view.exists("MutatingWebhookConfiguration/unrelated")
        flannel = view.get("Node/node-a")
        assert flannel is not None
        assert flannel.annotations["flannel.alpha.coreos.com/backend-type"] == "vxlan"
        requests = [(path, query) for _, path, query in cluster.sim.api.request_log]
        workload_paths = {path for path, _ in requests
                          if path.endswith(("/deployments", "/daemonsets"))}
        assert workload_paths == {f"/apis/apps/v1/namespaces/{ns}/{plural}"
                                  for ns in PROVIDER_NAMESPACES
                                  for plural in ("deployments", "daemonsets")}
        assert all(query.get("labelSelector") == "istio.io/rev" for path, query in requests
                   if path.endswith("/mutatingwebhookconfigurations"))
        metadata_paths = set(cluster.sim.api.metadata_requests)
        assert {"/api/v1/nodes",
                "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"} \
            <= metadata_paths

        answer = status(cluster, "istio")
        assert answer["providers"] == [{"name": "istio", "status": "healthy",
                                        "versions": ["1.27.0"], "served": []}]
        cni = status(cluster, "cni")
        assert cni["providers"][0]["status"] == "healthy"
        summaries = [f["summary"] for f in cni["findings"]]
        assert "CNI: Flannel; enforces no NetworkPolicy" in summaries
        assert "cni agent: DaemonSet kube-system/kube-flannel-ds: 2/2 ready (v0.26.1)" \
            in summaries

        # istiod loses its pod: the watch brings the change to the answer.
        istiod = dict(cluster.sim.state.objects[("apps", "Deployment")]["istio-system/istiod"])
        cluster.sim.state.apply([{**istiod, "status": {**istiod["status"],
                                                        "readyReplicas": 0}}])
        await eventually(lambda: status(cluster, "istio")["providers"][0]["status"]
                         == "unavailable")
        assert status(cluster, "istio")["findings"][0]["code"] == "NS1010"
    finally:
        await watcher.stop()


async def test_watching_chosen_namespaces_reads_only_provider_namespaces_among_them(
        cluster: Cluster) -> None:
    setup(cluster)
    watcher = ClusterWatcher(cluster.transport, cluster.store, ON,
                             namespaces=("shop", "istio-system"))
    try:
        await watcher.start()
        assert await watcher.wait_synced(10)
        view = cluster.store.view()
        assert view.exists("Deployment/istio-system/istiod")
        assert not view.exists("Deployment/shop/web")
        assert not view.exists("DaemonSet/kube-system/kube-flannel-ds")  # not watched
        paths = {path for _, path, _ in cluster.sim.api.request_log
                 if path.endswith(("/deployments", "/daemonsets"))}
        assert paths == {f"/apis/apps/v1/namespaces/istio-system/{p}"
                         for p in ("deployments", "daemonsets")}
    finally:
        await watcher.stop()


async def test_without_provider_status_nothing_more_is_watched(cluster: Cluster) -> None:
    setup(cluster)
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    assert not any(path.endswith(("/deployments", "/daemonsets", "/nodes",
                                  "/mutatingwebhookconfigurations"))
                   for _, path, _ in cluster.sim.api.request_log)
    answer = status(cluster, "cni")
    assert answer["providers"] == [{"name": "cni", "status": "not detected", "versions": [],
                                    "served": []}]
    assert "DaemonSet: not watched" in answer["notEvaluated"]
