"""After any event sequence, the edges and indexes are exactly what the live objects declare.

The expectation is computed here from the raw objects with its own reading of the
Kubernetes semantics, so a mistake shared by incremental apply and a fresh build (which the
rebuild property cannot see) still shows.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hypothesis import HealthCheck, given, settings

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from tests.graph.oracle import selector_matches
from tests.graph.snapshots import snapshot
from tests.graph.universe import CLUSTER_SCOPED, Raw, Step, event_sequences, final_state

POD_LIKE = {"Pod", "Deployment", "StatefulSet", "ReplicaSet"}


def identity(key: str) -> tuple[str, str, str]:
    kind, _, rest = key.partition("/")
    if kind in CLUSTER_SCOPED:
        return kind, "", rest
    namespace, _, name = rest.partition("/")
    return kind, namespace, name


def selectable_labels(kind: str, raw: Raw) -> dict[str, str]:
    if kind == "Pod":
        return dict(raw["metadata"].get("labels") or {})
    return dict(raw["spec"]["template"]["metadata"].get("labels") or {})


def controller_owner(raw: Raw) -> tuple[str, str] | None:
    owners = raw["metadata"].get("ownerReferences") or []
    chosen = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    return None if chosen is None else (chosen["kind"], chosen["name"])


def ingress_services(spec: Raw) -> set[str]:
    backends = [spec["defaultBackend"]] if "defaultBackend" in spec else []
    for rule in spec.get("rules") or []:
        backends.extend(p["backend"] for p in rule["http"]["paths"])
    return {b["service"]["name"] for b in backends}


def policy_targets(ns: str, spec: Raw) -> set[str]:
    """GEP-713 targetRefs (and the singular targetRef): group/kind/name in the policy's
    namespace, cluster-scoped kinds without one; a ref lacking kind or name names nothing."""
    refs = list(spec.get("targetRefs") or []) + ([spec["targetRef"]] if "targetRef" in spec
                                                  else [])
    found = set()
    for ref in refs:
        if isinstance(ref, dict) and isinstance(ref.get("name"), str) and ref.get("kind"):
            kind = ref["kind"]
            found.add(f"{kind}/{ref['name']}" if kind in CLUSTER_SCOPED
                      else f"{kind}/{ns}/{ref['name']}")
    return found


def expected_edges(live: dict[str, Raw]) -> dict[tuple[str, str], frozenset[str]]:
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)

    def add(source: str, target: str, rel: Rel) -> None:
        if source in live and target in live:
            edges[(source, target)].add(rel)

    pod_like = [(key, identity(key)[1], selectable_labels(identity(key)[0], raw))
                for key, raw in live.items() if identity(key)[0] in POD_LIKE]
    for key, raw in live.items():
        kind, ns, name = identity(key)
        spec: dict[str, Any] = raw.get("spec") or {}
        if ns:
            add(f"Namespace/{ns}", key, Rel.CONTAINS)
        owner = controller_owner(raw)
        if owner is not None:
            add(key, f"{owner[0]}/{ns}/{owner[1]}", Rel.OWNED_BY)
        if kind == "Service" and spec.get("selector") and spec.get("type") != "ExternalName":
            for target, target_ns, labels in pod_like:
                if target_ns == ns and selector_matches({"matchLabels": spec["selector"]},
                                                        labels):
                    add(key, target, Rel.SELECTS)
        elif kind == "NetworkPolicy":
            for target, target_ns, labels in pod_like:
                if target_ns == ns and selector_matches(spec.get("podSelector"), labels):
                    add(key, target, Rel.APPLIES_TO)
        elif kind == "EndpointSlice":
            service = (raw["metadata"].get("labels") or {}).get("kubernetes.io/service-name")
            if service:
                add(key, f"Service/{ns}/{service}", Rel.BELONGS_TO)
            for endpoint in raw["endpoints"]:
                add(key, f"Pod/{ns}/{endpoint['targetRef']['name']}", Rel.TARGETS)
        elif kind == "Endpoints":
            add(key, f"Service/{ns}/{name}", Rel.BELONGS_TO)
            for subset in raw["subsets"]:
                for address in subset["addresses"] + subset["notReadyAddresses"]:
                    add(key, f"Pod/{ns}/{address['targetRef']['name']}", Rel.TARGETS)
        elif kind == "Ingress":
            for service in ingress_services(spec):
                add(key, f"Service/{ns}/{service}", Rel.ROUTES_TO)
            annotations = raw["metadata"].get("annotations") or {}
            class_name = spec.get("ingressClassName") or annotations.get(
                "kubernetes.io/ingress.class"
            )
            if class_name:
                add(key, f"IngressClass/{class_name}", Rel.USES_CLASS)
        elif kind == "Gateway":
            add(key, f"GatewayClass/{spec['gatewayClassName']}", Rel.USES_CLASS)
        elif kind in ("BackendTLSPolicy", "ClientTrafficPolicy"):
            for target in policy_targets(ns, spec):
                add(key, target, Rel.TARGET_REF)
    return {pair: frozenset(found) for pair, found in edges.items()}


def expected_label_index(live: dict[str, Raw]) -> dict[tuple[str, str, str], frozenset[str]]:
    index: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for key, raw in live.items():
        kind, ns, _ = identity(key)
        if kind in POD_LIKE:
            for label, value in selectable_labels(kind, raw).items():
                index[(ns, label, value)].add(key)
    return {entry: frozenset(keys) for entry, keys in index.items()}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=event_sequences())
def test_edges_and_indexes_follow_from_live_objects(sequence: list[Step]) -> None:
    store = GraphStore()
    for step in sequence:
        store.apply(step.event, step.raw)
    live, _ = final_state(sequence)

    state = snapshot(store.state)
    assert state["edges"] == expected_edges(live)
    assert state["by_label"] == expected_label_index(live)
    # Selector edges (checked against the oracle above) come from two indexes that must
    # mirror each other: identity -> matching selectors, selector -> matching identities.
    state_ = store.state
    for per_ns in state_.identities.values():
        for group in per_ns.values():
            for owner in group.selected_by:
                assert group in state_.selected[owner], (owner, group)
    for owner, groups in state_.selected.items():
        for group in groups:
            assert owner in group.selected_by, (owner, group)
    by_kind: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for key in live:
        kind, ns, _ = identity(key)
        by_kind[kind][ns].add(key)
    assert state["by_kind"] == {k: dict(per_ns) for k, per_ns in by_kind.items()}
    assert {key: record.labels for key, record in state["nodes"].items()} == {
        key: raw["metadata"].get("labels") or {} for key, raw in live.items()
    }
