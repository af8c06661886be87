"""The stdio transport, answering malformed lines as JSON-RPC 2.0 says.

The SDK's stdio transport hands a line that is not JSON, or not a JSON-RPC message, to the
server as an exception, which the server logs at debug level and drops: a client waiting on
that request's id waits forever. Here such a line gets an error reply: ``-32700`` (parse
error, id null) for what is not JSON, ``-32600`` (invalid request) for JSON that is not a
JSON-RPC message, with the request's id when one can be read from it (null otherwise, as the
specification asks). Serving goes on with the next line.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

Item = SessionMessage | Exception  # what the SDK's transport reads: a message, or why not


class Incoming(Protocol):
    async def receive(self) -> Item: ...
    async def aclose(self) -> None: ...


class Outgoing(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


def error_reply(exc: ValidationError) -> JSONRPCError | None:
    """The JSON-RPC error answering the line ``exc`` rejected; None for a blank line (no
    message at all: nothing to answer)."""
    errors = exc.errors(include_url=False)
    invalid_json = [e for e in errors if e["type"] == "json_invalid"]
    if invalid_json:
        line = invalid_json[0].get("input")
        if isinstance(line, str | bytes) and not line.strip():
            return None
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message="Parse error: the line is not JSON"))
    return JSONRPCError(jsonrpc="2.0", id=_request_id(errors), error=ErrorData(
        code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message"))


def _request_id(errors: list[Any]) -> int | str | None:
    """The id of the rejected object, when it is one with a usable id: a field missing from
    one of the message shapes reports the whole object as its input."""
    for error in errors:
        root = error.get("input") if len(error.get("loc", ())) == 2 else None
        if error["type"] == "missing" and isinstance(root, dict):
            candidate = root.get("id")
            if isinstance(candidate, str) or (isinstance(candidate, int)
                                              and not isinstance(candidate, bool)):
                return candidate
            return None
    return None


class Answered:
    """The transport's read stream, minus the malformed lines, each answered on
    ``replies`` (the write stream, whose one writer keeps the lines whole)."""

    def __init__(self, lines: Incoming, replies: Outgoing) -> None:
        self.lines, self.replies = lines, replies

    @property
    def last_context(self) -> Any:  # the SDK restores the sender's context from it
        return getattr(self.lines, "last_context", None)

    async def receive(self) -> Item:
        while True:
            item = await self.lines.receive()
            if not isinstance(item, ValidationError):
                return item
            reply = error_reply(item)
            if reply is not None:
                await self.replies.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self.lines.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Answered, Any]]:
    """The SDK's stdio transport (stdin and stdout claimed as it claims them), its read
    stream answering malformed lines."""
    async with stdio_server() as (read_stream, write_stream):
        yield Answered(read_stream, write_stream), write_stream
