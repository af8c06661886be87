"""Property test: with Cilium policies (CNP, CCNP) beside NetworkPolicies, reachability_matrix
agrees with a plain reference evaluator written here from the Cilium docs, independently of
netsight.analyzers.policy (raw dicts in, one loop per rule, no indexes, no caching).

The reference, per the Cilium policy language docs: one policy per endpoint made of every
NetworkPolicy, CNP and CCNP selecting it; a deny rule that matches wins; else an allow rule
that matches allows; else the endpoint is default-deny in a direction when a NetworkPolicy
isolates it or a selecting rule has rules there and enableDefaultDeny is not false. The
inputs are decidable (every pod has an IP and a service account, every namespace exists).
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType, GraphStore, Source
from tests.analyzers.test_policy_engine_matches_reference import (
    NAMESPACES,
    PORTS,
    PROTOCOLS,
    QUERY_PORTS,
    Reference,
    labels,
    netpols,
)

NS_KEY = "io.kubernetes.pod.namespace"
NS_LABELS = "io.cilium.k8s.namespace.labels."
SA_KEY = "io.cilium.k8s.policy.serviceaccount"

keys = st.sampled_from(("app", "k8s:app", "tier", "any:tier"))
values = st.sampled_from(("a", "b", "web", "db"))
endpoint_selectors = st.one_of(
    st.just({}),
    st.builds(lambda k, v: {"matchLabels": {k: v}}, keys, values),
    st.builds(lambda k, op, v: {"matchExpressions": [
        {"key": k, "operator": op, **({"values": [v]} if op in ("In", "NotIn") else {})}]},
        keys, st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")), values),
)
peer_selectors = st.one_of(
    endpoint_selectors,
    st.builds(lambda n, sel: {"matchLabels": {**sel.get("matchLabels", {}),
                                              f"k8s:{NS_KEY}": n}},
              st.sampled_from(NAMESPACES), endpoint_selectors),
    st.sampled_from(("prod", "dev")).map(lambda e: {"matchLabels": {NS_LABELS + "env": e}}),
    st.sampled_from(("sa1", "default")).map(lambda s: {"matchLabels": {SA_KEY: s}}),
    st.builds(lambda n: {"matchExpressions": [{"key": NS_KEY, "operator": "NotIn",
                                               "values": [n]}]}, st.sampled_from(NAMESPACES)),
)


@functools.cache
@st.composite
def port_rules(draw: Any) -> list[dict[str, Any]]:
    ports = []
    for _ in range(draw(st.integers(1, 2))):
        shape = draw(st.sampled_from(("number", "name", "range", "zero")))
        entry: dict[str, Any] = {}
        if shape == "number":
            entry["port"] = str(draw(st.sampled_from(QUERY_PORTS)))
        elif shape == "name":
            entry["port"] = draw(st.sampled_from(("http", "dns", "alt", "none")))
        elif shape == "range":
            start = draw(st.sampled_from((50, 80, 8000)))
            entry["port"], entry["endPort"] = str(start), start + 100
        else:
            entry["port"] = "0"
        proto = draw(st.sampled_from((*PROTOCOLS, "ANY", None)))
        if proto is not None:
            entry["protocol"] = proto
        ports.append(entry)
    return [{"ports": ports}]


@functools.cache
@st.composite
def cilium_rule(draw: Any, direction: str, deny: bool) -> dict[str, Any]:
    ends = "from" if direction == "ingress" else "to"
    rule: dict[str, Any] = {}
    for shape in draw(st.lists(st.sampled_from(("Endpoints", "Entities", "CIDR")),
                               max_size=2, unique=True)):
        if shape == "Endpoints":
            rule[ends + shape] = draw(st.lists(peer_selectors, min_size=1, max_size=2))
        elif shape == "Entities":
            rule[ends + shape] = draw(st.lists(st.sampled_from(("all", "cluster", "world")),
                                               min_size=1, max_size=2, unique=True))
        else:
            rule[ends + shape] = ["10.0.0.0/8"]  # pods' addresses, never matched by CIDR
    if draw(st.booleans()):
        rule["toPorts"] = draw(port_rules())
    return rule


@functools.cache
@st.composite
def cilium_policy(draw: Any, index: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"endpointSelector": draw(endpoint_selectors)}
    for direction in ("ingress", "egress"):
        for deny in (False, True):
            if draw(st.integers(0, 2)) == 0:
                name = direction + ("Deny" if deny else "")
                spec[name] = draw(st.lists(cilium_rule(direction, deny), max_size=2))
    if draw(st.integers(0, 3)) == 0:
        spec["enableDefaultDeny"] = {d: draw(st.booleans()) for d in
                                     draw(st.lists(st.sampled_from(("ingress", "egress")),
                                                   min_size=1, max_size=2, unique=True))}
    if draw(st.booleans()):
        return {"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
                "metadata": {"name": f"ccnp{index}"}, "spec": spec}
    return {"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
            "metadata": {"name": f"cnp{index}", "namespace": draw(st.sampled_from(NAMESPACES))},
            "spec": spec}


@st.composite
def clusters(draw: Any) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {
            "ns": n, "env": draw(st.sampled_from(("prod", "dev")))}}} for n in NAMESPACES]
    for i in range(draw(st.integers(2, 4))):
        ports = draw(st.lists(st.sampled_from(PORTS), max_size=3, unique=True))
        objects.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": draw(st.sampled_from(NAMESPACES)),
                         "labels": draw(labels)},
            "spec": {"serviceAccountName": draw(st.sampled_from(("default", "sa1"))),
                     "containers": [{"name": "c", "ports": [
                         {"containerPort": n, "protocol": p, "name": name}
                         for n, p, name in ports]}]},
            "status": {"phase": "Running", "podIP": f"10.1.0.{i + 2}"},
        })
    objects += [draw(netpols(i)) for i in range(draw(st.integers(0, 2)))]
    objects += [draw(cilium_policy(i)) for i in range(draw(st.integers(1, 3)))]
    return objects


# --- the reference evaluator ----------------------------------------------------------------


def identity(pod: dict[str, Any], ns_labels: dict[str, dict[str, str]]) -> dict[str, str]:
    """A pod's Cilium identity labels, with their source prefix dropped (all are k8s:)."""
    ns = pod["metadata"]["namespace"]
    found = dict(pod["metadata"]["labels"])
    found[NS_KEY] = ns
    found.update({NS_LABELS + k: v for k, v in ns_labels[ns].items()})
    found[SA_KEY] = pod["spec"]["serviceAccountName"]
    return found


def bare(key: str) -> str:
    for prefix in ("k8s:", "any:"):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


def cilium_match(sel: dict[str, Any], ident: dict[str, str]) -> bool:
    for key, value in (sel.get("matchLabels") or {}).items():
        if ident.get(bare(key)) != value:
            return False
    for expr in sel.get("matchExpressions") or []:
        key, op, vals = bare(expr["key"]), expr["operator"], expr.get("values", [])
        if op == "In" and ident.get(key) not in vals:
            return False
        if op == "NotIn" and ident.get(key) in vals:
            return False
        if op == "Exists" and key not in ident:
            return False
        if op == "DoesNotExist" and key in ident:
            return False
    return True


class CiliumReference(Reference):
    def __init__(self, objects: list[dict[str, Any]]) -> None:
        super().__init__(objects)
        self.cilium = [o for o in objects if o["kind"].startswith("Cilium")]

    def ident(self, pod: dict[str, Any]) -> dict[str, str]:
        return identity(pod, self.ns_labels)

    def selects(self, policy: dict[str, Any], pod: dict[str, Any]) -> bool:
        namespace = policy["metadata"].get("namespace")
        if policy["kind"] == "CiliumNetworkPolicy" and self.ns(pod) != namespace:
            return False
        return cilium_match(policy["spec"]["endpointSelector"], self.ident(pod))

    def peer_ok(self, policy: dict[str, Any], rule: dict[str, Any], ends: str,
                other: dict[str, Any]) -> bool:
        for sel in rule.get(ends + "Endpoints", []):
            keys = [bare(k) for k in sel.get("matchLabels", {})] + \
                [bare(e["key"]) for e in sel.get("matchExpressions", [])]
            scoped = policy["kind"] == "CiliumNetworkPolicy" and NS_KEY not in keys and \
                not any(k.startswith(NS_LABELS) for k in keys)
            if scoped and self.ns(other) != policy["metadata"]["namespace"]:
                continue
            if cilium_match(sel, self.ident(other)):
                return True
        # Entities: a pod is in the cluster, never the world; CIDRs never match pods.
        return any(e in ("all", "cluster") for e in rule.get(ends + "Entities", []))

    def port_ok(self, rule: dict[str, Any], dst: dict[str, Any], port: int,
                proto: str) -> bool:
        for entry in rule["toPorts"][0]["ports"]:
            wanted = entry.get("protocol", "ANY")
            if wanted not in ("ANY", proto):
                continue
            given = entry["port"]
            if given == "0":
                return True
            if not given.isdigit():
                if any(p["name"] == given and p["containerPort"] == port and
                       p["protocol"] == proto
                       for c in dst["spec"]["containers"] for p in c["ports"]):
                    return True
                continue
            if int(given) <= port <= entry.get("endPort", int(given)):
                return True
        return False

    def rule_ok(self, policy: dict[str, Any], rule: dict[str, Any], ends: str,
                other: dict[str, Any], dst: dict[str, Any], port: int, proto: str) -> bool:
        has_peers = any(k.startswith(ends) and k != "toPorts" for k in rule)
        if "toPorts" in rule and not self.port_ok(rule, dst, port, proto):
            return False
        if not has_peers:
            return "toPorts" in rule  # ports only: every peer; an empty rule: none
        return self.peer_ok(policy, rule, ends, other)

    def direction(self, direction: str, subject: dict[str, Any], other: dict[str, Any],
                  dst: dict[str, Any], port: int, proto: str) -> bool:
        ends = "from" if direction == "ingress" else "to"
        np = self.netpol_tier(direction, subject, other, dst, port, proto)
        allowed = np is True
        enforced = np is not None
        active = np is not None
        for policy in self.cilium:
            spec = policy["spec"]
            if not self.selects(policy, subject):
                continue
            allows, denies = spec.get(direction, []), spec.get(direction + "Deny", [])
            if not allows and not denies:
                continue
            active = True
            if spec.get("enableDefaultDeny", {}).get(direction, True):
                enforced = True
            for rule in denies:
                if self.rule_ok(policy, rule, ends, other, dst, port, proto):
                    return False
            allowed |= any(self.rule_ok(policy, rule, ends, other, dst, port, proto)
                           for rule in allows)
        if allowed or not active:
            return True
        return not enforced


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_cilium_engine_agrees_with_the_reference(objects: list[dict[str, Any]]) -> None:
    store = GraphStore(source=Source.MANIFESTS, cluster_name="property")
    for obj in objects:
        store.apply(EventType.ADDED, obj)
    assert not store.problems
    answer = to_json(call_tool(store.view(), "reachability_matrix", {
        "ports": list(QUERY_PORTS), "protocols": list(PROTOCOLS), "limit": 10_000}),
        detail=True)
    assert answer["page"]["remaining"] == 0
    reference = CiliumReference(objects)
    pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in reference.pods}
    assert len(answer["entries"]) == len(pods) * (len(pods) - 1) * 12
    for entry in answer["entries"]:
        expected = reference.allowed(pods[entry["from"]], pods[entry["to"]], entry["port"],
                                     entry["protocol"])
        assert entry["allowed"] is expected, (entry, objects)
