"""Running ``netsight serve``: one uvloop event loop, the live graph, and a transport.

HTTP: uvicorn serves the Starlette app while the informers sync (``/readyz`` tells when they
have). Shutdown on SIGTERM/SIGINT, in order: answer every new request with 503 and
``Connection: close`` (draining.py), stop accepting connections, end the change streams and
``subscriptions/listen`` streams, let in-flight MCP exchanges finish — the response sent,
not just the tool returned — within ``shutdown_timeout``, stop the MCP session manager (which
cancels whatever is still running and closes the sessions' streams), close the remaining
HTTP connections within what is left of that budget, then stop the informers and the
simulator. The process then exits 0.

stdio: the MCP server reads JSON-RPC from stdin and writes to stdout (logs go to stderr),
until stdin closes or a signal arrives. It waits briefly for the first sync, so the first
answer of a freshly started process is not about a half-listed cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from types import FrameType
from typing import IO, Literal

import uvicorn
from sse_starlette.sse import AppStatus

from netsight.analyzers.core.calling import AnyTool
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.informers import InformerSettings
from netsight.knowledge.knowledge_base import knowledge_base
from netsight.server import auth
from netsight.server.app import Service, build_service
from netsight.server.cluster import LiveGraph, live_graph
from netsight.server.config import LOOPBACK, ConfigError, LogFormat, Settings, Transport
from netsight.server.log_lines import configure_logging
from netsight.server.stdio_transport import stdio_streams
from netsight.server.telemetry import CONVENTIONS, Telemetry, setup
from netsight.sim.demo import DEMO_TOKEN

log = logging.getLogger(__name__)

STDIO_SYNC_WAIT = 15.0  # seconds stdio waits for the first sync before serving anyway


class HttpServer(uvicorn.Server):
    """uvicorn with netsight's shutdown order and the MCP session manager's lifetime."""

    def __init__(self, service: Service, settings: Settings,
                 sock: socket.socket | None = None) -> None:
        config = uvicorn.Config(
            # log_config=None: uvicorn's records go to the root logger, in netsight's format
            # (log_lines.py) and to its log exporters, rather than to handlers of its own.
            service.app, lifespan="off", log_level=settings.log_level.lower(), log_config=None,
            http=http_protocol(),
            access_log=settings.log_level == "DEBUG",
            timeout_graceful_shutdown=int(max(1, settings.shutdown_timeout)),
        )
        super().__init__(config)
        if config.access_log:  # another uvicorn in the process (the demo's API server) may
            logging.getLogger("uvicorn.access").propagate = True  # have turned it off
        # sse-starlette (the SDK's SSE responses) ends every SSE response within 0.5 s of
        # uvicorn's should_exit, in-flight tool call responses included, which defeats
        # draining. Its streams end here when the session manager stops, after the drain.
        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
        self.service, self.settings = service, settings
        self.socket = sock or listen(settings)
        self.port: int = self.socket.getsockname()[1]
        self._stop_sessions = asyncio.Event()
        self._sessions_task: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.settings.host}]" if ":" in self.settings.host else self.settings.host
        return f"http://{host}:{self.port}"

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        started = asyncio.Event()
        sessions = self._sessions_task = asyncio.create_task(self._run_sessions(started),
                                                             name="mcp:sessions")
        waiter = asyncio.ensure_future(started.wait())
        await asyncio.wait({waiter, sessions}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():  # the session manager failed to start
            waiter.cancel()
            sessions.result()
        try:
            await super().serve(sockets=sockets or [self.socket])
        finally:
            await self.end_sessions()

    async def _run_sessions(self, started: asyncio.Event) -> None:
        # Entered and left in this one task: the session manager's task group requires it.
        async with self.service.running():
            started.set()
            await self._stop_sessions.wait()

    async def end_sessions(self) -> None:
        self._stop_sessions.set()
        if self._sessions_task is not None:
            await self._sessions_task
            self._sessions_task = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Like uvicorn's, minus re-raising the signal once the server stopped: that would
        kill the process before the informers and the simulator are stopped."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        originals = {sig: signal.signal(sig, self.handle_exit)
                     for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # From the signal on, new requests (kept-alive connections too) get a clean 503.
        self.service.admission.close()
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.shutdown_timeout
        admission = self.service.admission
        admission.close()
        for server in self.servers:
            server.close()  # stop accepting
        self.service.feed.close()  # change streams end; their connections close
        self.service.notifier.close()  # so do subscriptions/listen streams, gracefully
        if admission.open:
            log.info("draining %d MCP exchange(s)", admission.open)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(admission.idle.wait(), self.settings.shutdown_timeout)
        await self.end_sessions()  # cancels what is left, closes MCP streams
        # One budget for the whole drain: uvicorn waits for the other responses (a graph
        # export, say) with what is left of it, then cancels them.
        self.config.timeout_graceful_shutdown = max(1, math.ceil(deadline - loop.time()))
        await super().shutdown(sockets)

    async def start(self) -> str:
        """Serve in a background task (tests); returns the URL once accepting."""
        self._task = asyncio.create_task(self.serve(), name="http")
        while not self.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        return self.url

    async def stop(self) -> None:
        self.should_exit = True
        if self._task is not None:
            await self._task
            self._task = None


def listen(settings: Settings, backlog: int = 2048) -> socket.socket:
    """The listening socket, bound before anything starts: a busy port fails fast."""
    sock = socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by accepted connections (Linux): with Nagle on, an answer written in
        # parts waits for the client's delayed ACK, up to ~40 ms on a kept-alive connection.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((settings.host, settings.port))
        sock.listen(backlog)  # connections queue from now, before uvicorn accepts them
    except OSError as exc:
        sock.close()
        raise ConfigError("--host/--port", f"cannot listen on {settings.host}:{settings.port} "
                          f"({exc.strerror or exc})") from None
    return sock


async def serve(settings: Settings, *, tools: Mapping[str, AnyTool] = TOOLS,
                informers: InformerSettings | None = None,
                announce: Callable[[str], None] | None = None,
                telemetry: Telemetry | None = None) -> None:
    if settings.transport is Transport.HTTP and settings.host not in LOOPBACK \
            and not settings.authenticates:
        log.warning("serving on %s without authenticating callers (--auth none): keep the "
                    "port private", settings.host)
    sock = listen(settings) if settings.transport is Transport.HTTP else None
    with contextlib.closing(sock) if sock is not None else contextlib.nullcontext():
        async with live_graph(settings, informers=informers) as graph, \
                knowledge_base(settings.knowledge_db, graph.store,
                               time_limit=settings.tool_timeout,
                               ready=lambda: graph.ready) as knowledge:
            checks = auth.middleware(settings, graph.transport) if sock is not None else []
            service = build_service(graph, settings, tools=tools, middleware=checks,
                                    telemetry=telemetry, knowledge=knowledge)
            if sock is None:
                await _serve_stdio(service, graph, announce)
                return
            server = HttpServer(service, settings, sock)
            if announce is not None:
                announce(f"netsight: MCP at {server.url}/mcp, dashboard at {server.url}/dashboard, "
                         f"graph at {server.url}/api/graph "
                         f"({'demo cluster' if settings.demo else 'cluster'} "
                         f"'{settings.cluster_name}'); readiness at {server.url}/readyz")
                if settings.namespaces is not None:
                    announce(f"netsight: watching only namespaces {', '.join(settings.namespaces)}"
                             " (NAMESPACE): answers say what lies outside")
                if settings.demo and settings.authenticates:
                    announce("netsight: callers need a bearer token; the demo cluster knows "
                             f"'{DEMO_TOKEN}'")
            await server.serve()


async def _serve_stdio(service: Service, graph: LiveGraph,
                       announce: Callable[[str], None] | None) -> None:
    deadline = time.monotonic() + STDIO_SYNC_WAIT
    while not graph.ready and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    if announce is not None:
        announce(f"netsight: MCP over stdio (cluster '{graph.store.cluster_name}', "
                 f"{'synced' if graph.ready else 'still syncing'})")
    async with stdio_streams() as (read_stream, write_stream):
        await service.mcp.run(read_stream, write_stream,
                              service.mcp.create_initialization_options())


def run(settings: Settings, *, err: IO[str] | None = None) -> int:
    """Run until stopped: the ``netsight serve`` command."""
    stream = err or sys.stderr
    # The exporters OTEL_*_EXPORTER / OTEL_EXPORTER_OTLP_* ask for (exporting.py); a bad
    # value stops the server here, before anything is configured.
    telemetry = setup(settings.cluster_name, log_level=settings.log_level)
    # Records in a span carry its ids; LOG_FORMAT=json for log pipelines that parse.
    configure_logging(settings.log_level, sys.stderr, settings.log_format)
    if telemetry.exporting:
        log.info("telemetry: exporting %s (conventions: %s)", ", ".join(telemetry.exporting),
                 CONVENTIONS)

    def announce(line: str) -> None:
        if settings.log_format is LogFormat.JSON:
            log.info("%s", line)  # a log pipeline parses every line of stderr
            return
        stream.write(line + "\n")
        stream.flush()

    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        main = serve(settings, announce=announce, telemetry=telemetry)
        if settings.transport is Transport.STDIO:
            main = _cancel_on_signals(main)
        with contextlib.suppress(KeyboardInterrupt):
            runner.run(main)
    telemetry.shutdown()  # flushes batched spans to the collector
    return 0


async def _cancel_on_signals(main: Awaitable[None]) -> None:
    """stdio has no uvicorn to catch signals: cancel the server (cleanup runs) on them."""
    task = asyncio.ensure_future(main)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def http_protocol() -> type[asyncio.Protocol] | Literal["h11"]:
    """httptools' parser (C) where installed, else h11 (pure Python, slower on every
    call); with httptools, a response's header block leaves with its body (onewrite.py)."""
    try:
        from netsight.server.onewrite import OneWriteHttpToolsProtocol
    except ImportError:  # pragma: no cover - platforms without a httptools wheel
        return "h11"
    return OneWriteHttpToolsProtocol


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - platforms without uvloop (Windows)
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory
