"""A BackendTLSPolicy caCertificateRef without a name names no ConfigMap, so it is invalid
(InvalidCACertificateRef), not "absent from the manifests, may be made elsewhere"."""

from __future__ import annotations

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.backend_tls import BackendTLSPolicies
from netsight.graph.store.live import GraphStore, Source

V1 = "gateway.networking.k8s.io/v1"


def test_an_unnamed_ca_certificate_ref_is_invalid_from_manifests() -> None:
    store = GraphStore(source=Source.MANIFESTS)
    store.apply("ADDED", {"apiVersion": "v1", "kind": "Service",
                          "metadata": {"name": "web", "namespace": "shop"},
                          "spec": {"ports": [{"name": "https", "port": 443}]}})
    store.apply("ADDED", {
        "apiVersion": V1, "kind": "BackendTLSPolicy",
        "metadata": {"name": "tls", "namespace": "shop"},
        "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "web"}],
                 "validation": {"hostname": "web.example.com",
                                "caCertificateRefs": [{"group": "", "kind": "ConfigMap"}]}}})
    view = store.view()
    record = next(iter(view.for_each("BackendTLSPolicy")))
    conditions = BackendTLSPolicies(view).evaluate(record).conditions
    assert conditions[c.RESOLVED_REFS].status == c.FALSE
    assert conditions[c.RESOLVED_REFS].reason == "InvalidCACertificateRef"
    assert "has no name" in conditions[c.RESOLVED_REFS].message
    assert conditions[c.ACCEPTED].reason == "NoValidCACertificate"
