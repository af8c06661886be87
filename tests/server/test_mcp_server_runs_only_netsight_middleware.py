"""The MCP server runs netsight's middleware only: its telemetry (a span and a duration per
message, by the MCP semantic conventions) takes the place of the SDK's OpenTelemetry span per
message, through the public ``Server.middleware`` list rather than the SDK's private class."""

from __future__ import annotations

from mcp.server import Server

from netsight.analyzers.tools import TOOLS
from netsight.graph.store.live import GraphStore, Source
from netsight.server.mcp_tools import ToolHost, build_mcp_server
from netsight.server.notifying import ToolListNotifier


def test_the_sdk_adds_only_its_opentelemetry_span_by_default() -> None:
    # Replacing the default list drops exactly this; a new default would show up here.
    assert [type(m).__name__ for m in Server("bare").middleware] == ["OpenTelemetryMiddleware"]


def test_the_server_keeps_netsights_telemetry_then_the_tool_list_notifier() -> None:
    host = ToolHost(store=GraphStore(source=Source.MANIFESTS, cluster_name="t"), tools=TOOLS,
                    timeout=1.0)
    notifier = ToolListNotifier(host.visible)
    # Outermost first: the span covers the notifier's work on the same message.
    assert build_mcp_server(host, notifier).middleware == [host.telemetry.middleware, notifier]
