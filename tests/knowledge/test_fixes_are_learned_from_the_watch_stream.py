"""Scenarios replayed on the simulator, through the real informers, on both backends: the
demo's faults fixed as an operator would, and what the knowledge base learned from each."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator

import pytest

from netsight.analyzers.core import knowledge
from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.knowledge import Query
from netsight.analyzers.tools import TOOLS
from netsight.graph.store.scoped import ScopedView
from netsight.knowledge.knowledge_base import KnowledgeBase
from netsight.knowledge.observer import Observer
from netsight.server.mcp_tools import answered
from netsight.sim.demo import load_demo
from tests.watching.conftest import Cluster, eventually
from tests.watching.conftest import cluster as cluster  # the fixture

pytestmark = pytest.mark.anyio

Obj = dict  # a simulator object
RELABELLED = "Pod.labels: → {2 labels: app,version}"
GRANT_ADDED = "added ReferenceGrant"
RELAXED = ("NetworkPolicy.ingress[0].from[1]: added "
           "{namespaceSelector: {matchLabels: {1 label: kubernetes.io/metadata.name}}}")
TLS_CHANGED = "DestinationRule.spec.trafficPolicy.tls.mode: DISABLE → ISTIO_MUTUAL"
GRANT: Obj = {"apiVersion": "gateway.networking.k8s.io/v1beta1", "kind": "ReferenceGrant",
              "metadata": {"name": "from-edge", "namespace": "shop"},
              "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute",
                                 "namespace": "edge"}],
                       "to": [{"group": "", "kind": "Service"}]}}
# The pod a Gateway API implementation runs for edge/public (GEP-1762's label).
GATEWAY_POD: Obj = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "public-gw-7c4d-a", "namespace": "edge",
                 "labels": {"gateway.networking.k8s.io/gateway-name": "public"}},
    "spec": {"nodeName": "node-1", "containers": [{"name": "envoy", "image": "envoy:1"}]},
    "status": {"phase": "Running", "podIP": "10.244.9.9", "podIPs": [{"ip": "10.244.9.9"}],
               "conditions": [{"type": "Ready", "status": "True"}]}}


def internal_only(*, relaxed: bool) -> Obj:
    """shop/frontend admits shop's pods; relaxed, namespace edge's too."""
    peers: list[Obj] = [{"podSelector": {}}]
    if relaxed:
        peers.append({"namespaceSelector": {
            "matchLabels": {"kubernetes.io/metadata.name": "edge"}}})
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "frontend-internal", "namespace": "shop"},
            "spec": {"podSelector": {"matchLabels": {"app": "frontend"}},
                     "policyTypes": ["Ingress"], "ingress": [{"from": peers}]}}


def policy_from_edge(view: object, relaxed: bool) -> bool:
    record = view.get("NetworkPolicy/shop/frontend-internal")  # type: ignore[attr-defined]
    return record is not None and ("edge" in str(record.ingress)) is relaxed


def set_label(key: str, value: str) -> object:
    def edit(obj: Obj) -> None:
        obj["metadata"].setdefault("labels", {})[key] = value
    return edit


def set_tls(mode: str) -> object:
    def edit(obj: Obj) -> None:
        obj["spec"]["trafficPolicy"]["tls"]["mode"] = mode
    return edit


def dr_tls(view: object, mode: str) -> bool:
    record = view.get("DestinationRule/pay/ledger")  # type: ignore[attr-defined]
    return record is not None and mode in str(record.spec)


@pytest.fixture
async def base(location: str) -> AsyncIterator[KnowledgeBase]:
    kb = await KnowledgeBase.open(location, "sim")
    try:
        yield kb
    finally:
        await kb.close()


class Demo:
    """The demo loaded in the simulator, its graph, and an observer run by hand."""

    def __init__(self, cluster: Cluster, kb: KnowledgeBase) -> None:
        self.cluster, self.kb = cluster, kb
        self.state = cluster.sim.state
        self.objects = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
                        for o in _demo_objects()}
        self.observer = Observer(cluster.store, kb.writes)

    def put(self, kind: str, ns: str, name: str, edit: object) -> None:
        obj = copy.deepcopy(self.objects[(kind, ns, name)])
        edit(obj)  # type: ignore[operator]
        self.objects[(kind, ns, name)] = obj
        self.state.apply([obj])

    async def settled(self, check: object) -> None:
        view = self.cluster.store.view()
        await eventually(lambda: bool(check(view)))  # type: ignore[operator]
        assert self.observer.observe()

    async def explain(self, code: str, namespaces: frozenset[str] | None = None
                      ) -> knowledge.Explanation:
        assert await self.kb.flush()
        found = await self.kb.explain(Query(None, code, namespaces, 50))
        assert found is not None
        return found


def _demo_objects() -> list[Obj]:
    from netsight.sim.scenarios import demo

    return demo()


def selector_version(view: object, version: str) -> bool:
    service = view.get("Service/shop/cart")  # type: ignore[attr-defined]
    return service is not None and service.selector.get("version") == version


def pod_version(view: object, version: str) -> bool:
    pods = [view.get(f"Pod/shop/cart-7d9f-{s}") for s in "ab"]  # type: ignore[attr-defined]
    return all(p is not None and p.labels.get("version") == version for p in pods)


def set_selector(version: str) -> object:
    def edit(obj: Obj) -> None:
        obj["spec"]["selector"]["version"] = version
    return edit


def set_labels(version: str) -> object:
    def edit(obj: Obj) -> None:
        obj["metadata"]["labels"]["version"] = version
    return edit


async def test_the_demo_faults_fixed_are_learned(cluster: Cluster,
                                                 base: KnowledgeBase) -> None:
    load_demo(cluster.sim.state)
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    demo = Demo(cluster, base)
    view = cluster.store.view()
    await eventually(lambda: view.exists("HTTPRoute/edge/storefront")
                     and view.count("EndpointSlice") > 0)
    assert demo.observer.observe()
    first = await demo.explain("NS0101")
    assert (first.occurrences, first.open, first.resolutions) == (1, 1, 0)
    assert [o.object for o in first.recent] == ["Service/shop/cart"]

    # 1. The selector typo fixed: the Service's selector, key version, changed.
    demo.put("Service", "shop", "cart", set_selector("v2"))
    await demo.settled(lambda v: selector_version(v, "v2"))
    fixed = await demo.explain("NS0101")
    assert (fixed.open, fixed.resolutions) == (0, 1)
    assert [(f.fix, f.count) for f in fixed.fixes] == [("Service.selector[version]: changed", 1)]
    assert knowledge.confidence(1, fixed.resolutions) == 0.5

    # ... broken and fixed the same way again: the same fix, more confidence.
    demo.put("Service", "shop", "cart", set_selector("v1"))
    await demo.settled(lambda v: selector_version(v, "v1"))
    demo.put("Service", "shop", "cart", set_selector("v2"))
    await demo.settled(lambda v: selector_version(v, "v2"))
    again = await demo.explain("NS0101")
    assert (again.occurrences, again.resolutions) == (2, 2)
    assert [(f.fix, f.count) for f in again.fixes] == [("Service.selector[version]: changed", 2)]
    assert knowledge.confidence(2, again.resolutions) == 0.67

    # 2. Broken once more, then fixed by relabelling the pods instead. Their labels before
    # were not held (they were no evidence), so the fix shows what they became.
    demo.put("Service", "shop", "cart", set_selector("v1"))
    await demo.settled(lambda v: selector_version(v, "v1"))
    demo.put("Pod", "shop", "cart-7d9f-a", set_labels("v1"))
    demo.put("Pod", "shop", "cart-7d9f-b", set_labels("v1"))
    await demo.settled(lambda v: pod_version(v, "v1"))
    relabelled = await demo.explain("NS0101")
    assert relabelled.resolutions == 3
    assert {f.fix: f.count for f in relabelled.fixes} == {
        "Service.selector[version]: changed": 2, RELABELLED: 1}
    # The DestinationRule's subset (version v1) selects pods again: the relabelling, found
    # among the changes in the namespace its evidence names.
    subset = await demo.explain("NS0641")
    assert [f.fix for f in subset.fixes] == [RELABELLED]

    # 3. The missing ReferenceGrant added: a new object in the namespace the finding's
    # evidence names (the backend's) is the fix; another Service of that namespace edited
    # in the same moment is not.
    demo.put("Service", "shop", "invoices", set_label("team", "billing"))
    cluster.sim.state.apply([GRANT])
    await demo.settled(lambda v: v.exists("ReferenceGrant/shop/from-edge")
                       and v.get("Service/shop/invoices").labels.get("team") == "billing")
    granted = await demo.explain("NS0503")
    assert (granted.open, granted.resolutions) == (0, 1)
    assert [f.fix for f in granted.fixes] == [GRANT_ADDED]

    # 5. A deny policy relaxed: the Gateway's pods, now running, are refused by a policy
    # admitting only shop's own pods to the frontend (NS0440); the policy is relaxed to
    # admit namespace edge too. Tightened and relaxed again: the same fix, counted twice.
    cluster.sim.state.apply([GATEWAY_POD, internal_only(relaxed=False)])
    await demo.settled(lambda v: v.exists("Pod/edge/public-gw-7c4d-a")
                       and v.exists("NetworkPolicy/shop/frontend-internal"))
    denied = await demo.explain("NS0440")
    assert (denied.occurrences, denied.open) == (1, 1)
    assert [o.object for o in denied.recent] == ["HTTPRoute/edge/storefront"]
    for round_ in (1, 2):
        cluster.sim.state.apply([internal_only(relaxed=True)])
        await demo.settled(lambda v: policy_from_edge(v, True))
        relaxed = await demo.explain("NS0440")
        assert (relaxed.open, relaxed.resolutions) == (0, round_)
        assert [(f.fix, f.count) for f in relaxed.fixes] == [(RELAXED, round_)]
        if round_ == 1:
            cluster.sim.state.apply([internal_only(relaxed=False)])
            await demo.settled(lambda v: policy_from_edge(v, False))
    assert knowledge.confidence(2, relaxed.resolutions) == 0.67

    # 6. pay/ledger's DestinationRule set back to Istio mTLS: its NS0760 fixed.
    demo.put("DestinationRule", "pay", "ledger", set_tls("ISTIO_MUTUAL"))
    await demo.settled(lambda v: dr_tls(v, "ISTIO_MUTUAL"))
    mtls = await demo.explain("NS0760")
    assert (mtls.open, mtls.resolutions) == (0, 1)
    assert [f.fix for f in mtls.fixes] == [TLS_CHANGED]

    # 4. A Service deleted is no fix of its finding: a coincidence.
    services = cluster.sim.state.registry.for_kind("v1", "Service")
    assert services is not None
    cluster.sim.state.delete(services, "shop", "checkout")
    await demo.settled(lambda v: not v.exists("Service/shop/checkout"))
    gone = await demo.explain("NS0105")
    assert (gone.resolutions, gone.coincidences, gone.fixes) == (0, 1, ())

    # explain_finding, as a restricted caller and as everyone.
    with knowledge.using(base):
        tool = TOOLS["explain_finding"]
        answer = to_json(await answered(tool, view, tool.args.model_validate(
            {"code": "NS0101", "detail": True})), detail=True)
        assert answer["fixes"][0] == {**answer["fixes"][0], "fix":
                                      "Service.selector[version]: changed", "count": 2}
        assert answer["suggestedFix"] == "Service.selector[version]: changed"
        assert answer["isNewPattern"] is False
        assert answer["history"] == "recorded"
        edge_only = ScopedView(view, ["edge"])
        hidden = to_json(await answered(tool, edge_only, tool.args.model_validate(
            {"code": "NS0101"})), detail=False)
        assert (hidden["pattern"]["occurrences"], hidden["fixes"]) == (0, [])
        assert hidden["isNewPattern"] is True
