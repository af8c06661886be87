"""The simulator's endpoint-slice controller writes what kube-controller-manager's would, and
keeps it current as Services and pods change."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.sim.churn import ChurnDriver
from netsight.sim.endpoint_slices import (
    CONTROLLER,
    HEADLESS,
    MANAGED_BY,
    SERVICE_NAME,
    TRIGGER_TIME,
    ZONE,
    EndpointSliceController,
)
from netsight.sim.resources import ResourceType
from netsight.sim.selection import Selection
from netsight.sim.state import Obj, SimState
from netsight.sim.synthetic import generate

NS = "shop"


def rtype(state: SimState, api_version: str, kind: str) -> ResourceType:
    found = state.registry.for_kind(api_version, kind)
    assert found is not None
    return found


def pod(name: str, ip: str | list[str], *, labels: dict[str, str] | None = None,
        ready: bool = True, node: str = "node-a", ports: list[Obj] | None = None) -> Obj:
    ips = [ip] if isinstance(ip, str) else ip
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "app", "ports": ports or [
                {"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
            "status": {"phase": "Running", "podIP": ips[0], "podIPs": [{"ip": i} for i in ips],
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def service(name: str = "web", *, selector: dict[str, str] | None = None,
            target: int | str = "http", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NS, "labels": {"team": "shop"}},
            "spec": {"selector": {"app": "web"} if selector is None else selector,
                     "clusterIP": "10.96.0.10", "ipFamilies": ["IPv4"],
                     "ports": [{"name": "web", "port": 80, "targetPort": target,
                                "protocol": "TCP", "appProtocol": "http"}], **spec}}


@pytest.fixture
def state() -> SimState:
    state = SimState()
    state.apply([{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": "node-a", "labels": {ZONE: "zone-a"}}}])
    EndpointSliceController(state).start()
    return state


def slices(state: SimState, service_name: str = "web") -> list[Obj]:
    _, items = state.list(rtype(state, "discovery.k8s.io/v1", "EndpointSlice"), Selection())
    return [s for s in items if s["metadata"]["labels"].get(SERVICE_NAME) == service_name]


def endpoints(state: SimState, service_name: str = "web") -> dict[str, Obj]:
    return {e["targetRef"]["name"]: e for s in slices(state, service_name)
            for e in s["endpoints"]}


def test_a_service_gets_a_slice_of_its_pods_as_the_controller_writes_it(state: SimState) -> None:
    state.apply([pod("web-1", "10.0.0.1"), pod("other", "10.0.0.9", labels={"app": "db"}),
                 service()])
    [found] = slices(state)
    svc = state.get(rtype(state, "v1", "Service"), NS, "web")
    meta = found["metadata"]
    assert meta["labels"] == {"team": "shop", SERVICE_NAME: "web", MANAGED_BY: CONTROLLER}
    assert meta["name"].startswith("web-")
    assert TRIGGER_TIME in meta["annotations"]
    assert meta["ownerReferences"][0]["uid"] == svc["metadata"]["uid"]
    assert found["addressType"] == "IPv4"
    assert found["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP",
                               "appProtocol": "http"}]
    web = state.get(rtype(state, "v1", "Pod"), NS, "web-1")
    assert found["endpoints"] == [{
        "addresses": ["10.0.0.1"],
        "conditions": {"ready": True, "serving": True, "terminating": False},
        "targetRef": {"kind": "Pod", "namespace": NS, "name": "web-1",
                      "uid": web["metadata"]["uid"]},
        "nodeName": "node-a", "zone": "zone-a"}]


def test_readiness_termination_and_deletion_follow_the_pods(state: SimState) -> None:
    pod_type = rtype(state, "v1", "Pod")
    state.apply([service(), pod("web-1", "10.0.0.1"), pod("web-2", "10.0.0.2")])
    state.patch(pod_type, NS, "web-1", {"status": {"conditions": [
        {"type": "Ready", "status": "False"}]}}, "application/merge-patch+json")
    state.patch(pod_type, NS, "web-2", {"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}},
                "application/merge-patch+json")
    found = endpoints(state)
    assert found["web-1"]["conditions"] == {"ready": False, "serving": False,
                                            "terminating": False}
    assert found["web-2"]["conditions"] == {"ready": False, "serving": True,
                                            "terminating": True}
    state.delete(pod_type, NS, "web-2")
    state.patch(pod_type, NS, "web-1", {"metadata": {"labels": {"app": "moved"}}},
                "application/merge-patch+json")
    # No endpoints left: one placeholder slice, without ports.
    [placeholder] = slices(state)
    assert placeholder["endpoints"] == []
    assert placeholder["ports"] == []


def test_target_ports_resolve_per_pod_and_unresolved_ones_are_left_out(state: SimState) -> None:
    state.apply([service(target="metrics"),
                 pod("web-1", "10.0.0.1", ports=[{"name": "metrics", "containerPort": 9090}]),
                 pod("web-2", "10.0.0.2")])  # declares no port named metrics
    by_ports = {tuple(p["port"] for p in s["ports"]): [e["targetRef"]["name"]
                                                       for e in s["endpoints"]]
                for s in slices(state)}
    assert by_ports == {(9090,): ["web-1"], (): ["web-2"]}


def test_slices_hold_at_most_100_endpoints_and_new_ones_fill_the_emptiest_fit(
        state: SimState) -> None:
    state.apply([service(), *(pod(f"web-{i:03d}", f"10.0.{i // 250}.{i % 250 + 1}")
                              for i in range(150))])
    assert sorted(len(s["endpoints"]) for s in slices(state)) == [50, 100]
    state.apply([pod("web-new", "10.0.9.9")])
    assert sorted(len(s["endpoints"]) for s in slices(state)) == [51, 100]
    assert len(endpoints(state)) == 151


def test_one_set_of_slices_per_address_type(state: SimState) -> None:
    state.apply([service(ipFamilies=["IPv4", "IPv6"], ipFamilyPolicy="RequireDualStack"),
                 pod("web-1", ["10.0.0.1", "fd00::1"])])
    assert sorted((s["addressType"], s["endpoints"][0]["addresses"][0])
                  for s in slices(state)) == [("IPv4", "10.0.0.1"), ("IPv6", "fd00::1")]


def test_headless_services_are_labelled_so(state: SimState) -> None:
    state.apply([service(clusterIP="None"), pod("web-1", "10.0.0.1")])
    assert HEADLESS in slices(state)[0]["metadata"]["labels"]


def test_selector_changes_move_endpoints_and_deletion_removes_the_slices(
        state: SimState) -> None:
    service_type = rtype(state, "v1", "Service")
    state.apply([service(selector={"app": "web", "version": "v1"}),
                 pod("web-1", "10.0.0.1", labels={"app": "web", "version": "v2"})])
    assert endpoints(state) == {}
    state.patch(service_type, NS, "web", {"spec": {"selector": {"version": "v2"}}},
                "application/merge-patch+json")
    assert list(endpoints(state)) == ["web-1"]
    state.delete(service_type, NS, "web")
    assert slices(state) == []


def test_services_without_a_selector_and_external_names_are_left_alone(state: SimState) -> None:
    mine = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "external-1", "namespace": NS,
                         "labels": {SERVICE_NAME: "external"}},
            "addressType": "IPv4", "endpoints": [{"addresses": ["192.0.2.1"]}], "ports": []}
    state.apply([service("external", selector={}), mine, pod("web-1", "10.0.0.1"),
                 service("by-name", type="ExternalName", externalName="web.example.com")])
    assert [s["metadata"]["name"] for s in slices(state, "external")] == ["external-1"]
    assert slices(state, "by-name") == []


def test_a_managed_slice_deleted_by_hand_comes_back(state: SimState) -> None:
    state.apply([service(), pod("web-1", "10.0.0.1")])
    [gone] = slices(state)
    state.delete(rtype(state, "discovery.k8s.io/v1", "EndpointSlice"), NS,
                 gone["metadata"]["name"])
    assert list(endpoints(state)) == ["web-1"]


def test_deleting_a_namespace_leaves_no_slices(state: SimState) -> None:
    state.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
                 service(), pod("web-1", "10.0.0.1")])
    state.delete(rtype(state, "v1", "Namespace"), None, NS)
    assert slices(state) == []


def synthetic_state(pods: int) -> SimState:
    cluster = generate(pods=pods, seed=3)
    zones = {e["nodeName"]: e["zone"] for s in cluster.endpoint_slices for e in s["endpoints"]}
    state = SimState()
    state.apply([{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": n, "labels": {ZONE: z}}} for n, z in zones.items()])
    state.apply(cluster.objects())
    return state


def test_the_synthetic_clusters_and_their_churn_write_the_controllers_slices() -> None:
    """Started over a synthetic cluster, and again after churn (which keeps the slices
    itself, at benchmark rates), the controller finds nothing to change."""
    state = synthetic_state(3000)
    controller = EndpointSliceController(state)
    controller.start()
    assert controller.writes == 0
    controller.stop()
    driver = ChurnDriver(state, seed=5)
    for _ in range(300):
        driver.step()
    assert driver.stats.mutations["scale"]
    assert driver.stats.mutations["restart"]
    again = EndpointSliceController(state)
    again.start()
    assert again.writes == 0
