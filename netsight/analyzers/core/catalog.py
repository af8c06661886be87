"""The tools: name, description, typed arguments, result type and the analyzer behind each.

The CLI (``netsight call``) and the MCP server expose exactly these, so both answer with the
same structured result. :func:`call_tool` is the single entry point: it validates
arguments, runs the analyzer, and turns every failure into a :class:`ToolFailure`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.base import did_you_mean
from netsight.analyzers.core.contracts import DETAIL, ErrorCode, ToolFailure, ToolResult
from netsight.analyzers.core.deadline import DeadlineExceeded
from netsight.analyzers.tools import (
    analyze_config,
    check_gateway_status,
    check_mesh_config,
    check_route_resolution,
    diagnose_service,
    diff_routes,
    find_blocking_policies,
    gateway_get,
    gateway_list,
    k8s_networkpolicies,
    list_ingresses,
    list_services,
    reachability_matrix,
    recent_changes,
    what_can_reach,
    who_can_reach,
)
from netsight.graph.store.live import GraphView

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args: type[ToolArgs]
    result: type[ToolResult]
    run: Callable[[GraphView, Any], ToolResult]
    read_only: bool = True
    # The provider whose CRDs the tool needs (a name from graph.watching.PROVIDER_GROUPS);
    # a live server offers the tool only while the cluster serves them. None: always.
    provider: str | None = None

    def input_schema(self) -> dict[str, Any]:
        return self.args.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        return self.result.model_json_schema(mode="serialization")


def _spec(module: Any) -> ToolSpec:
    return ToolSpec(
        name=module.NAME,
        description=module.METADATA.description,
        args=module.Args,
        result=module.Result,
        run=module.analyze,
        provider=getattr(module, "PROVIDER", None),
    )


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in map(_spec, (diagnose_service, list_services, analyze_config, recent_changes,
                            check_route_resolution, check_gateway_status, diff_routes,
                            find_blocking_policies, reachability_matrix,
                            k8s_networkpolicies, list_ingresses, who_can_reach,
                            what_can_reach, gateway_list, gateway_get,
                            check_mesh_config))
}


def get_tool(name: str) -> ToolSpec:
    spec = TOOLS.get(name)
    if spec is None:
        raise ToolFailure(
            ErrorCode.INVALID_INPUT,
            f"unknown tool {name!r}{did_you_mean(name, list(TOOLS))}; "
            f"tools: {', '.join(TOOLS)}",
            tool=name,
        )
    return spec


def parse_args(spec: ToolSpec, raw: Mapping[str, Any]) -> ToolArgs:
    try:
        return spec.args.model_validate(dict(raw))
    except ValidationError as exc:
        raise ToolFailure(
            ErrorCode.INVALID_INPUT, describe_validation_error(spec, exc), tool=spec.name
        ) from None


def describe_validation_error(spec: ToolSpec, exc: ValidationError) -> str:
    """One sentence per bad argument, naming it and saying what would be valid."""
    allowed = sorted(
        {field.alias or name for name, field in spec.args.model_fields.items()}
    )
    messages = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            messages.append(f"{where}: unknown argument; {spec.name} takes {', '.join(allowed)}")
        elif error["type"] == "missing":
            messages.append(f"{where}: required")
        else:
            text = error["msg"].removeprefix("Value error, ")
            got = error.get("input")
            shown = "" if isinstance(got, dict | list) or error["type"] == "value_error" \
                else f" (got {got!r})"
            messages.append(f"{where}: {text}{shown}")
    return "; ".join(messages)


def call_tool(view: GraphView, name: str, raw_args: Mapping[str, Any]) -> ToolResult:
    spec = get_tool(name)
    args = parse_args(spec, raw_args)
    try:
        return spec.run(view, args)
    except ToolFailure as failure:
        failure.tool = failure.tool or spec.name
        raise
    except DeadlineExceeded:  # the caller's deadline (deadline.within), not a bug
        raise
    except Exception as exc:  # an analyzer bug must not take the server down
        raise analyzer_failure(spec, exc) from exc


def analyzer_failure(spec: ToolSpec, exc: Exception) -> ToolFailure:
    """What callers get for an analyzer's bug: INTERNAL_ERROR, the exception logged."""
    log.exception("tool %s failed", spec.name, exc_info=exc)
    return ToolFailure(
        ErrorCode.INTERNAL_ERROR,
        f"{spec.name} failed on an unexpected condition ({type(exc).__name__}); the "
        "graph is unchanged, other tools keep working",
        tool=spec.name,
        # Not the exception's text: it may name objects of namespaces the caller cannot
        # see. The log has it.
        detail=type(exc).__name__,
    )


def to_json(result: ToolResult, *, detail: bool) -> dict[str, Any]:
    """The structured result exactly as agents receive it (compact unless ``detail``)."""
    data: dict[str, Any] = result.model_dump(mode="json", context={DETAIL: detail})
    return data
