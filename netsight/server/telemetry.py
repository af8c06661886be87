"""OpenTelemetry for ``netsight serve``: a span and a duration per MCP message, counters of
findings and tool errors, gauges of the live graph, ``/metrics`` in Prometheus text.

netsight follows the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai
v0.1.0, ``docs/gen-ai/mcp.md``; the MCP conventions moved there from
open-telemetry/semantic-conventions after v1.41):

- every MCP request or notification the server receives is a SERVER span named
  ``{mcp.method.name} {target}`` — ``tools/call diagnose_service``, ``tools/list``,
  ``initialize`` — whose parent is the trace context the client put in ``params._meta``
  (``traceparent``/``tracestate``), with ``mcp.method.name``, ``jsonrpc.request.id``,
  ``mcp.protocol.version``, ``mcp.session.id``, ``network.*`` and ``client.*``, and for a
  tool call ``gen_ai.tool.name`` and ``gen_ai.operation.name = execute_tool`` (the GenAI
  execute_tool span the conventions make it compatible with). A JSON-RPC error sets
  ``error.type`` and ``rpc.response.status_code`` to its code; a tool's ``isError`` answer
  sets ``error.type = tool_error`` and netsight's ToolError code in ``netsight.error.code``;
  status ERROR with the message either way. ``gen_ai.tool.call.arguments`` and ``.result``
  are recorded only when opted in (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``):
  they name objects that the trace's readers may not be allowed to see.
- metrics ``mcp.server.operation.duration`` and ``mcp.server.session.duration``
  (histograms, seconds, the advised buckets); netsight's own under ``netsight.*``:
  ``netsight.tool.findings`` (by tool and severity), ``netsight.tool.errors`` (by tool and
  code), and gauges read from the live graph when collected.

Values a client chooses (a method or tool name outside what netsight serves) become
``_OTHER`` in span names and metric attributes, so clients cannot mint series.

The providers belong to a ``Telemetry`` object handed to the server, never to OpenTelemetry's
global providers (which can be set once per process): tests build as many as they like. The
MCP SDK's own span middleware is replaced by :meth:`Telemetry.middleware` (mcp_tools.py).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk._logs import LogRecordProcessor
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from netsight.graph.store.sync_status import SyncState
from netsight.server import exporting
from netsight.server.log_lines import export_logs, stop_exporting_logs

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import LoggerProvider

    from netsight.knowledge.knowledge_base import KnowledgeBase
    from netsight.server.cluster import LiveGraph

log = logging.getLogger(__name__)

SCOPE = "netsight.server"
METRICS_ENDPOINT = "/metrics"
CONVENTIONS = "semantic-conventions-genai v0.1.0"
# The buckets the MCP conventions advise for both duration histograms.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0,
                    300.0)
SHUTDOWN_TIMEOUT = 3.0  # seconds to flush exporters when the server stops
MAX_ATTRIBUTE_CHARS = 1024  # gen_ai.tool.call.arguments / .result are cut to this
MAX_NAME_CHARS = 128  # of a tool name outside the catalog, on its span
OTHER = "_OTHER"  # the semantic conventions' label for values outside a known set
TOOL_ERROR = "tool_error"  # error.type of an isError answer, per the conventions
TOOLS_CALL = "tools/call"
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# mcp.method.name's well-known values, and the methods of 2026-07-28 the SDK serves.
METHODS = frozenset({
    "completion/complete", "elicitation/create", "initialize", "logging/setLevel",
    "notifications/cancelled", "notifications/initialized", "notifications/message",
    "notifications/progress", "notifications/prompts/list_changed",
    "notifications/resources/list_changed", "notifications/resources/updated",
    "notifications/roots/list_changed", "notifications/tools/list_changed", "ping",
    "prompts/get", "prompts/list", "resources/list", "resources/read", "resources/subscribe",
    "resources/templates/list", "resources/unsubscribe", "roots/list",
    "sampling/createMessage", "tools/call", "tools/list",
    "server/discover", "subscriptions/listen",
})

_W3C = TraceContextTextMapPropagator()
_SESSION_HEADER = "mcp-session-id"


class Telemetry:
    """The tracer and instruments MCP messages report to, and the registry ``/metrics``
    reads."""

    def __init__(self, *, tracer_provider: trace.TracerProvider,
                 meter_provider: metrics.MeterProvider,
                 logger_provider: LoggerProvider | None = None,
                 registry: CollectorRegistry | None = None,
                 capture_content: bool = False, exporting: Sequence[str] = ()) -> None:
        self.tracer_provider, self.meter_provider = tracer_provider, meter_provider
        self.logger_provider = logger_provider
        self.log_handler: logging.Handler | None = None  # sends records to logger_provider
        self.registry = registry
        self.capture_content = capture_content
        self.exporting = tuple(exporting)  # what leaves the process, e.g. ("traces: otlp",)
        self.tracer = tracer_provider.get_tracer(SCOPE)
        self.meter = meter_provider.get_meter(SCOPE)
        self.operation_duration = self.meter.create_histogram(
            "mcp.server.operation.duration", unit="s",
            description="MCP request or notification duration as observed on the receiver "
                        "from the time it was received until the result or ack is sent",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self.session_duration = self.meter.create_histogram(
            "mcp.server.session.duration", unit="s",
            description="The duration of the MCP session as observed on the MCP server",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        # Counted in plain dicts and reported when collected: a call adds to a dict entry per
        # finding instead of an SDK measurement (attribute hashing, locks) per severity.
        self.finding_counts: dict[tuple[str, str], int] = {}  # (tool, severity)
        self.error_counts: dict[tuple[str, str], int] = {}  # (tool, code)
        self.meter.create_observable_counter(
            "netsight.tool.findings", [self._observe_findings], unit="{finding}",
            description="Findings in tool answers, by tool and severity")
        self.meter.create_observable_counter(
            "netsight.tool.errors", [self._observe_errors], unit="{error}",
            description="Tool calls answered with a ToolError, by tool and code")
        self._metric_attributes: dict[tuple[Any, ...], dict[str, str]] = {}
        self.tools: frozenset[str] | None = None  # the catalog; None: any name is a tool
        self._observing = False

    @classmethod
    def disabled(cls) -> Telemetry:
        return cls(tracer_provider=trace.NoOpTracerProvider(),
                   meter_provider=metrics.NoOpMeterProvider())

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
                         ) -> HandlerResult:
        """MCP server middleware: one span and one duration per message received."""
        message = Message(self, ctx)
        with self.tracer.start_as_current_span(
                message.span_name, context=message.parent(), kind=SpanKind.SERVER,
                record_exception=False, set_status_on_exception=False) as span:
            if span.is_recording():
                span.set_attributes(message.span_attributes())
                message.span = span
            try:
                result = await call_next(ctx)
            except MCPError as exc:
                message.failed(str(exc.error.code), exc.error.message, rpc=True)
                raise
            except ValidationError:
                # As the SDK answers it: pydantic's message would quote the client's input.
                message.failed(str(INVALID_PARAMS), "Invalid request parameters", rpc=True)
                raise
            except BaseException as exc:  # cancelled (shutdown), or a bug past the handler
                message.failed(type(exc).__qualname__, str(exc)[:MAX_ATTRIBUTE_CHARS])
                raise
            else:
                if message.tool is not None:
                    message.answered(result)
                return result
            finally:
                message.done()

    def metric_attributes(self, key: tuple[Any, ...]) -> dict[str, str]:
        """The duration's attributes for ``key`` (see ``Message.done``), one dict per key
        for the process's lifetime."""
        attributes = self._metric_attributes.get(key)
        if attributes is None:
            method, tool, error_type, rpc_code, version, transport = key
            attributes = {"mcp.method.name": method, "network.transport": transport}
            if tool is not None:
                attributes["gen_ai.tool.name"] = tool
                attributes["gen_ai.operation.name"] = "execute_tool"
            if version:
                attributes["mcp.protocol.version"] = version
            if transport == "tcp":
                attributes["network.protocol.name"] = "http"
            if error_type is not None:
                attributes["error.type"] = error_type
            if rpc_code is not None:
                attributes["rpc.response.status_code"] = rpc_code
            self._metric_attributes[key] = attributes
        return attributes

    def session_started(self, ctx: ServerRequestContext[Any, Any], transport: str) -> None:
        """Times a handshake-era session from ``initialize`` until its connection closes."""
        # The SDK's ServerSession keeps its Connection private (see notifying.py); without
        # it the session is not timed.
        connection = getattr(ctx.session, "_connection", None)
        exit_stack = getattr(connection, "exit_stack", None)
        if exit_stack is None:
            return
        started = time.perf_counter()
        attributes = {"network.transport": transport}
        if ctx.protocol_version:
            attributes["mcp.protocol.version"] = str(ctx.protocol_version)
        if transport == "tcp":
            attributes["network.protocol.name"] = "http"

        def ended() -> None:
            self.session_duration.record(time.perf_counter() - started, attributes)

        exit_stack.callback(ended)

    def _observe_findings(self, _: CallbackOptions) -> Iterable[Observation]:
        # tuple(): one C-level copy, as an OTLP export collects on its own thread
        for (tool, severity), count in tuple(self.finding_counts.items()):
            yield Observation(count, {"gen_ai.tool.name": tool,
                                      "netsight.finding.severity": severity})

    def _observe_errors(self, _: CallbackOptions) -> Iterable[Observation]:
        for (tool, code), count in tuple(self.error_counts.items()):
            yield Observation(count, {"gen_ai.tool.name": tool, "netsight.error.code": code})

    def attach(self, graph: LiveGraph, *, tools: Iterable[str],
               in_flight: Callable[[], int] | None = None,
               review_failures: Callable[[], Mapping[str, int]] | None = None,
               knowledge: KnowledgeBase | None = None) -> None:
        """What one service's telemetry reads: the catalog's tool names (metric labels), and
        gauges of the live graph and of ``in_flight`` calls, and the count of access reviews
        that could not be made (``review_failures``, by review kind), read at collection (a
        scrape, an OTLP export)."""
        self.tools = frozenset(tools)
        if self._observing:  # instruments are registered once per meter
            return
        self._observing = True
        store = graph.store

        def generation(_: CallbackOptions) -> Iterable[Observation]:
            yield Observation(store.generation)

        def nodes(_: CallbackOptions) -> Iterable[Observation]:
            yield Observation(store.view().node_count)

        def ready(_: CallbackOptions) -> Iterable[Observation]:
            yield Observation(1 if graph.ready else 0)

        def synced(_: CallbackOptions) -> Iterable[Observation]:
            # A copy in one C-level call: an OTLP export collects on its own thread while
            # the informers add kinds on the loop.
            for kind, status in tuple(store.sync.items()):
                yield Observation(1 if status.state is SyncState.SYNCED else 0,
                                  {"k8s.kind": kind})

        def states(_: CallbackOptions) -> Iterable[Observation]:
            # Every state of every kind, 1 for the one it is in: each series keeps its
            # labels, so a change of state is a change of value, never a vanished series.
            for kind, status in tuple(store.sync.items()):
                for state in SyncState:
                    yield Observation(1 if status.state is state else 0,
                                      {"k8s.kind": kind, "state": state.value})

        self.meter.create_observable_gauge(
            "netsight.graph.generation", [generation], unit="{change}",
            description="Graph generation: changes applied since start")
        self.meter.create_observable_gauge(
            "netsight.graph.nodes", [nodes], unit="{node}",
            description="Objects in the graph")
        self.meter.create_observable_gauge(
            "netsight.ready", [ready],
            description="1 once every watched kind is listed (/readyz answers 200), else 0")
        self.meter.create_observable_gauge(
            "netsight.informer.synced", [synced],
            description="1 while a kind's informer is listed and watching, else 0")
        self.meter.create_observable_gauge(
            "netsight.informer.state", [states],
            description="1 for the state each kind's informer is in (syncing, synced, "
                        "retrying, forbidden, stopped), 0 for the others")
        if in_flight is not None:
            def running(_: CallbackOptions) -> Iterable[Observation]:
                yield Observation(in_flight())

            self.meter.create_observable_gauge(
                "netsight.tool_calls.in_flight", [running], unit="{call}",
                description="MCP tool calls running now")
        if review_failures is not None:
            def failures(_: CallbackOptions) -> Iterable[Observation]:
                for review, count in tuple(review_failures().items()):
                    yield Observation(count, {"review": review})

            self.meter.create_observable_counter(
                "netsight.access_checks.failures", [failures], unit="{review}",
                description="TokenReviews and SubjectAccessReviews that could not be made "
                            "(each failed the requests that needed it), by review")
        if knowledge is not None:
            self._knowledge_metrics(knowledge)

    def _knowledge_metrics(self, knowledge: KnowledgeBase) -> None:
        writes = knowledge.writes

        def dropped(_: CallbackOptions) -> Iterable[Observation]:
            yield Observation(writes.dropped)

        def failed(_: CallbackOptions) -> Iterable[Observation]:
            yield Observation(writes.failed)

        def queued(_: CallbackOptions) -> Iterable[Observation]:
            yield Observation(writes.depth)

        self.meter.create_observable_counter(
            "netsight.knowledge.writes.dropped", [dropped], unit="{write}",
            description="Knowledge-base writes dropped because the write queue was full")
        self.meter.create_observable_counter(
            "netsight.knowledge.writes.failed", [failed], unit="{write}",
            description="Knowledge-base writes the database refused")
        self.meter.create_observable_gauge(
            "netsight.knowledge.queue.depth", [queued], unit="{write}",
            description="Knowledge-base writes waiting for the writer")

    async def metrics_endpoint(self, _: Request) -> Response:
        if self.registry is None:
            return Response("metrics are disabled\n", status_code=404, media_type="text/plain")
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT) -> None:
        """Flush and stop the exporters (spans and log records are batched), all at once and
        for at most ``timeout`` seconds: an unreachable collector retries for ~10 s per
        signal, and the process must exit within the pod's grace period. Idempotent."""
        if self.log_handler is not None:
            stop_exporting_logs(self.log_handler)
            self.log_handler = None
        providers = (self.tracer_provider, self.meter_provider, self.logger_provider)
        stops = [stop for provider in providers
                 if (stop := getattr(provider, "shutdown", None)) is not None]
        # Daemon threads: one still waiting on a collector at the deadline dies with the process.
        threads = [threading.Thread(target=stop, name="telemetry-shutdown", daemon=True)
                   for stop in stops]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.warning("exporters not flushed within %gs; dropping the rest", timeout)
        self.tracer_provider = trace.NoOpTracerProvider()
        self.meter_provider = metrics.NoOpMeterProvider()
        self.logger_provider = None


class Message:
    """One MCP message being handled: its span, and its duration when it is answered."""

    __slots__ = ("ctx", "error_type", "method", "rpc_code", "span", "span_name", "started",
                 "telemetry", "tool", "tool_name", "transport")

    def __init__(self, telemetry: Telemetry, ctx: ServerRequestContext[Any, Any]) -> None:
        self.telemetry, self.ctx = telemetry, ctx
        self.started = time.perf_counter()
        self.method = ctx.method if ctx.method in METHODS else OTHER
        self.tool_name: str | None = None  # as the client sent it
        self.tool: str | None = None  # for span names and metrics: a catalog tool or _OTHER
        if ctx.method == TOOLS_CALL:
            name = (ctx.params or {}).get("name")
            self.tool_name = name if isinstance(name, str) else ""
            known = telemetry.tools is None or self.tool_name in telemetry.tools
            self.tool = self.tool_name if known and self.tool_name else OTHER
        self.span_name = self.method if self.tool in (None, OTHER) \
            else f"{self.method} {self.tool}"
        self.transport = "pipe" if ctx.request is None else "tcp"  # stdio, or Streamable HTTP
        self.span: trace.Span | None = None  # None when not recording
        self.error_type: str | None = None
        self.rpc_code: str | None = None

    def parent(self) -> Context | None:
        meta = self.ctx.meta
        if meta and "traceparent" in meta:
            return _W3C.extract(meta)
        return None

    def span_attributes(self) -> dict[str, Any]:
        ctx = self.ctx
        attributes: dict[str, Any] = {"mcp.method.name": self.method,
                                      "network.transport": self.transport}
        if self.tool_name is not None:
            attributes["gen_ai.operation.name"] = "execute_tool"
            attributes["gen_ai.tool.name"] = self.tool_name[:MAX_NAME_CHARS]
            arguments = (ctx.params or {}).get("arguments")
            if self.telemetry.capture_content and arguments:
                attributes["gen_ai.tool.call.arguments"] = _json(arguments)
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        if ctx.protocol_version:
            attributes["mcp.protocol.version"] = str(ctx.protocol_version)
        request = ctx.request
        if request is not None:
            attributes["network.protocol.name"] = "http"
            scope = getattr(request, "scope", {})
            if version := scope.get("http_version"):
                attributes["network.protocol.version"] = version
            client = scope.get("client")
            if client:
                attributes["client.address"], attributes["client.port"] = client[0], client[1]
            session = request.headers.get(_SESSION_HEADER)
            if session:
                attributes["mcp.session.id"] = session
        return attributes

    def failed(self, error_type: str, message: str, *, rpc: bool = False) -> None:
        self.error_type = error_type
        if rpc:
            self.rpc_code = error_type
        if self.span is not None:
            self.span.set_attribute("error.type", error_type)
            if rpc:
                self.span.set_attribute("rpc.response.status_code", error_type)
            self.span.set_status(StatusCode.ERROR, message)

    def answered(self, result: HandlerResult) -> None:
        """Records a tool's answer (the wire dict the SDK made of the handler's
        ``CallToolResult``); telemetry never fails a call."""
        try:
            if isinstance(result, CallToolResult):  # a middleware further in returned one
                result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if isinstance(result, Mapping):
                self._record(result)
        except Exception:  # an answer of an unexpected shape: a bug to fix, not to pass on
            log.exception("telemetry: could not record the answer of %s", self.tool)

    def _record(self, result: Mapping[str, Any]) -> None:
        telemetry, span, tool = self.telemetry, self.span, self.tool or OTHER
        content = result.get("content") or [{}]
        text = content[0].get("text") if isinstance(content[0], dict) else None
        if result.get("isError") is True:
            code, message = _error_of(text)
            self.error_type = TOOL_ERROR
            errors, key = telemetry.error_counts, (tool, code)
            errors[key] = errors.get(key, 0) + 1
            if span is not None:
                span.set_attribute("error.type", TOOL_ERROR)
                span.set_attribute("netsight.error.code", code)
                span.set_status(StatusCode.ERROR, message)
            return
        data = result.get("structuredContent") or {}
        findings = data.get("findings")
        if isinstance(findings, list):
            counts = telemetry.finding_counts
            for finding in findings:
                key = (tool, str(finding.get("severity", "unknown")))
                counts[key] = counts.get(key, 0) + 1
            if span is not None:
                span.set_attribute("netsight.findings.count", len(findings))
        if span is not None:
            metadata = data.get("metadata")
            if isinstance(metadata, dict) and isinstance(metadata.get("graphGeneration"), int):
                span.set_attribute("netsight.graph.generation", metadata["graphGeneration"])
            if telemetry.capture_content and isinstance(text, str):
                span.set_attribute("gen_ai.tool.call.result", text[:MAX_ATTRIBUTE_CHARS])

    def done(self) -> None:
        telemetry, ctx = self.telemetry, self.ctx
        version = str(ctx.protocol_version) if ctx.protocol_version else ""
        key = (self.method, self.tool, self.error_type, self.rpc_code, version, self.transport)
        telemetry.operation_duration.record(time.perf_counter() - self.started,
                                            telemetry.metric_attributes(key))
        if ctx.method == "initialize" and self.error_type is None:
            telemetry.session_started(ctx, self.transport)


def _json(value: Any) -> str:
    # The question (object names, flags), never object bodies; cut like results.
    try:
        text = orjson.dumps(value, default=str).decode()
    except orjson.JSONEncodeError:  # e.g. an integer past 64 bits
        text = str(value)
    return text[:MAX_ATTRIBUTE_CHARS]


def _error_of(text: Any) -> tuple[str, str]:
    """The ToolError's code and message from an ``isError`` answer's JSON text."""
    with contextlib.suppress(orjson.JSONDecodeError, TypeError):
        error = orjson.loads(text)
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            return error["code"], str(error.get("message", ""))[:MAX_ATTRIBUTE_CHARS]
    return OTHER, ""


def setup(cluster_name: str, *, export: bool = True, log_level: str = "INFO",
          span_processors: Sequence[SpanProcessor] = (),
          metric_readers: Sequence[MetricReader] = (),
          log_processors: Sequence[LogRecordProcessor] = ()) -> Telemetry:
    """Telemetry for one server: Prometheus for ``/metrics``, and the exporters the
    environment asks for (``export``; exporting.py), logs at ``log_level`` and above.
    ``span_processors``/``metric_readers``/``log_processors``: more (tests: in-memory).

    Raises:
        ConfigError: an ``OTEL_*`` variable that names no exporter or protocol.
    """
    import os

    from opentelemetry.exporter.prometheus import PrometheusMetricReader

    if _true(os.environ.get("OTEL_SDK_DISABLED")):
        return Telemetry.disabled()
    registry = CollectorRegistry(auto_describe=True)
    # One instrumentation scope: otel_scope_* labels on every series would only add noise.
    prometheus = PrometheusMetricReader(registry=registry, scope_info_enabled=False)
    built = exporting.providers(cluster_name, _version(), span_processors=span_processors,
                                metric_readers=[prometheus, *metric_readers],
                                log_processors=log_processors, export=export)
    telemetry = Telemetry(
        tracer_provider=built.tracer or trace.NoOpTracerProvider(),
        meter_provider=built.meter or metrics.NoOpMeterProvider(),
        logger_provider=built.logger, registry=registry,
        capture_content=_true(os.environ.get(CAPTURE_CONTENT)), exporting=built.exporting)
    if built.logger is not None:
        telemetry.log_handler = export_logs(built.logger, log_level)
    return telemetry


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("netsight")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"
