"""Pod, EndpointSlice, Service, NetworkPolicy and Namespace list pages decoded into typed
Structs (graph/ingest/typed_pages.py) build the same records as the checked path (decoding.py
+ to_record), and whatever the typed path refuses, the checked path still reads: a page is
typed only when every object in it is usual."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.graph.ingest.api_objects import EndpointSlice
from netsight.graph.ingest.typed_pages import (
    decode_pod_page,
    decode_typed_page,
    list_page_records,
)
from netsight.graph.ingest.typed_records import object_id, pod_record
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import Record
from netsight.sim.synthetic import generate
from tests.graph.test_shapes_keep_what_records_read import (
    junk,
    maybe,
    metadata,
    optional,
    outcome,
    page,
    pods,
    slices,
)

# Kind id, apiVersion of the kinds whose whole pages come typed.
TYPED_KINDS = {"Pod": (Kind.POD, "v1"),
               "EndpointSlice": (Kind.ENDPOINT_SLICE, "discovery.k8s.io/v1"),
               "Service": (Kind.SERVICE, "v1"),
               "NetworkPolicy": (Kind.NETWORK_POLICY, "networking.k8s.io/v1"),
               "Namespace": (Kind.NAMESPACE, "v1")}


def test_generated_pods_are_read_typed_into_the_same_records() -> None:
    cluster = generate(pods=400, seed=5, policies_per_namespace=4)
    objects = [o for o in cluster.objects() if o["kind"] == "Pod"]
    typed = decode_pod_page(page(objects))
    assert typed is not None
    assert typed.items is not None
    assert len(typed.items) == len(objects)
    for obj, pod in zip(objects, typed.items, strict=True):
        record = pod_record(pod)
        assert record == outcome(obj)
        assert record.key == object_id(pod).key


def test_a_page_with_one_malformed_pod_is_not_read_typed() -> None:
    cluster = generate(pods=20, seed=5)
    objects = [o for o in cluster.objects() if o["kind"] == "Pod"]
    bad = {**objects[3], "spec": {"containers": [{"name": "c",
                                                  "ports": [{"containerPort": 0}]}]}}
    assert decode_pod_page(page([*objects[:3], bad, *objects[4:]])) is None
    assert decode_pod_page(page(objects)) is not None


def test_a_pod_without_namespace_takes_the_default() -> None:
    body = page([{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}])
    typed = decode_pod_page(body)
    assert typed is not None
    assert typed.items
    assert pod_record(typed.items[0], "dflt").key == f"{Kind.POD}/dflt/p"


@settings(max_examples=400, deadline=None)
@given(st.lists(pods, min_size=1, max_size=3))
def test_any_pod_typed_gives_the_checked_record(objects: list[Any]) -> None:
    typed = decode_pod_page(page(objects))
    if typed is None:
        return  # read the checked way, which the shapes test covers
    assert typed.items is not None
    for obj, pod in zip(objects, typed.items, strict=True):
        checked = outcome(obj)
        # The typed path accepts only what the checked path reads without complaint.
        assert isinstance(checked, Record), checked
        assert pod_record(pod) == checked


def test_generated_slices_are_read_typed_into_the_same_records() -> None:
    cluster = generate(pods=400, seed=5, policies_per_namespace=4)
    objects = [o for o in cluster.objects() if o["kind"] == "EndpointSlice"]
    typed = decode_typed_page(Kind.ENDPOINT_SLICE, page(objects))
    assert typed is not None
    assert all(isinstance(item, EndpointSlice) for item in typed.items)
    records = list(typed.records("discovery.k8s.io/v1"))
    assert len(records) == len(objects)
    for obj, record in zip(objects, records, strict=True):
        assert record == outcome(obj)


def test_a_slice_with_a_spec_that_is_not_an_object_is_not_read_typed() -> None:
    body = page([{"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
                  "metadata": {"name": "s", "namespace": "x"}, "spec": "x"}])
    assert decode_typed_page(Kind.ENDPOINT_SLICE, body) is None


def test_kinds_without_a_typed_shape_are_not_read_typed() -> None:
    body = page([{"kind": "Ingress", "apiVersion": "networking.k8s.io/v1",
                  "metadata": {"name": "i", "namespace": "x"}}])
    assert decode_typed_page(Kind.INGRESS, body) is None
    assert list_page_records(Kind.INGRESS, body, "networking.k8s.io/v1") is None


@settings(max_examples=400, deadline=None)
@given(st.lists(slices, min_size=1, max_size=3))
def test_any_slice_typed_gives_the_checked_record(objects: list[Any]) -> None:
    typed = decode_typed_page(Kind.ENDPOINT_SLICE, page(objects))
    if typed is None:
        return  # read the checked way, which the shapes test covers
    for obj, record in zip(objects, typed.records("discovery.k8s.io/v1"), strict=True):
        checked = outcome(obj)
        assert isinstance(checked, Record), checked
        assert record == checked


def test_kept_annotations_and_owners_are_read_alike_the_second_time() -> None:
    def pod(name: str, annotations: dict[str, Any], owners: list[dict[str, Any]]
            ) -> dict[str, Any]:
        return {"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": "x", "annotations": annotations,
                             "ownerReferences": owners}}

    rs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "controller": True}]
    two: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Node", "name": "n"},
                                 {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d",
                                  "controller": True}]
    cases: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        ({"x": "1"}, rs), ({"x": "2"}, rs),
        ({"sidecar.istio.io/inject": "true", "x": "3"}, two),
        ({"sidecar.istio.io/inject": "false", "x": "4"}, two),
        ({"x": "5", "sidecar.istio.io/inject": "true"}, [])]
    objects = [pod(f"p{i}", annotations, owners)
               for i, (annotations, owners) in enumerate(cases)]
    for _ in range(2):  # the second page finds everything in the caches
        typed = decode_pod_page(page(objects))
        assert typed is not None
        assert typed.items is not None
        assert [pod_record(p) for p in typed.items] == [outcome(o) for o in objects]


def test_generated_objects_of_every_typed_kind_are_read_typed_into_the_same_records() -> None:
    cluster = generate(pods=400, seed=5, policies_per_namespace=4)
    for kind, (kid, api_version) in TYPED_KINDS.items():
        objects = [o for o in cluster.objects() if o["kind"] == kind]
        assert objects, kind
        typed = list_page_records(kid, page(objects), api_version)
        assert typed is not None, kind
        metadata, records = typed
        assert metadata == {"resourceVersion": "7"}
        assert records == [outcome(o) for o in objects], kind


def typed_outcome(obj: dict[str, Any]) -> list[Record] | None:
    kid, api_version = TYPED_KINDS[obj["kind"]]
    typed = list_page_records(kid, page([obj]), api_version)
    return None if typed is None else typed[1]


service_ports = st.lists(maybe(st.fixed_dictionaries(
    {"port": maybe(st.integers(1, 65535))},
    optional={"targetPort": maybe(st.one_of(st.integers(1, 65535),
                                            st.sampled_from(["http", "HTTP", "a--b", ""]))),
              "protocol": maybe(st.sampled_from(["TCP", "UDP", "HTTP"])),
              "name": maybe(st.sampled_from(["http", ""])),
              "nodePort": maybe(st.integers(30000, 32767)),
              "appProtocol": maybe(st.sampled_from(["http", ""]))})), max_size=2)
services = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Service"), "metadata": metadata},
    optional={"spec": maybe(optional(
        type=maybe(st.sampled_from(["ClusterIP", "NodePort", "ExternalName", "Bogus", ""])),
        ports=maybe(service_ports),
        clusterIP=maybe(st.sampled_from(["10.96.0.1", "None", ""])),
        clusterIPs=maybe(st.lists(st.sampled_from(["10.96.0.1", "fd00::1", ""]),
                                  max_size=2)),
        selector=maybe(st.dictionaries(st.sampled_from(["app", "tier"]),
                                       st.sampled_from(["a", "b"]), max_size=2)),
        externalName=maybe(st.sampled_from(["db.example.com", ""])),
        publishNotReadyAddresses=maybe(st.booleans()))),
        "status": junk})
peers = st.lists(maybe(optional(
    podSelector=maybe(optional(matchLabels=maybe(st.dictionaries(
        st.sampled_from(["app"]), st.sampled_from(["a", "b"]), max_size=1)))),
    ipBlock=maybe(optional(cidr=st.sampled_from(["10.0.0.0/8", "x"]))))), max_size=2)
rules = st.lists(maybe(optional(**{"from": peers, "to": peers, "ports": junk})), max_size=2)
policies = st.fixed_dictionaries(
    {"apiVersion": st.just("networking.k8s.io/v1"), "kind": st.just("NetworkPolicy"),
     "metadata": metadata},
    optional={"spec": maybe(optional(
        podSelector=maybe(optional(
            matchLabels=maybe(st.dictionaries(st.sampled_from(["app", "tier"]),
                                              st.sampled_from(["a", "b"]), max_size=2)),
            matchExpressions=maybe(st.lists(maybe(optional(
                key=maybe(st.just("app")),
                operator=maybe(st.sampled_from(["In", "Exists", "Bogus"])),
                values=maybe(st.lists(st.just("a"), max_size=2)))), max_size=2)))),
        policyTypes=maybe(st.lists(st.sampled_from(["Ingress", "Egress", "Other"]),
                                   max_size=3)),
        ingress=maybe(rules), egress=maybe(rules)))})
namespaces = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Namespace"), "metadata": metadata},
    optional={"spec": maybe(optional(finalizers=junk)), "status": junk})


@settings(max_examples=500, deadline=None)
@given(st.one_of(services, policies, namespaces))
def test_any_service_policy_or_namespace_typed_gives_the_checked_record(
        obj: dict[str, Any]) -> None:
    checked = outcome(obj)
    typed = typed_outcome(obj)
    if typed is None:
        return  # read the checked way, which the shapes test covers
    # The typed path accepts only what the checked path reads without complaint.
    assert isinstance(checked, Record), checked
    assert typed == [checked]


@pytest.mark.parametrize(("obj", "field"), [
    ({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s", "namespace": "x"},
      "spec": {"ports": [{"port": 0}]}}, "spec.ports[0].port"),
    ({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s", "namespace": "x"},
      "spec": {"ports": [{"port": 80, "targetPort": "Not_A_Name"}]}},
     "spec.ports[0].targetPort"),
    ({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s", "namespace": "x"},
      "spec": {"type": "Bogus"}}, "spec.type"),
    ({"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1",
      "metadata": {"name": "p", "namespace": "x"},
      "spec": {"podSelector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}}},
     "spec.podSelector.matchExpressions[0].operator"),
    ({"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1",
      "metadata": {"name": "p", "namespace": "x"}, "spec": {"ingress": ["x"]}},
     "spec.ingress[0]"),
    ({"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1",
      "metadata": {"name": "p", "namespace": "x"}, "spec": {"policyTypes": ["Other"]}},
     "spec.policyTypes[0]"),
    ({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "n"}, "spec": "x"},
     "spec"),
])
def test_a_page_with_a_malformed_object_is_left_to_the_checked_path(
        obj: dict[str, Any], field: str) -> None:
    kid, api_version = TYPED_KINDS[obj["kind"]]
    good = {**obj, "metadata": {**obj["metadata"], "name": "good"}, "spec": {}}
    assert list_page_records(kid, page([good]), api_version) is not None
    assert list_page_records(kid, page([good, obj]), api_version) is None
    checked = outcome(obj)
    assert isinstance(checked, tuple), checked
    assert checked[0] == field
