"""Over HTTP too, a restricted caller learns nothing from naming an object they may not
read: every endpoint of ``netsight serve`` answers them about a hidden object byte for byte
as about one that does not exist.

The three graphs of ``tests/analyzers/hostile/worlds.py`` (namespace ``edge`` full, empty,
absent; ``shop`` alike in all) are each served by the real app and auth middleware, the
caller's token checked by the simulator's TokenReview and SubjectAccessReview (they may list
pods in ``shop`` only). Each request below goes to all three; the answers — status, headers
and body — must be one. The MCP cases are the in-process test's
(``tests/analyzers/hostile/questions.py``), sent as JSON-RPC over ``/mcp``.

Left out of the comparison, as the README's security section says: ``metadata.timestamp``
and change times, and the graph generation wherever it is shown (``graphGeneration``, the
export's ``generation`` and ``X-Graph-Generation``, the generation in ``ETag``, the summary's
``generation``, change and reset ids). The generation counts every change the graph took in,
in every namespace: between two answers a caller learns that, and how often, something
changed somewhere — never which object or where.

The table is over the app's routes: a route without an entry fails the test, so a new
endpoint says how a hidden object is asked about there.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from netsight.graph.ingest.client import KubeTransport
from netsight.graph.store.live import GraphStore
from netsight.server import auth
from netsight.server.app import McpFirst, Service, build_service
from netsight.server.cluster import LiveGraph
from netsight.server.config import Auth
from netsight.server.running import HttpServer
from netsight.sim.apiserver import SimServer
from tests.analyzers.hostile.questions import CASE_IDS, CASES
from tests.analyzers.hostile.worlds import WORLDS, build
from tests.server.authenticated import ALICE, bearer, grant_demo_callers
from tests.server.conftest import settings_for
from tests.server.loop_latency import McpSession

pytestmark = pytest.mark.anyio

QUIET = 0.3  # seconds without a byte after which a change stream has said all it had


@dataclass(frozen=True, slots=True)
class Asked:
    """One request: ``target`` is the path and query; ``tool`` makes it an MCP tools/call
    of that tool with ``body`` as its arguments; ``stream``: read an SSE stream until it
    falls quiet."""

    method: str
    target: str
    body: Any = None
    tool: str | None = None
    stream: bool = False
    headers: tuple[tuple[str, str], ...] = ()


def get(target: str) -> Asked:
    return Asked("GET", target)


def stream(target: str) -> Asked:
    return Asked("GET", target, stream=True)


def verdict(question: dict[str, Any]) -> Asked:
    return Asked("POST", "/api/verdict", body=question)


# Route path -> requests naming objects of "edge" (routes that answer about no object get
# what a caller may send them). The objects of "edge" are in tests/analyzers/hostile.
ASKED: dict[str, list[Asked]] = {
    "/healthz": [get("/healthz")],
    "/readyz": [get("/readyz")],
    "/metrics": [get("/metrics")],
    "/dashboard": [get("/dashboard")],
    "/dashboard/static/{path:path}": [get("/dashboard/static/dashboard.js"),
                                      get("/dashboard/static/edge/api")],
    "/api/graph": [get("/api/graph"), get("/api/graph?namespace=edge"),
                   get("/api/graph?kind=Gateway"), get("/api/graph?kind=Service,HTTPRoute"),
                   get("/api/graph?kind=Gateway&namespace=edge"),
                   get("/api/graph?around=Namespace/edge"),
                   get("/api/graph?around=Gateway/edge/public&depth=2"),
                   get("/api/graph?around=Service/edge/api&depth=5"),
                   get("/api/graph?around=Service/shop/web&depth=5"),
                   get("/api/graph?around=Namespace/shop&depth=5"),
                   get("/api/graph?around=GatewayClass/example&depth=5"),
                   get("/api/graph?around=Pod/shop/api-1"),
                   # kinds that only "edge" holds objects of
                   get("/api/graph?kind=ListenerSet"), get("/api/graph?kind=DestinationRule"),
                   get("/api/graph?kind=Secret&namespace=shop"),
                   get("/api/graph?around=ListenerSet/edge/extra")],
    "/api/graph/changes": [stream("/api/graph/changes?since=0"),
                           stream("/api/graph/changes?since=999999"),
                           Asked("GET", "/api/graph/changes", stream=True,
                                 headers=(("Last-Event-ID", "1"),))],
    "/api/graph/summary": [get("/api/graph/summary")],
    "/api/findings": [get(f"/api/findings?object={key}") for key in (
        "Namespace/edge", "Service/edge/api", "Gateway/edge/public", "Pod/edge/api-1",
        "HTTPRoute/edge/api", "Service/shop/api", "Namespace/shop", "Service/shop/web",
        "Gateway/shop/gw", "HTTPRoute/shop/web", "GatewayClass/example",
        "ListenerSet/edge/extra", "Secret/edge/cert", "DestinationRule/edge/api")],
    "/api/findings/overview": [get("/api/findings/overview"),
                               get("/api/findings/overview?namespace=edge"),
                               get("/api/findings/overview?namespace=shop")],
    "/api/verdict": [verdict(args) for args in CASES["find_blocking_policies"]],
    "/mcp": [Asked("POST", "/mcp", body=args, tool=tool) for tool, args in CASE_IDS],
}

# The graph generation and the times, wherever an answer shows them.
_GENERATION = re.compile(rb'"(generation|graphGeneration)":\d+')
_RENDERED = re.compile(rb"generation \d+\)")
_TIMESTAMP = re.compile(rb'"timestamp":"[^"]*"')
_AT = re.compile(rb'"at":[-+.0-9eE]+')
_EVENT_ID = re.compile(rb"^id: \d+$", re.MULTILINE)
_ETAG = re.compile(r'^"([0-9a-f]+)\.\d+')
SKIPPED_HEADERS = frozenset({"date", "server", "content-length", "mcp-session-id"})


def normalized(body: bytes) -> bytes:
    body = _GENERATION.sub(rb'"\1":0', body)
    body = _RENDERED.sub(b"generation N)", body)
    body = _TIMESTAMP.sub(b'"timestamp":""', body)
    body = _AT.sub(b'"at":0', body)
    return _EVENT_ID.sub(b"id: N", body)


def shown_headers(headers: Any) -> dict[str, str]:
    shown = {k.lower(): v for k, v in headers.items() if k.lower() not in SKIPPED_HEADERS}
    if "etag" in shown:
        shown["etag"] = _ETAG.sub(r'"\1.N', shown["etag"])
    if "x-graph-generation" in shown:
        shown["x-graph-generation"] = "N"
    return shown


@dataclass
class World:
    name: str
    store: GraphStore
    service: Service
    url: str


@contextlib.asynccontextmanager
async def worlds(tmp: Path) -> AsyncIterator[dict[str, World]]:
    """Each graph of ``WORLDS`` (built afresh) served with callers checked by one simulator."""
    async with SimServer() as sim, contextlib.AsyncExitStack() as stack:
        grant_demo_callers(sim)
        kubeconfig = sim.write_kubeconfig(tmp / "kubeconfig")
        settings = settings_for(kubeconfig, auth=Auth.TOKENREVIEW)
        served = {}
        for name in WORLDS:
            transport = await KubeTransport.connect(str(kubeconfig))
            stack.push_async_callback(transport.close)
            graph = LiveGraph(build(name), transport=transport)
            service = build_service(graph, settings,
                                    middleware=auth.middleware(settings, transport))
            server = HttpServer(service, settings)
            url = await server.start()
            stack.push_async_callback(server.stop)
            served[name] = World(name, graph.store, service, url)
        yield served


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, World]]:
    async with worlds(tmp_path_factory.mktemp("worlds")) as running:
        yield running


async def read_stream(response: aiohttp.ClientResponse, until: bytes | None = None) -> bytes:
    """An SSE stream's bytes until it falls quiet (or ``until`` has arrived)."""
    body = b""
    while until is None or until not in body:
        try:
            chunk = await asyncio.wait_for(response.content.readany(), QUIET)
        except TimeoutError:
            if until is None:
                break
            continue
        if not chunk:
            break
        body += chunk
    return body


async def ask(world: World, asked: Asked, http: aiohttp.ClientSession,
              mcp: McpSession) -> Answer:
    if asked.tool is not None:
        raw = await mcp.raw(asked.tool, orjson.dumps({"detail": True, **asked.body}))
        return 200, {}, normalized(raw)
    headers = bearer(ALICE) | dict(asked.headers)
    data = None
    if asked.body is not None:
        headers["Content-Type"] = "application/json"
        data = orjson.dumps(asked.body)
    async with http.request(asked.method, world.url + asked.target, headers=headers,
                            data=data) as response:
        body = await (read_stream(response) if asked.stream else response.read())
        return response.status, shown_headers(response.headers), normalized(body)


@contextlib.asynccontextmanager
async def clients(world: World) -> AsyncIterator[tuple[aiohttp.ClientSession, McpSession]]:
    async with aiohttp.ClientSession() as http:
        yield http, await McpSession(http, world.url, headers=bearer(ALICE)).open()


def routes_of(service: Service) -> list[str]:
    front = service.admission.app
    assert isinstance(front, McpFirst)
    app = front.app
    assert isinstance(app, Starlette)
    return [route.path for route in app.routes if isinstance(route, Route)]


async def test_every_route_is_asked_about_hidden_objects(served: dict[str, World]) -> None:
    assert sorted(routes_of(served["none"].service)) == sorted(ASKED), \
        "add the new endpoint's requests about objects of 'edge' to ASKED"


ASKED_IDS = [(route, i) for route, asked in ASKED.items() for i in range(len(asked))]


Answer = tuple[int, dict[str, str], bytes]  # status, headers, body


def assert_alike(answers: dict[str, Answer], what: str) -> None:
    hidden, empty, none = answers["hidden"], answers["empty"], answers["none"]
    assert hidden == none, f"{what}: hidden\n{hidden!r}\nmissing\n{none!r}"
    assert empty == none, f"{what}: empty namespace\n{empty!r}\nmissing\n{none!r}"


@pytest.mark.parametrize(("route", "index"), ASKED_IDS,
                         ids=[f"{route}-{i}" for route, i in ASKED_IDS])
async def test_a_hidden_object_answers_as_a_missing_one(
        served: dict[str, World], route: str, index: int) -> None:
    asked = ASKED[route][index]
    answers = {}
    for name, world in served.items():
        async with clients(world) as (http, mcp):
            answers[name] = await ask(world, asked, http, mcp)
    status, _, body = answers["none"]
    assert status < 500 or route == "/readyz", body[:2000]  # no informers here: not ready
    assert b"INTERNAL_ERROR" not in body, body[:2000]
    assert b"AUTH_FAILED" not in body or route == "/metrics", body[:2000]  # let in
    assert_alike(answers, f"{asked.method} {asked.target} {asked.tool or ''}")


def _obj(api: str, kind: str, namespace: str, name: str, **rest: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind,
            "metadata": {"name": name, "namespace": namespace, **rest.pop("metadata", {})},
            **rest}


# Changes in "edge" after the stream opened: one that names visible objects (a route of
# edge on shop's Gateway, to shop's Service), one that adds, one that changes, one that
# deletes. Only the graph holding "edge" objects takes them; the others have nothing there.
HIDDEN_CHANGES = [
    ("ADDED", _obj("gateway.networking.k8s.io/v1", "HTTPRoute", "edge", "sneaky", spec={
        "parentRefs": [{"name": "gw", "namespace": "shop"}],
        "hostnames": ["shop.example.com"],
        "rules": [{"backendRefs": [{"name": "web", "namespace": "shop", "port": 80}]}]})),
    ("ADDED", _obj("v1", "Pod", "edge", "api-2", metadata={"labels": {"app": "api"}},
                   spec={"containers": [{"name": "api", "image": "api"}]})),
    ("MODIFIED", _obj("v1", "Service", "edge", "api", metadata={"labels": {"changed": "1"}},
                      spec={"selector": {"app": "api"}, "ports": [{"port": 80}]})),
    ("DELETED", _obj("networking.k8s.io/v1", "NetworkPolicy", "edge", "api")),
]
# Then in every graph: the objects the hidden route names change, and a pod is added.
VISIBLE_CHANGES = [
    ("MODIFIED", _obj("v1", "Service", "shop", "web", metadata={"labels": {"changed": "1"}},
                      spec={"selector": {"app": "web"}, "clusterIP": "10.96.0.10",
                            "ports": [{"name": "http", "port": 80, "targetPort": "http"}]})),
    ("MODIFIED", _obj("gateway.networking.k8s.io/v1", "Gateway", "shop", "gw",
                      metadata={"labels": {"changed": "1"}},
                      spec={"gatewayClassName": "example", "listeners": [
                          {"name": "http", "port": 80, "protocol": "HTTP",
                           "allowedRoutes": {"namespaces": {"from": "All"}}}]})),
    ("ADDED", _obj("v1", "Pod", "shop", "late", spec={"containers": [{"name": "c"}]})),
]
AFTER = [get("/api/graph"), get("/api/graph?around=Service/shop/web&depth=5"),
         get("/api/graph?around=Gateway/shop/gw&depth=5"), get("/api/graph/summary"),
         get("/api/findings?object=Service/shop/web"),
         stream("/api/graph/changes?since=0")]


async def test_changes_in_a_hidden_namespace_stream_as_none(tmp_path: Path) -> None:
    """An open change stream shows a restricted caller nothing of what changes in a
    namespace they may not read — not even the links a hidden object adds to theirs — and
    the graph export and summary afterwards are as if it had never happened."""
    async with worlds(tmp_path) as served, aiohttp.ClientSession() as http, \
            contextlib.AsyncExitStack() as stack:
        opened = {}
        for name, world in served.items():
            opened[name] = await stack.enter_async_context(http.get(
                world.url + "/api/graph/changes", headers=bearer(ALICE)))
            assert opened[name].status == 200
        await asyncio.sleep(QUIET)  # every stream is waiting for a change
        for event, obj in HIDDEN_CHANGES:
            assert served["hidden"].store.apply(event, obj), obj
        await asyncio.sleep(QUIET)  # a batch of its own, if the stream were to show it
        for world in served.values():
            for event, obj in VISIBLE_CHANGES:
                assert world.store.apply(event, obj), obj
        streamed = {name: (200, {}, normalized(await asyncio.wait_for(
            read_stream(response, until=b'"name":"late"'), 10)))
            for name, response in opened.items()}
        assert b'"name":"web"' in streamed["none"][2]
        assert_alike(streamed, "the open change stream")
        for asked in AFTER:
            answers = {}
            for name, world in served.items():
                async with clients(world) as (client, mcp):
                    answers[name] = await ask(world, asked, client, mcp)
            assert_alike(answers, f"after the changes: {asked.target}")
