"""Property test: the set evaluation (analyzers/policy/classes.py and the modules it
names), which decides a direction for every identity at once, says for each pod exactly
what PolicyEngine.direction says for that pod, or leaves the identity to the per-pod path;
never a different answer.

Clusters come from the per-pod reach test's generators (host-network pods, pods without an
IP, unknown namespace labels, ipBlocks, several pods per identity), made harder here with
admin policies sharing a priority (undefined when they disagree) and rules netsight cannot
read.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsight.analyzers.policy.endpoints import Endpoint, from_pod
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.fixed_end import FixedEnd
from netsight.analyzers.policy.identity_matrix import reachability
from netsight.analyzers.policy.set_scope import Outcome, set_scope
from netsight.analyzers.policy.toward_fixed import TowardFixed
from netsight.analyzers.policy.universe import Universe, universe
from netsight.analyzers.policy.verdict import Direction, Tri
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import PodRecord
from netsight.graph.store.live import EventType, GraphStore, GraphView, Source
from tests.analyzers.test_policy_engine_matches_reference import PROTOCOLS, QUERY_PORTS
from tests.analyzers.test_reach_matches_per_pod_evaluation import build, harder

# API groups of the CNI and mesh policy layers (Cilium, Calico, Istio): the sets model none
# of them, so where they are the per-pod engine answers.
CNI_AND_MESH_GROUPS = frozenset({"cilium.io", "projectcalico.org", "crd.projectcalico.org",
                                 "security.istio.io"})


@st.composite
def hardest(draw: Any) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = draw(harder())
    admins = [o for o in objects if o["kind"] == "AdminNetworkPolicy"]
    if admins and draw(st.booleans()):  # a second policy at one priority
        twin = copy.deepcopy(admins[0])
        twin["metadata"] = {"name": "twin"}
        twin["spec"]["subject"] = {"namespaces": {}}
        for direction in ("ingress", "egress"):
            for rule in twin["spec"].get(direction, []):
                rule["action"] = draw(st.sampled_from(("Allow", "Deny", "Pass")))
        objects.append(twin)
    if draw(st.booleans()):  # egress allowed to pods of its own namespace only
        objects.append({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "to-a", "namespace": draw(st.sampled_from(("n1", "n2")))},
            "spec": {"podSelector": {}, "policyTypes": ["Egress"],
                     "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "a"}}}]}]}})
    if draw(st.booleans()):  # a named port: resolved on each destination's own ports
        objects.append({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "http-only", "namespace": "n1"},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                     "ingress": [{"ports": [{"port": "http"}]}]}})
    if draw(st.integers(0, 4)) == 0:  # a rule netsight cannot read
        direction, key = draw(st.sampled_from((("ingress", "from"), ("egress", "to"))))
        objects.append({
            "apiVersion": "policy.networking.k8s.io/v1alpha1", "kind": "AdminNetworkPolicy",
            "metadata": {"name": "odd"},
            "spec": {"priority": 999, "subject": {"namespaces": {}},
                     direction: [{"action": "Allow", key: [{"namespaces": {}}],
                                  "surprise": True}]}})
    return objects


def pods(view: GraphView) -> dict[str, Endpoint]:
    return {r.key: from_pod(r) for r in view.for_each(Kind.POD) if isinstance(r, PodRecord)}


def check(uni: Universe, outcome: Outcome, everyone: dict[str, Endpoint],
          expected_of: Any) -> None:
    assert not outcome.allow & outcome.deny
    assert not (outcome.allow | outcome.deny) & outcome.exact
    assert outcome.allow | outcome.deny | outcome.exact == uni.all
    for position in range(len(uni)):
        bit = 1 << position
        for key in uni.keys[position]:
            expected: Tri = expected_of(everyone[key])
            if outcome.allow & bit:
                assert expected is True, (key, expected)
            elif outcome.deny & bit:
                assert expected is False, (key, expected)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hardest(), st.data())
def test_sets_answer_as_the_engine_does_per_pod(objects: list[dict[str, Any]],
                                                data: st.DataObject) -> None:
    view = build(objects)
    engine = PolicyEngine(view, explain=False)
    uni = universe(view)
    everyone = pods(view)
    fixed = everyone[data.draw(st.sampled_from(sorted(everyone)))]
    port = data.draw(st.sampled_from(QUERY_PORTS))
    protocol = data.draw(st.sampled_from(PROTOCOLS))

    # Where the sets answer at all: everywhere on a cluster of NetworkPolicies and admin
    # policies of one API version (so that the comparison below is not skipped there),
    # nowhere with Calico's, and not in a namespace of Cilium's or Istio's.
    scope = set_scope(engine)
    if not any(o["apiVersion"].split("/")[0] in CNI_AND_MESH_GROUPS for o in objects) \
            and engine.mixed_versions() is None:
        assert scope == frozenset()
    if any(o["apiVersion"].startswith("projectcalico.org/") for o in objects):
        assert scope is None
    modeled = scope is not None and fixed.namespace not in scope

    # The direction at the fixed end, over every identity as the other end.
    ingress = FixedEnd(engine, uni, Direction.INGRESS, fixed, port, protocol).evaluate()
    egress = FixedEnd(engine, uni, Direction.EGRESS, fixed, port, protocol).evaluate()
    if fixed.host_network or not modeled:
        assert ingress is None
        assert egress is None
    else:
        assert ingress is not None
        assert egress is not None
        check(uni, ingress, everyone, lambda peer: engine.direction(
            Direction.INGRESS, fixed, peer, fixed, port, protocol).allowed)
        check(uni, egress, everyone, lambda peer: engine.direction(
            Direction.EGRESS, fixed, peer, peer, port, protocol).allowed)

    # Egress at every identity toward the fixed end.
    toward = TowardFixed(engine, uni, fixed, port, protocol).evaluate()
    if not modeled:
        assert toward is None
        return
    assert toward is not None
    check(uni, toward, everyone, lambda peer: engine.direction(
        Direction.EGRESS, peer, fixed, fixed, port, protocol).allowed)

    # Ingress at every identity from the fixed end (what_can_reach).
    inward = TowardFixed(engine, uni, fixed, port, protocol,
                         direction=Direction.INGRESS).evaluate()
    assert inward is not None
    check(uni, inward, everyone, lambda peer: engine.direction(
        Direction.INGRESS, peer, fixed, peer, port, protocol).allowed)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hardest(), st.sampled_from(QUERY_PORTS), st.sampled_from(PROTOCOLS))
def test_identity_matrix_answers_as_the_engine_does_per_pod_pair(
        objects: list[dict[str, Any]], port: int, protocol: str) -> None:
    view = build(objects)
    engine = PolicyEngine(view, explain=False)
    matrix = reachability(engine, port, protocol)
    if matrix is None:  # something the sets do not model is there: nothing to compare
        return
    uni = matrix.uni
    everyone = pods(view)
    for destination, allowed in matrix.allowed.items():
        exact = matrix.exact[destination]
        assert not matrix.per_pod >> destination & 1
        for source in range(len(uni)):
            bit = 1 << source
            if exact & bit:
                continue
            for source_key in uni.keys[source]:
                for destination_key in uni.keys[destination]:
                    if source_key == destination_key:
                        continue
                    expected = engine.evaluate(everyone[source_key],
                                               everyone[destination_key], port,
                                               protocol).allowed
                    assert expected is bool(allowed & bit), (
                        source_key, destination_key, expected)
    assert set(matrix.allowed) == {p for p in range(len(uni))
                                   if not matrix.per_pod >> p & 1}


def pod(name: str, namespace: str, app: str, port_name: str, ip: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "ports": [
                {"containerPort": 80, "name": port_name}]}]},
            "status": {"phase": "Running", "podIP": ip}}


def test_destinations_alike_but_for_their_named_ports_get_their_own_answers() -> None:
    view = build([
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
        for n in ("n1", "n2")] + [
        pod("a", "n1", "a", "http", "10.0.0.1"), pod("b", "n1", "b", "web", "10.0.0.2"),
        pod("client", "n2", "client", "x", "10.0.0.3"),
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "http-only", "namespace": "n1"},
         "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                  "ingress": [{"ports": [{"port": "http"}]}]}}])
    matrix = reachability(PolicyEngine(view, explain=False), 80, "TCP")
    assert matrix is not None
    uni = matrix.uni
    position = {keys[0]: i for i, keys in enumerate(uni.keys)}
    client = 1 << position["Pod/n2/client"]
    assert matrix.allowed[position["Pod/n1/a"]] & client
    assert not matrix.allowed[position["Pod/n1/b"]] & client
    assert not matrix.exact[position["Pod/n1/b"]] & client


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hardest(), hardest(), st.data())
def test_sets_kept_with_the_graph_follow_its_changes(first: list[dict[str, Any]],
                                                     second: list[dict[str, Any]],
                                                     data: st.DataObject) -> None:
    """What the sets keep (universe, peer sets, egress index, tiers) is asked again after
    objects of another cluster were applied over the first and some of the first deleted:
    the answers must be those of the graph as it is now."""
    store = GraphStore(source=Source.MANIFESTS, cluster_name="changes")
    for obj in first:
        store.apply(EventType.ADDED, obj)
    view = store.view()
    everyone = pods(view)
    fixed = everyone[data.draw(st.sampled_from(sorted(everyone)))]
    for _ in range(2):
        engine = PolicyEngine(view, explain=False)
        FixedEnd(engine, universe(view), Direction.INGRESS, fixed, 80, "TCP").evaluate()
        TowardFixed(engine, universe(view), fixed, 80, "TCP").evaluate()
        TowardFixed(engine, universe(view), fixed, 80, "TCP",
                    direction=Direction.INGRESS).evaluate()
        changes = data.draw(st.lists(st.sampled_from(second + first), max_size=6))
        for obj in changes:
            deleting = obj in first and data.draw(st.booleans())
            store.apply(EventType.DELETED if deleting else EventType.MODIFIED, obj)
        everyone = pods(view)
        if fixed.key not in everyone:
            return
        fixed = everyone[fixed.key]  # type: ignore[index]
        engine = PolicyEngine(view, explain=False)
        uni = universe(view)
        scope = set_scope(engine)
        if scope is None or fixed.namespace in scope:
            continue  # the sets do not answer here (test above); nothing to compare
        toward = TowardFixed(engine, uni, fixed, 80, "TCP").evaluate()
        assert toward is not None
        check(uni, toward, everyone, lambda peer, now=engine, at=fixed: now.direction(
            Direction.EGRESS, peer, at, at, 80, "TCP").allowed)
        inward = TowardFixed(engine, uni, fixed, 80, "TCP",
                             direction=Direction.INGRESS).evaluate()
        assert inward is not None
        check(uni, inward, everyone, lambda peer, now=engine, at=fixed: now.direction(
            Direction.INGRESS, peer, at, peer, 80, "TCP").allowed)
        if not fixed.host_network:
            ingress = FixedEnd(engine, uni, Direction.INGRESS, fixed, 80, "TCP").evaluate()
            assert ingress is not None
            check(uni, ingress, everyone, lambda peer, now=engine, at=fixed: now.direction(
                Direction.INGRESS, at, peer, at, 80, "TCP").allowed)
