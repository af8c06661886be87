"""Telling connected MCP clients that the tool list changed, in both protocol generations.

Tools of a provider (Gateway API, Istio, ...) exist while its CRDs do; the informers report
provider changes and :meth:`ToolListNotifier.tools_may_have_changed` turns a change in the
visible tool set into notifications:

- 2026-07-28 clients open a ``subscriptions/listen`` stream; the SDK's
  :class:`~mcp.server.subscriptions.ListenHandler` serves it from a
  :class:`~mcp.server.subscriptions.SubscriptionBus`, and we publish ``ToolsListChanged``.
- Handshake-era clients (2025-11-25 and earlier) get the unsolicited
  ``notifications/tools/list_changed`` on their connection's standalone stream (the GET SSE
  stream over HTTP, the pipe over stdio). The SDK keeps no registry of connections, so a
  server middleware records each one when its handshake completes
  (``notifications/initialized``) and forgets it when the connection closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    SubscriptionBus,
    ToolsListChanged,
)

log = logging.getLogger(__name__)

# A bound on remembered handshake-era connections, in case one is never seen to close.
MAX_LEGACY_SESSIONS = 10_000


class ToolListNotifier:
    def __init__(self, visible_tools: Callable[[], frozenset[str]],
                 bus: SubscriptionBus | None = None) -> None:
        self.bus: SubscriptionBus = bus or InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)  # serves subscriptions/listen
        self._visible_tools = visible_tools
        self._last = visible_tools()
        self._sessions: dict[int, ServerSession] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def legacy_sessions(self) -> int:
        return len(self._sessions)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
                       ) -> HandlerResult:
        """Server middleware: remember handshake-era connections once initialized."""
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            self._remember(ctx.session)
        return result

    def _remember(self, session: ServerSession) -> None:
        # ServerSession is a per-message proxy; the Connection behind it is what lives as
        # long as the client. 2.3 exposes no public accessor from a request context (the SDK
        # marks its Context rework TODO(L54)), so reach it defensively: without it, entries
        # are only bounded by MAX_LEGACY_SESSIONS and notifying a closed one is a no-op.
        connection = getattr(session, "_connection", None)
        key = id(connection if connection is not None else session)
        if len(self._sessions) >= MAX_LEGACY_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        self._sessions[key] = session
        exit_stack = getattr(connection, "exit_stack", None)
        if exit_stack is not None:
            exit_stack.callback(self._sessions.pop, key, None)

    def tools_may_have_changed(self, *_: object) -> None:
        """Synchronous hook (the informers call it): notify if the visible tools changed."""
        visible = self._visible_tools()
        if visible == self._last:
            return
        log.info("tools changed: +%s -%s", sorted(visible - self._last),
                 sorted(self._last - visible))
        self._last = visible
        task = asyncio.get_running_loop().create_task(self.notify(), name="notify:tools")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        """End every listen stream gracefully (the client sees a deliberate close)."""
        self.listen.close()

    async def notify(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for session in list(self._sessions.values()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # best effort: one broken client must not stop the others
                log.debug("tools/list_changed not delivered", exc_info=True)
