"""A watch stream (real HTTP, chunked) yields the same lines however its bytes are cut into
chunks: a line may span chunks, a chunk may hold several lines or end on a newline, and blank
lines are skipped."""

from __future__ import annotations

import asyncio
import itertools
import random

import aiohttp
import pytest
from aiohttp import web

from netsight.graph.ingest.watch_stream import stream_lines

pytestmark = pytest.mark.anyio

# Events of several sizes (a large object among them), blank and whitespace-only lines, a
# CRLF line end, and a last line without its newline.
STREAM_WITH_AWKWARD_LINES = (
    b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'
    b"\n"
    b'{"type":"MODIFIED","object":{"spec":"' + b"x" * 3000 + b'"}}\n'
    b"  \t\n"
    b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}\r\n'
    b"\n\n"
    b'{"type":"DELETED","object":{"metadata":{"name":"b"}}}\n'
    b'{"type":"ADDED","object":{"metadata":{"name":"last"}}}'
)
EXPECTED = [line for line in STREAM_WITH_AWKWARD_LINES.split(b"\n") if line.strip()]


def _cuts(size: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return sorted(rng.sample(range(1, size), rng.randint(1, 40)))


CHUNKINGS = [[n] for n in (5, 64, 1000, len(STREAM_WITH_AWKWARD_LINES))] + [
    _cuts(len(STREAM_WITH_AWKWARD_LINES), seed) for seed in range(12)]


async def _lines(chunks: list[bytes]) -> list[bytes]:
    """The lines stream_lines reads from an HTTP response sent in these chunks."""

    async def send(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for chunk in chunks:
            await response.write(chunk)
            await asyncio.sleep(0.0005)  # mostly one read a chunk (lines must not care)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/watch", send)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession() as http, http.get(
                f"http://127.0.0.1:{port}/watch") as response:
            return [line async for line in stream_lines(response, 10.0)]
    finally:
        await runner.cleanup()


def _split(data: bytes, chunking: list[int]) -> list[bytes]:
    if len(chunking) == 1:  # a chunk size
        size = chunking[0]
        return [data[i:i + size] for i in range(0, len(data), size)]
    bounds = [0, *chunking, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("chunking", CHUNKINGS)
async def test_lines_do_not_depend_on_where_chunks_end(chunking: list[int]) -> None:
    chunks = _split(STREAM_WITH_AWKWARD_LINES, chunking)
    assert b"".join(chunks) == STREAM_WITH_AWKWARD_LINES
    assert await _lines(chunks) == EXPECTED
