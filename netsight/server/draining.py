"""Shutdown as callers see it: a clean 503 for what arrives after SIGTERM, a drain for what
arrived before.

uvicorn stops accepting connections at shutdown, but a kept-alive connection goes on
delivering requests until it is closed, which happens only after the drain: those requests
reached an app whose MCP session manager had stopped (a 500 with the SDK's "Task group is
not initialized" as plain text). Here every request admitted after shutdown began gets a
ToolError body with 503, ``Retry-After`` and ``Connection: close``, so the client retries on
a new connection (another replica, behind a Service); the MCP exchanges admitted before are
counted until their response is sent, so shutdown can wait for them.
"""

from __future__ import annotations

import asyncio
import time

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from netsight.analyzers.core.contracts import ErrorCode
from netsight.server.http_errors import HttpFailure, failure_response

MCP_PATH = "/mcp"
ARRIVED = "netsight.arrived"  # in a request's scope: time.monotonic() when it was admitted


def arrival(request: Request | None) -> float | None:
    """When ``request`` was admitted, if it came through :class:`Admission`."""
    arrived = request.scope.get(ARRIVED) if request is not None else None
    return arrived if isinstance(arrived, float) else None


class ShuttingDown(HttpFailure):
    def __init__(self) -> None:
        super().__init__(ErrorCode.INTERNAL_ERROR, "netsight is shutting down; retry on a new "
                         "connection", status=503,
                         headers={"Retry-After": "1", "Connection": "close"})


async def refuse(scope: Scope, receive: Receive, send: Send) -> None:
    await failure_response(ShuttingDown(), scope["path"])(scope, receive, send)


class Admission:
    """In front of the whole app: admits requests until :meth:`close`, and counts the MCP
    exchanges (POST, DELETE) admitted until their response is fully sent — a call that has
    returned may still have its answer queued on an SSE stream. Counted here, before the
    auth middleware awaits a TokenReview, so none slips past a drain that saw no exchange."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.closing = False
        self.open = 0
        self.idle = asyncio.Event()
        self.idle.set()

    def close(self) -> None:
        """From now on every request gets a 503 (safe from a signal handler: a flag)."""
        self.closing = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.closing:
            await refuse(scope, receive, send)
            return
        scope[ARRIVED] = time.monotonic()
        # GET /mcp is a notification stream, open until the sessions end: not drained.
        if scope["path"] != MCP_PATH or scope["method"] == "GET":
            await self.app(scope, receive, send)
            return
        self.open += 1
        self.idle.clear()
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
            if self.open == 0:
                self.idle.set()


class WhileSessionsRun:
    """The MCP endpoint while the session manager runs, a 503 otherwise: a request admitted
    just before shutdown may reach it after the drain ended the sessions."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.running = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.running:
            await refuse(scope, receive, send)
            return
        await self.app(scope, receive, send)
