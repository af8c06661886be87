"""What generic Kubernetes clients (kubernetes-mcp-server, kubectl) read from the simulator
beyond netsight's kinds, and how it answers them on a kept-alive connection."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket

import pytest

from netsight.sim.apiserver import SimServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def get(connection: http.client.HTTPConnection, path: str) -> tuple[int, dict[str, object]]:
    connection.request("GET", path, headers={"Authorization": "Bearer sim-token"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


async def test_a_namespaces_events_are_a_list() -> None:
    async with SimServer() as sim:
        connection = http.client.HTTPConnection(sim.host, sim.port)
        status, body = await asyncio.to_thread(get, connection, "/api/v1/namespaces/a/events")
        connection.close()
    assert status == 200
    assert body["kind"] == "EventList"
    assert body["items"] == []


async def test_connections_are_accepted_without_nagle() -> None:
    # With Nagle on, a response written in two parts waits for the client's delayed ACK
    # (~40 ms) on every request of a kept-alive connection but the first.
    async with SimServer() as sim:
        connection = http.client.HTTPConnection(sim.host, sim.port)
        await asyncio.to_thread(get, connection, "/api/v1/namespaces")
        accepted = [c.transport.get_extra_info("socket")
                    for c in sim._server.server_state.connections]  # type: ignore[union-attr]
        options = [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted]
        connection.close()
    assert options
    assert all(options)
