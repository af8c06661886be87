"""uvicorn's httptools protocol, writing a response's header block together with its body.

uvicorn writes the status line and headers as soon as the app sends ``http.response.start``
and the body in a second write when ``http.response.body`` follows. With TCP_NODELAY each
write is a segment of its own, so a client often wakes for the header block alone, parses
it, and sleeps again until the body arrives: a second wake-up, receive and parse on many
MCP answers, and a second send on netsight's side. Every MCP answer is one ``Response``
(start and body sent in the same turn of the loop), so here the header block waits for the
next write of the same response and leaves with it. A response whose body does not follow
in the same turn (an SSE stream waiting for its first event) gets its headers on the loop's
next turn, as soon as anything else would have run.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle


class HeadersWithBody:
    """The transport as one request/response cycle sees it: its first write after the
    response started (the header block) is held until the next write or the next turn."""

    __slots__ = ("_cycle", "_held", "_loop", "_started", "transport")

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.transport, self._cycle, self._loop = transport, cycle, loop
        self._held: bytes | None = None
        self._started = False  # the header block was written (or is held)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self.transport.write(held + bytes(data))
        elif not self._started and self._cycle.response_started:
            # uvicorn sets response_started just before writing the header block; writes
            # before it (``100 Continue``) go out at once.
            self._started = True
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            self.transport.write(data)

    def flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if not self.transport.is_closing():
                self.transport.write(held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def __getattr__(self, name: str) -> Any:  # is_closing, pause_reading, get_extra_info, ...
        return getattr(self.transport, name)


class OneWriteHttpToolsProtocol(HttpToolsProtocol):
    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and not isinstance(cycle.transport, HeadersWithBody):
            cycle.transport = HeadersWithBody(  # type: ignore[assignment]
                self.transport, cycle, self.loop)
