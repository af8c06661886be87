"""``netsight call TOOL --server URL``: the tool called on a running netsight over MCP
Streamable HTTP, with the official SDK's client; the answer is the server's, from its live
graph."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import httpx2
import orjson
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure

# The MCP client's own figures: a call may wait for a slow tool, never forever.
_TIMEOUT = httpx2.Timeout(30, read=300)


def mcp_endpoint(url: str) -> str:
    """The server's MCP endpoint: ``URL`` itself, or ``URL/mcp`` when it names no path."""
    return url.rstrip("/") + "/mcp" if urlsplit(url).path in ("", "/") else url


def answer_from_server(url: str, token: str | None, tool: str, arguments: dict[str, Any]
                       ) -> dict[str, Any]:
    return asyncio.run(_call(mcp_endpoint(url), token, tool, arguments))


async def _call(url: str, token: str | None, tool: str, arguments: dict[str, Any]
                ) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    refused: list[int] = []  # the SDK's error for an HTTP answer does not say its status

    async def note_refusal(response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            refused.append(response.status_code)

    try:
        async with httpx2.AsyncClient(headers=headers, timeout=_TIMEOUT,
                                      event_hooks={"response": [note_refusal]}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool(tool, arguments)
    except Exception as exc:
        raise _failed(url, tool, exc, refused[0] if refused else None) from None
    if result.is_error:
        text = "".join(getattr(part, "text", "") for part in result.content)
        try:
            error = orjson.loads(text)
        except orjson.JSONDecodeError:
            error = None
        if not isinstance(error, dict):
            raise ToolFailure(ErrorCode.INTERNAL_ERROR, f"the server answered: {text[:500]}",
                              tool=tool)
        code = str(error.get("code"))
        known = code in ErrorCode.__members__
        raise ToolFailure(ErrorCode[code] if known else ErrorCode.INTERNAL_ERROR,
                          str(error.get("message") if known else text[:500]),
                          tool=str(error.get("tool") or tool), detail=error.get("detail"))
    if result.structured_content is None:
        raise ToolFailure(ErrorCode.INTERNAL_ERROR, "the server answered without a "
                          "structured result", tool=tool)
    return dict(result.structured_content)


def _failed(url: str, tool: str, exc: Exception, refused: int | None) -> ToolFailure:
    if refused == 401:
        return ToolFailure(ErrorCode.AUTH_FAILED, f"{url} refused the call (401): give a "
                           "bearer token the server accepts with --token or NETSIGHT_TOKEN",
                           tool=tool)
    if refused == 403:
        return ToolFailure(ErrorCode.FORBIDDEN, f"{url} refused the call (403): the token's "
                           "user may not call netsight", tool=tool)
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]  # the SDK's task groups wrap the one error that ended them
    return ToolFailure(ErrorCode.INVALID_INPUT, f"cannot call {url} ({type(exc).__name__}: "
                       f"{exc}); check --server", tool=tool)
