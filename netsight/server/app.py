"""The one Starlette app: health, readiness, the graph export and its change stream, and MCP.

``/mcp`` is the SDK's Streamable HTTP endpoint (both protocol generations: the handshake era
and 2026-07-28's single-exchange requests with ``subscriptions/listen``). Caller
authentication belongs in ``middleware`` (Starlette middleware around every route; an auth
middleware lets ``/healthz`` and ``/readyz`` through for the kubelet), so TokenReview can
slot in without touching the endpoints. A namespace filter for restricted callers belongs
where answers are built: the tool host and the graph selection.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from netsight.analyzers.core.calling import AnyTool
from netsight.analyzers.core.contracts import ErrorCode, ToolError
from netsight.analyzers.core.declarations import DEFAULT_TOOLSETS
from netsight.analyzers.tools import TOOLS
from netsight.knowledge.knowledge_base import KnowledgeBase
from netsight.server import changes, dashboard, graph_api
from netsight.server.auth import AccessCheckFailed, Guard, ReviewHealth, grant_of, guard_of
from netsight.server.changes import ChangeFeed
from netsight.server.cluster import LiveGraph
from netsight.server.config import LOOPBACK, Responses, Settings
from netsight.server.draining import Admission, WhileSessionsRun
from netsight.server.http_errors import HttpFailure, http_failure_handler
from netsight.server.mcp_tools import NetsightServer, ToolHost, build_mcp_server
from netsight.server.notifying import ToolListNotifier
from netsight.server.probe_tools import probe_tools
from netsight.server.rebinding import LoopbackOnly
from netsight.server.telemetry import METRICS_ENDPOINT, Telemetry, setup

PROBE_MARGIN = 5.0  # seconds a probe tool has beyond PROBE_TIMEOUT to report its timeout


class McpFirst:
    """Sends ``POST/GET/DELETE /mcp`` straight to the MCP endpoint, behind the same caller
    checks (``middleware``), and everything else to the Starlette app.

    Every tool call is a request to ``/mcp``; Starlette's error and exception middleware and
    its router added a few layers of Python per call for nothing the SDK does not already
    handle. The ``/mcp`` route stays in the app too, for what only the router does (a
    redirect from ``/mcp/``)."""

    def __init__(self, app: ASGIApp, mcp: ASGIApp, middleware: Sequence[Middleware]) -> None:
        self.app = app
        for cls, args, kwargs in reversed(middleware):
            mcp = cls(mcp, *args, **kwargs)
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            await self.mcp(scope, receive, send)
        else:
            await self.app(scope, receive, send)


@dataclass
class Service:
    """The serving parts around one live graph."""

    graph: LiveGraph
    host: ToolHost
    notifier: ToolListNotifier
    mcp: NetsightServer
    feed: ChangeFeed
    sessions: StreamableHTTPSessionManager
    endpoint: WhileSessionsRun  # the MCP endpoint, answering while the sessions run
    admission: Admission  # in front of everything: closes at shutdown, counts MCP exchanges
    guard: Guard | None = None  # callers' checks, where they are checked

    @property
    def app(self) -> ASGIApp:
        return self.admission

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """MCP sessions are served inside this context; open change streams end with it."""
        try:
            async with self.sessions.run():
                self.endpoint.running = True
                try:
                    yield
                finally:
                    self.endpoint.running = False
        finally:
            self.feed.close()


def build_service(graph: LiveGraph, settings: Settings, *,
                  tools: Mapping[str, AnyTool] = TOOLS,
                  middleware: Sequence[Middleware] = (),
                  telemetry: Telemetry | None = None,
                  knowledge: KnowledgeBase | None = None) -> Service:
    # Without one given: /metrics only, nothing exported (serve passes the environment's).
    telemetry = telemetry or setup(settings.cluster_name, export=False)
    probing = probe_tools(graph.probes) if graph.probes is not None else {}
    tools = {**tools, **probing}
    if settings.read_only:
        tools = {name: tool for name, tool in tools.items() if tool.read_only}
    offered = settings.toolsets if settings.toolsets is not None else DEFAULT_TOOLSETS
    tools = {name: tool for name, tool in tools.items() if tool.toolset in offered}
    # A probe waits for a pod to start and answer: its own deadline, and a little more for
    # the deletion the runner reports its timeout after.
    timeouts = {name: settings.probe_timeout + PROBE_MARGIN for name in tools
                if name in probing}
    host = ToolHost(store=graph.store, tools=tools, timeout=settings.tool_timeout,
                    providers=lambda: graph.providers, telemetry=telemetry,
                    scoped=bool(middleware), timeouts=timeouts, knowledge=knowledge)
    guard = guard_of(middleware)
    access = guard.health if guard is not None else None
    telemetry.attach(graph, tools=tools, in_flight=lambda: host.in_flight,
                     review_failures=None if access is None else lambda: access.failures,
                     knowledge=knowledge)
    notifier = ToolListNotifier(host.visible)
    graph.provider_listeners.append(notifier.tools_may_have_changed)
    mcp = build_mcp_server(host, notifier)
    # JSON responses: a call's answer is the POST's body, with no SSE stream (and its tasks
    # and memory channels) per answer; clients accept both (the transport requires it).
    # ``subscriptions/listen`` and the GET notification stream stay SSE in either mode.
    sessions = StreamableHTTPSessionManager(
        app=mcp, security_settings=_security(settings.host),
        json_response=settings.responses is Responses.JSON)
    feed = ChangeFeed(graph.store)
    endpoint = WhileSessionsRun(StreamableHTTPASGIApp(sessions))

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        try:
            detail = await sees_cluster(request)
        except AccessCheckFailed:
            detail = False  # the probe still answers; its detail waits for a decision
        return readiness(graph, detail=detail, access=access)

    async def metrics(request: Request) -> Response:
        if host.scoped and not await may_scrape(request):
            return JSONResponse(ToolError(
                code=ErrorCode.AUTH_FAILED, tool=METRICS_ENDPOINT,
                message="/metrics is about the whole cluster: it needs get on the "
                        "non-resource URL /metrics (as Prometheus' ClusterRole grants) or "
                        "list on pods in every namespace").model_dump(mode="json"),
                status_code=403)
        return await telemetry.metrics_endpoint(request)

    async def sees_cluster(request: Request) -> bool:
        if not host.scoped:
            return True  # callers are not checked here: everyone sees everything
        grant = grant_of(request)
        return grant is not None and await grant.guard.sees_cluster(grant.caller)

    async def may_scrape(request: Request) -> bool:
        grant = grant_of(request)
        if grant is None:
            return False
        return (await grant.guard.may_get_path(grant.caller, METRICS_ENDPOINT)
                or await grant.guard.sees_cluster(grant.caller))

    async def api_graph(request: Request) -> Response:
        return await graph_api.graph_endpoint(request, graph.store, graph.store.sync)

    async def api_changes(request: Request) -> Response:
        return await changes.changes_endpoint(request, feed)

    # On loopback, refuse requests addressed to other names first (rebinding.py).
    checks = [*([Middleware(LoopbackOnly)] if settings.host in LOOPBACK else []), *middleware]
    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route(graph_api.ENDPOINT, api_graph, methods=["GET"]),
            Route(changes.ENDPOINT, api_changes, methods=["GET"]),
            Route(METRICS_ENDPOINT, metrics, methods=["GET"]),
            Route("/mcp", endpoint),
            *dashboard.routes(host),  # /dashboard and the JSON endpoints it calls
        ],
        middleware=checks,
        # 413 and 503 raised past an endpoint (an access check that could not be made)
        exception_handlers={HttpFailure: http_failure_handler},
    )
    return Service(graph, host, notifier, mcp, feed, sessions, endpoint,
                   Admission(McpFirst(app, endpoint, checks)), guard)


def readiness(graph: LiveGraph, *, detail: bool = True, access: ReviewHealth | None = None
              ) -> Response:
    """Ready or not, and each kind's informer state; ``detail`` adds its event and relist
    counts and last error (whole-cluster figures: not for every caller).

    ``access``: where callers are checked, whether their access checks are failing now.
    That makes the server degraded, not unready: every replica asks the same API server, so
    failing readiness would take them all out of the Service at once, turning a 503 that
    says why (and the answers still-cached decisions allow) into refused connections."""
    kinds: dict[str, dict[str, Any]] = {}
    for kind, status in sorted(graph.store.sync.items()):
        entry: dict[str, Any] = {"state": status.state.value}
        if detail:
            entry["events"] = status.events
            if status.last_error:
                entry["lastError"] = status.last_error
            if status.relists:
                entry["relists"] = status.relists
        kinds[kind] = entry
    body: dict[str, Any] = {"ready": graph.ready, "discovered": graph.started, "kinds": kinds}
    if graph.start_error and detail:
        body["error"] = graph.start_error
    if access is not None:
        failing = access.failing()
        checks: dict[str, Any] = {"state": "failing" if failing else "ok"}
        if failing:
            body["degraded"] = ["accessChecks"]
            checks["reviews"] = list(failing)
            if detail:
                checks["errors"] = failing
        body["accessChecks"] = checks
    return JSONResponse(body, status_code=200 if graph.ready else 503)


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on loopback, as the SDK applies it to its own apps: a web page
    must not reach a workstation's server through a hostname that resolves to 127.0.0.1."""
    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
