"""Property test: who_can_reach and what_can_reach, which evaluate one pod per identity (split
on pod IPs, host network, container ports and service account), answer exactly what
PolicyEngine.evaluate says for every pod pair, and for outside addresses exactly what it
says for each address.

Clusters come from test_policy_engine_matches_reference's generators, made harder here: some
pods use the host network, some have no IP, some namespaces have no Namespace object (their
labels unknown), some clusters carry a Cilium or Calico policy selecting on service accounts
and CIDRs, so verdicts can be null and identities must split. Some are in an Istio mesh, with
AuthorizationPolicies on principals (service accounts), namespaces, source IPs and ports, and
STRICT mTLS: pods of one identity then differ by service account or sidecar.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.policy.endpoints import external, from_pod
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.external_regions import within
from netsight.analyzers.tools import call_tool
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import PodRecord, ServiceRecord
from netsight.graph.store.live import EventType, GraphStore, GraphView, Source
from tests.analyzers.test_policy_engine_matches_reference import PROTOCOLS, QUERY_PORTS, clusters

ADDRESSES = ("10.1.0.2", "10.1.0.9", "10.1.1.3", "10.2.0.4", "10.0.0.1", "8.8.8.8",
             "192.168.0.1", "0.0.0.0", "255.255.255.255", "2001:db8::1")


@st.composite
def harder(draw: Any) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = draw(clusters())
    same_labels = draw(st.booleans())  # more pods per identity: more to split
    for obj in objects:
        if obj["kind"] != "Pod":
            continue
        if same_labels:
            obj["metadata"]["labels"] = {"app": "a"}
        if draw(st.integers(0, 5)) == 0:
            obj["spec"]["hostNetwork"] = True
            obj["spec"]["nodeName"] = "node-1"
        if draw(st.integers(0, 7)) == 0:
            del obj["status"]["podIP"]
    if draw(st.booleans()):  # an ipBlock policy: pods of one identity may fall apart
        direction, key = draw(st.sampled_from((("ingress", "from"), ("egress", "to"))))
        cidr = draw(st.sampled_from(("10.1.0.0/16", "10.1.0.2/32", "10.2.0.0/16",
                                     "10.0.0.0/8")))
        block: dict[str, Any] = {"cidr": cidr}
        if cidr == "10.0.0.0/8" and draw(st.booleans()):
            block["except"] = ["10.1.1.0/24"]
        objects.append({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "cidr", "namespace": draw(st.sampled_from(("n1", "n2")))},
            "spec": {"podSelector": {}, "policyTypes": [direction.capitalize()],
                     direction: [{key: [{"ipBlock": block}]}]}})
    cni = draw(st.sampled_from((None, "cilium", "calico")))
    if cni is not None:  # service accounts: Cilium and Calico select on them
        one_namespace = draw(st.booleans())  # identities that only accounts tell apart
        for obj in objects:
            if obj["kind"] == "Pod":
                obj["spec"]["serviceAccountName"] = draw(st.sampled_from(("default", "sa1")))
                if one_namespace:
                    obj["metadata"]["namespace"] = "n1"
                    obj["metadata"]["labels"] = {"app": "a"}
    if cni == "cilium":  # CIDRs (outside only), entities, service accounts, deny rules
        objects.append({
            "apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
            "metadata": {"name": "cni"},
            "spec": {"endpointSelector": draw(st.sampled_from(
                ({}, {"matchLabels": {"app": "a"}}))),
                "ingress": [draw(st.sampled_from((
                    {"fromEndpoints": [{"matchLabels": {
                        "io.cilium.k8s.policy.serviceaccount": "sa1"}}]},
                    {"fromEndpoints": [{"matchExpressions": [{
                        "key": "io.cilium.k8s.policy.serviceaccount", "operator": "NotIn",
                        "values": ["sa1"]}]}]},
                    {"fromCIDRSet": [{"cidr": "8.0.0.0/7", "except": ["8.8.8.0/24"]}]},
                    {"fromEntities": [draw(st.sampled_from(("world", "cluster", "host")))]},
                    {"toPorts": [{"ports": [{"port": "80"}]}]})))],
                "egress": draw(st.sampled_from((
                    [], [{"toCIDR": ["10.0.0.0/8", "8.8.8.8/32"]}], [{"toEntities": ["world"]}],
                    [{"toEndpoints": [{}]}]))),
                **({"ingressDeny": [{"fromEndpoints": [{"matchLabels": {"app": "b"}}]}]}
                   if draw(st.booleans()) else {})}})
    elif cni == "calico":  # nets (pods included), service accounts, order, Pass
        objects.append({
            "apiVersion": "projectcalico.org/v3", "kind": "GlobalNetworkPolicy",
            "metadata": {"name": "cni"},
            "spec": {"selector": draw(st.sampled_from(("all()", "app == 'a'", "has(tier)"))),
                     "types": draw(st.sampled_from((["Ingress"], ["Ingress", "Egress"]))),
                     "ingress": [draw(st.sampled_from((
                         {"action": "Allow", "source": {"serviceAccounts": {"names": ["sa1"]}}},
                         {"action": "Deny", "source": {
                             "selector": "projectcalico.org/serviceaccount == 'sa1'"}},
                         {"action": "Deny", "source": {"nets": ["10.1.0.0/16"]}},
                         {"action": "Allow", "source": {"notNets": ["8.8.8.0/24"]}},
                         {"action": "Pass", "source": {"selector": "app == 'b'"}})))],
                     "egress": [draw(st.sampled_from((
                         {"action": "Allow", "destination": {"nets": ["10.2.0.0/16",
                                                                      "8.8.8.8/32"]}},
                         {"action": "Deny", "protocol": "UDP"},
                         {"action": "Allow"})))]}})
    if draw(st.booleans()):  # selector peers only: who_can_reach narrows through indexes
        objects.append({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "only-b", "namespace": "n1"},
            "spec": {"podSelector": {}, "ingress": [{"from": [
                {"podSelector": {"matchLabels": {"app": "b"}}},
                {"namespaceSelector": {"matchLabels": {"env": "dev"}},
                 "podSelector": {"matchLabels": {"tier": "web"}}}]}]}})
    if draw(st.integers(0, 4)) == 0:  # a kind netsight does not evaluate: undecided there
        objects.append({"apiVersion": "crd.antrea.io/v1beta1", "kind": "NetworkPolicy",
                        "metadata": {"name": "c", "namespace": draw(st.sampled_from(
                            ("n1", "n2", "n3")))},
                        "spec": {"endpointSelector": {}}})
    if draw(st.booleans()):  # a destination of several pods
        objects.append({"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": "svc", "namespace": "n1"},
                        "spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]}})
    if draw(st.booleans()):
        objects += draw(istio(objects))
    if draw(st.integers(0, 3)) == 0:
        objects = [o for o in objects if not (o["kind"] == "Namespace" and
                                              o["metadata"]["name"] == "n3")]
    return objects


@st.composite
def istio(draw: Any, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mesh membership, service accounts, and Istio policies over them (added in place to the
    pods and namespaces; returns the policies)."""
    for obj in objects:
        if obj["kind"] == "Namespace" and draw(st.integers(0, 3)):
            obj["metadata"]["labels"]["istio-injection"] = "enabled"
        if obj["kind"] == "Pod":
            obj["spec"]["serviceAccountName"] = draw(st.sampled_from(("a", "b")))
            if draw(st.integers(0, 5)) == 0:
                obj["metadata"].setdefault("annotations", {})["sidecar.istio.io/inject"] = \
                    "false"
    source = draw(st.sampled_from((
        {"principals": ["cluster.local/ns/n1/*"]}, {"principals": ["*/sa/b"]},
        {"principals": ["*"]}, {"notPrincipals": ["*/sa/a"]}, {"namespaces": ["n2"]},
        {"notNamespaces": ["n1"]}, {"ipBlocks": ["10.1.0.0/16"]},
        {"notIpBlocks": ["10.1.0.2"]})))
    rule: dict[str, Any] = {"from": [{"source": source}]}
    if draw(st.booleans()):
        rule["to"] = [{"operation": {"ports": [draw(st.sampled_from(("80", "8080")))]}}]
    spec: dict[str, Any] = {"action": draw(st.sampled_from(("ALLOW", "DENY"))),
                            "rules": [rule]}
    if draw(st.booleans()):
        spec["selector"] = {"matchLabels": {"app": "a"}}
    found = [{"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
              "metadata": {"name": "authz", "namespace": draw(st.sampled_from(
                  ("n1", "n2", "istio-system")))}, "spec": spec}]
    if draw(st.integers(0, 2)) == 0:
        found.append({"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
                      "metadata": {"name": "default", "namespace": draw(st.sampled_from(
                          ("n1", "istio-system")))}, "spec": {"mtls": {"mode": "STRICT"}}})
    return found


def build(objects: list[dict[str, Any]]) -> GraphView:
    store = GraphStore(source=Source.MANIFESTS, cluster_name="property")
    for obj in objects:
        store.apply(EventType.ADDED, obj)
    return store.view()


def listed(answer: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """pod name -> its entry; outside entries."""
    assert answer["page"]["remaining"] == 0
    pods: dict[str, Any] = {}
    outside = []
    for entry in answer["peers"]:
        if "cidr" in entry:
            outside.append(entry)
            continue
        assert entry["pods"] == len(entry["members"])
        for member in entry["members"]:
            assert member.startswith(entry["namespace"] + "/")
            assert member not in pods
            pods[member] = entry
    return pods, outside


def outside_verdict(outside: list[dict[str, Any]], address: str) -> Any:
    found = [e["allowed"] for e in outside if within(address, e["cidr"], e.get("except", []))]
    assert len(found) <= 1, (address, outside)
    return found[0] if found else False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(harder(), st.data())
def test_identity_answers_equal_per_pod_answers(objects: list[dict[str, Any]],
                                                data: st.DataObject) -> None:
    view = build(objects)
    engine = PolicyEngine(view)
    pods = {r.key: from_pod(r) for r in view.for_each(Kind.POD) if isinstance(r, PodRecord)}
    endpoint = data.draw(st.sampled_from(sorted(pods)))
    chosen = pods[endpoint]
    port = data.draw(st.sampled_from(QUERY_PORTS))
    protocol = data.draw(st.sampled_from(PROTOCOLS))

    who = to_json(call_tool(view, "who_can_reach", {
        "destination": chosen.name, "port": port, "protocol": protocol, "limit": 500,
        "detail": True}), detail=True)
    found, outside = listed(who)
    for other in pods.values():
        if other.key == chosen.key:
            assert other.name not in found
            continue
        expected = engine.evaluate(other, chosen, port, protocol).allowed
        got = found[other.name]["allowed"] if other.name in found else False
        assert got is expected, (other.name, chosen.name, who)
    for address in ADDRESSES:
        expected = engine.evaluate(external(address), chosen, port, protocol).allowed
        assert outside_verdict(outside, address) is expected, (address, outside)

    what = to_json(call_tool(view, "what_can_reach", {
        "source": chosen.name, "port": port, "protocol": protocol, "limit": 500,
        "detail": True}), detail=True)
    found, outside = listed(what)
    counted: dict[Any, int] = {True: 0, None: 0, False: 0}
    for other in pods.values():
        if other.key == chosen.key:
            continue
        expected = engine.evaluate(chosen, other, port, protocol).allowed
        counted[expected] += 1
        got = found[other.name]["allowed"] if other.name in found else False
        assert got is expected, (chosen.name, other.name, what)
    # The counts agree too (the set evaluation's rows are counted beside the per-pod groups).
    assert what["summary"]["allowedPods"] == counted[True], what["summary"]
    assert what["summary"]["unknownPods"] == counted[None], what["summary"]
    assert what["summary"]["deniedPods"] == counted[False], what["summary"]
    for address in ADDRESSES:
        expected = engine.evaluate(chosen, external(address), port, protocol).allowed
        assert outside_verdict(outside, address) is expected, (address, outside)

    anyport = to_json(call_tool(view, "what_can_reach", {
        "source": chosen.name, "limit": 500, "detail": True}), detail=True)
    found, _ = listed(anyport)
    unchecked = 0
    for other in pods.values():
        if other.key == chosen.key:
            continue
        declared = sorted({(p.port, p.protocol) for p in other.ports})
        if not declared:
            unchecked += 1
            assert other.name not in found
            continue
        verdicts = {f"{n}/{p}": engine.evaluate(chosen, other, n, p).allowed
                    for n, p in declared}
        allowed = [k for k, v in verdicts.items() if v is True]
        unknown = [k for k, v in verdicts.items() if v is None]
        entry = found.get(other.name, {})
        assert entry.get("ports", []) == allowed, (other.name, entry, verdicts)
        assert entry.get("unknownPorts", []) == unknown, (other.name, entry, verdicts)
    assert anyport["uncheckedPods"] == unchecked


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(harder(), st.sampled_from(PROTOCOLS))
def test_a_service_counts_its_pods_per_source(objects: list[dict[str, Any]],
                                              protocol: str) -> None:
    view = build(objects)
    if view.get("Service/n1/svc") is None:
        return
    engine = PolicyEngine(view)
    pods = [from_pod(r) for r in view.for_each(Kind.POD) if isinstance(r, PodRecord)]
    targets = [p for p in pods if p.namespace == "n1" and p.labels.get("app") == "a"]
    if not targets:
        return
    query = {"destination": "Service/n1/svc", "port": 80, "protocol": protocol, "limit": 500,
             "detail": True}
    service = view.get("Service/n1/svc")
    assert isinstance(service, ServiceRecord)
    if not service.headless and not any(p.port == 80 and p.protocol == protocol
                                        for p in service.ports):
        # kube-proxy forwards only the Service's ports: that port reaches nothing.
        with pytest.raises(ToolFailure, match="has no port 80/"):
            call_tool(view, "who_can_reach", query)
        return
    answer = to_json(call_tool(view, "who_can_reach", query), detail=True)
    found, _ = listed(answer)
    for source in pods:
        verdicts = [engine.evaluate(source, t, 80, protocol).allowed for t in targets
                    if t.key != source.key]
        if not verdicts:
            assert source.name not in found
            continue
        counts = {"allowed": verdicts.count(True), "denied": verdicts.count(False),
                  "unknown": verdicts.count(None)}
        if not counts["allowed"] and not counts["unknown"]:
            assert source.name not in found
            continue
        entry = found[source.name]
        expected = False if counts["denied"] else None if counts["unknown"] else True
        assert entry["allowed"] is expected, (source.name, entry, counts)
        if len(targets) > 1:
            assert entry["counts"] == counts, (source.name, entry, counts)


@st.composite
def meshed(draw: Any) -> list[dict[str, Any]]:
    """Pods of one identity in a mesh, nothing but Istio deciding: only service accounts,
    sidecars and addresses tell them apart."""
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"ns": n}}}
        for n in ("n1", "n2")]
    for i in range(draw(st.integers(2, 5))):
        objects.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "n1", "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]},
            "status": {"phase": "Running",
                       "podIP": f"10.{draw(st.integers(1, 2))}.0.{draw(st.integers(2, 3))}"}})
    return objects + draw(istio(objects))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(meshed())
def test_identity_answers_equal_per_pod_answers_in_a_mesh(
        objects: list[dict[str, Any]]) -> None:
    view = build(objects)
    engine = PolicyEngine(view)
    pods = [from_pod(r) for r in view.for_each(Kind.POD) if isinstance(r, PodRecord)]
    for chosen in pods:
        who = to_json(call_tool(view, "who_can_reach", {
            "destination": chosen.name, "port": 80, "limit": 500, "detail": True}), detail=True)
        what = to_json(call_tool(view, "what_can_reach", {
            "source": chosen.name, "port": 80, "limit": 500, "detail": True}), detail=True)
        sources, _ = listed(who)
        destinations, _ = listed(what)
        for other in pods:
            if other.key == chosen.key:
                continue
            expected = engine.evaluate(other, chosen, 80, "TCP").allowed
            got = sources[other.name]["allowed"] if other.name in sources else False
            assert got is expected, (other.name, chosen.name, who)
            expected = engine.evaluate(chosen, other, 80, "TCP").allowed
            got = destinations[other.name]["allowed"] if other.name in destinations else False
            assert got is expected, (chosen.name, other.name, what)
