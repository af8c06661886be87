"""Every tool of the catalog as an MCP tool, on the SDK's low-level ``Server``.

Why the low-level server rather than ``MCPServer`` (mcp 2.x's ergonomic layer): the tools
already are typed — a pydantic args model and a pydantic result per catalog entry — so the
schemas come from the catalog, not from function signatures; ``MCPServer`` would render
argument errors as its own text where agents must get netsight's ``ToolError`` JSON; and it
runs synchronous tools on worker threads (``anyio.to_thread``), while the graph is mutated by
the informers on the event loop. Here a call runs on the loop, between two informer events,
so the view is consistent for the whole call.

A call answers with ``structuredContent`` (the same JSON ``netsight call`` prints), a compact
text rendering for clients that only read text, and ``isError`` with the ToolError JSON as
text when it fails — never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import orjson
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel
from starlette.requests import Request

from netsight.analyzers.core import deadline, knowledge
from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.calling import AnyTool, call, find, parse_args, prepare, to_json
from netsight.analyzers.core.contracts import DETAIL, ErrorCode, ToolFailure, ToolResult
from netsight.analyzers.core.rendering import render_text
from netsight.graph.store.live import GraphStore, GraphView
from netsight.server.auth import view_for
from netsight.server.draining import arrival
from netsight.server.notifying import ToolListNotifier
from netsight.server.probe_tools import CALL_REQUEST, CallerGone, while_connected
from netsight.server.telemetry import Telemetry

log = logging.getLogger(__name__)

SERVER_NAME = "netsight"
INSTRUCTIONS = (
    "netsight answers Kubernetes networking questions from a live graph of the cluster, in "
    "milliseconds. Start with analyze_config for a namespace, diagnose_service for one "
    "Service, recent_changes for what just changed. Pass detail=true for field-level evidence."
)


@dataclass
class ToolHost:
    """What tool calls need; handed to handlers as the MCP server's lifespan context."""

    store: GraphStore
    tools: Mapping[str, AnyTool]
    timeout: float
    providers: Callable[[], set[str]] = set
    in_flight: int = 0  # tool calls running now
    # Callers are authenticated (auth middleware installed): a call without a grant is
    # refused instead of answered from the whole graph.
    scoped: bool = False
    # Tools that run probes, allowed longer than ``timeout`` (they wait for a pod) and given
    # up when their caller goes away: seconds by name.
    timeouts: Mapping[str, float] = field(default_factory=dict)
    telemetry: Telemetry = field(default_factory=Telemetry.disabled)
    # The knowledge base explain_finding reads (netsight/knowledge); None: off.
    knowledge: knowledge.KnowledgeReader | None = None

    def visible(self) -> frozenset[str]:
        return frozenset(name for name, tool in self.tools.items() if self.available(tool))

    def tool(self, name: str) -> AnyTool:
        return find(self.tools, name, self.available)

    def available(self, tool: AnyTool) -> bool:
        # A provider's tools exist while its CRDs do.
        return tool.provider is None or tool.provider in self.providers()


class NetsightServer(Server[ToolHost]):
    """The low-level server, advertising ``tools.listChanged`` to handshake-era clients.

    The Streamable HTTP session manager builds the initialize answer from
    ``create_initialization_options()`` without arguments, so the default is set here.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities, extensions)


def build_mcp_server(host: ToolHost, notifier: ToolListNotifier) -> NetsightServer:
    @contextlib.asynccontextmanager
    async def lifespan(_: Server[ToolHost]) -> AsyncIterator[ToolHost]:
        yield host  # the graph outlives MCP sessions: started and stopped by the caller

    server = NetsightServer(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_subscriptions_listen=notifier.listen,
        get_tool_input_schema=lambda name: _input_schema(host, name),
    )
    # The SDK's default middleware is its own span per message, sent to OpenTelemetry's
    # global provider, which netsight never sets (telemetry.py), and without netsight's
    # attributes (the ToolError's code, findings, _OTHER for unknown names) or durations.
    # netsight's own takes its place, the opt-out the SDK documents for it.
    server.middleware[:] = [host.telemetry.middleware, notifier]
    for tool in host.tools.values():
        mcp_tool(tool)  # the schemas, generated now rather than in the first session's list
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("netsight")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def _input_schema(host: ToolHost, name: str) -> dict[str, Any] | None:
    # The SDK asks for it on every 2026-07-28 tools/call (Mcp-Param header checks): the
    # cached one, since generating it from the model is a large part of a call's server time.
    tool = host.tools.get(name)
    return mcp_tool(tool).input_schema if tool is not None else None


@functools.cache
def mcp_tool(tool: AnyTool) -> Tool:
    return Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        output_schema=tool.output_schema(),
        # A probe creates a pod and deletes it again: it writes, yet destroys nothing.
        annotations=ToolAnnotations(read_only_hint=tool.read_only,
                                    destructive_hint=None if tool.read_only else False,
                                    open_world_hint=tool.open_world),
    )


async def _list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
    host: ToolHost = ctx.lifespan_context
    return ListToolsResult(tools=[mcp_tool(t) for t in host.tools.values() if host.available(t)])


async def _call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
    host: ToolHost = ctx.lifespan_context
    return await run_tool(host, params.name, params.arguments or {}, request=ctx.request)


async def run_tool(host: ToolHost, name: str, arguments: Mapping[str, Any], *,
                   request: Request | None = None) -> CallToolResult:
    """One call: validate, run on the loop under TOOL_TIMEOUT, render; failures as ToolError.
    The graph is the part ``request``'s caller may see (``auth.view_for``)."""
    host.in_flight += 1
    # TOOL_TIMEOUT counts from the request's admission: the SDK reading a body of megabytes
    # before this call held the loop for the call too.
    started = arrival(request) or time.monotonic()
    limit = host.timeouts.get(name, host.timeout)
    calling = CALL_REQUEST.set(request)  # whose rights a probe is checked against
    try:
        tool = host.tool(name)
        args = parse_args(tool, arguments)
        detail = arguments.get("detail") is True
        async with asyncio.timeout(limit - (time.monotonic() - started)):
            view = await view_for(request, host.store, required=host.scoped)
            await prepared(tool, args)
            # The analyzer runs on the loop and cannot be cancelled: it checks this deadline
            # in its long loops (analyzers/core/deadline.py) and stops, so the loop is held for
            # TOOL_TIMEOUT at most rather than for as long as the question takes.
            remaining = limit - (time.monotonic() - started)
            with deadline.within(remaining), knowledge.using(host.knowledge):
                running = answered(tool, view, args)
                # A probe is given up when its caller goes away (its pod then deleted).
                result = await (while_connected(request, running)
                                if name in host.timeouts else running)
        elapsed = time.monotonic() - started
        if elapsed > limit:
            # Past the deadline between two checks: the answer is complete, so it is
            # returned rather than wasted, and the overrun is logged for whoever tunes it.
            log.warning("tool %s took %.2fs, over TOOL_TIMEOUT (%.2fs)", name, elapsed,
                        host.timeout)
        # A large answer takes long to serialise, and TOOL_TIMEOUT no longer bounds it: off
        # the loop, which keeps serving meanwhile.
        data, text = await asyncio.get_running_loop().run_in_executor(
            _SERIALISING, serialised, result, detail)
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=data)
    except ToolFailure as failure:
        return tool_error(failure, name)
    except deadline.DeadlineExceeded as exceeded:
        log.warning("tool %s stopped at TOOL_TIMEOUT (%gs)", name, host.timeout)
        return tool_error(timed_out(host, name, exceeded.finished, detail=detail), name)
    except TimeoutError:
        return tool_error(timed_out(host, name), name)
    except CallerGone:
        log.info("tool %s: the caller went away; the call was cancelled", name)
        return tool_error(ToolFailure(ErrorCode.INTERNAL_ERROR, "the caller went away",
                                      tool=name), name)
    except Exception as exc:  # rendering the answer failed: a bug, never a traceback to agents
        log.exception("tool %s: answer could not be rendered", name)
        return tool_error(ToolFailure(ErrorCode.INTERNAL_ERROR,
                                      f"{name} failed while rendering its answer",
                                      tool=name, detail=type(exc).__name__), name)
    finally:
        CALL_REQUEST.reset(calling)
        host.in_flight -= 1
        log.debug("tool %s answered in %.1f ms", name, (time.monotonic() - started) * 1e3)


MAX_PARTIAL_ITEMS = 100  # of a timed-out call's finished items, in its error's detail


def timed_out(host: ToolHost, name: str, finished: Sequence[Any] = (), *,
              detail: bool = False) -> ToolFailure:
    """The error contract's timeout: PROBE_TIMEOUT for a probe (it waits on pods),
    INTERNAL_ERROR for an analyzer; ``detail`` holds JSON ``{"finished": [...]}``, the first
    items the call completed, where it has any."""
    probe = name in host.timeouts
    code = ErrorCode.PROBE_TIMEOUT if probe else ErrorCode.INTERNAL_ERROR
    message = (f"{name} did not answer within TOOL_TIMEOUT ({host.timeout:g}s); narrow the "
               "question (a namespace, one object, a smaller limit) or raise TOOL_TIMEOUT")
    if probe:
        message = (f"{name}: the probe did not answer within "
                   f"{host.timeouts.get(name, host.timeout):g}s; its pod was deleted. The "
                   "cluster may be slow to start pods; raise PROBE_TIMEOUT")
    extra = None
    if finished:
        items = [item.model_dump(mode="json", context={DETAIL: detail})
                 if isinstance(item, BaseModel) else item for item in finished[:MAX_PARTIAL_ITEMS]]
        message += (f"; detail lists the first {len(items)} of {len(finished)} items it "
                    "finished, unsorted and unpaged")
        extra = orjson.dumps({"finished": items}, default=str).decode()
    return ToolFailure(code, message, tool=name, detail=extra)


# Reads what a call's arguments hold (a proposal's YAML) while the loop goes on serving.
# One thread: the loop shares the interpreter with one reader at most, and a call that timed
# out before its turn is never read.
_PREPARING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="netsight-prepare")


# Serialises answers (structured and text) while the loop goes on serving; one thread, as above.
_SERIALISING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="netsight-serialise")


def serialised(result: ToolResult, detail: bool) -> tuple[dict[str, Any], str]:
    data = to_json(result, detail=detail)
    return data, render_text(data)


async def prepared(tool: AnyTool, args: ToolArgs) -> None:
    """``Tool.prepare`` off the event loop, where the tool has one."""
    if tool.prepare is not None and (tool.prepares is None or tool.prepares(args)):
        await asyncio.get_running_loop().run_in_executor(_PREPARING, prepare, tool, args)


async def answered(tool: AnyTool, view: GraphView, args: ToolArgs) -> ToolResult:
    """The catalog's call path (``calling.call``) on the loop; a tool that waits (a probe)
    is awaited."""
    result = call(tool, view, args)
    return await result if inspect.isawaitable(result) else result


def tool_error(failure: ToolFailure, name: str) -> CallToolResult:
    error = failure.to_error(failure.tool or name).model_dump(mode="json")
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(error).decode())],
                          is_error=True)
