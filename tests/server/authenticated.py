"""netsight serve with callers checked: the simulator's TokenReview and SubjectAccessReview
behind the real auth middleware, the real kubernetes-asyncio client posting the reviews, and
uvicorn on 127.0.0.1 (``--auth tokenreview``, since loopback alone would not require it)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from netsight.server import auth
from netsight.server.app import build_service
from netsight.server.cluster import live_graph
from netsight.server.config import Auth
from netsight.server.running import HttpServer
from netsight.sim.apiserver import SimServer
from tests.server.conftest import Served, eventually, settings_for
from tests.watching.conftest import FAST

ADMIN = "admin-token-0123456789"  # may list pods everywhere
ALICE = "alice-token-abcdefghij"  # team-shop: may list pods in shop only
NOBODY = "nobody-token-klmnopqrs"  # authenticated, may list pods nowhere
TOKENS = (ADMIN, ALICE, NOBODY)


def grant_demo_callers(sim: SimServer) -> None:
    sim.access.add_token(ADMIN, "admin", groups=["sre"])
    sim.access.add_token(ALICE, "alice", groups=["team-shop"])
    sim.access.add_token(NOBODY, "nobody")
    sim.access.allow(group="sre", verbs=["get", "list", "watch"], resources=["*"])
    sim.access.allow(group="team-shop", verbs=["get", "list", "watch"], resources=["pods"],
                     namespaces=["shop"])
    sim.access.allow(user="alice", verbs=["list"], resources=["services"],
                     namespaces=["payments"])  # not pods: does not count


@contextlib.asynccontextmanager
async def serving_with_auth(sim: SimServer, tmp_path: Path, **overrides: Any
                            ) -> AsyncIterator[Served]:
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    settings = settings_for(kubeconfig, **{"auth": Auth.TOKENREVIEW, **overrides})
    async with live_graph(settings, informers=FAST) as graph:
        service = build_service(graph, settings,
                                middleware=auth.middleware(settings, graph.transport))
        server = HttpServer(service, settings)
        url = await server.start()
        try:
            await eventually(lambda: graph.ready)
            yield Served(sim, graph, service, url, server)
        finally:
            await server.stop()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def mcp_client(url: str, token: str, mode: str = "legacy") -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers=bearer(token), timeout=httpx2.Timeout(30, read=300))
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client
