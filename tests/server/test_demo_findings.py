"""The demo tells the truth: through the informers, over the whole demo cluster, its findings
are exactly the deliberate faults the README lists, each with the finding it produces."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import answer, to_json
from netsight.analyzers.tools import TOOLS
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphView
from netsight.sim.apiserver import SimServer
from tests.conftest import ROOT
from tests.server.conftest import Served, eventually, serving

pytestmark = pytest.mark.anyio

# Tools that look at the whole cluster without an argument, and report findings.
CLUSTER_WIDE = ("analyze_config", "check_mesh_config", "check_route_resolution",
                "check_gateway_status", "list_ingresses")
# A row of the README's fault table: | fault | `CODE` | `Kind/namespace/name` |
FAULT_ROW = re.compile(r"^\|[^|]+\|\s*`(NS\d{4})`\s*\|\s*`([A-Za-z]+/[^`]+)`\s*\|\s*$")


def readme_faults() -> set[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### The demo\n", 1)[1].split("\n#", 1)[0]
    return {(m[1], m[2]) for line in section.splitlines() if (m := FAULT_ROW.match(line))}


def findings(view: GraphView) -> set[tuple[str, str]]:
    """(code, Kind/namespace/name) of every finding the whole-cluster tools and
    diagnose_service on every Service report."""
    answers: list[dict[str, Any]] = [
        to_json(answer(TOOLS[name], view, {"limit": 500}), detail=False)
        for name in CLUSTER_WIDE]
    answers += [to_json(answer(TOOLS["diagnose_service"], view,
                               {"service": f"{s.namespace}/{s.name}"}), detail=False)
                for s in view.for_each(Kind.SERVICE)]
    found = set()
    for result in answers:
        for finding in result.get("findings") or ():
            r = finding["resource"]
            found.add((finding["code"],
                       "/".join(p for p in (r["kind"], r.get("namespace"), r["name"]) if p)))
    return found


def test_the_readme_lists_the_demos_faults() -> None:
    assert len(readme_faults()) >= 4


async def test_the_demos_findings_are_its_deliberate_faults(shared: Served) -> None:
    assert findings(shared.graph.store.view()) == readme_faults()


async def test_with_provider_status_as_the_demo_serves_its_providers_are_well(
        sim: SimServer, tmp_path: Path) -> None:
    """``netsight serve --demo`` watches its providers (PROVIDER_STATUS): the findings stay
    the faults, and check_provider_status finds the CNI, istiod, Linkerd's control plane and
    the GatewayClass well."""
    async with serving(sim, tmp_path, provider_status=True) as running:
        view = running.graph.store.view()
        assert findings(view) == readme_faults()
        status = to_json(answer(TOOLS["check_provider_status"], view, {}), detail=False)
        assert {p["name"]: p["status"] for p in status["providers"]} == {
            "istio": "healthy", "cilium": "healthy", "gateway-api": "healthy",
            "linkerd": "healthy", "cni": "healthy"}
        assert {f["code"] for f in status["findings"]} == {"NS1040"}
        assert "CNI: Cilium; enforces NetworkPolicy" in {f["summary"]
                                                        for f in status["findings"]}
        verdict = to_json(answer(TOOLS["find_blocking_policies"], view, {
            "source": "shop/frontend-6f7c-a", "destination": "data/postgres", "port": 5432}),
            detail=False)
        assert verdict["allowed"] is False
        assert "enforcement" not in verdict["metadata"]  # Cilium enforces the policy


async def test_fixing_the_cart_selector_live_gives_it_ready_endpoints(served: Served) -> None:
    state = served.sim.state
    service_type = state.registry.for_kind("v1", "Service")
    assert service_type is not None
    state.patch(service_type, "shop", "cart",
                {"spec": {"selector": {"app": "cart", "version": "v2"}}},
                "application/merge-patch+json")

    def cart() -> dict[str, Any]:
        return to_json(answer(TOOLS["diagnose_service"], served.graph.store.view(),
                              {"service": "shop/cart"}), detail=False)

    await eventually(lambda: cart()["status"] == "ok")
    assert findings(served.graph.store.view()) == readme_faults() - {
        ("NS0101", "Service/shop/cart")}
