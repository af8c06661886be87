"""A simulated Kubernetes API server: real HTTP on 127.0.0.1, for tests, benchmarks and demos.

It speaks the parts of the API that kubernetes-asyncio and kubectl use: ``/version``,
discovery (``/api``, ``/api/v1``, ``/apis``, ``/apis/G/V``), list with ``limit``/``continue``
over a consistent snapshot, label/field selectors and ``resourceVersion``/
``resourceVersionMatch`` (listing.py), watch with ``resourceVersion``,
``allowWatchBookmarks`` and ``timeoutSeconds`` (``410 Expired`` once the event log is
compacted), and create/replace/patch/delete of any kind, custom resources included once
their CRD exists. List items carry no kind/apiVersion, as the real server sends them.

Fault injection (``SimState.faults`` in-process, or ``POST /sim/faults``): latency, status
codes such as 500 or 429 for the next N requests, 403 for chosen resources, stalled
watches, slow bodies, ending or expiring every open watch, and the storage restored to an
older resourceVersion; in-process, :meth:`SimServer.restart` and
:meth:`SimServer.reset_connections` too.

The control endpoints under ``/sim/`` (faults, the access policy, state, churn) decide who
netsight's callers are and what the cluster shows: any local user could otherwise reach them
on the printed port. They need ``Authorization: Bearer <control_token>``, a random token
made when the server is, known only in-process (and to whom ``netsight sim`` prints it);
with ``control=False`` (the demo netsight serves) they are not served at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import socket
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import uvicorn
import yaml
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from netsight.graph.model.selectors import parse_selector_string
from netsight.sim import discovery_documents
from netsight.sim.access import AccessPolicy
from netsight.sim.bodies import aggregated_discovery, once, slowly, wants_metadata_only
from netsight.sim.dataplane.network import NetworkConfigError
from netsight.sim.kubelet import Kubelet, KubeletConfig
from netsight.sim.listing import Lists
from netsight.sim.rbac import RbacGuard
from netsight.sim.resources import ResourceType
from netsight.sim.selection import Selection, parse_field_selector
from netsight.sim.state import ApiError, Checkpoint, SimState
from netsight.sim.subresources import subresource_part, write_subresource

JSON = "application/json"
# Go's strconv.ParseBool, as the API server reads flags (kubernetes-asyncio sends watch=True).
GO_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
CONTROL = "/sim/"  # the control endpoints' prefix
VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.0-netsight-sim",
           "platform": "linux/amd64", "goVersion": "go1.24", "compiler": "gc"}


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None
                  ) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type=JSON, headers=headers)


def error_response(error: ApiError) -> Response:
    retry_after = error.retry_after or (1 if error.code == 429 else None)
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return json_response(error.status(), error.code, headers)


@dataclass
class SimConfig:
    bookmark_interval: float = 1.0  # seconds between BOOKMARK events on idle watches
    max_watch_seconds: float = 1800.0
    gone_as_http: bool = False  # answer a too-old watch with HTTP 410 instead of an ERROR event
    snapshot_ttl: float = 300.0  # how long a list's continue token stays valid
    # How long a list at a resourceVersion the storage has not reached waits for it before
    # 504 "Too large resource version" (kube-apiserver's watch cache waits 3 s).
    too_large_wait: float = 3.0
    # Answer /api and /apis with APIGroupDiscoveryList when asked (v2 from Kubernetes 1.30,
    # v2beta1 from 1.27); False: as an older server, with the plain lists only.
    aggregated_discovery: bool = True


class ControlGuard:
    """Every path under ``/sim/`` — the simulator's routes and any added later, such as
    churn's — for the holder of ``token`` only; None: not served."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(CONTROL):
            if self.token is None:
                error = ApiError(404, "NotFound", "the simulator's control endpoints are not "
                                 "served here")
                await error_response(error)(scope, receive, send)
                return
            scheme, _, given = Headers(scope=scope).get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                                     self.token.encode()):
                error = ApiError(401, "Unauthorized", "the control endpoints need "
                                 "Authorization: Bearer <the simulator's control token>")
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SimApiServer:
    """The ASGI application over a :class:`SimState`; ``control``: serve ``/sim/``."""

    def __init__(self, state: SimState | None = None, config: SimConfig | None = None, *,
                 control: bool = True) -> None:
        self.state = state or SimState()
        self.config = config or SimConfig()
        self.control_token = secrets.token_urlsafe(32) if control else None
        self.access = AccessPolicy.default()
        self.lists = Lists(self.state, snapshot_ttl=self.config.snapshot_ttl,
                           too_large_wait=self.config.too_large_wait)
        self.checkpoint: Checkpoint | None = None  # what the "restore" fault goes back to
        self.requests = 0
        # (path, resourceVersion) of every watch opened: tests read where informers resume.
        self.watch_log: list[tuple[str, str | None]] = []
        # (method, path, query) of recent requests, for tests and the /sim/state page.
        self.request_log: deque[tuple[str, str, dict[str, str]]] = deque(maxlen=10_000)
        # Paths of list/watch requests that asked for metadata only (PartialObjectMetadata).
        self.metadata_requests: deque[str] = deque(maxlen=10_000)
        self.app = Starlette(routes=[
            Route("/version", self._version),
            Route("/healthz", self._ok), Route("/readyz", self._ok), Route("/livez", self._ok),
            Route("/api", self._core_versions),
            Route("/apis", self._group_list),
            Route("/sim/faults", self._faults, methods=["POST"]),
            Route("/sim/access", self._access, methods=["POST"]),
            Route("/sim/dataplane", self._dataplane, methods=["POST"]),
            Route("/sim/state", self._sim_state),
            Route("/api/{rest:path}", self._core, methods=["GET", "POST", "PUT", "PATCH",
                                                           "DELETE"]),
            Route("/apis/{rest:path}", self._groups, methods=["GET", "POST", "PUT", "PATCH",
                                                              "DELETE"]),
        ], middleware=[Middleware(ControlGuard, token=self.control_token),
                       # RBAC on every request, while access.enforce is on (rbac.py).
                       Middleware(RbacGuard, policy=self.access)])

    # --- discovery -----------------------------------------------------------------------

    async def _version(self, request: Request) -> Response:
        return json_response(VERSION)

    async def _ok(self, request: Request) -> Response:
        return Response("ok", media_type="text/plain")

    async def _delayed(self) -> None:
        """The latency fault, which is added to every request: discovery's too."""
        if self.state.faults.latency:
            await asyncio.sleep(self.state.faults.latency)

    async def _core_versions(self, request: Request) -> Response:
        await self._delayed()
        if (aggregated := self._aggregated(request, core=True)) is not None:
            return aggregated
        return json_response({"kind": "APIVersions", "versions": ["v1"],
                              "serverAddressByClientCIDRs": [
                                  {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})

    def _aggregated(self, request: Request, *, core: bool) -> Response | None:
        """Aggregated discovery of the core group or of the others, if asked for."""
        version = aggregated_discovery(request.headers.get("accept"))
        if version is None or not self.config.aggregated_discovery:
            return None
        return json_response(*discovery_documents.aggregated(self.state.registry, version,
                                                               core=core))

    async def _group_list(self, request: Request) -> Response:
        await self._delayed()
        if (aggregated := self._aggregated(request, core=False)) is not None:
            return aggregated
        groups = [discovery_documents.api_group(g, vs)
                  for g, vs in self.state.registry.groups().items()]
        return json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})

    # --- resources -----------------------------------------------------------------------

    async def _core(self, request: Request) -> Response:
        parts = [p for p in request.path_params["rest"].split("/") if p]
        return await self._guarded(request, lambda: self._route(request, "", parts))

    async def _groups(self, request: Request) -> Response:
        parts = [p for p in request.path_params["rest"].split("/") if p]
        if len(parts) == 1:
            versions = self.state.registry.groups().get(parts[0])
            if not versions:
                return error_response(ApiError(404, "NotFound", f"group {parts[0]} not found"))
            return json_response(discovery_documents.api_group(parts[0], versions))
        return await self._guarded(request, lambda: self._route(request, parts[0], parts[1:]))

    async def _guarded(self, request: Request,
                       handler: Callable[[], Awaitable[Response]]) -> Response:
        self.requests += 1
        self.request_log.append((request.method, request.url.path,
                                 dict(request.query_params)))
        faults = self.state.faults
        if faults.latency:
            await asyncio.sleep(faults.latency)
        watch = request.query_params.get("watch") in GO_TRUE
        status = faults.take_failure(request.url.path, watch=watch)
        if status is not None:
            reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
                      504: "Timeout"}.get(status, "InternalError")
            return error_response(ApiError(status, reason, f"injected fault: {status}"))
        try:
            return await handler()
        except ApiError as exc:
            return error_response(exc)

    async def _route(self, request: Request, group: str, parts: list[str]) -> Response:
        if not parts:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        version, rest = parts[0], parts[1:]
        if not rest:
            return json_response(discovery_documents.resource_list(self.state.registry, group,
                                                                   version))
        namespace: str | None = None
        registry = self.state.registry
        if rest[0] == "namespaces" and len(rest) >= 3 and registry.get(group, version, rest[2]):
            namespace, rest = rest[1], rest[2:]
        rtype = registry.get(group, version, rest[0])
        if rtype is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if rtype.plural in self.state.faults.forbidden:
            user = "system:serviceaccount:netsight:netsight"
            scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
            raise ApiError(403, "Forbidden", f'{rtype.plural}{"." + group if group else ""} is '
                           f'forbidden: User "{user}" cannot {request.method.lower()} resource '
                           f'"{rtype.plural}" in API group "{group}"{scope}')
        name = rest[1] if len(rest) > 1 else None
        if name is None:
            return await self._collection(request, rtype, namespace)
        if len(rest) > 2:
            return await self._subresource(request, rtype, namespace, name, "/".join(rest[2:]))
        return await self._item(request, rtype, namespace, name)

    async def _body(self, request: Request) -> Any:
        raw = await request.body()
        try:
            if "yaml" in request.headers.get("content-type", ""):
                return yaml.safe_load(raw)
            return orjson.loads(raw)
        except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
            raise ApiError(400, "BadRequest", f"cannot decode the request body: {exc}") from None

    async def _collection(self, request: Request, rtype: ResourceType,
                          namespace: str | None) -> Response:
        if request.method == "POST":
            body = await self._body(request)
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "the body must be an object")
            if rtype.kind == "TokenReview" or rtype.kind == "SubjectAccessReview":
                return json_response(self.access.review(
                    rtype.kind, body, request.headers.get("authorization")), 201)
            created = self.state.create(rtype, body, namespace)
            return json_response(created, 201)
        if request.method != "GET":
            raise ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed here")
        params = request.query_params
        selection = self._selection(params.get("labelSelector"), params.get("fieldSelector"),
                                    namespace)
        metadata_only = wants_metadata_only(request.headers.get("accept"))
        if metadata_only:
            self.metadata_requests.append(request.url.path)
        if params.get("watch") in GO_TRUE:
            return self._watch(request, rtype, selection, metadata_only)
        body = orjson.dumps(await self.lists.answer(rtype, selection, params, metadata_only))
        if self.state.faults.slow_body:
            return StreamingResponse(slowly(body, self.state.faults), media_type=JSON)
        return Response(body, media_type=JSON)

    def _selection(self, labels: str | None, fields: str | None,
                   namespace: str | None) -> Selection:
        try:
            return Selection(
                namespace=namespace,
                labels=parse_selector_string(labels) if labels else None,
                fields=parse_field_selector(fields) if fields else (),
            )
        except ValueError as exc:
            raise ApiError(400, "BadRequest", str(exc)) from None

    def _watch(self, request: Request, rtype: ResourceType, selection: Selection,
               metadata_only: bool = False) -> Response:
        params = request.query_params
        bookmarks = params.get("allowWatchBookmarks") in GO_TRUE
        try:
            timeout = min(float(params.get("timeoutSeconds") or self.config.max_watch_seconds),
                          self.config.max_watch_seconds)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds") from None
        self.watch_log.append((request.url.path, params.get("resourceVersion")))
        version = params.get("resourceVersion")
        try:
            self.state.check_watch_from(version)
        except ApiError as exc:
            if exc.code != 410 or self.config.gone_as_http:
                raise
            line = orjson.dumps({"type": "ERROR", "object": exc.status()}) + b"\n"
            return StreamingResponse(once(line), media_type=JSON)
        stream = self._stream(rtype, selection, version, bookmarks, timeout, metadata_only)
        return StreamingResponse(stream, media_type=JSON)

    async def _stream(self, rtype: ResourceType, selection: Selection, version: str | None,
                      bookmarks: bool, timeout: float, metadata_only: bool = False
                      ) -> AsyncIterator[bytes]:
        """The watch's events as they come; whatever is queued goes out in one write (as
        the API server sends it), so a burst of writes costs one send, not one each."""
        state, loop = self.state, asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # Registered here, inside the stream, so the finally below always unregisters it:
        # a client gone before the body starts must not leave a queue that grows forever.
        try:
            watcher = state.open_watch(rtype, selection, version, metadata_only=metadata_only)
        except ApiError as exc:  # compacted between the check and now
            yield orjson.dumps({"type": "ERROR", "object": exc.status()}) + b"\n"
            return
        faults = state.faults
        try:
            while True:
                if faults.stalled:
                    # A stalled stream sends nothing, yet loses nothing: events wait in the
                    # queue (as bytes wait in a stuck TCP connection), and so does the end
                    # of the watch. The client must notice the silence, reconnect, and
                    # resume from its last resourceVersion.
                    await asyncio.sleep(0.02)
                    continue
                if faults.slow_body:
                    await asyncio.sleep(faults.slow_body)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return
                if not watcher.pending:
                    wait = min(remaining, self.config.bookmark_interval) if bookmarks \
                        else remaining
                    try:
                        async with asyncio.timeout(wait):
                            await watcher.ready.wait()
                    except TimeoutError:
                        # A bookmark says every event up to state.rv was sent, and a client
                        # resumes from it: none while a write that landed in the timeout's
                        # turn of the loop waits (kube-apiserver's watch cache sends its
                        # bookmarks in line with the events). As from that cache, none
                        # before the storage has reached where the watch starts (after a
                        # restore to an older version it would name one before that).
                        if bookmarks and not watcher.pending and state.rv >= watcher.after:
                            yield orjson.dumps({"type": "BOOKMARK", "object": {
                                "kind": rtype.kind, "apiVersion": rtype.api_version,
                                "metadata": {"resourceVersion": str(state.rv)}}}) + b"\n"
                    continue  # whatever woke it, a stall begun meanwhile holds it back
                lines = watcher.take()
                if None in lines:  # the stream ends after what came before
                    lines = lines[:lines.index(None)]
                    if lines:
                        yield b"".join(lines)  # type: ignore[arg-type]
                    return
                if lines:
                    yield b"".join(lines)  # type: ignore[arg-type]
        finally:
            state.close_watch(watcher)

    async def _item(self, request: Request, rtype: ResourceType, namespace: str | None,
                    name: str) -> Response:
        state = self.state
        if rtype.namespaced and namespace is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        match request.method:
            case "GET":
                return json_response(state.get(rtype, namespace, name))
            case "PUT":
                body = await self._body(request)
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "the body must be an object")
                return json_response(state.replace(rtype, body, namespace, name))
            case "PATCH":
                body = await self._body(request)
                kind = request.headers.get("content-type", "application/merge-patch+json")
                return json_response(state.patch(rtype, namespace, name, body, kind))
            case "DELETE":
                return json_response(state.delete(rtype, namespace, name))
        raise ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed here")

    async def _subresource(self, request: Request, rtype: ResourceType,
                           namespace: str | None, name: str, subresource: str) -> Response:
        """``status`` (of any kind) and a pod's ``ephemeralcontainers`` (subresources.py)."""
        if rtype.namespaced and namespace is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        part = subresource_part(rtype, subresource)
        current = self.state.get(rtype, namespace, name)
        if request.method == "GET":
            return json_response(current)
        if request.method not in ("PUT", "PATCH"):
            raise ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed here")
        body = await self._body(request)
        kind = request.headers.get("content-type", "application/merge-patch+json")
        updated = write_subresource(current, part, body, kind if request.method == "PATCH"
                                    else None)
        return json_response(self.state.replace(rtype, updated, namespace, name, owned=True))

    def restore(self, checkpoint: Checkpoint) -> int:
        """The storage back to ``checkpoint`` (SimState.restore), continue tokens of the
        newer state refused; returns the watches ended."""
        self.lists.forget()
        return self.state.restore(checkpoint)

    # --- admin ---------------------------------------------------------------------------

    async def _faults(self, request: Request) -> Response:
        """Inject faults: {"latency": s, "fail": {"status", "count", "pathContains"},
        "forbid": [plural], "allow": [plural], "stall": bool, "slowBody": s,
        "closeWatches": true, "expireWatches": true, "compact": true, "checkpoint": true,
        "restore": true (the storage back to the last checkpoint)}."""
        body = orjson.loads(await request.body() or b"{}")
        faults, state = self.state.faults, self.state
        if "latency" in body:
            faults.latency = float(body["latency"])
        if "slowBody" in body:
            faults.slow_body = float(body["slowBody"])
        if body.get("checkpoint"):
            self.checkpoint = state.checkpoint()
        if body.get("restore"):
            if self.checkpoint is None:
                return error_response(ApiError(409, "Conflict", "no checkpoint to restore"))
            return json_response({"closedWatches": self.restore(self.checkpoint)})
        if "fail" in body:
            fail = body["fail"]
            faults.fail(int(fail["status"]), int(fail.get("count", 1)),
                        path_contains=str(fail.get("pathContains", "")),
                        watch_only=bool(fail.get("watchOnly", False)))
        faults.forbidden.update(body.get("forbid", []))
        faults.forbidden.difference_update(body.get("allow", []))
        if "stall" in body:
            faults.stalled = bool(body["stall"])
        closed = 0
        if body.get("expireWatches"):
            closed = state.expire_all_watches()
        elif body.get("closeWatches"):
            closed = state.close_all_watches()
        if body.get("compact"):
            state.compact()
        return json_response({"closedWatches": closed})

    async def _dataplane(self, request: Request) -> Response:
        """Configure the simulated data plane (``Network.configure``); answers its settings."""
        try:
            return json_response(self.state.network.configure(
                orjson.loads(await request.body() or b"{}")))
        except (orjson.JSONDecodeError, NetworkConfigError) as exc:
            return error_response(ApiError(400, "BadRequest", str(exc)))

    async def _access(self, request: Request) -> Response:
        """Set the TokenReview/SubjectAccessReview policy (``AccessPolicy.configure``)."""
        try:
            return json_response(self.access.configure(orjson.loads(await request.body()
                                                                    or b"{}")))
        except ApiError as exc:
            return error_response(exc)

    async def _sim_state(self, request: Request) -> Response:
        counts = {f"{g}/{k}" if g else k: len(objs) for (g, k), objs in
                  self.state.objects.items()}
        return json_response({"resourceVersion": self.state.rv, "objects": counts,
                              "watches": len(self.state.watchers), "requests": self.requests})


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (for ``asyncio.Runner``), else asyncio's:
    a simulator process under churn spends much of its time in the loop and its sockets."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - platforms without uvloop (Windows)
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


class SimServer:
    """Runs a :class:`SimApiServer` with uvicorn on a loopback port, in the running loop."""

    def __init__(self, state: SimState | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, config: SimConfig | None = None, control: bool = True,
                 kubelet: KubeletConfig | None = None) -> None:
        self.api = SimApiServer(state, config, control=control)
        self.host, self.port = host, port
        # While serving, when asked for: pods created through the API run (probe pods too).
        self.kubelet = Kubelet(self.api.state, kubelet) if kubelet is not None else None
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def state(self) -> SimState:
        return self.api.state

    @property
    def access(self) -> AccessPolicy:
        return self.api.access

    @property
    def control_token(self) -> str | None:
        """The bearer token of the ``/sim/`` endpoints; None where they are not served."""
        return self.api.control_token

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by accepted connections (Linux): without it a response written in two
        # parts waits on the client's delayed ACK, ~40 ms per request on a kept-alive
        # connection (the asyncio transports of these sockets leave Nagle on).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        # log_config=None: uvicorn's loggers are the process's; the demo's simulator must
        # not give them handlers of its own over netsight's (log_lines.py).
        config = uvicorn.Config(self.api.app, log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=1, log_config=None)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        if self.kubelet is not None:
            self.kubelet.start()
        return self.url

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        if self.kubelet is not None:
            await self.kubelet.stop()
        self.state.close_all_watches()
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self._task, 5)
        self._server = self._task = None

    async def restart(self, checkpoint: Checkpoint | None = None, *, downtime: float = 0.0
                      ) -> None:
        """Stop serving (every connection closes), restore ``checkpoint`` if given (an API
        server restarted on storage restored to an older resourceVersion), and serve on the
        same port again after ``downtime`` seconds, refusing connections meanwhile."""
        await self.stop()
        if checkpoint is not None:
            self.api.restore(checkpoint)
        await asyncio.sleep(downtime)
        await self.start()

    def reset_connections(self) -> int:
        """Fault: abort every open connection, as a crashed server or a lost route does: the
        client sees a reset, not the orderly end of its watch. Returns how many."""
        connections = list(self._server.server_state.connections) if self._server else []
        for connection in connections:
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()
        return len(connections)

    async def __aenter__(self) -> SimServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def write_kubeconfig(self, path: Path, *, token: str = "sim-token",
                         context: str = "netsight-sim") -> Path:
        """A kubeconfig that points kubectl and kubernetes-asyncio at this server."""
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        }
        path.write_text(yaml.safe_dump(config))
        return path
