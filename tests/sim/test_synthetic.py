"""The synthetic cluster generator: deterministic, at the requested scale, and loadable."""

from __future__ import annotations

import ipaddress
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.store.live import EventType, GraphStore
from netsight.sim.synthetic import RawObject, SyntheticCluster, generate, to_yaml

PODS = 2_000


@pytest.fixture(scope="module")
def cluster() -> SyntheticCluster:
    return generate(pods=PODS, seed=11)


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def _selected_pods(cluster: SyntheticCluster, service: RawObject) -> list[RawObject]:
    ns = service["metadata"]["namespace"]
    selector = service["spec"]["selector"]
    return [
        pod for pod in cluster.pods
        if pod["metadata"]["namespace"] == ns and _selects(selector, pod["metadata"]["labels"])
    ]


def test_same_seed_gives_the_same_objects() -> None:
    assert generate(pods=300, seed=5).to_json() == generate(pods=300, seed=5).to_json()
    assert generate(pods=300, seed=5).to_json() != generate(pods=300, seed=6).to_json()


@pytest.mark.parametrize(("pods", "namespaces"), [(1, None), (37, 3), (1_000, None)])
def test_generates_exactly_the_requested_pods_and_namespaces(
    pods: int, namespaces: int | None
) -> None:
    cluster = generate(pods=pods, seed=2, namespaces=namespaces)
    assert len(cluster.pods) == pods
    assert len(cluster.namespaces) == (namespaces or max(1, round(pods / 400)))
    replicas = sum(d["spec"]["replicas"] for d in cluster.deployments)
    assert replicas == pods


def test_counts_cover_every_kind(cluster: SyntheticCluster) -> None:
    counts = cluster.counts()
    assert set(counts) == {
        "Namespace", "IngressClass", "Deployment", "ReplicaSet", "Pod", "Service",
        "EndpointSlice", "NetworkPolicy", "Ingress",
    }
    assert sum(counts.values()) == len(cluster) == len(list(cluster.objects()))


def test_names_and_uids_are_unique(cluster: SyntheticCluster) -> None:
    identities = Counter(
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in cluster.objects()
    )
    assert [i for i, n in identities.items() if n > 1] == []
    uids = Counter(o["metadata"]["uid"] for o in cluster.objects())
    assert [u for u, n in uids.items() if n > 1] == []


def test_pod_and_service_ips_are_unique_and_in_their_ranges(cluster: SyntheticCluster) -> None:
    pod_ips = [pod["status"]["podIP"] for pod in cluster.pods]
    assert len(set(pod_ips)) == len(pod_ips)
    pod_net = ipaddress.ip_network("10.0.0.0/8")
    assert all(ipaddress.ip_address(ip) in pod_net for ip in pod_ips)
    assert all(pod["status"]["podIPs"] == [{"ip": pod["status"]["podIP"]}] for pod in cluster.pods)
    service_ips = [
        s["spec"]["clusterIP"] for s in cluster.services if s["spec"]["clusterIP"] != "None"
    ]
    assert len(set(service_ips)) == len(service_ips)
    service_net = ipaddress.ip_network("10.96.0.0/12")
    assert all(ipaddress.ip_address(ip) in service_net for ip in service_ips)
    assert not set(pod_ips) & set(service_ips)


def test_pods_carry_labels_ports_owner_and_readiness(cluster: SyntheticCluster) -> None:
    replica_sets = {
        (rs["metadata"]["namespace"], rs["metadata"]["name"]): rs for rs in cluster.replica_sets
    }
    for pod in cluster.pods:
        meta = pod["metadata"]
        assert {"app", "version", "tier", "pod-template-hash"} <= set(meta["labels"])
        (owner,) = meta["ownerReferences"]
        rs = replica_sets[(meta["namespace"], owner["name"])]
        assert (owner["kind"], owner["uid"]) == ("ReplicaSet", rs["metadata"]["uid"])
        assert _selects(rs["spec"]["selector"]["matchLabels"], meta["labels"])
        ports = pod["spec"]["containers"][0]["ports"]
        assert all(p["name"] and p["protocol"] in ("TCP", "UDP") for p in ports)
    ready = Counter(
        next(c["status"] for c in pod["status"]["conditions"] if c["type"] == "Ready")
        for pod in cluster.pods
    )
    # A small fraction (3% by default) fails its readiness probe.
    assert 0 < ready["False"] < 0.1 * PODS
    assert ready["True"] + ready["False"] == PODS


def test_every_service_selects_at_least_one_pod(cluster: SyntheticCluster) -> None:
    assert cluster.services
    empty = [s["metadata"]["name"] for s in cluster.services if not _selected_pods(cluster, s)]
    assert empty == []


def test_services_use_named_and_numeric_target_ports(cluster: SyntheticCluster) -> None:
    targets = [p["targetPort"] for s in cluster.services for p in s["spec"]["ports"]]
    assert any(isinstance(t, str) for t in targets)
    assert any(isinstance(t, int) for t in targets)


def test_endpoint_slices_list_the_selected_pods_in_bounded_slices() -> None:
    cluster = generate(pods=600, seed=4, max_endpoints_per_slice=10)
    services = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in cluster.services}
    targets: dict[tuple[str, str], set[str]] = {key: set() for key in services}
    per_service = Counter[tuple[str, str]]()
    for eps in cluster.endpoint_slices:
        meta = eps["metadata"]
        assert eps["apiVersion"] == "discovery.k8s.io/v1"
        assert meta["labels"]["endpointslice.kubernetes.io/managed-by"] == (
            "endpointslice-controller.k8s.io"
        )
        key = (meta["namespace"], meta["labels"]["kubernetes.io/service-name"])
        (owner,) = meta["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("Service", services[key]["metadata"]["uid"])
        assert 1 <= len(eps["endpoints"]) <= 10
        targets[key].update(e["targetRef"]["name"] for e in eps["endpoints"])
        per_service[key] += 1
    assert max(per_service.values()) > 1, "no Service large enough to need several slices"
    for key, service in services.items():
        assert targets[key] == {p["metadata"]["name"] for p in _selected_pods(cluster, service)}


def test_default_slices_hold_at_most_100_endpoints(cluster: SyntheticCluster) -> None:
    assert max(len(eps["endpoints"]) for eps in cluster.endpoint_slices) <= 100


def test_network_policies_cover_the_usual_shapes(cluster: SyntheticCluster) -> None:
    specs = [p["spec"] for p in cluster.network_policies]
    names = Counter(p["metadata"]["name"] for p in cluster.network_policies)
    assert names["default-deny-ingress"] == names["allow-dns-egress"] == len(cluster.namespaces)
    text = str(specs)
    for shape in ("matchExpressions", "ipBlock", "namespaceSelector", "'port': 53"):
        assert shape in text


def test_ingresses_route_to_existing_services(cluster: SyntheticCluster) -> None:
    services = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in cluster.services}
    assert cluster.ingresses
    for ingress in cluster.ingresses:
        ns = ingress["metadata"]["namespace"]
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                assert (ns, path["backend"]["service"]["name"]) in services


def test_objects_carry_the_noise_slim_records_drop(cluster: SyntheticCluster) -> None:
    assert all(o["metadata"].get("managedFields") for o in cluster.pods)
    last_applied = "kubectl.kubernetes.io/last-applied-configuration"
    assert all(last_applied in d["metadata"]["annotations"] for d in cluster.deployments)
    container = cluster.pods[0]["spec"]["containers"][0]
    assert {"image", "env", "resources"} <= set(container)


def test_objects_load_into_a_graph_store_without_problems(cluster: SyntheticCluster) -> None:
    store = GraphStore()
    for obj in cluster.objects():
        store.apply(EventType.ADDED, obj)
    view = store.view()
    assert view.problems() == []
    assert view.node_count == len(cluster)
    assert view.count(Kind.POD) == PODS
    for service in cluster.services[:50]:
        meta = service["metadata"]
        key = make_key(Kind.SERVICE, meta["namespace"], meta["name"])
        selected = {r.name for r in view.neighbors(key, Rel.SELECTS, kind=Kind.POD)}
        assert selected == {p["metadata"]["name"] for p in _selected_pods(cluster, service)}


def test_yaml_and_json_files_load_to_the_same_graph(tmp_path: Path) -> None:
    cluster = generate(pods=150, seed=9)
    graphs = []
    for path in (cluster.write_json(tmp_path / "c.json"), cluster.write_yaml(tmp_path / "c.yaml")):
        store = GraphStore()
        report = load_manifests(store, [str(path)])
        assert (report.objects, report.problems) == (len(cluster), 0)
        graphs.append((store.view().node_count, store.view().edge_count))
    assert graphs[0] == graphs[1]
    assert graphs[0][0] == len(cluster)


def test_yaml_round_trips_through_pyyaml(tmp_path: Path) -> None:
    cluster = generate(pods=150, seed=3)
    path = cluster.write_yaml(tmp_path / "c.yaml")
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded = list(yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader))
    assert loaded == list(cluster.objects())


@pytest.mark.parametrize(
    "value",
    ["yes", "No", "ON", "off", "null", "~", "", "1.0", "1e3", "0x1F", "12:30", "-1", ".inf",
     "- x", "a: b", "a #b", "#c", " lead", "trail ", "2024-01-01", "10.0.0.1", ":", "=", "<<",
     "x\ny", "é", 'q"q', "f:spec", '{"a":1}', "[x]", "!tag", "&a", "*a", "|", ">", "%x", "@x",
     "a b", "plain-word"],
)
def test_yaml_scalars_read_back_as_the_same_string(value: str) -> None:
    obj: dict[str, Any] = {"key": value, value or "empty": [value, {"k": value}]}
    assert yaml.safe_load(to_yaml(obj)) == obj


def test_rejects_impossible_shapes() -> None:
    with pytest.raises(ValueError, match="pods"):
        generate(pods=0)
    with pytest.raises(ValueError, match="namespaces"):
        generate(pods=5, namespaces=6)
