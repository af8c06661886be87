"""/dashboard in headless Chromium (Debian's, driven by Playwright) against netsight serve on the
simulated demo cluster: it draws the graph, a click shows findings, two pods give a verdict,
and a change in the cluster appears on the page.

Chromium, the skip without it and the artefacts: browsing.py and the ``page`` fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from netsight.server import dashboard
from tests.server import browsing
from tests.server.browsing import click_node, require_browser, until
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio


def test_a_missing_chromium_skips_saying_why_unless_required(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(browsing, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("NETSIGHT_REQUIRE_BROWSER", raising=False)
    monkeypatch.setenv("CI", "true")  # a bare CI machine skips too
    with pytest.raises(pytest.skip.Exception, match=r"no-chromium is missing.*get-chromium\.sh"):
        require_browser()
    monkeypatch.setenv("NETSIGHT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="cannot run"):
        require_browser()


async def test_the_dashboard_draws_the_graph_explains_and_follows_changes(
        served: Served, page: Any) -> None:
    await page.goto(f"{served.url}/dashboard")
    view = served.graph.store.view()
    drawn = await until(page, "window.netsight && window.netsight.objects().length")
    assert drawn == view.node_count
    assert await page.evaluate("window.netsight.cy.getElementById('Service/shop/cart')"
                               ".length") == 1
    await until(page, "document.getElementById('live').textContent === 'live'")
    kinds = await page.locator("#kinds input").evaluate_all("els => els.map(e => e.value)")
    assert {"Pod", "Service", "NetworkPolicy"} <= set(kinds)
    await page.uncheck("#kinds input[value=Pod]")
    assert await page.evaluate("window.netsight.cy.nodes('[kind = \"Pod\"]')"
                               ".every(n => n.hasClass('hidden'))")
    assert not await page.evaluate("window.netsight.cy.getElementById('Service/shop/cart')"
                                   ".hasClass('hidden')")
    await page.check("#kinds input[value=Pod]")
    # Policy edges (one per selected pod) are drawn for the selected node only, by default.
    assert not await page.is_checked("#edge-types input[value=applies_to]")
    assert await page.evaluate("window.netsight.cy.edges('[type = \"applies_to\"]')"
                               ".every(e => e.hasClass('hidden'))")
    # Findings mark the node; a click on it opens them in the panel.
    await until(page, "window.netsight.cy.getElementById('Service/shop/cart')"
                      ".hasClass('sev-critical')")
    await click_node(page, "Service/shop/cart")
    await page.locator("#findings .finding").first.wait_for()
    details = await page.text_content("#details")
    assert "NS0101" in details
    assert "app=cart,version=v1" in details

    # Two pods: source and destination from the panel's buttons, then the verdict.
    await click_node(page, "Pod/shop/frontend-6f7c-a")
    await page.click("#set-source")
    await page.evaluate("window.netsight.select('Pod/data/postgres-0')")
    await page.click("#set-destination")
    await page.fill("#port", "5432")
    await page.dispatch_event("#port", "change")
    result = page.locator("#verdict-result")
    await result.wait_for()
    await until(page, "document.getElementById('verdict-result')"
                      ".textContent.includes('5432')")
    assert await result.get_attribute("data-allowed") == "false"
    verdict = await page.text_content("#verdict")
    assert "DENIED" in verdict
    assert "[NetworkPolicy] Deny: data/deny-all" in verdict
    assert await page.evaluate("window.netsight.cy.getElementById('NetworkPolicy/data/"
                               "deny-all').hasClass('blocking')")

    # A change in the cluster reaches the page over /api/graph/changes: a v1 pod for cart,
    # whose open panel follows — its selector matches a pod now.
    await page.evaluate("window.netsight.select('Service/shop/cart')")
    await page.locator("#findings .finding").first.wait_for()
    served.sim.state.apply([{"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "cart-7d9f-live", "namespace": "shop", "labels": {"app": "cart",
                                                                  "version": "v1"}}}])
    await until(page, "window.netsight.cy.getElementById('Pod/shop/cart-7d9f-live').length")
    await until(page, "document.getElementById('details').textContent.includes('1 selected')")
    details = await page.text_content("#details")
    assert "NS0101" not in details  # the selector matches a pod now...
    assert "cart-7d9f-live" in details  # ...which declares no port named 'http' (NS0105)
    assert await page.evaluate("window.netsight.cy.getElementById('Service/shop/cart')"
                               ".edgesTo(window.netsight.cy.getElementById("
                               "'Pod/shop/cart-7d9f-live')).length") == 1
    pods = served.sim.state.registry.for_kind("v1", "Pod")
    assert pods is not None
    served.sim.state.delete(pods, "shop", "cart-7d9f-live")
    await until(page, "!window.netsight.cy.getElementById('Pod/shop/cart-7d9f-live').length")
    assert page.problems == []


async def test_a_large_graph_asks_for_a_namespace_first(
        served: Served, page: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dashboard, "DRAW_LIMIT", 100)  # the demo's 296 objects are "large"
    view = served.graph.store.view()
    await page.goto(f"{served.url}/dashboard")
    notice = page.locator("#notice")
    await notice.wait_for()
    assert "Pick a namespace" in await notice.text_content()
    assert await page.evaluate("window.netsight.objects().length") == 0
    assert await page.locator("#namespace option[value='']").is_disabled()

    await page.select_option("#namespace", "shop")
    shop = sum(view.count(kind, "shop") for kind in view.kinds())
    assert await until(page, "window.netsight.objects().length") == shop
    assert await notice.is_hidden()
    assert page.url.endswith("/dashboard?namespace=shop")
    await until(page, "document.getElementById('live').textContent === 'live'")

    await page.select_option("#namespace", "payments")  # 278 objects: over the limit too
    await until(page, "!document.getElementById('notice').hidden")
    assert "more than the 100 drawn at once" in await notice.text_content()
    assert await page.evaluate("window.netsight.objects().length") == 0

    # An object typed in Find draws its neighbourhood (/api/graph?around=…&depth=1).
    async with aiohttp.ClientSession() as http, http.get(
            f"{served.url}/api/graph?around=Service/payments/pricing&depth=1") as response:
        around = {n["id"] for n in (await response.json())["nodes"]}
    assert 1 < len(around) <= 100
    await page.fill("#search", "Service/payments/pricing")
    await page.press("#search", "Enter")
    await until(page, "window.netsight.objects().length")
    assert set(await page.evaluate("window.netsight.objects().map(n => n.id())")) == around
    assert "around=Service%2Fpayments%2Fpricing" in page.url
    await page.click("#clear-around")
    await until(page, "!document.getElementById('notice').hidden")
    assert await page.evaluate("window.netsight.objects().length") == 0

    await page.goto(f"{served.url}/dashboard?namespace=data")
    data = sum(view.count(kind, "data") for kind in view.kinds())
    assert await until(page, "window.netsight.objects().length") == data
    assert await page.locator("#namespace").input_value() == "data"
    assert page.problems == []
