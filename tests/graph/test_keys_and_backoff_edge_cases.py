"""Kinds that share a name across API groups get distinct keys; backoff never overflows."""

from __future__ import annotations

from netsight.graph.ingest.backoff import Backoff
from netsight.graph.model import kinds
from netsight.graph.model.kinds import kind_id
from netsight.graph.model.reading import to_record


def test_same_kind_name_in_two_groups_gets_two_keys() -> None:
    assert kind_id("gateway.networking.k8s.io/v1", "HTTPRoute") == "HTTPRoute"
    assert kind_id("policy.linkerd.io/v1beta3", "HTTPRoute") == "HTTPRoute.policy.linkerd.io"
    assert kind_id("networking.istio.io/v1", "Gateway") == "Gateway.networking.istio.io"
    assert kind_id("crd.projectcalico.org/v1", "NetworkPolicy") == \
        "NetworkPolicy.crd.projectcalico.org"


def test_owner_keys_follow_the_owner_group_and_scope() -> None:
    pod = to_record({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "kube-apiserver-node-1", "namespace": "kube-system",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1",
                             "controller": True}]}})
    assert pod.owner == ("Node", "node-1")
    from netsight.graph.store.record_edges import record_references
    assert [target for _, target, _ in record_references(pod)] == ["Node/node-1"]


def test_backoff_stays_capped_after_thousands_of_failures() -> None:
    backoff = Backoff(base=0.5, cap=30.0, attempt=5000)
    delays = [backoff.next_delay() for _ in range(50)]
    assert all(0 <= d <= 30.0 for d in delays)
    assert backoff.next_delay(retry_after=45) == 45


def test_a_kind_longer_than_kubernetes_allows_is_resolved_but_not_kept() -> None:
    # A caller's proposal may name any apiVersion; the cache keeps only pairs of a length
    # Kubernetes accepts, so it never holds megabyte keys.
    held = kinds._cached_kind_id.cache_info().currsize
    group = "a" * 1_000_000
    assert kind_id(f"{group}/v1", "Gateway") == f"Gateway.{group}"
    assert kinds._cached_kind_id.cache_info().currsize == held
