"""gateway_list pages with its cursor; gateway_get names a policy of a kind netsight has no
definition for without guessing its reach, finds policies through the graph's edges, and a
backend without a BackendTLSPolicy carries no TLS."""

from __future__ import annotations

from typing import Any

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore
from netsight.graph.store.sync_status import KindStatus, SyncState
from tests.analyzers.test_testdata import TESTDATA
from tests.conftest import store_from_yaml

CLUSTER = (TESTDATA / "gateway_list" / "health-verdicts" / "cluster.yaml").read_text()
ROUTES = (TESTDATA / "check_route_resolution" / "backend-tls-per-service-port"
          / "cluster.yaml").read_text()


def answer(store: GraphStore, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return to_json(call_tool(store.view(), tool, args), detail=False)


def test_gateway_list_pages_follow_the_cursor_to_the_end() -> None:
    store = store_from_yaml(CLUSTER)
    seen: list[str] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = answer(store, "gateway_list", args)
        seen.extend(g["gateway"] for g in page["gateways"])
        cursor = page["page"]["nextCursor"]
        if cursor is None:
            break
    assert seen == ["infra/broken", "infra/partly", "shop/orphan", "infra/edge", "infra/mixed"]


def test_a_policy_kind_without_a_definition_is_shown_without_a_reach() -> None:
    store = store_from_yaml(CLUSTER)
    store.apply("ADDED", {
        "apiVersion": "gateway.networking.k8s.io/v1alpha1", "kind": "XRateLimitPolicy",
        "metadata": {"name": "limits", "namespace": "infra"},
        "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                 "name": "mixed"}]}})
    data = answer(store, "gateway_get", {"gateway": "infra/mixed"})
    (policy,) = data["policies"]
    assert policy["kind"] == "XRateLimitPolicy"
    assert "attachment" not in policy
    assert "routes" not in policy
    assert any("XRateLimitPolicy infra/limits" in n and "not evaluated" in n
               for n in data["notEvaluated"])


def test_a_policy_on_another_gateway_or_deleted_is_not_attached() -> None:
    store = store_from_yaml(CLUSTER)
    before = answer(store, "gateway_get", {"gateway": "infra/edge"})
    assert "infra/elsewhere" not in {p["policy"] for p in before["policies"]}
    assert "infra/jwt" in {p["policy"] for p in before["policies"]
                           if p["kind"] == "SecurityPolicy"}
    store.apply("DELETED", {"apiVersion": "gateway.envoyproxy.io/v1alpha1",
                            "kind": "SecurityPolicy",
                            "metadata": {"name": "jwt", "namespace": "infra"}})
    after = answer(store, "gateway_get", {"gateway": "infra/edge"})
    assert "infra/jwt" not in {p["policy"] for p in after["policies"]
                               if p["kind"] == "SecurityPolicy"}


def test_a_policy_kind_that_cannot_be_listed_is_named_instead_of_taken_as_none() -> None:
    store = store_from_yaml(CLUSTER)
    store.sync["SecurityPolicy"] = KindStatus("SecurityPolicy", state=SyncState.FORBIDDEN,
                                              last_error="403 Forbidden")
    data = answer(store, "gateway_get", {"gateway": "infra/mixed"})
    assert data["notEvaluated"] == ["SecurityPolicy: listing is forbidden (403 Forbidden): "
                                    "policies of this kind may be missing from the answer"]


def test_a_backend_without_a_policy_has_no_tls() -> None:
    data = answer(store_from_yaml(ROUTES), "check_route_resolution", {"route": "shop/shop"})
    backends = {(b["backend"], b["port"]): b for b in data["routes"][0]["backends"]}
    assert "tls" not in backends[("shop/plain", 80)]
    assert backends[("shop/web", 443)]["tls"]["policy"] == "shop/web-port"


def test_backend_tls_that_cannot_be_listed_is_not_taken_as_plain_text() -> None:
    store = store_from_yaml(ROUTES)
    store.sync["BackendTLSPolicy"] = KindStatus("BackendTLSPolicy", state=SyncState.SYNCING)
    data = answer(store, "check_route_resolution", {"route": "shop/shop"})
    assert "BackendTLSPolicy: not listed yet (syncing): a backend shown without tls may have " \
        "a BackendTLSPolicy" in data["notEvaluated"]
