"""NAMESPACE=a,b against a simulator that enforces RBAC, with a token whose rules are Roles
in a and b only: netsight starts through the serve path (load_settings, live_graph, the
real client and ClusterWatcher), syncs what it may read, answers about a and b, says in
every answer what it cannot see, refuses what lies outside, leaves undecided what it cannot
know, and asks for nothing twice that RBAC refused."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphView
from netsight.server.cluster import live_graph
from netsight.server.config import load_settings
from netsight.sim.apiserver import SimConfig, SimServer
from tests.watching.conftest import FAST, crd, eventually, namespace, pod, service

pytestmark = pytest.mark.anyio

TEAM = "system:serviceaccount:a:netsight"
WATCHED = ("a", "b")


def labelled(name: str, **labels: str) -> dict[str, Any]:
    found = namespace(name)
    found["metadata"]["labels"] = labels
    return found


def allow_from(namespace_labels: dict[str, str]) -> dict[str, Any]:
    """In a: the web pods admit ingress only from namespaces with these labels."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "from-team", "namespace": "a"},
            "spec": {"podSelector": {"matchLabels": {"app": "web"}},
                     "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {
                         "matchLabels": namespace_labels}}]}]}}


def cluster(sim: SimServer, *, admin_policies: bool = True) -> None:
    if admin_policies:
        sim.state.apply([crd("policy.networking.k8s.io", "AdminNetworkPolicy",
                             "adminnetworkpolicies", "v1alpha1", scope="Cluster")])
    sim.state.apply([
        labelled("a", team="a"), labelled("b", team="b"), labelled("c", team="b"),
        pod("web-1", "a", app="web"), pod("client", "b", app="client"),
        pod("intruder", "c", app="client"),
        service("web", "a", app="web"), service("web", "c", app="web"),
        allow_from({"team": "b"}),
    ])


def grant(sim: SimServer, *, cluster_reads: bool, own_namespaces: bool = True) -> None:
    """Roles in a and b (with ``own_namespaces``, reading their Namespace objects too);
    with ``cluster_reads`` the chart's optional ClusterRole too."""
    access = sim.access
    access.add_token("team-token", TEAM)
    access.allow(user=TEAM, verbs=("get", "list", "watch"), namespaces=WATCHED, resources=(
        "*",) if own_namespaces else ("pods", "services", "endpointslices", "networkpolicies",
                                      "ingresses", "secrets", "configmaps"))
    if cluster_reads:
        access.allow(user=TEAM, verbs=("get", "list", "watch"),
                     resources=("namespaces", "adminnetworkpolicies",
                                "baselineadminnetworkpolicies", "customresourcedefinitions"))
    access.enforce = True


def refusals(sim: SimServer) -> Counter[tuple[str, str, str]]:
    return Counter((d.verb, d.resource, d.namespace) for d in sim.access.decisions
                   if d.user == TEAM and not d.allowed)


async def serve(sim: SimServer, tmp_path: Path) -> Any:
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig", token="team-token")
    settings = load_settings({"kubeconfig": str(kubeconfig)},
                             {"NAMESPACE": "b,a", "CLUSTER_NAME": "team"})
    assert settings.namespaces == WATCHED
    return live_graph(settings, informers=FAST)


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return to_json(call_tool(view, tool, args), detail=True)


async def test_a_role_only_token_syncs_answers_and_says_what_it_cannot_see(
        tmp_path: Path) -> None:
    async with SimServer(config=SimConfig(bookmark_interval=0.1)) as sim:
        cluster(sim)
        grant(sim, cluster_reads=False)
        async with await serve(sim, tmp_path) as graph:
            await eventually(lambda: graph.ready and graph.store.view().not_visible() == [
                "AdminNetworkPolicy", "CustomResourceDefinition", "IngressClass"]
                and graph.store.view().unreadable("Namespace") is None)
            view = graph.store.view()
            assert sorted(r.key for r in view.for_each("Pod")) == ["Pod/a/web-1",
                                                                  "Pod/b/client"]
            assert not view.exists("Pod/c/intruder")
            # Namespaces may not be listed; the Roles let netsight get its own two.
            assert {r.name: r.labels for r in view.for_each("Namespace")} == {
                "a": {"team": "a"}, "b": {"team": "b"}}

            cart = answer(view, "diagnose_service", {"service": "a/web"})
            assert cart["metadata"]["scope"] == {
                "namespaces": ["a", "b"],
                "notVisible": ["AdminNetworkPolicy", "CustomResourceDefinition",
                               "IngressClass"]}
            with pytest.raises(ToolFailure) as refused:
                call_tool(view, "diagnose_service", {"service": "c/web"})
            assert refused.value.code is ErrorCode.INVALID_INPUT
            assert "namespace 'c' is not watched" in refused.value.message
            assert "watches only a, b" in refused.value.message
            with pytest.raises(ToolFailure) as refused:
                call_tool(view, "list_services", {"namespace": "c"})
            assert "not watched" in refused.value.message

            # The admin tier cannot be read: any flow may be overridden there.
            verdict = answer(view, "find_blocking_policies",
                             {"source": "b/client", "destination": "a/web-1", "port": 80})
            assert verdict["allowed"] is None, verdict
            assert verdict["notEvaluated"] == [
                "AdminNetworkPolicy: listing is forbidden (adminnetworkpolicies.policy."
                'networking.k8s.io is forbidden: User "system:serviceaccount:a:netsight" '
                'cannot list resource "adminnetworkpolicies" in API group '
                '"policy.networking.k8s.io" at the cluster scope)']

            # A refusal per kind, once: no retries however long the informers run.
            first = refusals(sim)
            await eventually(lambda: sum(1 for d in sim.access.decisions if d.allowed
                                         and d.verb == "watch") >= 2 * 7)
            for informer, _ in graph.watcher.informers.values():
                await informer.synced.wait()
            await asyncio.sleep(4 * FAST.forbidden_retry)
            assert refusals(sim) == first
            assert set(first) == {("list", "namespaces", ""), ("list", "ingressclasses", ""),
                                  ("list", "adminnetworkpolicies", ""),
                                  ("list", "customresourcedefinitions", "")}
            assert all(n == 1 for n in first.values()), first
            assert {d.namespace for d in sim.access.decisions
                    if d.user == TEAM and d.namespace} == set(WATCHED)


async def test_with_cluster_reads_verdicts_decide_inside_and_not_across_the_gap(
        tmp_path: Path) -> None:
    async with SimServer(config=SimConfig(bookmark_interval=0.1)) as sim:
        cluster(sim)
        grant(sim, cluster_reads=True)
        async with await serve(sim, tmp_path) as graph:
            await eventually(lambda: graph.ready)
            view = graph.store.view()
            assert answer(view, "list_services", {})["metadata"]["scope"] == {
                "namespaces": ["a", "b"], "notVisible": ["IngressClass"]}
            allowed = answer(view, "find_blocking_policies",
                             {"source": "b/client", "destination": "a/web-1", "port": 80})
            assert allowed["allowed"] is True, allowed
            # c's pod is not watched: its address could be any pod of an unwatched
            # namespace, which a namespaceSelector peer may match.
            address = pod("intruder", "c")["status"]["podIP"]
            across = answer(view, "find_blocking_policies",
                            {"source": f"ip:{address}", "destination": "a/web-1",
                             "port": 80})
            assert across["allowed"] is None, across
            assert any("does not watch" in r for r in across["notEvaluated"]), across
            # Listing peers, those of namespaces not watched cannot be among them.
            exposure = answer(view, "who_can_reach", {"destination": "a/web-1", "port": 80})
            assert exposure["notEvaluated"][0] == (
                "peers in namespaces netsight does not watch are not listed (it watches "
                "only a, b)")
            assert [p["namespace"] for p in exposure["peers"] if "namespace" in p] == ["b"]



async def test_namespaces_it_may_not_read_leave_selector_verdicts_undecided(
        tmp_path: Path) -> None:
    async with SimServer(config=SimConfig(bookmark_interval=0.1)) as sim:
        cluster(sim, admin_policies=False)
        grant(sim, cluster_reads=False, own_namespaces=False)
        async with await serve(sim, tmp_path) as graph:
            await eventually(lambda: graph.ready and graph.store.view().not_visible() == [
                "CustomResourceDefinition", "IngressClass", "Namespace"])
            view = graph.store.view()
            # a's policy admits namespaces labelled team=b: whether b is one is unknown.
            verdict = answer(view, "find_blocking_policies",
                             {"source": "b/client", "destination": "a/web-1", "port": 80})
            assert verdict["allowed"] is None, verdict
            assert any(r.startswith("Namespace: listing is forbidden (in a: namespaces "
                                    '"a" is forbidden') for r in verdict["notEvaluated"])
            assert [(d.verb, d.resource, d.namespace) for d in sim.access.decisions
                    if d.user == TEAM and d.resource == "namespaces"] == [
                ("list", "namespaces", ""), ("get", "namespaces", "a"),
                ("get", "namespaces", "b")]
