"""One module per MCP tool: typed arguments -> analyze -> typed result, declared as ``TOOL``.

:data:`TOOLS` is the catalog: the CLI (``netsight call``) and the MCP server expose exactly
these, in this order, and call them through ``core.calling``. A new tool module is added here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.core.calling import AnyTool, answer, find
from netsight.analyzers.core.contracts import ToolResult
from netsight.analyzers.tools import (
    analyze_config,
    check_dns_resolution,
    check_gateway_status,
    check_mesh_config,
    check_provider_status,
    check_route_resolution,
    diagnose_service,
    diff_reachability,
    diff_routes,
    explain_finding,
    find_blocking_policies,
    gateway_get,
    gateway_list,
    istio_mtls_status,
    k8s_networkpolicies,
    list_ingresses,
    list_services,
    reachability_matrix,
    recent_changes,
    recent_events,
    record_fix_note,
    what_can_reach,
    who_can_reach,
)
from netsight.graph.store.live import GraphView

TOOLS: dict[str, AnyTool] = {
    tool.name: tool
    for tool in (diagnose_service.TOOL, list_services.TOOL, analyze_config.TOOL,
                 recent_changes.TOOL, check_route_resolution.TOOL, check_gateway_status.TOOL,
                 diff_routes.TOOL, find_blocking_policies.TOOL, reachability_matrix.TOOL,
                 k8s_networkpolicies.TOOL, list_ingresses.TOOL, who_can_reach.TOOL,
                 what_can_reach.TOOL, gateway_list.TOOL, gateway_get.TOOL,
                 check_mesh_config.TOOL, explain_finding.TOOL, check_dns_resolution.TOOL,
                 record_fix_note.TOOL, istio_mtls_status.TOOL, diff_reachability.TOOL,
                 check_provider_status.TOOL, recent_events.TOOL)
}


def call_tool(view: GraphView, name: str, raw_args: Mapping[str, Any]) -> ToolResult:
    """The catalog's tool ``name`` on ``view``, its arguments validated (the CLI, tests)."""
    return answer(find(TOOLS, name), view, raw_args)
