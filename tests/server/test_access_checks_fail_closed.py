"""When the API server cannot answer a SubjectAccessReview (or TokenReview), no caller gets
an empty or partial answer: HTTP endpoints answer 503 and MCP calls a ToolError saying the
access check could not be made; decisions cached before the outage still serve; ``/readyz``
names the degraded state and ``/metrics`` counts the failures. The reviews fail through the
real path: the simulator's fault injection behind the real auth middleware."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from prometheus_client.parser import text_string_to_metric_families

from netsight.server import changes
from netsight.server.auth import ACCESS_TTL
from netsight.sim.apiserver import SimServer
from tests.server.authenticated import (
    ADMIN,
    ALICE,
    bearer,
    grant_demo_callers,
    mcp_client,
    serving_with_auth,
)
from tests.server.conftest import Served, error_json, structured
from tests.server.test_changes_stream import next_event

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
VERDICT = {"source": "shop/frontend-6f7c-a", "destination": "shop/cart-7d9f-a", "port": 80}
NEEDS_A_DECISION = [  # every endpoint that answers from the caller's view, and /metrics
    ("GET", "/api/graph", None),
    ("GET", "/api/graph/changes", None),
    ("GET", "/api/graph/summary", None),
    ("GET", "/api/findings?object=Service/shop/cart", None),
    ("GET", "/api/findings/overview", None),
    ("POST", "/api/verdict", VERDICT),
    ("GET", "/metrics", None),
]


async def request(served: Served, method: str, path: str, token: str | None = None,
                  body: Any = None) -> tuple[int, dict[str, str], bytes]:
    headers = {**JSON, **bearer(token)} if token else dict(JSON)
    async with aiohttp.ClientSession() as http, http.request(
            method, served.url + path, headers=headers,
            data=None if body is None else json.dumps(body)) as response:
        return (response.status, {k.lower(): v for k, v in response.headers.items()},
                await response.read())


def review_failures(metrics: bytes) -> dict[str, float]:
    families = {f.name: f for f in text_string_to_metric_families(metrics.decode())}
    return {s.labels["review"]: s.value for s in families["netsight_access_checks_failures"]
            .samples if s.name.endswith("_total")}


@pytest.fixture
async def served(sim: SimServer, tmp_path: Path) -> Any:
    grant_demo_callers(sim)
    async with serving_with_auth(sim, tmp_path) as running:
        yield running


OPS = "ops-token-0123456789"  # an SRE like admin, who read /readyz before the outage


async def test_no_answer_is_built_from_an_access_decision_not_made(served: Served) -> None:
    served.sim.access.add_token(OPS, "ops", groups=["sre"])
    status, _, raw = await request(served, "GET", "/api/graph?kind=Service", ALICE)
    assert status == 200  # alice's decisions are made, and cached
    alice_services = {n["id"] for n in json.loads(raw)["nodes"]}
    assert alice_services
    assert "events" in json.loads((await request(served, "GET", "/readyz", OPS))[2])["kinds"][
        "Pod"]  # ops sees the whole cluster: decided, and cached

    served.sim.state.faults.fail(500, count=10_000, path_contains="subjectaccessreviews")
    for method, path, body in NEEDS_A_DECISION:
        status, headers, raw = await request(served, method, path, ADMIN, body)
        assert status == 503, (path, raw)
        assert headers["retry-after"]
        error = json.loads(raw)
        assert error["code"] == "INTERNAL_ERROR", path
        assert "access check could not be made" in error["message"], path
    async with mcp_client(served.mcp_url, ADMIN) as client:
        error = error_json(await client.call_tool("list_services", {}))
    assert error["code"] == "INTERNAL_ERROR"
    assert "access check could not be made" in error["message"]

    # Decisions made before the outage are still valid: alice is answered, in full.
    status, _, raw = await request(served, "GET", "/api/graph?kind=Service", ALICE)
    assert status == 200
    assert {n["id"] for n in json.loads(raw)["nodes"]} == alice_services
    async with mcp_client(served.mcp_url, ALICE) as client:
        assert structured(await client.call_tool("list_services", {}))["services"]

    status, _, raw = await request(served, "GET", "/readyz")  # the kubelet's view
    ready = json.loads(raw)
    assert status == 200, ready  # degraded, not unready: see app.readiness
    assert ready["degraded"] == ["accessChecks"]
    assert ready["accessChecks"] == {"state": "failing", "reviews": ["SubjectAccessReview"]}
    status, _, raw = await request(served, "GET", "/readyz", OPS)  # with the detail
    errors = json.loads(raw)["accessChecks"]["errors"]
    assert list(errors) == ["SubjectAccessReview"]
    assert "HTTP 500" in errors["SubjectAccessReview"]

    served.sim.state.faults.failures.clear()
    status, _, raw = await request(served, "GET", "/metrics", ADMIN)
    assert status == 200
    assert review_failures(raw)["SubjectAccessReview"] >= len(NEEDS_A_DECISION)
    ready = json.loads((await request(served, "GET", "/readyz"))[2])
    assert "degraded" not in ready
    assert ready["accessChecks"] == {"state": "ok"}
    status, _, raw = await request(served, "GET", "/api/graph", ADMIN)
    assert status == 200
    assert len(json.loads(raw)["nodes"]) == served.graph.store.view().node_count


async def test_a_failed_token_review_is_counted_and_shown(served: Served) -> None:
    served.sim.state.faults.fail(500, count=1, path_contains="tokenreviews")
    assert (await request(served, "GET", "/api/graph", ADMIN))[0] == 503
    status, _, raw = await request(served, "GET", "/readyz")
    ready = json.loads(raw)
    assert status == 200
    assert ready["degraded"] == ["accessChecks"]
    assert ready["accessChecks"] == {"state": "failing", "reviews": ["TokenReview"]}
    assert review_failures((await request(served, "GET", "/metrics", ADMIN))[2]) == {
        "TokenReview": 1.0}
    assert "degraded" not in json.loads((await request(served, "GET", "/readyz"))[2])


async def test_an_open_change_stream_ends_with_an_error_when_access_cannot_be_checked(
        served: Served) -> None:
    guard = served.service.guard
    assert guard is not None
    async with aiohttp.ClientSession() as http, http.get(
            f"{served.url}{changes.ENDPOINT}", headers=bearer(ADMIN)) as stream:
        assert stream.status == 200
        served.sim.state.faults.fail(500, count=10_000, path_contains="subjectaccessreviews")
        later = time.monotonic() + ACCESS_TTL + 1
        guard.decisions.clock = lambda: later  # every decision kept has expired
        served.sim.state.apply([{"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "new-pod", "namespace": "shop"}}])  # wakes the stream
        event = await next_event(stream)
        with anyio.fail_after(5):
            rest = await stream.content.read()  # the stream ends after it
    assert event["event"] == "error", event  # not the change, which may not be shown
    assert event["data"]["code"] == "INTERNAL_ERROR"
    assert "access check could not be made" in event["data"]["message"]
    assert b"event: change" not in rest
