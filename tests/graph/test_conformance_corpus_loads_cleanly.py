"""Every case of the shared conformance corpus loads without ingest problems, and the
selector edges of the loaded graph are exactly what the selectors match."""

from __future__ import annotations

from pathlib import Path

import pytest

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel
from netsight.graph.model.records import NetworkPolicyRecord, Record, ServiceRecord, WorkloadRecord
from netsight.graph.store.live import GraphStore
from tests.conftest import (
    CONFORMANCE,
    corpus_cases,
    corpus_id,
    corpus_name,
    needs_shared_corpus,
)
from tests.graph.factories import targets

# Problems some cases must produce, with the reason. Istio's analyzer test data gives
# Service reviews-2port ports with protocol HTTP and HTTPS, which the API server rejects
# (it accepts TCP, UDP and SCTP): netsight keeps the Service as written, so istioctl's
# expectations about it can be checked, and reports the values (INVALID_VALUE, NS0005).
EXPECTED_PROBLEMS = {
    "istio/virtualservice-destination-hosts": [
        ("invalid_value", "Service", "reviews-2port", "spec.ports[0].protocol"),
    ],
}


def case_name(manifest: Path) -> str:
    return corpus_name(manifest.parent)


def case_id(manifest: Path) -> str:
    return corpus_id(manifest.parent)


# The shared corpus's cases and this project's own (tests/corpus).
MANIFESTS = [case / "manifests.yaml"
             for case in corpus_cases("netpol", "anp", "gateway", "istio", "kiali", "mtls",
                                      "linkerd", "kuma")]
CASES = [pytest.param(path, id=case_id(path)) for path in MANIFESTS]
NETPOL_CASES = [path for path in MANIFESTS if case_name(path).startswith("netpol/")]


def pod_labels(record: Record) -> dict[str, str]:
    """A pod's labels, or the labels of the pods a workload's template makes."""
    if isinstance(record, WorkloadRecord):
        return dict(record.pod_labels)
    return dict(record.labels)


def load(manifest: Path) -> GraphStore:
    store = GraphStore(cluster_name="conformance")
    load_manifests(store, [str(manifest)])
    return store


@needs_shared_corpus
def test_corpus_is_present() -> None:
    assert CONFORMANCE.is_dir(), f"conformance corpus not found at {CONFORMANCE}"
    assert len([m for m in MANIFESTS if m.is_relative_to(CONFORMANCE)]) >= 30
    assert len(NETPOL_CASES) >= 5
    assert set(EXPECTED_PROBLEMS) <= {case_name(path) for path in MANIFESTS}


@pytest.mark.parametrize("manifest", CASES)
def test_case_loads_without_ingest_problems(manifest: Path) -> None:
    store = load(manifest)

    problems = sorted((p.kind.value, p.object_kind, p.name, p.field_path)
                      for p in store.problems.values())
    assert problems == EXPECTED_PROBLEMS.get(case_name(manifest), [])
    assert store.state.graph.number_of_nodes() > 0
    # Objects with values kept as written are in the graph all the same.
    for _, kind, name, _ in problems:
        assert any(r.name == name for r in store.view().for_each(str(kind)))


@pytest.mark.parametrize("manifest", NETPOL_CASES, ids=case_id)
def test_network_policies_apply_to_exactly_the_pods_they_select(manifest: Path) -> None:
    store = load(manifest)
    view = store.view()
    policies = list(view.for_each(Kind.NETWORK_POLICY))
    assert policies, "every netpol case has at least one NetworkPolicy"

    for policy in policies:
        assert isinstance(policy, NetworkPolicyRecord)
        pods = list(view.for_each(Kind.POD, policy.namespace))
        assert pods, f"no pods in namespace {policy.namespace}"
        expected = {pod.key for pod in pods if policy.pod_selector.matches(pod.labels)}

        assert targets(store, policy.key, Rel.APPLIES_TO) == expected, policy.key


def test_some_netpol_case_selects_a_strict_subset_of_its_namespace() -> None:
    # Guards the test above against passing only on select-everything policies.
    strict = []
    for manifest in NETPOL_CASES:
        store = load(manifest)
        for policy in store.view().for_each(Kind.NETWORK_POLICY):
            applied = targets(store, policy.key, Rel.APPLIES_TO)
            in_namespace = set(store.state.keys_of(Kind.POD, policy.namespace))
            if applied and applied < in_namespace:
                strict.append(policy.key)
    assert strict


@pytest.mark.parametrize("manifest", MANIFESTS, ids=case_id)
def test_services_select_exactly_the_pods_their_selector_matches(manifest: Path) -> None:
    # Pods, and workloads (a Deployment in manifests stands for the pods of its template).
    store = load(manifest)
    view = store.view()

    for service in view.for_each(Kind.SERVICE):
        assert isinstance(service, ServiceRecord)
        expected: set[str] = set()
        if service.selector and service.type != "ExternalName":
            expected = {
                pod.key for kind in POD_LIKE_KINDS
                for pod in view.for_each(kind, service.namespace)
                if all(pod_labels(pod).get(k) == v for k, v in service.selector.items())
            }
        assert targets(store, service.key, Rel.SELECTS) == expected, service.key
