"""The one way a tool is called, by the CLI (``netsight call``) and the MCP server alike:
find it by name, validate its arguments, run it, and turn every failure into a
:class:`ToolFailure`. The catalog itself, the list of tools, is ``analyzers.tools.TOOLS``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from typing import Any, NoReturn

from pydantic import ValidationError

from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.base import did_you_mean, require_watched
from netsight.analyzers.core.contracts import DETAIL, ErrorCode, ToolFailure, ToolResult
from netsight.analyzers.core.deadline import DeadlineExceeded
from netsight.analyzers.core.declarations import Tool
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.quoting import as_sent, quoted, shortened
from netsight.graph.store.live import GraphView

log = logging.getLogger(__name__)

AnyTool = Tool[Any, Any]
# What a tool that waits (a probe) returns from call: its answer once awaited.
Pending = Coroutine[Any, Any, ToolResult]


def find(tools: Mapping[str, AnyTool], name: str,
         offered: Callable[[AnyTool], bool] | None = None) -> AnyTool:
    """The tool called ``name``; ``offered`` says which tools the caller may use now (a live
    server offers a provider's tools only while its CRDs are served)."""
    tool = tools.get(name)
    if tool is None:
        names = sorted(n for n, t in tools.items() if offered is None or offered(t))
        raise ToolFailure(
            ErrorCode.INVALID_INPUT,
            f"unknown tool {quoted(name)}{did_you_mean(name, names)}; tools: {', '.join(names)}",
            tool=shortened(name),
        )
    if offered is not None and not offered(tool):
        raise ToolFailure(ErrorCode.CRD_NOT_AVAILABLE,
                          f"{name} needs the {tool.provider} CRDs, which this cluster does "
                          "not serve now", tool=name)
    return tool


def parse_args(tool: AnyTool, raw: Mapping[str, Any]) -> ToolArgs:
    try:
        args: ToolArgs = tool.args.model_validate(dict(raw))
    except ValidationError as exc:
        raise ToolFailure(
            ErrorCode.INVALID_INPUT, describe_validation_error(tool, exc), tool=tool.name
        ) from None
    except RecursionError:
        # A validator quoting a value nested thousands deep (an enum's repr of it).
        raise ToolFailure(ErrorCode.INVALID_INPUT, "arguments: a value is nested too deeply; "
                          "no argument takes nested lists or maps", tool=tool.name) from None
    return args


def describe_validation_error(tool: AnyTool, exc: ValidationError) -> str:
    """One sentence per bad argument, naming it and saying what would be valid."""
    allowed = sorted(
        {field.alias or name for name, field in tool.args.model_fields.items()}
    )
    messages: list[str] = []
    for error in exc.errors(include_url=False):
        # A location holds the caller's words too: an unknown argument, a header name.
        where = shortened(".".join(str(part) for part in error["loc"]
                                   if not _SCHEMA_STEP.fullmatch(str(part)))) or "arguments"
        if error["type"] == "extra_forbidden":
            messages.append(f"{where}: unknown argument; {tool.name} takes {', '.join(allowed)}")
        elif error["type"] == "missing":
            messages.append(f"{where}: required")
        else:
            text = error["msg"].removeprefix("Value error, ")
            got = error.get("input")
            shown = "" if isinstance(got, dict | list) or error["type"] == "value_error" \
                else f" (got {as_sent(got)})"
            messages.append(f"{where}: {text}{shown}")
    return "; ".join(dict.fromkeys(messages))


# Steps pydantic adds to a location inside a union or a validator ("constrained-int",
# "function-after[...]"): its own words, which name nothing the caller sent.
_SCHEMA_STEP = re.compile(r"(function-(after|before|plain|wrap)|constrained-\w+|"
                          r"lax-or-strict|json-or-python|nullable|union|tagged-union)(\[.*\])?"
                          r"|(int|str|float|bool|list|dict|literal)\[.*\]|int|str|float|bool",
                          re.DOTALL)



def prepare(tool: AnyTool, args: ToolArgs) -> None:
    """The tool's work on ``args`` alone (``Tool.prepare``), where it has any; safe to run
    on another thread, failing as :func:`call` does."""
    if tool.prepare is None:
        return
    try:
        tool.prepare(args)
    except Exception as exc:
        _failed(tool, exc)


def call(tool: AnyTool, view: GraphView, args: ToolArgs) -> ToolResult | Pending:
    """Run ``tool`` on ``view``: its answer, or for a tool that waits a coroutine to await.
    A ToolFailure names the tool; the caller's deadline (``deadline.within``) passes through;
    any other exception is an analyzer bug, answered as INTERNAL_ERROR."""
    try:
        if view.watched_namespaces is not None:
            for argument, namespace in named_namespaces(args):
                require_watched(view, namespace, argument=argument, tool=tool.name)
        result = tool.run(view, args)
    except Exception as exc:
        _failed(tool, exc)
    if inspect.isawaitable(result):
        return _settled(tool, result)
    done: ToolResult = result
    return done


async def _settled(tool: AnyTool, pending: Awaitable[ToolResult]) -> ToolResult:
    try:
        return await pending
    except Exception as exc:
        _failed(tool, exc)


def _failed(tool: AnyTool, exc: Exception) -> NoReturn:
    if isinstance(exc, ToolFailure):
        exc.tool = exc.tool or tool.name
        raise exc
    if isinstance(exc, DeadlineExceeded):
        raise exc
    # An analyzer bug must not take the server down.
    raise analyzer_failure(tool, exc) from exc


def named_namespaces(args: ToolArgs) -> Iterator[tuple[str, str]]:
    """(argument, namespace) for every namespace the arguments name: in an object's name
    (``shop/cart``, ``cart.shop.svc``) or as a namespace argument."""
    for name, field in type(args).model_fields.items():
        value = getattr(args, name)
        argument = field.alias or name
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, ObjectName):
                if item.namespace is not None:
                    yield argument, item.namespace
            elif isinstance(item, str) and name.endswith(("namespace", "namespaces")):
                yield argument, item


def answer(tool: AnyTool, view: GraphView, raw_args: Mapping[str, Any]) -> ToolResult:
    """:func:`call` for callers without an event loop (the CLI, tests): a tool that waits
    runs on a loop of its own."""
    result = call(tool, view, parse_args(tool, raw_args))
    return asyncio.run(result) if inspect.isawaitable(result) else result


def analyzer_failure(tool: AnyTool, exc: Exception) -> ToolFailure:
    """What callers get for an analyzer's bug: INTERNAL_ERROR, the exception logged."""
    log.exception("tool %s failed", tool.name, exc_info=exc)
    return ToolFailure(
        ErrorCode.INTERNAL_ERROR,
        f"{tool.name} failed on an unexpected condition ({type(exc).__name__}); the "
        "graph is unchanged, other tools keep working",
        tool=tool.name,
        # Not the exception's text: it may name objects of namespaces the caller cannot
        # see. The log has it.
        detail=type(exc).__name__,
    )


def to_json(result: ToolResult, *, detail: bool) -> dict[str, Any]:
    """The structured result exactly as agents receive it (compact unless ``detail``)."""
    data: dict[str, Any] = result.model_dump(mode="json", context={DETAIL: detail})
    return data
