"""/dashboard over HTTP: the page and its local assets, the vendored Cytoscape.js pin, and the
JSON endpoints it calls (summary, findings, findings overview, verdict) with their errors."""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from netsight.server import dashboard
from netsight.sim.apiserver import SimServer
from tests.server.authenticated import ALICE, bearer, grant_demo_callers, serving_with_auth
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "netsight/server/dashboard/static/vendor/cytoscape.min.js"


async def fetch(url: str, *, method: str = "GET", headers: Mapping[str, str] | None = None,
                data: bytes | None = None) -> tuple[int, Mapping[str, str], bytes]:
    async with aiohttp.ClientSession() as http, http.request(
            method, url, headers=dict(headers or {}), data=data) as response:
        return response.status, response.headers, await response.read()


async def get_json(url: str, headers: Mapping[str, str] | None = None
                   ) -> tuple[int, Any]:
    status, got, body = await fetch(url, headers=headers)
    assert got["Content-Type"].startswith("application/json"), (url, got["Content-Type"])
    return status, json.loads(body)


async def ask(served: Served, question: Any, content_type: str = "application/json"
              ) -> tuple[int, Any]:
    body = question if isinstance(question, bytes) else json.dumps(question).encode()
    status, _, raw = await fetch(f"{served.url}{dashboard.VERDICT}", method="POST",
                                 headers={"Content-Type": content_type}, data=body)
    return status, json.loads(raw)


# --- the page and its assets ------------------------------------------------------------------


async def test_the_page_references_only_local_assets_served_with_their_types(
        shared: Served) -> None:
    status, headers, body = await fetch(f"{shared.url}/dashboard")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy
    assert "connect-src 'self'" in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    html = body.decode()
    references = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert references, html
    for ref in references:
        assert not re.match(r"^([a-z]+:)?//", ref), f"{ref} is not local"
    assets = [r for r in references if r.startswith("dashboard/static/")]
    scripts = {f"dashboard/static/{p.name}" for p in
               (ROOT / "netsight/server/dashboard/static").glob("*.js")}
    assert {"dashboard/static/vendor/cytoscape.min.js", "dashboard/static/dashboard.css",
            *scripts} <= set(assets)
    types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    for ref in assets:
        status, headers, body = await fetch(f"{shared.url}/{ref}")
        assert status == 200, ref
        assert headers["Content-Type"] == types[Path(ref).suffix], ref
        assert body == (ROOT / "netsight/server" / ref).read_bytes()


async def test_an_asset_answers_304_while_unchanged_and_unknown_paths_404(
        shared: Served) -> None:
    url = f"{shared.url}/dashboard/static/dashboard.js"
    _, headers, _ = await fetch(url)
    status, _, body = await fetch(url, headers={"If-None-Match": headers["ETag"]})
    assert (status, body) == (304, b"")
    for path in ("/dashboard/static/nope.js", "/dashboard/static/vendor",
                 "/dashboard/static/%2e%2e/__init__.py", "/dashboard/static/../__init__.py"):
        status, _, _ = await fetch(f"{shared.url}{path}")
        assert status == 404, path


def test_the_page_scripts_never_parse_data_as_html() -> None:
    scripts = sorted((ROOT / "netsight/server/dashboard/static").glob("*.js"))
    assert len(scripts) >= 5  # dashboard.js and its helpers
    for path in scripts:
        script = path.read_text()
        for sink in (".innerHTML", ".outerHTML", ".insertAdjacentHTML", "document.write",
                     "eval(", "new Function", "setAttribute(\"on"):
            assert sink not in script, (path.name, sink)


def test_the_vendored_cytoscape_is_the_pinned_version() -> None:
    pinned = json.loads((ROOT / "web/package.json").read_text())["dependencies"]["cytoscape"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned), "pin an exact version"
    text = VENDOR.read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith(f"/*! cytoscape {pinned} - vendored from npm")
    assert f'version="{pinned}"' in text  # the library's own idea of its version
    lock = json.loads((ROOT / "web/package-lock.json").read_text())
    assert lock["packages"]["node_modules/cytoscape"]["version"] == pinned


def test_every_dashboard_file_is_package_data() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["netsight"]
    package = ROOT / "netsight"
    files = [p for p in (package / "server/dashboard").rglob("*")
             if p.is_file() and p.suffix in dashboard.CONTENT_TYPES]
    assert VENDOR in files
    for path in files:
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


# --- summary, findings, verdict --------------------------------------------------------------


async def test_the_summary_counts_what_the_graph_holds(shared: Served) -> None:
    status, summary = await get_json(f"{shared.url}{dashboard.SUMMARY}")
    assert status == 200
    view = shared.graph.store.view()
    assert summary["nodes"] == view.node_count
    assert summary["namespaces"]["shop"] == sum(view.count(k, "shop") for k in view.kinds())
    assert summary["kinds"]["Pod"] == view.count("Pod")
    assert summary["drawLimit"] == dashboard.DRAW_LIMIT


async def test_a_service_has_its_diagnosis_and_findings(shared: Served) -> None:
    status, body = await get_json(f"{shared.url}/api/findings?object=Service/shop/cart")
    assert status == 200
    assert (body["kind"], body["namespace"], body["name"]) == ("Service", "shop", "cart")
    assert body["service"]["status"] == "critical"
    assert body["service"]["selector"] == "app=cart,version=v1"
    codes = [f["code"] for f in body["findings"]]
    assert "NS0101" in codes
    assert len(codes) == len(set(codes))
    assert all(f["resource"]["name"] == "cart" for f in body["findings"])
    assert body["findings"][0]["suggestion"]  # detail mode


async def test_an_object_gets_only_its_own_findings(shared: Served) -> None:
    _, pod = await get_json(f"{shared.url}/api/findings?object=Pod/shop/frontend-6f7c-a")
    assert pod["findings"] == []
    assert "service" not in pod
    _, namespace = await get_json(f"{shared.url}/api/findings?object=Namespace/shop")
    assert {f["resource"]["namespace"] for f in namespace["findings"]} == {"shop"}
    assert len(namespace["findings"]) >= 2  # cart and checkout at least


async def test_the_overview_marks_objects_with_their_worst_severity(shared: Served) -> None:
    _, everything = await get_json(f"{shared.url}/api/findings/overview")
    assert everything["objects"]["Service/shop/cart"] == "critical"
    _, shop = await get_json(f"{shared.url}/api/findings/overview?namespace=shop")
    assert shop["objects"]
    assert all(k.split("/")[1] == "shop" for k in shop["objects"])
    status, error = await get_json(f"{shared.url}/api/findings/overview?namespace=Nope_")
    assert (status, error["code"]) == (400, "INVALID_INPUT")


async def test_the_overview_lists_the_findings_worst_first(shared: Served) -> None:
    """The findings panel's list: analyze_config's findings, warnings and worse unless
    min_severity says otherwise, each with the key of the object it is about."""
    _, overview = await get_json(f"{shared.url}/api/findings/overview")
    listed = overview["findings"]
    assert overview["complete"] is True
    assert len(listed) == sum(overview["counts"].values())
    ranks = [dashboard.RANK[f["severity"]] for f in listed]
    assert ranks == sorted(ranks)
    assert set(ranks) <= {0, 1}
    assert {"code", "severity", "category", "summary", "object"} <= set(listed[0])
    assert "suggestion" not in listed[0]  # a click on the object brings the detail
    assert {f["object"] for f in listed if f["object"]} == set(overview["objects"])
    assert any(f["object"] == "Service/shop/cart" and f["code"] == "NS0101" for f in listed)
    _, everything = await get_json(f"{shared.url}/api/findings/overview?min_severity=info")
    assert len(everything["findings"]) == sum(everything["counts"].values())
    assert [f for f in everything["findings"] if f["severity"] != "info"] == listed
    assert {f["severity"] for f in everything["findings"]} == set(everything["counts"])
    status, error = await get_json(f"{shared.url}/api/findings/overview?min_severity=loud")
    assert (status, error["code"]) == (400, "INVALID_INPUT")
    assert "min_severity" in error["message"]


BAD_OBJECTS = [
    ("", 400, "INVALID_INPUT", "object: required"),
    ("?object=", 400, "INVALID_INPUT", "object: required"),
    ("?object=frontend", 400, "INVALID_INPUT", "'Kind/namespace/name'"),
    ("?object=Service//cart", 400, "INVALID_INPUT", "'Kind/namespace/name'"),
    ("?object=Service/shop/cart&colour=red", 400, "INVALID_INPUT", "unknown parameter"),
    ("?object=Service/shop/nope", 404, "NOT_FOUND", "no object 'Service/shop/nope'"),
]


async def test_a_bad_object_is_a_tool_error(shared: Served) -> None:
    for query, status, code, says in BAD_OBJECTS:
        got, error = await get_json(f"{shared.url}/api/findings{query}")
        assert (got, error["code"], error["tool"]) == (status, code, "/api/findings"), query
        assert says in error["message"], (query, error)


async def test_a_verdict_says_denied_with_the_decision_path(shared: Served) -> None:
    status, answer = await ask(shared, {"source": "shop/frontend-6f7c-a",
                                        "destination": "data/postgres-0", "port": 5432,
                                        "protocol": "TCP"})
    assert status == 200, answer
    assert answer["allowed"] is False
    assert [(r["kind"], r["namespace"], r["name"]) for r in answer["blockingPolicies"]] == [
        ("NetworkPolicy", "data", "deny-all")]
    ingress = answer["decisions"][1]
    assert ingress["direction"] == "ingress"
    assert "data/deny-all" in ingress["path"]
    status, answer = await ask(shared, {"source": "shop/frontend-6f7c-a",
                                        "destination": "shop/cart-7d9f-a", "port": 80})
    assert (status, answer["allowed"]) == (200, True)


async def test_the_demos_mtls_fault_is_denied_with_what_decides_it(shared: Served) -> None:
    status, answer = await ask(shared, {"source": "pay/billing-0",
                                        "destination": "Service/pay/ledger", "port": 80})
    assert (status, answer["allowed"]) == (200, False), answer
    assert [(r["kind"], r["namespace"], r["name"]) for r in answer["blockingPolicies"]] == [
        ("PeerAuthentication", "pay", "default"), ("DestinationRule", "pay", "ledger")]
    assert "sends plaintext" in answer["decisions"][1]["path"]


BAD_QUESTIONS: list[tuple[Any, str, int, str, str]] = [
    (b"{", "application/json", 400, "INVALID_INPUT", "not JSON"),
    (b"source=a", "application/x-www-form-urlencoded", 400, "INVALID_INPUT", "as JSON"),
    ([1, 2], "application/json", 400, "INVALID_INPUT", "a JSON object"),
    ({"source": "shop/frontend-6f7c-a", "destination": "data/postgres-0", "port": "0"},
     "application/json", 400, "INVALID_INPUT", "port"),
    ({"source": "shop/frontend-6f7c-a", "port": 80}, "application/json", 400,
     "INVALID_INPUT", "destination: required"),
    ({"source": "shop/frontend-6f7c-a", "destination": "data/postgres-0", "port": 80,
      "colour": "red"}, "application/json", 400, "INVALID_INPUT", "unknown argument"),
    ({"source": "shop/nope", "destination": "data/postgres-0", "port": 80},
     "application/json", 404, "NOT_FOUND", "nope"),
]


async def test_a_bad_question_is_a_tool_error(shared: Served) -> None:
    for question, content_type, status, code, says in BAD_QUESTIONS:
        got, error = await ask(shared, question, content_type)
        assert (got, error["code"]) == (status, code), (question, error)
        assert says in error["message"], (question, error)
        assert error["tool"] in ("/api/verdict", "find_blocking_policies")


async def test_get_is_not_a_verdict(shared: Served) -> None:
    status, _, _ = await fetch(f"{shared.url}{dashboard.VERDICT}")
    assert status == 405


async def test_a_caller_sees_findings_only_in_its_namespaces(
        sim: SimServer, tmp_path: Path) -> None:
    grant_demo_callers(sim)
    async with serving_with_auth(sim, tmp_path) as served:
        status, _, _ = await fetch(f"{served.url}/dashboard")
        assert status == 401  # like every path but the probes
        shop = await get_json(f"{served.url}/api/findings?object=Service/shop/cart",
                              bearer(ALICE))
        assert shop[0] == 200
        status, error = await get_json(
            f"{served.url}/api/findings?object=Service/payments/cart", bearer(ALICE))
        assert (status, error["code"]) == (404, "NOT_FOUND")  # hidden: as if missing
        _, summary = await get_json(f"{served.url}{dashboard.SUMMARY}", bearer(ALICE))
        assert "payments" not in summary["namespaces"]
        assert "shop" in summary["namespaces"]
        _, overview = await get_json(f"{served.url}/api/findings/overview", bearer(ALICE))
        assert not any("/payments/" in key for key in overview["objects"])
        status, _, raw = await fetch(
            f"{served.url}{dashboard.VERDICT}", method="POST",
            headers={**bearer(ALICE), "Content-Type": "application/json"},
            data=json.dumps({"source": "shop/frontend-6f7c-a",
                             "destination": "Service/payments/cart", "port": 80}).encode())
        assert status == 404, raw
