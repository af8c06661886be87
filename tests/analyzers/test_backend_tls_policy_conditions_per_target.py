"""BackendTLSPolicy conditions when a policy names several targets: Conflicted only when a
policy with precedence takes every target that exists (losing some is noted), a missing
target beside a found one is noted, and implementation-specific targets leave Accepted
Unknown rather than guessed."""

from __future__ import annotations

from typing import Any

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.backend_tls import BackendTLSPolicies
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphStore, Source
from netsight.graph.store.sync_status import KindStatus, SyncState

V1 = "gateway.networking.k8s.io/v1"


def service(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"ports": [{"name": "https", "port": 443}]}}


def policy(name: str, created: str, *targets: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "BackendTLSPolicy",
            "metadata": {"name": name, "namespace": "shop", "creationTimestamp": created},
            "spec": {"targetRefs": list(targets),
                     "validation": {"hostname": f"{name}.example.com",
                                    "wellKnownCACertificates": "System"}}}


def svc(name: str, **extra: str) -> dict[str, Any]:
    return {"group": "", "kind": "Service", "name": name, **extra}


def evaluate(*objects: dict[str, Any]) -> dict[str, dict[str, c.Cond]]:
    store = GraphStore()
    for raw in objects:
        store.apply("ADDED", raw)
    policies = BackendTLSPolicies(store.view())
    return {r.name: policies.evaluate(r).conditions
            for r in store.view().for_each("BackendTLSPolicy")}


def test_losing_every_found_target_is_conflicted_and_a_missing_one_is_only_noted() -> None:
    found = evaluate(service("web"),
                     policy("old", "2026-01-01T00:00:00Z", svc("web")),
                     policy("new", "2026-01-02T00:00:00Z", svc("web"), svc("gone")))
    assert found["old"][c.ACCEPTED].ok
    assert found["new"][c.ACCEPTED].reason == "Conflicted"


def test_losing_some_targets_keeps_the_policy_accepted_for_the_others() -> None:
    store = GraphStore()
    for raw in (service("web"), service("api"),
                policy("old", "2026-01-01T00:00:00Z", svc("web")),
                policy("new", "2026-01-02T00:00:00Z", svc("web"), svc("api"))):
        store.apply("ADDED", raw)
    policies = BackendTLSPolicies(store.view())
    new = policies.evaluate(next(r for r in store.view().for_each("BackendTLSPolicy")
                                 if r.name == "new"))
    assert new.conditions[c.ACCEPTED].ok
    assert any("Service shop/web is taken by BackendTLSPolicy shop/old" in n for n in new.notes)
    # Each backend gets the policy with precedence for it.
    api = store.view().get("Service/shop/api")
    web = store.view().get("Service/shop/web")
    assert isinstance(api, ServiceRecord)
    assert isinstance(web, ServiceRecord)
    assert policies.for_backend(api, 443) is new
    chosen = policies.for_backend(web, 443)
    assert chosen is not None
    assert chosen.ref == "shop/old"


def test_only_implementation_specific_targets_leave_accepted_unknown() -> None:
    found = evaluate(policy("odd", "2026-01-01T00:00:00Z",
                            {"group": "example.com", "kind": "Backend", "name": "x"}))
    assert found["odd"][c.ACCEPTED].status == c.UNKNOWN


def test_configmaps_watched_by_name_on_a_cluster_decide_existence() -> None:
    store = GraphStore(source=Source.CLUSTER)
    for raw in (service("web"), policy("web", "2026-01-01T00:00:00Z", svc("web"))):
        store.apply("ADDED", raw)
    raw = policy("web", "2026-01-01T00:00:00Z", svc("web"))
    raw["spec"]["validation"] = {"hostname": "web.example.com", "caCertificateRefs": [
        {"group": "", "kind": "ConfigMap", "name": "web-ca"}]}
    store.apply("MODIFIED", raw)

    def resolved_refs() -> c.Cond:
        record = store.view().get("BackendTLSPolicy/shop/web")
        assert record is not None
        return BackendTLSPolicies(store.view()).evaluate(record).conditions[c.RESOLVED_REFS]

    assert resolved_refs().status == c.UNKNOWN  # ConfigMaps not watched
    store.sync["ConfigMap"] = KindStatus("ConfigMap", state=SyncState.SYNCED,
                                         synced_at=1.0)
    assert resolved_refs().reason == "InvalidCACertificateRef"
    store.apply("ADDED", {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "web-ca", "namespace": "shop"}})
    assert resolved_refs().ok
