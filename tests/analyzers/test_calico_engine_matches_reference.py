"""Property test: with Calico policies (NetworkPolicy, GlobalNetworkPolicy, Tiers) beside
Kubernetes NetworkPolicies, reachability_matrix agrees with a plain reference evaluator
written here from the Calico policy reference and tiers doc, independently of
netsight.analyzers.policy. Selectors are drawn as (Calico text, Python predicate) pairs, so
the reference needs no parser of its own.

The reference: tiers by order (the default tier 1,000,000); in a tier, policies that select
the endpoint for the direction, by order (none: last) then name, Kubernetes NetworkPolicies
as order 1000 named knp.default.<name>; the first matching rule decides (Log goes on, Pass
leaves the tier); a tier with a policy for the endpoint and no decision drops, unless its
defaultAction is Pass; no decision at all: the profile allows.
"""

from __future__ import annotations

import functools
import ipaddress
import math
from collections.abc import Callable
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
    sel_match,
)

Labels = dict[str, str]
Predicate = Callable[[Labels], bool]

# (Calico selector text, what it means) over a pod's Calico labels.
POD_SELECTORS: list[tuple[str, Predicate]] = [
    ("all()", lambda lb: True),
    ("app == 'a'", lambda lb: lb.get("app") == "a"),
    ("app != 'a'", lambda lb: lb.get("app") != "a"),
    ("has(tier)", lambda lb: "tier" in lb),
    ("!has(app)", lambda lb: "app" not in lb),
    ("app in {'a', 'b'}", lambda lb: lb.get("app") in ("a", "b")),
    ("tier not in {'web'}", lambda lb: lb.get("tier") != "web"),
    ("app == 'b' || tier == 'db'", lambda lb: lb.get("app") == "b" or lb.get("tier") == "db"),
    ("has(app) && !(app == 'b')", lambda lb: "app" in lb and lb["app"] != "b"),
    ("projectcalico.org/namespace == 'n1'",
     lambda lb: lb["projectcalico.org/namespace"] == "n1"),
    ("pcns.env == 'prod'", lambda lb: lb.get("pcns.env") == "prod"),
    ("projectcalico.org/serviceaccount == 'sa1'",
     lambda lb: lb["projectcalico.org/serviceaccount"] == "sa1"),
    ("app starts with 'a'", lambda lb: lb.get("app", "").startswith("a") and "app" in lb),
]
NS_SELECTORS: list[tuple[str, Predicate]] = [
    ("all()", lambda lb: True),
    ("ns == 'n2'", lambda lb: lb.get("ns") == "n2"),
    ("env == 'dev'", lambda lb: lb.get("env") == "dev"),
    ("projectcalico.org/name in {'n1', 'n3'}",
     lambda lb: lb["projectcalico.org/name"] in ("n1", "n3")),
]
NETS = ("10.1.0.0/16", "10.1.0.2/31", "10.0.0.0/8", "10.1.0.4/32")
TIERS = ("default", "platform", "app")


@functools.cache
@st.composite
def ends(draw: Any, destination: bool, protocol: str | None) -> tuple[dict[str, Any], dict]:
    """(the YAML end, the same for the reference: indexes into the selector tables)."""
    end: dict[str, Any] = {}
    ref: dict[str, Any] = {}
    for part in draw(st.lists(st.sampled_from(("selector", "notSelector", "namespaceSelector",
                                               "nets", "notNets", "ports", "notPorts")),
                              max_size=2, unique=True)):
        if part in ("selector", "notSelector"):
            i = draw(st.integers(0, len(POD_SELECTORS) - 1))
            end[part], ref[part] = POD_SELECTORS[i][0], i
        elif part == "namespaceSelector":
            i = draw(st.integers(0, len(NS_SELECTORS) - 1))
            end[part], ref[part] = NS_SELECTORS[i][0], i
        elif part in ("nets", "notNets"):
            end[part] = ref[part] = draw(st.lists(st.sampled_from(NETS), min_size=1,
                                                  max_size=2))
        elif destination and protocol in ("TCP", "UDP", "SCTP"):
            ports: list[Any] = []
            for _ in range(draw(st.integers(1, 2))):
                shape = draw(st.sampled_from(("number", "range", "name")))
                if shape == "number":
                    ports.append(draw(st.sampled_from(QUERY_PORTS)))
                elif shape == "range":
                    start = draw(st.sampled_from((50, 80, 8000)))
                    ports.append(f"{start}:{start + 100}")
                else:
                    ports.append(draw(st.sampled_from(("http", "dns", "alt", "none"))))
            end[part] = ref[part] = ports
    return end, ref


@functools.cache
@st.composite
def calico_rule(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    rule: dict[str, Any] = {"action": draw(st.sampled_from(("Allow", "Deny", "Pass", "Log")))}
    protocol = draw(st.sampled_from((None, *PROTOCOLS)))
    if protocol is not None:
        rule["protocol"] = protocol
    ref = dict(rule)
    for side in ("source", "destination"):
        if draw(st.integers(0, 2)) == 0:
            rule[side], ref[side] = draw(ends(side == "destination", protocol))
    return rule, ref


@functools.cache
@st.composite
def calico_policy(draw: Any, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    glob = draw(st.booleans())
    # all() (index 0) often, so policies meet on the same pods
    selector = draw(st.one_of(st.just(0), st.integers(0, len(POD_SELECTORS) - 1)))
    spec: dict[str, Any] = {"selector": POD_SELECTORS[selector][0]}
    ref: dict[str, Any] = {"selector": selector, "global": glob}
    tier = draw(st.sampled_from(("default", *TIERS)))  # the default tier twice as likely
    if tier != "default" or draw(st.booleans()):
        spec["tier"] = tier
    ref["tier"] = tier
    if draw(st.integers(0, 3)):
        spec["order"] = draw(st.sampled_from((10, 500, 1000, 1500)))
    ref["order"] = spec.get("order", math.inf)
    if glob and draw(st.integers(0, 2)) == 0:
        i = draw(st.integers(0, len(NS_SELECTORS) - 1))
        spec["namespaceSelector"], ref["namespaceSelector"] = NS_SELECTORS[i][0], i
    for direction in ("ingress", "egress"):
        pairs = draw(st.lists(calico_rule(), min_size=1, max_size=2)) \
            if draw(st.integers(0, 3)) else []
        if pairs:
            spec[direction] = [p[0] for p in pairs]
        ref[direction] = [p[1] for p in pairs]
    if draw(st.integers(0, 2)) == 0:
        spec["types"] = draw(st.sampled_from((["Ingress"], ["Egress"], ["Ingress", "Egress"])))
    ref["types"] = spec.get("types") or (
        ["Egress"] if ref["egress"] and not ref["ingress"] else
        ["Ingress", "Egress"] if ref["egress"] else ["Ingress"])
    name = f"p{index}"
    ref["name"] = name
    if glob:
        obj = {"apiVersion": "projectcalico.org/v3", "kind": "GlobalNetworkPolicy",
               "metadata": {"name": name}, "spec": spec}
    else:
        namespace = draw(st.sampled_from(NAMESPACES))
        ref["namespace"] = namespace
        obj = {"apiVersion": "projectcalico.org/v3", "kind": "NetworkPolicy",
               "metadata": {"name": name, "namespace": namespace}, "spec": spec}
    return obj, ref


@st.composite
def clusters(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                 dict[str, tuple[float, bool]]]:
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {
            "ns": n, "env": draw(st.sampled_from(("prod", "dev")))}}} for n in NAMESPACES]
    for i in range(draw(st.integers(2, 4))):
        ports = draw(st.lists(st.sampled_from(PORTS), max_size=3, unique=True))
        objects.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"q{i}", "namespace": draw(st.sampled_from(NAMESPACES)),
                         "labels": draw(labels)},
            "spec": {"serviceAccountName": draw(st.sampled_from(("default", "sa1"))),
                     "containers": [{"name": "c", "ports": [
                         {"containerPort": n, "protocol": p, "name": name}
                         for n, p, name in ports]}]},
            "status": {"phase": "Running", "podIP": f"10.1.0.{i + 2}"},
        })
    objects += [draw(netpols(i)) for i in range(draw(st.integers(0, 2)))]
    tiers = {"default": (1_000_000.0, False)}
    for name, order in (("platform", 100), ("app", 2_000_000)):
        passes = draw(st.booleans())
        tiers[name] = (float(order), passes)
        objects.append({"apiVersion": "projectcalico.org/v3", "kind": "Tier",
                        "metadata": {"name": name},
                        "spec": {"order": order, **({"defaultAction": "Pass"} if passes
                                                    else {})}})
    policies = [draw(calico_policy(i)) for i in range(draw(st.integers(1, 4)))]
    objects += [p[0] for p in policies]
    return objects, [p[1] for p in policies], tiers


# --- the reference evaluator ----------------------------------------------------------------


class CalicoReference(Reference):
    def __init__(self, objects: list[dict[str, Any]], policies: list[dict[str, Any]],
                 tiers: dict[str, tuple[float, bool]]) -> None:
        super().__init__(objects)
        self.netpols = [o for o in objects if o["apiVersion"] == "networking.k8s.io/v1"]
        self.calico, self.tiers = policies, tiers

    def calico_labels(self, pod: dict[str, Any]) -> Labels:
        ns = self.ns(pod)
        found = dict(pod["metadata"]["labels"])
        found["projectcalico.org/namespace"] = ns
        found["projectcalico.org/orchestrator"] = "k8s"
        found["projectcalico.org/serviceaccount"] = pod["spec"]["serviceAccountName"]
        found.update({f"pcns.{k}": v for k, v in self.ns_labels[ns].items()})
        return found

    def ns_calico_labels(self, pod: dict[str, Any]) -> Labels:
        return {**self.ns_labels[self.ns(pod)], "projectcalico.org/name": self.ns(pod)}

    def selects(self, policy: dict[str, Any], pod: dict[str, Any]) -> bool:
        if "namespace" in policy and policy["namespace"] != self.ns(pod):
            return False
        if not POD_SELECTORS[policy["selector"]][1](self.calico_labels(pod)):
            return False
        if "namespaceSelector" in policy:
            return NS_SELECTORS[policy["namespaceSelector"]][1](self.ns_calico_labels(pod))
        return True

    def end_ok(self, end: dict[str, Any], pod: dict[str, Any], policy: dict[str, Any],
               port: int, proto: str) -> bool:
        ip = self.ip(pod)
        if "nets" in end and not any(ip in ipaddress.ip_network(n) for n in end["nets"]):
            return False
        if "notNets" in end and any(ip in ipaddress.ip_network(n) for n in end["notNets"]):
            return False

        def port_ok(entry: Any) -> bool:
            if isinstance(entry, int):
                return entry == port
            if ":" in entry:
                low, high = entry.split(":")
                return int(low) <= port <= int(high)
            return self.named(pod, entry, port, proto)
        if "ports" in end and not any(port_ok(e) for e in end["ports"]):
            return False
        if "notPorts" in end and any(port_ok(e) for e in end["notPorts"]):
            return False
        if "selector" in end or "namespaceSelector" in end:
            if "namespaceSelector" in end:
                if not NS_SELECTORS[end["namespaceSelector"]][1](self.ns_calico_labels(pod)):
                    return False
            elif "namespace" in policy and self.ns(pod) != policy["namespace"]:
                return False
            if "selector" in end and not POD_SELECTORS[end["selector"]][1](
                    self.calico_labels(pod)):
                return False
        return not ("notSelector" in end and
                    POD_SELECTORS[end["notSelector"]][1](self.calico_labels(pod)))

    def direction(self, direction: str, subject: dict[str, Any], other: dict[str, Any],
                  dst: dict[str, Any], port: int, proto: str) -> bool:
        src = other if direction == "ingress" else subject
        members: dict[str, list[tuple[float, str, Any]]] = {}
        for policy in self.calico:
            if direction.capitalize() in policy["types"] and self.selects(policy, subject):
                members.setdefault(policy["tier"], []).append(
                    (policy["order"], policy["name"], policy))
        for np in self.netpols:
            spec = np["spec"]
            types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress")
                                                else ["Ingress"])
            if np["metadata"]["namespace"] == self.ns(subject) and \
                    direction.capitalize() in types and \
                    self.sel_ok(spec["podSelector"], subject):
                members.setdefault("default", []).append(
                    (1000.0, f"knp.default.{np['metadata']['name']}", np))
        for tier in sorted(members, key=lambda t: self.tiers[t][0]):
            decided = None
            for _, _, policy in sorted(members[tier], key=lambda m: (m[0], m[1])):
                if "kind" in policy:  # a Kubernetes NetworkPolicy: its rules allow
                    if self.k8s_allows(policy, direction, other, dst, port, proto):
                        decided = "Allow"
                else:
                    for rule in policy[direction]:
                        if rule.get("protocol", proto) != proto:
                            continue
                        if not self.end_ok(rule.get("source", {}), src, policy, port, proto):
                            continue
                        if not self.end_ok(rule.get("destination", {}), dst, policy, port,
                                           proto):
                            continue
                        if rule["action"] != "Log":
                            decided = rule["action"]
                            break
                if decided is not None:
                    break
            if decided in ("Allow", "Deny"):
                return decided == "Allow"
            if decided is None and not self.tiers[tier][1]:
                return False  # end of tier: drop
        return True  # the profile

    @staticmethod
    def sel_ok(selector: dict[str, Any], pod: dict[str, Any]) -> bool:
        return sel_match(selector, pod["metadata"]["labels"])

    def k8s_allows(self, np: dict[str, Any], direction: str, other: dict[str, Any],
                   dst: dict[str, Any], port: int, proto: str) -> bool:
        key = "from" if direction == "ingress" else "to"
        for rule in np["spec"].get(direction) or []:
            peers_ok = not rule.get(key) or any(
                self.np_peer_ok(p, other, np["metadata"]["namespace"]) for p in rule[key])
            ports_ok = not rule.get("ports") or any(
                self.np_port_ok(e, dst, port, proto) for e in rule["ports"])
            if peers_ok and ports_ok:
                return True
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_calico_engine_agrees_with_the_reference(
        drawn: tuple[list[dict[str, Any]], list[dict[str, Any]],
                     dict[str, tuple[float, bool]]]) -> None:
    objects, policies, tiers = drawn
    store = GraphStore(source=Source.MANIFESTS, cluster_name="property")
    for obj in objects:
        store.apply(EventType.ADDED, obj)
    assert not store.problems
    answer = to_json(call_tool(store.view(), "reachability_matrix", {
        "ports": list(QUERY_PORTS), "protocols": list(PROTOCOLS), "limit": 10_000}),
        detail=True)
    assert answer["page"]["remaining"] == 0
    reference = CalicoReference(objects, policies, tiers)
    pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in reference.pods}
    assert len(answer["entries"]) == len(pods) * (len(pods) - 1) * 12
    for entry in answer["entries"]:
        expected = reference.allowed(pods[entry["from"]], pods[entry["to"]], entry["port"],
                                     entry["protocol"])
        assert entry["allowed"] is expected, (entry, objects)
