"""How a resolution is told from the changes in the ring: fix, coincidence, unobserved."""

from __future__ import annotations

from netsight.graph.store.live import EventType
from netsight.knowledge.fix_changes import field_change, resolve
from tests.conftest import store_from_yaml

CLUSTER = """
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: edge}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: shop}
spec: {selector: {app: frontend}, ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: storefront, namespace: edge}
spec:
  rules: [{backendRefs: [{name: frontend, namespace: shop, port: 80}]}]
"""
GRANT = {"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
         "metadata": {"name": "edge-routes", "namespace": "shop"},
         "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute",
                            "namespace": "edge"}], "to": [{"group": "", "kind": "Service"}]}}
ROUTE = "HTTPRoute/edge/storefront"


def test_a_grant_added_in_the_backends_namespace_is_the_fix() -> None:
    store = store_from_yaml(CLUSTER)
    before = store.generation
    store.apply(EventType.ADDED, GRANT)
    window = [c for c in store.changes if c.generation > before]
    ending = resolve(ROUTE, frozenset({ROUTE}), frozenset({"edge", "shop"}),
                     frozenset({"ReferenceGrant", "Service"}), {}, window, store.view(),
                     complete=True)
    assert (ending.kind, ending.fix) == ("fix", "added ReferenceGrant")
    # The same grant in a namespace the evidence does not name is no fix.
    elsewhere = resolve(ROUTE, frozenset({ROUTE}), frozenset({"edge"}),
                        frozenset({"ReferenceGrant"}), {}, window, store.view(), complete=False)
    assert (elsewhere.kind, elsewhere.fix) == ("unobserved", "changes lost (ring overflowed)")


def test_the_findings_own_object_deleted_is_a_coincidence() -> None:
    store = store_from_yaml(CLUSTER)
    before = store.generation
    store.apply(EventType.DELETED, {"apiVersion": "gateway.networking.k8s.io/v1",
                                    "kind": "HTTPRoute",
                                    "metadata": {"name": "storefront", "namespace": "edge"}})
    window = [c for c in store.changes if c.generation > before]
    ending = resolve(ROUTE, frozenset({ROUTE}), frozenset({"edge"}), frozenset(), {}, window,
                     store.view(), complete=True)
    assert (ending.kind, ending.fix) == ("coincidence", "HTTPRoute deleted")


def test_values_are_shaped_and_label_maps_diffed_by_key() -> None:
    assert field_change("Service.selector", {"app": "cart", "version": "v1"},
                        {"app": "cart", "version": "v2"}, known=True) == \
        ["Service.selector[version]: changed"]
    assert field_change("Service.selector", {"app": "a", "team.acme/x": "y"}, {"app": "a"},
                        known=True) == ["Service.selector[<key>]: removed"]
    assert field_change("Service.ports", 8080, "http", known=True) == \
        ["Service.ports: <number> → <name>"]
    assert field_change("Pod.labels", None, {"app": "x"}, known=False) == \
        ["Pod.labels: → {1 label: app}"]
