"""An HTTP answer's header block leaves in the same write as its body (server/onewrite.py),
so a client wakes once per answer; a streamed answer still gets its headers at once.

uvicorn's real httptools protocol, fed a request and writing to a transport that records
each write (what would be one ``send`` on the socket each).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from starlette.types import Receive, Scope, Send
from uvicorn.server import ServerState

from netsight.server.onewrite import OneWriteHttpToolsProtocol
from netsight.server.running import http_protocol

pytestmark = pytest.mark.anyio

REQUEST = b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
BODY = b'{"answer": 42}'


class RecordingTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 50000)
                }.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def exchange(app: Any, request: bytes = REQUEST
                   ) -> tuple[RecordingTransport, OneWriteHttpToolsProtocol]:
    config = uvicorn.Config(app, lifespan="off", log_level="warning")
    protocol = OneWriteHttpToolsProtocol(config, ServerState(), {},
                                         _loop=asyncio.get_running_loop())
    transport = RecordingTransport()
    protocol.connection_made(transport)
    protocol.data_received(request)
    return transport, protocol


async def answered(protocol: OneWriteHttpToolsProtocol) -> None:
    for _ in range(100):
        if protocol.cycle.response_complete and not protocol.tasks:
            return
        await asyncio.sleep(0)
    raise AssertionError("no complete answer")


async def whole(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})


async def test_header_block_and_body_leave_in_one_write() -> None:
    transport, protocol = await exchange(whole)
    await answered(protocol)
    assert len(transport.writes) == 1
    head, _, body = transport.writes[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"content-length: 14" in head
    assert body == BODY


async def test_every_answer_of_a_kept_alive_connection_is_one_write() -> None:
    transport, protocol = await exchange(whole)
    await answered(protocol)
    protocol.data_received(REQUEST)
    await answered(protocol)
    assert len(transport.writes) == 2
    assert all(w.startswith(b"HTTP/1.1 200 OK") and w.endswith(BODY) for w in transport.writes)


async def test_streamed_answer_gets_its_headers_before_its_first_chunk() -> None:
    headers_seen = asyncio.Event()
    chunk_due = asyncio.Event()

    async def streaming(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        headers_seen.set()
        await chunk_due.wait()  # an SSE stream waiting for its first event
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    transport, protocol = await exchange(streaming)
    await headers_seen.wait()
    await asyncio.sleep(0)  # the next turn of the loop
    assert len(transport.writes) == 1
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK")
    assert transport.writes[0].endswith(b"transfer-encoding: chunked\r\n\r\n")
    chunk_due.set()
    await answered(protocol)
    assert transport.writes[1:] == [b"9\r\ndata: 1\n\n\r\n", b"0\r\n\r\n"]


async def test_headers_held_when_the_app_fails_are_written_before_the_close() -> None:
    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"14")]})
        raise RuntimeError("the app broke after starting its answer")

    transport, _ = await exchange(failing)
    for _ in range(100):
        if transport.closed:
            break
        await asyncio.sleep(0)
    assert transport.closed  # uvicorn closes a connection whose answer broke off
    assert len(transport.writes) == 1
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK")


def test_netsight_serves_http_with_the_one_write_protocol() -> None:
    assert http_protocol() is OneWriteHttpToolsProtocol
