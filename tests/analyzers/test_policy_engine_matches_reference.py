"""Property test: on random clusters and policies, reachability_matrix agrees with a
deliberately plain reference evaluator written here from the specs, independently of
netsight.analyzers.policy (raw dicts in, one loop per layer, no indexes, no caching).

The generated inputs are always decidable (every pod has an IP, every namespace exists,
ANP priorities are distinct), so every answer must be True or False.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import EventType, GraphStore, Source

NAMESPACES = ("n1", "n2", "n3")
LABEL_VALUES = {"app": ("a", "b"), "tier": ("web", "db")}
PORTS = ((80, "TCP", "http"), (53, "UDP", "dns"), (9000, "SCTP", "sctp"), (8080, "TCP", "alt"))
QUERY_PORTS = (53, 80, 8080, 9000)
PROTOCOLS = ("TCP", "UDP", "SCTP")

labels = st.dictionaries(st.sampled_from(sorted(LABEL_VALUES)), st.sampled_from(("a", "b", "web",
                                                                               "db")), max_size=2)
match_labels = st.dictionaries(st.sampled_from(sorted(LABEL_VALUES)),
                               st.sampled_from(("a", "b", "web", "db")), max_size=1)
selectors = st.one_of(
    match_labels.map(lambda m: {"matchLabels": m}),
    st.builds(lambda k, op, v: {"matchExpressions": [
        {"key": k, "operator": op, **({"values": [v]} if op in ("In", "NotIn") else {})}]},
        st.sampled_from(("app", "tier", "ns")), st.sampled_from(("In", "NotIn", "Exists",
                                                                 "DoesNotExist")),
        st.sampled_from(("a", "web", "n1", "n2"))),
)
ns_selectors = st.one_of(
    st.just({}),
    st.sampled_from(NAMESPACES).map(lambda n: {"matchLabels": {"ns": n}}),
    st.sampled_from(("prod", "dev")).map(lambda e: {"matchLabels": {"env": e}}),
)
cidrs = st.sampled_from(("10.0.0.0/8", "10.1.0.0/16", "10.2.0.0/16", "10.1.1.0/24",
                         "10.1.0.2/32", "0.0.0.0/0"))


@functools.cache
@st.composite
def np_peer(draw: Any) -> dict[str, Any]:
    shape = draw(st.sampled_from(("pod", "ns", "both", "ip")))
    if shape == "ip":
        block: dict[str, Any] = {"cidr": draw(cidrs)}
        excepts = draw(st.lists(cidrs, max_size=1))
        net = ipaddress.ip_network(block["cidr"])
        excepts = [e for e in excepts if ipaddress.ip_network(e).subnet_of(net)
                   and ipaddress.ip_network(e) != net]
        if excepts:
            block["except"] = excepts
        return {"ipBlock": block}
    peer: dict[str, Any] = {}
    if shape in ("pod", "both"):
        peer["podSelector"] = draw(selectors)
    if shape in ("ns", "both"):
        peer["namespaceSelector"] = draw(ns_selectors)
    return peer


@functools.cache
@st.composite
def np_port(draw: Any) -> dict[str, Any]:
    shape = draw(st.sampled_from(("number", "name", "range", "protocol")))
    proto = draw(st.sampled_from((*PROTOCOLS, None)))
    entry: dict[str, Any] = {} if proto is None else {"protocol": proto}
    if shape == "number":
        entry["port"] = draw(st.sampled_from(QUERY_PORTS))
    elif shape == "name":
        entry["port"] = draw(st.sampled_from(("http", "dns", "sctp", "alt", "none")))
    elif shape == "range":
        start = draw(st.sampled_from((50, 80, 8000)))
        entry["port"], entry["endPort"] = start, start + draw(st.sampled_from((0, 10, 1000)))
    return entry


@functools.cache
@st.composite
def np_rule(draw: Any, key: str) -> dict[str, Any]:
    rule: dict[str, Any] = {}
    if draw(st.booleans()):
        rule[key] = draw(st.lists(np_peer(), min_size=1, max_size=2))
    if draw(st.booleans()):
        rule["ports"] = draw(st.lists(np_port(), min_size=1, max_size=2))
    return rule


@functools.cache
@st.composite
def netpols(draw: Any, index: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": draw(st.one_of(st.just({}), selectors))}
    if draw(st.booleans()):
        spec["ingress"] = draw(st.lists(np_rule("from"), max_size=2))
    if draw(st.booleans()):
        spec["egress"] = draw(st.lists(np_rule("to"), max_size=2))
    types = draw(st.sampled_from((None, ["Ingress"], ["Egress"], ["Ingress", "Egress"])))
    if types is not None:
        spec["policyTypes"] = types
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": f"np{index}", "namespace": draw(st.sampled_from(NAMESPACES))},
            "spec": spec}


@functools.cache
@st.composite
def anp_peer(draw: Any, egress: bool) -> dict[str, Any]:
    shape = draw(st.sampled_from(("namespaces", "pods", "networks") if egress
                                 else ("namespaces", "pods")))
    if shape == "namespaces":
        return {"namespaces": draw(ns_selectors)}
    if shape == "pods":
        return {"pods": {"namespaceSelector": draw(ns_selectors),
                         "podSelector": draw(st.one_of(st.just({}), selectors))}}
    return {"networks": draw(st.lists(cidrs, min_size=1, max_size=2))}


@functools.cache
@st.composite
def anp_port(draw: Any) -> dict[str, Any]:
    shape = draw(st.sampled_from(("portNumber", "namedPort", "portRange")))
    if shape == "namedPort":
        return {"namedPort": draw(st.sampled_from(("http", "dns", "alt", "none")))}
    proto = draw(st.sampled_from(PROTOCOLS))
    if shape == "portNumber":
        return {"portNumber": {"port": draw(st.sampled_from(QUERY_PORTS)), "protocol": proto}}
    start = draw(st.sampled_from((50, 80, 8000)))
    return {"portRange": {"start": start, "end": start + 100, "protocol": proto}}


@functools.cache
@st.composite
def admin(draw: Any, index: int, baseline: bool, priority: int = 0) -> dict[str, Any]:
    actions = ("Allow", "Deny") if baseline else ("Allow", "Deny", "Pass")
    subject = draw(st.one_of(
        ns_selectors.map(lambda s: {"namespaces": s}),
        st.builds(lambda n, p: {"pods": {"namespaceSelector": n, "podSelector": p}},
                  ns_selectors, st.one_of(st.just({}), selectors))))
    spec: dict[str, Any] = {"subject": subject}
    for direction, key in (("ingress", "from"), ("egress", "to")):
        rules = []
        for _ in range(draw(st.integers(0, 2))):
            rule: dict[str, Any] = {"action": draw(st.sampled_from(actions)),
                                    key: draw(st.lists(anp_peer(direction == "egress"),
                                                       min_size=1, max_size=2))}
            if draw(st.booleans()):
                rule["ports"] = draw(st.lists(anp_port(), min_size=1, max_size=2))
            rules.append(rule)
        if rules:
            spec[direction] = rules
    if not baseline:
        spec["priority"] = priority
    kind = "BaselineAdminNetworkPolicy" if baseline else "AdminNetworkPolicy"
    return {"apiVersion": "policy.networking.k8s.io/v1alpha1", "kind": kind,
            "metadata": {"name": "default" if baseline else f"anp{index}"}, "spec": spec}


@functools.cache
@st.composite
def cnp_protocol(draw: Any) -> dict[str, Any]:
    shape = draw(st.sampled_from(("tcp", "udp", "sctp", "destinationNamedPort")))
    if shape == "destinationNamedPort":
        return {shape: draw(st.sampled_from(("http", "dns", "alt", "none")))}
    port = draw(st.sampled_from((None, "number", "range")))
    if port is None:
        return {shape: {}}
    if port == "number":
        return {shape: {"destinationPort": {"number": draw(st.sampled_from(QUERY_PORTS))}}}
    start = draw(st.sampled_from((50, 80, 8000)))
    return {shape: {"destinationPort": {"range": {"start": start, "end": start + 100}}}}


@functools.cache
@st.composite
def cluster_policy(draw: Any, index: int, priority: int) -> dict[str, Any]:
    """v1alpha2 (or v1beta1, the same spec): the subjects and peers of v1alpha1, where a
    ``pods`` entry may leave out its namespaceSelector; tiers, Accept, protocols (or, in an
    early v1alpha2, v1alpha1's ports)."""
    tier = draw(st.sampled_from(("Admin", "Baseline")))
    spec = draw(admin(index, False, priority))["spec"]
    spec["tier"] = tier
    pods_entries = [spec["subject"].get("pods")] + [
        peer.get("pods") for direction in ("ingress", "egress")
        for rule in spec.get(direction, []) for peer in rule.get("from", rule.get("to", []))]
    for pods in pods_entries:
        if pods is not None and draw(st.booleans()):
            del pods["namespaceSelector"]
    version = draw(st.sampled_from(("v1alpha2", "v1beta1")))
    # v1alpha2 as first published kept v1alpha1's ``ports``; later ones match ``protocols``.
    legacy_ports = version == "v1alpha2" and draw(st.booleans())
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction, []):
            rule["action"] = {"Allow": "Accept"}.get(rule["action"], rule["action"])
            if legacy_ports:
                continue
            rule.pop("ports", None)
            if draw(st.booleans()):
                rule["protocols"] = draw(st.lists(cnp_protocol(), min_size=1, max_size=2))
    return {"apiVersion": f"policy.networking.k8s.io/{version}",
            "kind": "ClusterNetworkPolicy", "metadata": {"name": f"cnp{index}"}, "spec": spec}


@st.composite
def clusters(draw: Any) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {
            "ns": n, "env": draw(st.sampled_from(("prod", "dev")))}}} for n in NAMESPACES]
    for i in range(draw(st.integers(2, 5))):
        ports = draw(st.lists(st.sampled_from(PORTS), max_size=3, unique=True))
        objects.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": draw(st.sampled_from(NAMESPACES)),
                         "labels": draw(labels)},
            "spec": {"containers": [{"name": "c", "ports": [
                {"containerPort": n, "protocol": p, "name": name} for n, p, name in ports]}]},
            "status": {"phase": "Running",
                       "podIP": f"10.{draw(st.integers(1, 2))}.{draw(st.integers(0, 1))}.{i + 2}"},
        })
    objects += [draw(netpols(i)) for i in range(draw(st.integers(0, 3)))]
    # Distinct priorities (equal ones are undefined by the spec), unrelated to name order.
    priorities = draw(st.lists(st.integers(0, 1000), max_size=3, unique=True))
    # One API version per cluster: with both, their relative order is undefined.
    if draw(st.booleans()):
        objects += [draw(cluster_policy(i, p)) for i, p in enumerate(priorities)]
        return objects
    objects += [draw(admin(i, False, p)) for i, p in enumerate(priorities)]
    if draw(st.booleans()):
        objects.append(draw(admin(0, True)))
    return objects


# --- the reference evaluator ----------------------------------------------------------------


def sel_match(sel: dict[str, Any], labels: dict[str, str]) -> bool:
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in sel.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


class Reference:
    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.ns_labels = {o["metadata"]["name"]: {**o["metadata"]["labels"],
                                                  "kubernetes.io/metadata.name":
                                                  o["metadata"]["name"]}
                          for o in objects if o["kind"] == "Namespace"}
        self.pods = [o for o in objects if o["kind"] == "Pod"]
        self.netpols = [o for o in objects if o["kind"] == "NetworkPolicy"]
        self.anps = sorted((o for o in objects if o["kind"] == "AdminNetworkPolicy"),
                           key=lambda o: o["spec"]["priority"])
        self.banps = [o for o in objects if o["kind"] == "BaselineAdminNetworkPolicy"]
        cnps = sorted((o for o in objects if o["kind"] == "ClusterNetworkPolicy"),
                      key=lambda o: o["spec"]["priority"])
        self.anps += [o for o in cnps if o["spec"]["tier"] == "Admin"]
        self.banps += [o for o in cnps if o["spec"]["tier"] == "Baseline"]

    @staticmethod
    def ns(pod: dict[str, Any]) -> str:
        return str(pod["metadata"]["namespace"])

    @staticmethod
    def ip(pod: dict[str, Any]) -> ipaddress.IPv4Address:
        return ipaddress.IPv4Address(pod["status"]["podIP"])

    @staticmethod
    def named(pod: dict[str, Any], name: str, port: int, proto: str) -> bool:
        return any(p["name"] == name and p["containerPort"] == port and p["protocol"] == proto
                   for c in pod["spec"]["containers"] for p in c["ports"])

    def np_port_ok(self, entry: dict[str, Any], dst: dict[str, Any], port: int,
                   proto: str) -> bool:
        if entry.get("protocol", "TCP") != proto:
            return False
        if "port" not in entry:
            return True
        if isinstance(entry["port"], str):
            return self.named(dst, entry["port"], port, proto)
        return bool(entry["port"] <= port <= entry.get("endPort", entry["port"]))

    def np_peer_ok(self, peer: dict[str, Any], other: dict[str, Any], policy_ns: str) -> bool:
        if "ipBlock" in peer:
            ip = self.ip(other)
            return ip in ipaddress.ip_network(peer["ipBlock"]["cidr"]) and not any(
                ip in ipaddress.ip_network(e) for e in peer["ipBlock"].get("except", []))
        if "namespaceSelector" in peer:
            ns_ok = sel_match(peer["namespaceSelector"], self.ns_labels[self.ns(other)])
        else:
            ns_ok = self.ns(other) == policy_ns
        pod_ok = "podSelector" not in peer or sel_match(peer["podSelector"],
                                                        other["metadata"]["labels"])
        return ns_ok and pod_ok

    def netpol_tier(self, direction: str, subject: dict[str, Any], other: dict[str, Any],
                    dst: dict[str, Any], port: int, proto: str) -> bool | None:
        key = "from" if direction == "ingress" else "to"
        selecting = []
        for policy in self.netpols:
            spec, ns = policy["spec"], policy["metadata"]["namespace"]
            types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress")
                                                else ["Ingress"])
            if ns == self.ns(subject) and direction.capitalize() in types and \
                    sel_match(spec["podSelector"], subject["metadata"]["labels"]):
                selecting.append(policy)
        if not selecting:
            return None
        for policy in selecting:
            for rule in policy["spec"].get(direction) or []:
                peers_ok = not rule.get(key) or any(
                    self.np_peer_ok(p, other, policy["metadata"]["namespace"])
                    for p in rule[key])
                ports_ok = not rule.get("ports") or any(
                    self.np_port_ok(e, dst, port, proto) for e in rule["ports"])
                if peers_ok and ports_ok:
                    return True
        return False

    def anp_peer_ok(self, peer: dict[str, Any], other: dict[str, Any]) -> bool:
        if "networks" in peer:
            return any(self.ip(other) in ipaddress.ip_network(n) for n in peer["networks"])
        if "namespaces" in peer:
            return sel_match(peer["namespaces"], self.ns_labels[self.ns(other)])
        pods = peer["pods"]  # a CNP's may leave out namespaceSelector: every namespace
        return sel_match(pods.get("namespaceSelector", {}), self.ns_labels[self.ns(other)]) and \
            sel_match(pods["podSelector"], other["metadata"]["labels"])

    def anp_port_ok(self, entry: dict[str, Any], dst: dict[str, Any], port: int,
                    proto: str) -> bool:
        if "namedPort" in entry:
            return self.named(dst, entry["namedPort"], port, proto)
        if "destinationNamedPort" in entry:
            return self.named(dst, entry["destinationNamedPort"], port, proto)
        for transport in ("tcp", "udp", "sctp"):
            if transport in entry:
                wanted = entry[transport].get("destinationPort")
                if transport.upper() != proto:
                    return False
                if wanted is None:
                    return True
                if "number" in wanted:
                    return bool(wanted["number"] == port)
                return bool(wanted["range"]["start"] <= port <= wanted["range"]["end"])
        if "portNumber" in entry:
            return bool(entry["portNumber"]["port"] == port and
                        entry["portNumber"]["protocol"] == proto)
        span = entry["portRange"]
        return bool(span["protocol"] == proto and span["start"] <= port <= span["end"])

    def admin_tier(self, policies: list[dict[str, Any]], direction: str,
                   subject: dict[str, Any], other: dict[str, Any], dst: dict[str, Any],
                   port: int, proto: str) -> str | None:
        key = "from" if direction == "ingress" else "to"
        for policy in policies:
            subj = policy["spec"]["subject"]
            if "namespaces" in subj:
                applies = sel_match(subj["namespaces"], self.ns_labels[self.ns(subject)])
            else:
                applies = sel_match(subj["pods"].get("namespaceSelector", {}),
                                    self.ns_labels[self.ns(subject)]) and \
                    sel_match(subj["pods"]["podSelector"], subject["metadata"]["labels"])
            if not applies:
                continue
            for rule in policy["spec"].get(direction, []):
                ports = rule.get("ports", rule.get("protocols"))
                if any(self.anp_peer_ok(p, other) for p in rule[key]) and (
                        ports is None or any(self.anp_port_ok(e, dst, port, proto)
                                             for e in ports)):
                    return {"Accept": "Allow"}.get(rule["action"], rule["action"])
        return None

    def direction(self, direction: str, subject: dict[str, Any], other: dict[str, Any],
                  dst: dict[str, Any], port: int, proto: str) -> bool:
        action = self.admin_tier(self.anps, direction, subject, other, dst, port, proto)
        if action in ("Allow", "Deny"):
            return action == "Allow"
        np = self.netpol_tier(direction, subject, other, dst, port, proto)
        if np is not None:
            return np
        action = self.admin_tier(self.banps, direction, subject, other, dst, port, proto)
        return action != "Deny"  # Allow, Pass (v1alpha2 Baseline) or none: the default

    def allowed(self, src: dict[str, Any], dst: dict[str, Any], port: int, proto: str) -> bool:
        return self.direction("egress", src, dst, dst, port, proto) and \
            self.direction("ingress", dst, src, dst, port, proto)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_engine_agrees_with_the_reference(objects: list[dict[str, Any]]) -> None:
    store = GraphStore(source=Source.MANIFESTS, cluster_name="property")
    for obj in objects:
        store.apply(EventType.ADDED, obj)
    assert not store.problems
    answer = to_json(call_tool(store.view(), "reachability_matrix", {
        "ports": list(QUERY_PORTS), "protocols": list(PROTOCOLS), "limit": 10_000}),
        detail=True)
    assert answer["page"]["remaining"] == 0
    reference = Reference(objects)
    pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in reference.pods}
    assert len(answer["entries"]) == len(pods) * (len(pods) - 1) * 12
    for entry in answer["entries"]:
        expected = reference.allowed(pods[entry["from"]], pods[entry["to"]], entry["port"],
                                     entry["protocol"])
        assert entry["allowed"] is expected, (entry, objects)
