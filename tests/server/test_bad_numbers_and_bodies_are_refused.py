"""Numbers in queries and headers that are not short runs of ASCII digits get 400 (never a
500), and a body over its limit gets 413 before it is read, or as soon as it passes the
limit while streaming: never buffered whole."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from starlette.requests import Request

from netsight.server import dashboard
from netsight.server.request_limits import whole_number
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio

HUGE = "9" * 5_000  # int() refuses more than 4,300 digits


async def raw_get(served: Served, target: str, headers: dict[str, bytes] | None = None
                  ) -> tuple[int, dict[str, Any]]:
    """One request written byte for byte: a header value may hold a latin-1 byte such as
    0xB2 ("²"), which HTTP clients would encode as UTF-8."""
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        head = b"".join(name.encode() + b": " + value + b"\r\n"
                        for name, value in (headers or {}).items())
        writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     .encode() + head + b"\r\n")
        response = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    status_line, _, rest = response.partition(b"\r\n")
    _, _, body = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(body)


BAD_NUMBERS = [
    ("/api/graph?around=Service/shop/cart&depth=%C2%B2", None, "depth"),  # depth=²
    ("/api/graph?around=Service/shop/cart&depth=%D9%A3", None, "depth"),  # Arabic-Indic 3
    (f"/api/graph?around=Service/shop/cart&depth={HUGE}", None, "depth"),
    ("/api/graph?around=Service/shop/cart&depth=-1", None, "depth"),
    ("/api/graph/changes?since=%C2%B2", None, "since"),
    (f"/api/graph/changes?since={HUGE}", None, "since"),
    ("/api/graph/changes?since=%2B5", None, "since"),  # +5: int() takes it, a client should not
    ("/api/graph/changes", {"Last-Event-ID": b"\xb2"}, "Last-Event-ID"),
    ("/api/graph/changes", {"Last-Event-ID": HUGE.encode()}, "Last-Event-ID"),
    ("/api/graph/changes", {"Last-Event-ID": b"5.0"}, "Last-Event-ID"),
]


@pytest.mark.parametrize(("target", "headers", "names"), BAD_NUMBERS)
async def test_a_number_that_is_not_ascii_digits_is_a_400(
        shared: Served, target: str, headers: dict[str, bytes] | None, names: str) -> None:
    status, error = await raw_get(shared, target, headers)
    assert (status, error["code"]) == (400, "INVALID_INPUT"), error
    assert names in error["message"]
    assert len(error["message"]) < 200  # a 5,000-digit value is not echoed back


def test_only_short_runs_of_ascii_digits_are_whole_numbers() -> None:
    assert whole_number("0") == 0
    assert whole_number("9" * 19) == int("9" * 19)
    for text in ("", "²", "٣", "\uff11", "+1", "-1", " 1", "1 ", "1\n", "1_000", "1.0", "9" * 20):
        assert whole_number(text) is None, text


# --- bodies ----------------------------------------------------------------------------------


async def test_a_declared_oversized_body_is_refused_before_it_is_sent(shared: Served) -> None:
    """Content-Length says 300 MB and nothing follows: the answer may not wait for it."""
    host, port = shared.url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(b"POST /api/verdict HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 300000000\r\n\r\n{")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    finally:
        writer.close()
    assert head.startswith(b"HTTP/1.1 413 "), head
    assert b"connection: close" in head.lower()


async def test_a_streamed_oversized_body_is_refused(shared: Served) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # chunked: no Content-Length at all
        for _ in range(64):
            yield b" " * 1024

    async with aiohttp.ClientSession() as http, http.post(
            f"{shared.url}{dashboard.VERDICT}", data=chunks(),
            headers={"Content-Type": "application/json"}) as response:
        status, error = response.status, await response.json()
    assert (status, error["code"], error["tool"]) == (413, "INVALID_INPUT", dashboard.VERDICT)
    assert str(dashboard.MAX_BODY) in error["message"]


@pytest.mark.parametrize("declared", [None, b"100"])  # none, or one that lies
async def test_an_endless_body_is_read_no_further_than_the_limit(declared: bytes | None
                                                                 ) -> None:
    """The endpoint itself, fed a body of 1,000 times its limit: it stops reading there."""
    received = 0
    endless = 1_000 * dashboard.MAX_BODY // 1024  # chunks; bounded, so a failure ends

    async def receive() -> dict[str, Any]:
        nonlocal received
        received += 1
        await asyncio.sleep(0)
        return {"type": "http.request", "body": b" " * 1024, "more_body": received < endless}

    headers = [(b"content-type", b"application/json")]
    if declared is not None:
        headers.append((b"content-length", declared))
    request = Request({"type": "http", "method": "POST", "path": dashboard.VERDICT,
                       "headers": headers, "query_string": b""}, receive)
    response = await asyncio.wait_for(dashboard.verdict_endpoint(request, None), 5)  # type: ignore[arg-type]
    assert response.status_code == 413
    assert received <= dashboard.MAX_BODY // 1024 + 1
