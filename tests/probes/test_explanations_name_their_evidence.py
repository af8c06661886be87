"""Why a probe and the static verdict disagree, over graphs loaded from manifests: each cause
named only with the graph's evidence for it, likeliest first, and the CNI never guessed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.policy.endpoints import resolve
from netsight.analyzers.probing.explanations import Cause, Flow, Likelihood, detect_cni, explain
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import EventType, GraphStore, GraphView, Source


def pod(namespace: str, name: str, labels: dict[str, str], *, ip: str,
        containers: tuple[str, ...] = ("main",), ports: tuple[int, ...] = (8080,),
        owner: tuple[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0],
                                    "name": owner[1], "uid": "u", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": c, "image": "x", "ports": [
                {"containerPort": p} for p in ports] if c == "main" else []}
                for c in containers]},
            "status": {"phase": "Running", "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def graph(tmp_path: Path, *objects: dict[str, Any]) -> GraphStore:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    store = GraphStore(source=Source.MANIFESTS, cluster_name="t")
    load_manifests(store, [str(path)])
    return store


def flow(view: GraphView, source: str, destination: str, port: int) -> Flow:
    src = resolve(view, ObjectName.parse(source), argument="source", tool="t").endpoints[0]
    dst = resolve(view, ObjectName.parse(destination), argument="destination", tool="t")
    return Flow(src, dst, [(e, port) for e in dst.endpoints], port, [])


STRICT = {"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
          "metadata": {"name": "strict", "namespace": "data"},
          "spec": {"mtls": {"mode": "STRICT"}}}


def test_a_strict_mesh_explains_a_reset_from_a_client_without_a_proxy(tmp_path: Path) -> None:
    store = graph(tmp_path,
                  pod("shop", "web", {"app": "web"}, ip="10.0.0.1"),
                  pod("data", "db", {"app": "db"}, ip="10.0.0.2", ports=(5432,),
                      containers=("main", "istio-proxy")), STRICT)
    view = store.view()
    (found,) = explain(view, flow(view, "shop/web", "data/db", 5432), allowed=True,
                       outcome="reset")
    assert (found.cause, found.likelihood) == (Cause.MESH_REQUIRES_MTLS, Likelihood.HIGH)
    assert found.evidence == ["source shop/web has no mesh proxy",
                              "data/db runs istio-proxy; PeerAuthentication data/strict is "
                              "STRICT on port 5432"]
    # With a proxy of its own, the client speaks mTLS: nothing to explain there.
    meshed = graph(tmp_path, pod("shop", "web", {"app": "web"}, ip="10.0.0.1",
                                 containers=("main", "istio-proxy")),
                   pod("data", "db", {"app": "db"}, ip="10.0.0.2", ports=(5432,),
                       containers=("main", "istio-proxy")), STRICT).view()
    assert explain(meshed, flow(meshed, "shop/web", "data/db", 5432), allowed=True,
                   outcome="reset") == []


def test_a_change_moments_ago_to_the_flow_points_at_a_stale_graph(tmp_path: Path) -> None:
    store = graph(tmp_path, pod("shop", "web", {"app": "web"}, ip="10.0.0.1"),
                  pod("data", "db", {"app": "db"}, ip="10.0.0.2", ports=(5432,)))
    view = store.view()
    assert explain(view, flow(view, "shop/web", "data/db", 5432), allowed=True,
                   outcome="timeout") == []
    store.apply(EventType.MODIFIED, pod("data", "db", {"app": "db", "v": "2"},
                                        ip="10.0.0.2", ports=(5432,)))
    view = store.view()
    (found,) = explain(view, flow(view, "shop/web", "data/db", 5432), allowed=True,
                       outcome="timeout")
    assert (found.cause, found.likelihood) == (Cause.GRAPH_STALE, Likelihood.MEDIUM)
    assert "Pod/data/db changed" in found.evidence[0]


@pytest.mark.parametrize(("agent", "owner", "name", "enforces"), [
    ("kube-flannel-ds-abcde", ("DaemonSet", "kube-flannel-ds"), "Flannel", False),
    ("calico-node-x1", ("DaemonSet", "calico-node"), "Calico", True),
    ("cilium-7kq2d", ("DaemonSet", "cilium"), "Cilium", True),
    ("kindnet-5w2f9", ("DaemonSet", "kindnet"), "kindnet", None),
])
def test_the_cni_is_named_from_its_agents(tmp_path: Path, agent: str,
                                          owner: tuple[str, str], name: str,
                                          enforces: bool | None) -> None:
    view = graph(tmp_path, pod("kube-system", agent, {"k8s-app": "x"}, ip="10.0.0.9",
                               owner=owner)).view()
    cni = detect_cni(view)
    assert (cni.name, cni.enforces) == (name, enforces)
    assert cni.evidence == (f"pod kube-system/{agent} of {owner[0]} {owner[1]}",)


def test_an_unnamed_cni_is_unknown_and_two_are_not_guessed_between(tmp_path: Path) -> None:
    assert detect_cni(graph(tmp_path, pod("kube-system", "coredns-1", {}, ip="10.0.0.3")
                            ).view()).name is None
    both = detect_cni(graph(tmp_path,
                            pod("kube-system", "kube-flannel-ds-a", {}, ip="10.0.0.4"),
                            pod("kube-system", "weave-net-b", {}, ip="10.0.0.5")).view())
    assert (both.name, both.enforces) == ("Flannel or Weave Net", None)
    canal = detect_cni(graph(tmp_path, pod("kube-system", "canal-x", {}, ip="10.0.0.6"),
                             pod("kube-system", "kube-flannel-ds-y", {}, ip="10.0.0.7")
                             ).view())
    assert (canal.name, canal.enforces) == ("Canal", True)  # flannel routes, Calico polices


def test_a_calico_cni_makes_unenforced_policies_unlikely(tmp_path: Path) -> None:
    store = graph(tmp_path, pod("shop", "web", {"app": "web"}, ip="10.0.0.1"),
                  pod("data", "db", {"app": "db"}, ip="10.0.0.2", ports=(5432,)),
                  pod("calico-system", "calico-node-q", {}, ip="10.0.0.8"))
    view = store.view()
    (found,) = explain(view, flow(view, "shop/web", "data/db", 5432), allowed=False,
                       outcome="connected")
    assert (found.cause, found.likelihood) == (Cause.CNI_ENFORCES_NO_POLICY, Likelihood.LOW)
    assert "Calico" in found.summary
