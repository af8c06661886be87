"""netsight serve against the simulated API server: the real informers, uvicorn on a free
loopback port, and the MCP SDK's own client — over HTTP, in-process and over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from mcp_types import CallToolResult

from netsight.analyzers.core.calling import AnyTool
from netsight.analyzers.tools import TOOLS
from netsight.server.app import Service, build_service
from netsight.server.cluster import LiveGraph, live_graph
from netsight.server.config import Settings
from netsight.server.running import HttpServer
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.demo import load_demo
from tests.server.browsing import ARGS, CHROMIUM, artefact_dir, keep, require_browser
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope: the module-scoped async fixtures below (``shared``) need it, and
    with them alive anyio keeps one event loop for the module's tests."""
    return "asyncio"


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


@dataclass
class Served:
    sim: SimServer
    graph: LiveGraph
    service: Service
    url: str  # http://127.0.0.1:PORT
    http: HttpServer

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"


@contextlib.asynccontextmanager
async def demo_sim() -> AsyncIterator[SimServer]:
    server = SimServer(config=SimConfig(bookmark_interval=0.1))
    load_demo(server.state)
    async with server:
        yield server


@pytest.fixture
async def sim() -> AsyncIterator[SimServer]:
    async with demo_sim() as server:
        yield server


def settings_for(kubeconfig: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"cluster_name": "sim", "kubeconfig": str(kubeconfig), "port": 0,
                              "tool_timeout": 5.0, "shutdown_timeout": 1.0}
    values.update(overrides)
    return Settings(**values)


@contextlib.asynccontextmanager
async def serving(sim: SimServer, tmp_path: Path, *, wait_ready: bool = True,
                  tools: Mapping[str, AnyTool] = TOOLS, **overrides: Any
                  ) -> AsyncIterator[Served]:
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    settings = settings_for(kubeconfig, **overrides)
    async with serving_settings(settings, wait_ready=wait_ready, tools=tools) as (
            graph, service, url, server):
        yield Served(sim, graph, service, url, server)


@contextlib.asynccontextmanager
async def serving_settings(settings: Settings, *, wait_ready: bool = True,
                           tools: Mapping[str, AnyTool] = TOOLS
                           ) -> AsyncIterator[tuple[LiveGraph, Service, str, HttpServer]]:
    """netsight serving ``settings`` over HTTP on 127.0.0.1, with fast informers."""
    async with live_graph(settings, informers=FAST) as graph:
        service = build_service(graph, settings, tools=tools)
        server = HttpServer(service, settings)
        url = await server.start()
        try:
            if wait_ready:
                await eventually(lambda: graph.ready)
            yield graph, service, url, server
        finally:
            await server.stop()


@pytest.fixture
async def served(sim: SimServer, tmp_path: Path) -> AsyncIterator[Served]:
    async with serving(sim, tmp_path) as running:
        yield running


# --- one demo cluster and server for a module's tests that only read -----------------------
# Starting the simulator, syncing the informers and starting uvicorn costs about a second per
# test; a test that changes nothing can share them. ``shared`` checks after each test
# that the cluster is as it found it (objects, injected faults, tokens and grants), so a test
# that writes and forgets to ask for its own ``served`` fails instead of leaking into the next.


def cluster_fingerprint(sim: SimServer) -> tuple[int, str, str]:
    return sim.state.rv, repr(sim.state.faults), repr(sim.access)


@contextlib.contextmanager
def left_unchanged(served: Served) -> Iterator[Served]:
    before = cluster_fingerprint(served.sim)
    yield served
    assert cluster_fingerprint(served.sim) == before, (
        "the test changed the cluster it shares with the module's other tests: give it its "
        "own (the `served` or `sim` fixture)")


@pytest.fixture(scope="module")
async def module_served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    async with demo_sim() as sim, serving(sim, tmp_path_factory.mktemp("served")) as running:
        yield running


@pytest.fixture
def shared(module_served: Served) -> Iterator[Served]:
    """The demo served to tests that only read: one per module."""
    with left_unchanged(module_served) as served:
        yield served


@pytest.fixture(scope="module")
async def module_served_with_auth(tmp_path_factory: pytest.TempPathFactory
                                  ) -> AsyncIterator[Served]:
    from tests.server.authenticated import grant_demo_callers, serving_with_auth

    async with demo_sim() as sim:
        grant_demo_callers(sim)
        async with serving_with_auth(sim, tmp_path_factory.mktemp("served")) as running:
            yield running


@pytest.fixture
def shared_auth(module_served_with_auth: Served) -> Iterator[Served]:
    """The demo served with callers checked (``--auth tokenreview``, the demo callers granted)
    to tests that only read and depend on no cache being cold: one per module."""
    with left_unchanged(module_served_with_auth) as served:
        yield served


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_json(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    assert result.structured_content is None
    text = result.content[0].text  # type: ignore[union-attr]
    error: dict[str, Any] = orjson.loads(text)
    assert set(error) <= {"code", "message", "tool", "detail"}, error
    return error


def without_metadata(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "metadata"}


async def announced_and_ready(process: asyncio.subprocess.Process, timeout: float = 20.0
                              ) -> str:
    """The base URL a ``netsight serve`` subprocess announces on stderr, once its /readyz
    (open without a token) answers 200."""
    assert process.stderr is not None
    url = ""
    while not url:
        line = (await asyncio.wait_for(process.stderr.readline(), timeout)).decode()
        assert line, "serve exited before announcing its URL"
        if match := re.search(r"MCP at (http://\S+)/mcp", line):
            url = match.group(1)
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(f"{url}/readyz") as ready:
                if ready.status == 200:
                    return url
            assert time.monotonic() < deadline, "never ready"
            await asyncio.sleep(0.1)


# --- Chromium, for the dashboard's browser tests (browsing.py) -------------------------------


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    """One Chromium for the module (a launch takes seconds); each test gets its own
    context, so no cookies, storage or cache pass from one test to the next."""
    require_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Any, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A page on a fresh context; what it ends on is kept (screenshot and DOM) under
    ``page.artefacts``, printed with the test's output."""
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = await context.new_page()
        page.problems = []  # console errors, uncaught exceptions, requests elsewhere
        page.artefacts = artefact_dir(request.node.name)
        print(f"browser artefacts: {page.artefacts}")
        page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
        page.on("pageerror", lambda e: page.problems.append(str(e)))
        page.on("request", lambda r: r.url.startswith("http://127.0.0.1:") or r.url.startswith(
            "data:") or page.problems.append(f"request to {r.url}"))
        yield page
        if page.url.startswith("http"):
            await keep(page, "last")
    finally:
        await context.close()
