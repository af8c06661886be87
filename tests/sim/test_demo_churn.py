"""The demo's churn moves its healthy background only, keeps its size, and puts back what it
edits; the endpoint-slice controller keeps every Service's endpoints ready throughout."""

from __future__ import annotations

from collections import Counter

from netsight.sim.demo import load_demo
from netsight.sim.demo_churn import DemoChurn
from netsight.sim.selection import Selection
from netsight.sim.state import Obj, SimState

FAULT_NAMESPACES = ("shop", "data", "edge")


def stored(state: SimState, api_version: str, kind: str) -> list[Obj]:
    _, items = state.list(state.registry.require(api_version, kind), Selection())
    return items


def ready_endpoints(state: SimState) -> Counter[str]:
    counts: Counter[str] = Counter()
    for slice_ in stored(state, "discovery.k8s.io/v1", "EndpointSlice"):
        service = f"{slice_['metadata']['namespace']}/" \
                  f"{slice_['metadata']['labels']['kubernetes.io/service-name']}"
        counts[service] += sum(1 for e in slice_["endpoints"] if e["conditions"]["ready"])
    return counts


def test_churn_moves_the_background_and_leaves_the_faults_and_the_endpoints_be() -> None:
    state = SimState()
    load_demo(state)
    faults = [o for kind in (("v1", "Pod"), ("v1", "Service"),
                             ("networking.k8s.io/v1", "NetworkPolicy"))
              for o in stored(state, *kind) if o["metadata"]["namespace"] in FAULT_NAMESPACES]
    pods = Counter(p["metadata"]["namespace"] for p in stored(state, "v1", "Pod"))
    policies = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["spec"]
                for p in stored(state, "networking.k8s.io/v1", "NetworkPolicy")}
    endpoints = ready_endpoints(state)
    names = {p["metadata"]["name"] for p in stored(state, "v1", "Pod")}
    churn = DemoChurn(state, seed=3)
    taken = []
    for _ in range(12):
        rv = state.rv
        taken.append(churn.step())
        assert state.rv > rv, f"{taken[-1]} wrote nothing"
        assert ready_endpoints(state) == endpoints, taken[-1]
    assert Counter(taken) == {"rollout": 3, "restart": 3, "edit-policy": 3, "revert-policy": 3}
    assert Counter(p["metadata"]["namespace"] for p in stored(state, "v1", "Pod")) == pods
    assert {(p["metadata"]["namespace"], p["metadata"]["name"]): p["spec"]
            for p in stored(state, "networking.k8s.io/v1", "NetworkPolicy")} == policies
    assert names - {p["metadata"]["name"] for p in stored(state, "v1", "Pod")}, "no pod replaced"
    for fault in faults:  # untouched: still at the resourceVersion they were loaded at
        meta = fault["metadata"]
        now = state.get(state.registry.require(fault["apiVersion"], fault["kind"]),
                        meta["namespace"], meta["name"])
        assert now["metadata"]["resourceVersion"] == meta["resourceVersion"], meta["name"]
    # Rollouts keep at most the current and the previous ReplicaSet of a Deployment.
    owners = Counter(r["metadata"]["ownerReferences"][0]["name"]
                     for r in stored(state, "apps/v1", "ReplicaSet"))
    assert max(owners.values()) <= 2
