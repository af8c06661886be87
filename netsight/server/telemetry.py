"""OpenTelemetry for ``netsight serve``: a span and a few metric updates per MCP tool call.

Per the architecture decisions (OpenTelemetry GenAI + MCP semantic conventions):

- every ``tools/call`` is a SERVER span ``execute_tool {tool}`` whose parent is the W3C trace
  context the agent put in ``params._meta`` (``traceparent``/``tracestate``), with the
  ``gen_ai.*``/``mcp.*`` attributes; a ToolError sets status ERROR and ``error.type`` to its
  code (``NOT_FOUND``, …) rather than the convention's generic ``tool_error``, so a trace
  tells what went wrong without opening the answer;
- metrics ``gen_ai.server.request.duration``, ``mcp.findings.total`` (by tool and severity)
  and ``mcp.errors.total`` (by tool and code), plus gauges read from the live graph when
  scraped; ``/metrics`` serves them in Prometheus text format;
- log records emitted inside a span carry its trace and span ids.

Traces and metrics leave the process only over OTLP/HTTP, and only when
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or a signal's own ``OTEL_EXPORTER_OTLP_*_ENDPOINT``) is set;
otherwise tracing is the API's no-op and metrics exist only for ``/metrics`` scrapes.

The providers belong to a ``Telemetry`` object handed to the server, never to OpenTelemetry's
global providers (which can be set once per process): tests build as many as they like, and
the MCP SDK's own instrumentation — which reports ``tools/call {tool}`` spans through the
global provider — stays a no-op, so a tool call is one span, not two.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import orjson
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.requests import Request
from starlette.responses import Response

from netsight.graph.store.sync_status import SyncState

if TYPE_CHECKING:
    from mcp_types import CallToolRequestParams, CallToolResult

    from netsight.knowledge.knowledge_base import KnowledgeBase
    from netsight.server.cluster import LiveGraph

log = logging.getLogger(__name__)

SERVICE_NAME = "netsight"
SCOPE = "netsight.server"
METRICS_ENDPOINT = "/metrics"
# Tool calls answer in milliseconds (targets: p50 5 ms, p99 15 ms); TOOL_TIMEOUT is 10 s.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                    2.5, 5.0, 10.0, 30.0)
SHUTDOWN_TIMEOUT = 3.0  # seconds to flush exporters when the server stops
MAX_ATTRIBUTE_CHARS = 1024  # gen_ai.tool.call.arguments / .result are cut to this
MAX_NAME_CHARS = 128  # of a tool name outside the catalog, on its span
OTHER = "_OTHER"  # the semantic conventions' label for values outside a known set
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(trace_context)s"

_W3C = TraceContextTextMapPropagator()
_SESSION_HEADER = "mcp-session-id"


class Telemetry:
    """The tracer and instruments tool calls report to, and the registry ``/metrics`` reads."""

    def __init__(self, *, tracer_provider: trace.TracerProvider,
                 meter_provider: metrics.MeterProvider,
                 registry: CollectorRegistry | None = None,
                 capture_results: bool = False, exporting: Sequence[str] = ()) -> None:
        self.tracer_provider, self.meter_provider = tracer_provider, meter_provider
        self.registry = registry
        self.capture_results = capture_results
        self.exporting = tuple(exporting)  # what leaves the process, e.g. ("otlp traces",)
        self.tracer = tracer_provider.get_tracer(SCOPE)
        self.meter = meter_provider.get_meter(SCOPE)
        self.duration = self.meter.create_histogram(
            "gen_ai.server.request.duration", unit="s",
            description="MCP tool call duration, from the request to its answer",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        # Counted in plain dicts and reported when collected: a call adds to a dict entry per
        # finding instead of an SDK measurement (attribute hashing, locks) per severity.
        self.finding_counts: dict[tuple[str, str], int] = {}  # (tool, severity)
        self.error_counts: dict[tuple[str, str], int] = {}  # (tool, code)
        self.meter.create_observable_counter(
            "mcp.findings.total", [self._observe_findings], unit="{finding}",
            description="Findings in tool answers, by tool and severity")
        self.meter.create_observable_counter(
            "mcp.errors.total", [self._observe_errors], unit="{error}",
            description="Tool calls answered with a ToolError, by tool and code")
        self._metric_attributes: dict[tuple[str, str | None], dict[str, str]] = {}
        self.tools: frozenset[str] | None = None  # the catalog; None: any name is a tool
        self._observing = False

    @classmethod
    def disabled(cls) -> Telemetry:
        return cls(tracer_provider=trace.NoOpTracerProvider(),
                   meter_provider=metrics.NoOpMeterProvider())

    @contextlib.contextmanager
    def tool_call(self, ctx: Any, params: CallToolRequestParams) -> Iterator[ToolCall]:
        """Around one ``tools/call`` (``ctx``: the SDK's ``ServerRequestContext``)."""
        # A name outside the catalog is a client's typo or worse: metrics label it _OTHER
        # and the span is plain execute_tool, so clients cannot mint series or span names.
        name = params.name
        known = self.tools is None or name in self.tools
        meta = getattr(ctx, "meta", None) or params.meta
        parent: Context | None = None
        if meta and "traceparent" in meta:
            parent = _W3C.extract(meta)
        started = time.perf_counter()
        call = ToolCall(self, name if known else OTHER)
        with self.tracer.start_as_current_span(
                f"execute_tool {name}" if known else "execute_tool", context=parent,
                kind=SpanKind.SERVER, record_exception=False,
                set_status_on_exception=False) as span:
            if span.is_recording():
                span.set_attributes(_request_attributes(ctx, params))
                call.span = span
            try:
                yield call
            except BaseException as exc:  # cancelled (shutdown), or a bug past run_tool
                call.error_type = type(exc).__qualname__
                if call.span is not None:
                    call.span.set_attribute("error.type", call.error_type)
                    call.span.set_status(StatusCode.ERROR, str(exc)[:MAX_ATTRIBUTE_CHARS])
                raise
            finally:
                self.duration.record(time.perf_counter() - started,
                                     self.attributes(call.name, call.error_type))

    def attributes(self, tool: str, error_type: str | None) -> dict[str, str]:
        """Metric attributes, one dict per (tool, error) for the process's lifetime."""
        key = (tool, error_type)
        attributes = self._metric_attributes.get(key)
        if attributes is None:
            attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
            if error_type is not None:
                attributes["error.type"] = error_type
            self._metric_attributes[key] = attributes
        return attributes

    def _observe_findings(self, _: CallbackOptions) -> Iterable[Observation]:
        # tuple(): one C-level copy, as an OTLP export collects on its own thread
        for (tool, severity), count in tuple(self.finding_counts.items()):
            yield Observation(count, {"gen_ai.tool.name": tool, "severity": severity})

    def _observe_errors(self, _: CallbackOptions) -> Iterable[Observation]:
        for (tool, code), count in tuple(self.error_counts.items()):
            yield Observation(count, {"gen_ai.tool.name": tool, "error.type": code})

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

        def synced(_: CallbackOptions) -> Iterable[Observation]:
            # A copy in one C-level call: an OTLP export collects on its own thread while
            # the informers add kinds on the loop.
            for kind, status in tuple(store.sync.items()):
                yield Observation(1 if status.state is SyncState.SYNCED else 0,
                                  {"k8s.kind": kind, "state": status.state.value})

        self.meter.create_observable_gauge(
            "netsight.graph.generation", [generation], unit="{change}",
            description="Graph generation: changes applied since start")
        self.meter.create_observable_gauge(
            "netsight.graph.nodes", [nodes], unit="{node}",
            description="Objects in the graph")
        self.meter.create_observable_gauge(
            "netsight.informer.synced", [synced], unit="1",
            description="1 while a kind's informer is listed and watching, else 0 "
                        "(state: syncing, retrying, forbidden, stopped)")
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
        """Flush and stop the exporters (OTLP spans are batched), both at once and for at most
        ``timeout`` seconds: an unreachable collector retries for ~10 s per signal, and the
        process must exit within the pod's grace period. Idempotent."""
        stops = [stop for provider in (self.tracer_provider, self.meter_provider)
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


class ToolCall:
    """One call in flight: the outcome is recorded by ``answered``."""

    __slots__ = ("error_type", "name", "span", "telemetry")

    def __init__(self, telemetry: Telemetry, name: str) -> None:
        self.telemetry, self.name = telemetry, name
        self.span: trace.Span | None = None  # None when not recording
        self.error_type: str | None = None

    def answered(self, result: CallToolResult) -> CallToolResult:
        """Records the answer and returns it; telemetry never fails a call."""
        try:
            self._record(result)
        except Exception:  # an answer of an unexpected shape: a bug to fix, not to pass on
            log.exception("telemetry: could not record the answer of %s", self.name)
        return result

    def _record(self, result: CallToolResult) -> None:
        telemetry, span = self.telemetry, self.span
        if result.is_error:
            code, message = _error_of(result)
            self.error_type = code
            errors, key = telemetry.error_counts, (self.name, code)
            errors[key] = errors.get(key, 0) + 1
            if span is not None:
                span.set_attribute("error.type", code)
                span.set_status(StatusCode.ERROR, message)
            return
        data = result.structured_content or {}
        findings = data.get("findings")
        if isinstance(findings, list):
            counts, name = telemetry.finding_counts, self.name
            for finding in findings:
                key = (name, str(finding.get("severity", "unknown")))
                counts[key] = counts.get(key, 0) + 1
            if span is not None:
                span.set_attribute("netsight.findings.count", len(findings))
        if span is not None:
            metadata = data.get("metadata")
            if isinstance(metadata, dict) and isinstance(metadata.get("graphGeneration"), int):
                span.set_attribute("netsight.graph.generation", metadata["graphGeneration"])
            if telemetry.capture_results and result.content:
                text = getattr(result.content[0], "text", None)
                if isinstance(text, str):
                    span.set_attribute("gen_ai.tool.call.result", text[:MAX_ATTRIBUTE_CHARS])


def _request_attributes(ctx: Any, params: CallToolRequestParams) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": params.name[:MAX_NAME_CHARS],
        "mcp.method.name": "tools/call",
    }
    version = getattr(ctx, "protocol_version", None)
    if version:
        attributes["mcp.protocol.version"] = str(version)
    request_id = getattr(ctx, "request_id", None)
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is not None:  # Streamable HTTP; stdio has no request
        attributes["network.transport"] = "tcp"
        attributes["network.protocol.name"] = "http"
        session = headers.get(_SESSION_HEADER)
        if session:
            attributes["mcp.session.id"] = session
    else:
        attributes["network.transport"] = "pipe"
    if params.arguments:
        # The question (object names, flags), never object bodies; cut like results.
        try:
            arguments = orjson.dumps(params.arguments, default=str).decode()
        except orjson.JSONEncodeError:  # e.g. an integer past 64 bits
            arguments = str(params.arguments)
        attributes["gen_ai.tool.call.arguments"] = arguments[:MAX_ATTRIBUTE_CHARS]
    return attributes


def _error_of(result: CallToolResult) -> tuple[str, str]:
    """The ToolError's code and message from an ``isError`` answer (its JSON text)."""
    with contextlib.suppress(IndexError, AttributeError, orjson.JSONDecodeError, TypeError):
        error = orjson.loads(result.content[0].text)  # type: ignore[union-attr]
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            return error["code"], str(error.get("message", ""))[:MAX_ATTRIBUTE_CHARS]
    return "tool_error", ""


def setup(cluster_name: str, *, environ: Mapping[str, str] | None = None,
          span_processors: Sequence[SpanProcessor] = (),
          metric_readers: Sequence[MetricReader] = ()) -> Telemetry:
    """Telemetry for one server: Prometheus for ``/metrics``, OTLP/HTTP when the environment
    names an endpoint. ``span_processors``/``metric_readers``: more (tests: in-memory)."""
    import os

    from opentelemetry.exporter.prometheus import PrometheusMetricReader

    env = os.environ if environ is None else environ
    if _true(env.get("OTEL_SDK_DISABLED")):
        return Telemetry.disabled()
    resource = Resource.create({"service.name": SERVICE_NAME, "service.version": _version(),
                                "k8s.cluster.name": cluster_name})
    registry = CollectorRegistry(auto_describe=True)
    # One instrumentation scope: otel_scope_* labels on every series would only add noise.
    readers: list[MetricReader] = [
        PrometheusMetricReader(registry=registry, scope_info_enabled=False), *metric_readers]
    processors = list(span_processors)
    exporting: list[str] = []
    if (endpoint := otlp_endpoint(env, "TRACES")) is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        processors.append(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        exporting.append(f"traces to {endpoint}")
    if (endpoint := otlp_endpoint(env, "METRICS")) is not None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=endpoint)))
        exporting.append(f"metrics to {endpoint}")
    tracer_provider: trace.TracerProvider = trace.NoOpTracerProvider()
    if processors:
        sdk_tracer = TracerProvider(resource=resource, shutdown_on_exit=False)
        for processor in processors:
            sdk_tracer.add_span_processor(processor)
        tracer_provider = sdk_tracer
    # Exemplars point from histogram buckets to traces: without tracing there are none
    # (Prometheus text does not carry them either), so their bookkeeping is skipped.
    exemplars = None if processors else AlwaysOffExemplarFilter()
    meter_provider = MeterProvider(resource=resource, metric_readers=readers,
                                   shutdown_on_exit=False, exemplar_filter=exemplars)
    if exporting:
        log.info("telemetry: OTLP export of %s", ", ".join(exporting))
    return Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider,
                     registry=registry, capture_results=_true(env.get(CAPTURE_CONTENT)),
                     exporting=exporting)


def otlp_endpoint(env: Mapping[str, str], signal: str) -> str | None:
    """The OTLP/HTTP URL for ``signal`` (TRACES, METRICS), or None: not exported."""
    if env.get(f"OTEL_{signal}_EXPORTER", "otlp").strip().lower() == "none":
        return None
    own = env.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT", "").strip()
    if own:
        return own  # used as is, per the OTLP exporter specification
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if not base:
        return None
    return f"{base.rstrip('/')}/v1/{signal.lower()}"


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("netsight")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


class TraceContextFilter(logging.Filter):
    """Adds ``trace_id``, ``span_id`` and ``trace_context`` (`` trace_id=… span_id=…``, or
    empty outside a span) to every record a handler formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            trace_id, span_id = format(context.trace_id, "032x"), format(context.span_id, "016x")
            vars(record).update(trace_id=trace_id, span_id=span_id,
                                trace_context=f" trace_id={trace_id} span_id={span_id}")
        else:
            vars(record).update(trace_id="", span_id="", trace_context="")
        return True


def configure_logging(level: str, stream: IO[str]) -> None:
    """``logging.basicConfig`` at LOG_LEVEL, with trace ids on records inside a span."""
    logging.basicConfig(level=level, stream=stream, format=LOG_FORMAT)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, TraceContextFilter) for f in handler.filters):
            handler.addFilter(TraceContextFilter())
