"""netsight answers a kept-alive connection without waiting on Nagle's algorithm: an MCP
answer written in parts would otherwise wait for the client's delayed ACK (~40 ms)."""

from __future__ import annotations

import asyncio
import http.client
import socket
from pathlib import Path

import pytest

from tests.server.conftest import demo_sim, serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_accepted_connections_have_nagle_off(tmp_path: Path) -> None:
    async with demo_sim() as sim, serving(sim, tmp_path, wait_ready=False) as served:
        host, port = served.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port))

        def get() -> int:
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            response.read()
            return response.status

        await asyncio.to_thread(get)
        accepted = [c.transport.get_extra_info("socket")
                    for c in served.http.server_state.connections]
        options = [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted]
        connection.close()
    assert options
    assert all(options)
