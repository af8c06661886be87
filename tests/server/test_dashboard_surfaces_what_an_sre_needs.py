"""/dashboard in Chromium, for an SRE who keeps it open (issue 20, point 6): the findings panel
lists what /api/findings/overview returns, by severity, filters it and focuses an object on a
click; a legend matches the drawing; namespaces are boxes; no two visible labels overlap and
hidden ones show on hover or zoom; mesh routing objects have edges to their Services; a
suggested rule is a code block with a copy button. Expectations come from the endpoints, not
from counts written here: the demo's faults may change. Screenshots and DOM snapshots are kept
(browsing.py; the folder is printed with each test's output)."""

from __future__ import annotations

import itertools
from typing import Any

import aiohttp
import pytest

from tests.server.browsing import keep, until
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio

RANK = {"critical": 0, "warning": 1, "info": 2}
DRAWN = "window.netsight && window.netsight.objects().length && " \
        "document.querySelectorAll('#findings-list .finding-row').length"


async def get(url: str) -> Any:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 200, url
        return await response.json()


async def open_dashboard(served: Served, page: Any, query: str = "") -> dict[str, Any]:
    """The page, once drawn with its findings listed; the overview it listed."""
    await page.goto(f"{served.url}/dashboard{query}")
    await until(page, DRAWN, timeout=30)
    await until(page, "document.getElementById('live').textContent === 'live'")
    await until(page, "window.netsight.state.labelledAt === window.netsight.cy.zoom()")
    overview: dict[str, Any] = await get(f"{served.url}/api/findings/overview?min_severity=info")
    return overview


async def rows(page: Any) -> list[dict[str, str]]:
    found: list[dict[str, str]] = await page.locator("#findings-list .finding-row").evaluate_all(
        "els => els.map(e => ({object: e.dataset.object, code: e.dataset.code, "
        "severity: e.dataset.severity, text: e.textContent}))")
    return found


def listed(findings: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(f["severity"], f["code"], f["object"] or "") for f in findings]


def matching(findings: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The panel's text filter: code, summary, category or object, case aside."""
    text = text.lower()
    return [f for f in findings if any(text in str(f.get(k) or "").lower()
                                       for k in ("code", "summary", "category", "object"))]


async def test_the_findings_panel_lists_every_finding_by_severity_and_filters(
        shared: Served, page: Any) -> None:
    overview = await open_dashboard(shared, page)
    findings = overview["findings"]
    assert findings, "the demo has findings"
    await until(page, "document.querySelectorAll('#findings-list .finding-row').length === "
                      f"{len(findings)}")
    shown = await rows(page)
    assert [(r["severity"], r["code"], r["object"]) for r in shown] == listed(findings)
    ranks = [RANK[r["severity"]] for r in shown]
    assert ranks == sorted(ranks), "worst first"
    headings = await page.locator("#findings-list h3").evaluate_all(
        "els => els.map(e => e.dataset.severity)")
    assert headings == sorted({f["severity"] for f in findings}, key=RANK.__getitem__)
    counts = await page.locator("#findings-counts .badge").evaluate_all(
        "els => Object.fromEntries(els.map(e => [e.dataset.severity, e.textContent]))")
    for severity, n in overview["counts"].items():
        assert counts[severity] == f"{n} {severity}"

    for severity in sorted({f["severity"] for f in findings}):
        await page.select_option("#findings-severity", severity)
        assert listed([f for f in findings if f["severity"] == severity]) == [
            (r["severity"], r["code"], r["object"]) for r in await rows(page)]
    await page.select_option("#findings-severity", "")

    namespaces = sorted({f["resource"]["namespace"] for f in findings
                         if (f.get("resource") or {}).get("namespace")})
    options = await page.locator("#findings-namespace option").evaluate_all(
        "els => els.map(e => e.value)")
    assert options == ["", *namespaces]
    for namespace in namespaces:
        await page.select_option("#findings-namespace", namespace)
        got = await rows(page)
        assert got, namespace
        assert all(r["object"].split("/")[1] == namespace for r in got)
        assert len(got) == sum(1 for f in findings
                               if (f.get("resource") or {}).get("namespace") == namespace)
    await page.select_option("#findings-namespace", "")

    code = findings[0]["code"]
    for text in (code, code.lower(), findings[-1]["object"].split("/")[-1], "no such finding"):
        await page.fill("#findings-text", text)
        assert [(r["code"], r["object"]) for r in await rows(page)] == [
            (f["code"], f["object"]) for f in matching(findings, text)], text
    assert "No finding matches" in await page.text_content("#findings-list")
    await page.fill("#findings-text", "")
    await keep(page, "findings")
    # Thousands of findings: 300 rows per severity are drawn, and the rest counted.
    await page.evaluate("""window.netsight.state.findings.render({findings: Array.from(
        {length: 700}, (_, i) => ({code: 'NS0103', severity: 'warning', category: 'service',
            summary: `many ${i}`, resource: {kind: 'Service', namespace: 'shop', name: `s${i}`},
            object: `Service/shop/s${i}`}))})""")
    assert await page.locator("#findings-list .finding-row").count() == 300
    assert "400 more warning finding(s)" in await page.text_content("#findings-list")
    await page.fill("#findings-text", "many 69")  # 69 and 690-699
    assert await page.locator("#findings-list .finding-row").count() == 11
    # A cluster-scoped object's neighbourhood has no namespace to list findings of: it says so.
    await page.goto(f"{shared.url}/dashboard?around=GatewayClass/demo")
    await until(page, "document.getElementById('findings-counts')"
                      ".textContent.includes('listed by namespace')")
    assert await page.locator("#findings-list .finding-row").count() == 0
    assert page.problems == []


async def test_a_click_on_a_finding_focuses_its_object(shared: Served, page: Any) -> None:
    overview = await open_dashboard(shared, page)
    key = next(f["object"] for f in overview["findings"]
               if f["object"] and f["object"].startswith("Service/"))
    where = f"""(() => {{
        const cy = window.netsight.cy, node = cy.getElementById({key!r});
        const at = node.renderedPosition();
        return {{selected: node.selected(), x: at.x / cy.width(), y: at.y / cy.height(),
                 zoom: cy.zoom()}};
    }})()"""
    # The click's own effect, measured before anything else can run: centred and zoomed in.
    before = await page.evaluate("window.netsight.cy.zoom()")
    focused = await page.evaluate(f"""(() => {{
        document.querySelector("#findings-list .finding-row[data-object='{key}']").click();
        return {where};
    }})()""")
    assert focused["selected"]
    assert abs(focused["x"] - 0.5) < 0.01
    assert abs(focused["y"] - 0.5) < 0.01
    assert focused["zoom"] >= max(before, 1.5) - 1e-6
    # And a real click, from the top again: the object ends selected, in view.
    await page.evaluate("window.netsight.select(null); window.netsight.declutter();"
                        "window.NetsightLayout.fitTo(window.netsight.cy, "
                        "window.netsight.cy.elements())")
    await page.locator(f"#findings-list .finding-row[data-object='{key}']").first.click()
    await until(page, f"window.netsight.state.selected === {key!r}")
    focused = await page.evaluate(where)
    assert 0.1 < focused["x"] < 0.9
    assert 0.1 < focused["y"] < 0.9
    await until(page, f"!window.netsight.cy.getElementById({key!r}).hasClass('quiet')")
    await page.locator("#findings .finding").first.wait_for()
    assert key.split("/")[-1] in await page.text_content("#details")
    await keep(page, "focused")
    assert page.problems == []


async def test_the_legend_draws_each_kind_as_the_graph_does(shared: Served, page: Any) -> None:
    await open_dashboard(shared, page)
    looks = await page.evaluate("""(() => {
        const seen = {};
        window.netsight.objects().forEach(n => {
            seen[n.data('kind')] = {shape: n.style('shape'),
                                    color: n.style('background-color')};
        });
        return seen;
    })()""")
    legend = await page.locator("#kinds [data-kind]").evaluate_all("""els => Object.fromEntries(
        els.map(e => { const s = e.querySelector('svg.shape');
            return [e.dataset.kind, s && {shape: s.dataset.shape, color: s.dataset.color}]; }))""")
    assert set(legend) == set(looks)
    for kind, look in looks.items():
        if kind == "Namespace":  # a box: its own colours, drawn in the marks
            continue
        drawn = legend[kind]
        assert drawn is not None, kind
        assert drawn["shape"] == look["shape"], kind
        red, green, blue = (int(drawn["color"][i:i + 2], 16) for i in (1, 3, 5))
        assert look["color"] == f"rgb({red},{green},{blue})", kind
    marks = await page.locator("#marks [data-mark]").evaluate_all(
        "els => els.map(e => e.dataset.mark)")
    assert set(marks) == {"namespace", "sev-critical", "sev-warning", "blocking", "src", "dst"}
    edges = await page.evaluate("[...new Set(window.netsight.cy.edges().map(e => e.data('type')))]")
    legend_edges = await page.locator("#edge-types input").evaluate_all(
        "els => els.map(e => e.value)")
    assert set(edges) == set(legend_edges)
    await keep(page, "legend")


async def test_namespaces_are_boxes_around_their_objects(shared: Served, page: Any) -> None:
    summary = await get(f"{shared.url}/api/graph/summary")
    await open_dashboard(shared, page)
    groups = await page.evaluate("""(() => {
        const cy = window.netsight.cy, found = {};
        window.netsight.objects().filter(n => n.data('namespace')).forEach(n => {
            const parent = n.parent();
            const box = parent.boundingBox({includeLabels: false});
            const at = n.position();
            const inside = at.x >= box.x1 && at.x <= box.x2 && at.y >= box.y1 && at.y <= box.y2;
            const ns = n.data('namespace');
            found[ns] = found[ns] || {parents: [], outside: 0, members: 0};
            found[ns].parents.push(parent.id());
            found[ns].members += 1;
            if (!inside) found[ns].outside += 1;
        });
        return found;
    })()""")
    # Every namespace holding objects (the demo's linkerd namespace holds only Deployments,
    # which a server without PROVIDER_STATUS does not watch: nothing to box).
    assert set(groups) == {ns for ns, count in summary["namespaces"].items() if ns and count}
    for namespace, group in groups.items():
        assert set(group["parents"]) == {f"Namespace/{namespace}"}, namespace
        assert group["outside"] == 0, namespace
    # No box over another and no two nodes in one place: as drawn, and past cose's limit
    # (800 nodes), where each namespace is a grid.
    for relayout in ("", "window.NetsightLayout.layoutGroups(cy, visible, 0);"):
        placed = await page.evaluate(PLACED.replace("RELAYOUT", relayout))
        assert placed["overlaps"] == 0, relayout
        assert placed["places"] == placed["leaves"], relayout
    await keep(page, "grid")
    # A namespace drawn alone is a box too, its Namespace object drawn or not.
    await page.goto(f"{shared.url}/dashboard?namespace=shop")
    await until(page, "window.netsight.objects().length")
    parents = await page.evaluate("[...new Set(window.netsight.objects()"
                                  ".filter(n => n.data('namespace') === 'shop')"
                                  ".map(n => n.parent().length && n.parent().data('name')))]")
    assert parents == ["shop"]
    await keep(page, "shop")


PLACED = """(() => {
    const cy = window.netsight.cy, visible = cy.elements().not('.hidden');
    RELAYOUT
    const boxes = cy.nodes(':parent').map(p => p.boundingBox({includeLabels: false}));
    const meets = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
    const places = new Set(cy.nodes().filter(n => !n.isParent())
        .map(n => `${Math.round(n.position('x'))},${Math.round(n.position('y'))}`));
    return {overlaps: boxes.filter((a, i) => boxes.some((b, j) => j > i && meets(a, b))).length,
            places: places.size, leaves: cy.nodes().filter(n => !n.isParent()).length};
})()"""

VISIBLE_LABELS = """(() => {
    const cy = window.netsight.cy, W = cy.width(), H = cy.height();
    return cy.nodes().filter(n => n.visible() && n.data('label') && !n.hasClass('quiet')
            && Number(n.style('text-opacity')) > 0)
        .map(n => ({id: n.id(), label: n.data('label'), parent: n.isParent(),
                    box: n.renderedBoundingBox({includeNodes: false, includeEdges: false,
                        includeLabels: true, includeOverlays: false})}))
        .filter(l => l.box.x2 > 0 && l.box.y2 > 0 && l.box.x1 < W && l.box.y1 < H);
})()"""


def overlapping(labels: list[dict[str, Any]]) -> list[tuple[str, str]]:
    def meets(a: dict[str, float], b: dict[str, float]) -> bool:
        return a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]
    return [(a["id"], b["id"]) for a, b in itertools.combinations(labels, 2)
            if meets(a["box"], b["box"])]


async def test_no_two_visible_labels_overlap_and_hidden_ones_show_on_hover_or_zoom(
        shared: Served, page: Any) -> None:
    await open_dashboard(shared, page)
    await until(page, "!window.netsight.cy.animated()")
    labels = await page.evaluate(VISIBLE_LABELS)
    await keep(page, "default-zoom")
    assert overlapping(labels) == []
    names = {label["label"] for label in labels}
    assert sum(1 for label in labels if label["parent"]) >= 2, "namespace titles show"
    assert len(labels) >= 15, names
    assert any(label["id"].startswith("Pod/") for label in labels), "pods are labelled"
    # Without the choice, the labels on screen would collide: the check above can fail.
    every = await page.evaluate(VISIBLE_LABELS.replace("&& !n.hasClass('quiet')", "")
                                .replace("&& Number(n.style('text-opacity')) > 0", ""))
    assert overlapping(every)
    # Same-named objects of one namespace read apart: three objects are called "cart" in shop.
    texts = await page.evaluate("""(() => {
        const seen = {};
        window.netsight.objects().forEach(n => {
            const k = `${n.parent().id()}|${n.data('label')}`;
            seen[k] = (seen[k] || 0) + 1;
        });
        return {dupes: Object.entries(seen).filter(([, n]) => n > 1).map(([k]) => k),
                carts: ['Service', 'VirtualService', 'DestinationRule'].map(k =>
                    window.netsight.cy.getElementById(`${k}/shop/cart`).data('label'))};
    })()""")
    assert texts["dupes"] == []
    assert len(set(texts["carts"])) == 3
    assert all(text.startswith("cart") for text in texts["carts"])

    # A hidden label shows when the pointer is on its node, with the object's full name.
    quiet = await page.evaluate("""(() => {
        const cy = window.netsight.cy, box = cy.container().getBoundingClientRect();
        const node = window.netsight.objects().filter(n => n.hasClass('quiet') && n.visible()
            && n.data('kind') === 'Pod').filter(n => { const p = n.renderedPosition();
                return p.x > 20 && p.y > 20 && p.x < cy.width() - 20
                    && p.y < cy.height() - 20; })[0];
        const p = node.renderedPosition();
        return {id: node.id(), x: box.left + p.x, y: box.top + p.y};
    })()""")
    await page.mouse.move(quiet["x"], quiet["y"])
    hovered = await until(page, f"""(() => {{
        const n = window.netsight.cy.getElementById({quiet['id']!r});
        return n.hasClass('hover') && Number(n.style('text-opacity')) === 1 && n.style('label');
    }})()""")
    assert hovered == "Pod " + quiet["id"].split("/", 1)[1]
    await keep(page, "hover")
    away = await page.evaluate("""(() => {  // a spot of the graph's pane with no node
        const box = window.netsight.cy.container().getBoundingClientRect();
        return [box.left + 3, box.bottom - 3];
    })()""")
    await page.mouse.move(*away)
    await until(page, f"!window.netsight.cy.getElementById({quiet['id']!r}).hasClass('hover')")

    # Zooming in makes room: of the objects then on screen, more are labelled than before,
    # and still no label is over another.
    labelled = {label["id"] for label in labels}
    await page.evaluate(f"""(() => {{ const cy = window.netsight.cy;
        cy.zoom({{level: cy.zoom() * 4, position: cy.getElementById({quiet['id']!r}).position()}});
    }})()""")
    await until(page, "window.netsight.state.labelledAt === window.netsight.cy.zoom()")
    zoomed = await page.evaluate(VISIBLE_LABELS)
    on_screen = set(await page.evaluate("""(() => { const cy = window.netsight.cy;
        return window.netsight.objects().filter(n => { const p = n.renderedPosition();
            return n.visible() && p.x > 0 && p.y > 0 && p.x < cy.width() && p.y < cy.height(); })
            .map(n => n.id()); })()"""))
    assert len(on_screen & {label["id"] for label in zoomed}) > len(on_screen & labelled)
    assert overlapping(zoomed) == []
    await keep(page, "zoomed")
    assert page.problems == []


async def test_mesh_routing_objects_have_edges_to_their_services(
        shared: Served, page: Any) -> None:
    graph = await get(f"{shared.url}/api/graph")
    mesh = {(link["source"], link["type"], link["target"]) for link in graph["links"]
            if link["source"].split("/")[0] in ("VirtualService", "DestinationRule")}
    assert ("VirtualService/shop/cart", "routes_to", "Service/shop/cart") in mesh
    assert ("VirtualService/shop/cart", "configures", "Service/shop/cart") in mesh
    assert ("DestinationRule/shop/cart", "configures", "Service/shop/cart") in mesh
    await open_dashboard(shared, page)
    drawn = await page.evaluate("""window.netsight.cy.edges()
        .filter(e => /^(VirtualService|DestinationRule)\\//.test(e.data('source')))
        .map(e => [e.data('source'), e.data('type'), e.data('target'), e.visible()])""")
    assert {(s, t, d) for s, t, d, _ in drawn} == mesh
    assert all(visible for *_, visible in drawn), "drawn without selecting anything"
    legend = await page.text_content("#edge-types")
    assert "mesh rule for" in legend
    assert "routes to" in legend


async def test_a_suggested_rule_is_a_code_block_with_a_copy_button(
        shared: Served, page: Any) -> None:
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await open_dashboard(shared, page)
    await page.fill("#port", "5432")  # first: one question, one answer drawn
    await page.press("#port", "Tab")  # its change now, not when the copy button takes focus
    await page.evaluate("window.netsight.setEndpoint('source', 'Pod/shop/frontend-6f7c-a')")
    await page.evaluate("window.netsight.setEndpoint('destination', 'Pod/data/postgres-0')")
    await until(page, "(document.getElementById('verdict-result') || {}).textContent"
                      "?.includes('5432')")
    assert "DENIED" in await page.text_content("#verdict")  # the verdict panel is kept
    for key in ("Pod/shop/frontend-6f7c-a", "Pod/data/postgres-0"):  # labelled first
        await page.evaluate(f"window.netsight.cy.center("
                            f"window.netsight.cy.getElementById({key!r}))")
        await until(page, "window.netsight.state.labelledAt === window.netsight.cy.zoom() && "
                          f"!window.netsight.cy.getElementById({key!r}).hasClass('quiet')")
    code = page.locator("#verdict .code-block pre > code")
    await code.first.wait_for()
    text = await code.first.text_content()
    lines = text.split("\n")
    assert len(lines) >= 4, text
    assert lines[0].startswith("- from:") or lines[0].startswith("- "), text
    assert "ports:" in text
    assert "5432" in text
    heights = await page.evaluate("""(() => {
        const pre = document.querySelector('#verdict .code-block pre');
        const line = parseFloat(getComputedStyle(pre.querySelector('code')).lineHeight) ||
            1.2 * parseFloat(getComputedStyle(pre.querySelector('code')).fontSize);
        return [pre.querySelector('code').getBoundingClientRect().height, line];
    })()""")
    assert heights[0] >= (len(lines) - 0.5) * heights[1], heights  # one line per line
    prose = await page.locator("#verdict .rich p.prose").first.text_content()
    assert "NetworkPolicy data/deny-all" in prose
    await page.locator("#verdict .code-block button.copy").first.click()
    await until(page, "document.querySelector('#verdict .code-block button.copy')"
                      ".textContent === 'Copied'")
    assert await page.evaluate("navigator.clipboard.readText()") == text
    await keep(page, "suggestion")
    # The split itself: prose, the snippet, prose again.
    parts = await page.evaluate("window.NetsightDom.textParts('Add this rule (spec.ingress):\\n"
                                "- from:\\n  - podSelector: {}\\nIt also opens 80/TCP.')")
    assert parts == [{"type": "prose", "text": "Add this rule (spec.ingress):"},
                     {"type": "code", "text": "- from:\n  - podSelector: {}"},
                     {"type": "prose", "text": "It also opens 80/TCP."}]
    assert page.problems == []


async def test_live_objects_land_in_their_namespace_box(served: Served, page: Any) -> None:
    """A pod of a namespace not drawn yet gets a stand-in box; its Namespace, once it arrives,
    takes the box over; deleted with its contents, it leaves no box behind."""
    await open_dashboard(served, page)
    parent = "window.netsight.cy.getElementById('Pod/fresh/web-0').parent().id()"
    served.sim.state.apply([{"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "web-0", "namespace": "fresh", "labels": {"app": "web"}}}])
    await until(page, f"{parent} === 'ns-group/fresh'")
    served.sim.state.apply([{"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": "fresh"}}])
    await until(page, f"{parent} === 'Namespace/fresh'")
    assert await page.evaluate("window.netsight.cy.getElementById('ns-group/fresh').length") == 0
    assert await page.evaluate("window.netsight.cy.getElementById('Pod/fresh/web-0')"
                               ".data('label')") == "web-0"
    namespaces = served.sim.state.registry.for_kind("v1", "Namespace")
    assert namespaces is not None
    served.sim.state.delete(namespaces, None, "fresh")
    await until(page, "!window.netsight.cy.nodes().some(n => /\\/fresh($|\\/)/.test(n.id()))")
    await keep(page, "live")
    assert page.problems == []
