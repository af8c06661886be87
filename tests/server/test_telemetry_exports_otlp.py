"""What leaves the process: traces, metrics and logs over OTLP, to in-process collectors —
a real gRPC server (grpcio, the OTLP services of opentelemetry-proto) and a real HTTP
endpoint on 127.0.0.1 decoding the protobuf bodies — configured only by the OpenTelemetry
SDK's environment variables, and checked against the MCP semantic conventions; the console
and none exporters; and the variables' errors, refused at start naming the variable.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from mcp import Client
from opentelemetry import trace
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs_pb
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc as logs_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_pb
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc as metrics_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_pb
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as trace_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from netsight.server.app import build_service
from netsight.server.cluster import live_graph
from netsight.server.config import ConfigError
from netsight.server.exporting import exporter_names
from netsight.server.running import HttpServer
from netsight.server.telemetry import Telemetry, setup
from netsight.sim.apiserver import SimServer
from tests.server.conftest import error_json, eventually, settings_for, structured
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{AGENT_SPAN_ID}-01"
ADVISED_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
OTEL_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
                  "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER",
                  *(f"OTEL_EXPORTER_OTLP_{s}_{v}" for s in ("TRACES", "METRICS", "LOGS")
                    for v in ("ENDPOINT", "PROTOCOL")),
                  "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SDK_DISABLED")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in OTEL_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


# --- the collectors ---------------------------------------------------------------------------

@dataclass
class Received:
    """What a collector was sent, decoded: export requests by signal, HTTP paths."""

    traces: list[trace_pb.ExportTraceServiceRequest] = field(default_factory=list)
    metrics: list[metrics_pb.ExportMetricsServiceRequest] = field(default_factory=list)
    logs: list[logs_pb.ExportLogsServiceRequest] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    content_types: set[str] = field(default_factory=set)

    def spans(self) -> list[tuple[dict[str, Any], Span]]:
        """(resource attributes, span) of every span received."""
        return [(attributes(rs.resource.attributes), span) for request in self.traces
                for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]

    def span(self, name: str) -> Span:
        [found] = [s for _, s in self.spans() if s.name == name]
        return found

    def metric(self, name: str) -> list[Any]:
        return [m for request in self.metrics for rm in request.resource_metrics
                for sm in rm.scope_metrics for m in sm.metrics if m.name == name]

    def log_records(self) -> list[tuple[dict[str, Any], Any]]:
        return [(attributes(rl.resource.attributes), record) for request in self.logs
                for rl in request.resource_logs for sl in rl.scope_logs
                for record in sl.log_records]


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


@contextlib.contextmanager
def grpc_collector() -> Iterator[tuple[str, Received]]:
    """A gRPC OTLP receiver on 127.0.0.1: the three collector services."""
    received = Received()

    class Traces(trace_grpc.TraceServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> Any:
            received.traces.append(request)
            return trace_pb.ExportTraceServiceResponse()

    class Metrics(metrics_grpc.MetricsServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> Any:
            received.metrics.append(request)
            return metrics_pb.ExportMetricsServiceResponse()

    class Logs(logs_grpc.LogsServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> Any:
            received.logs.append(request)
            return logs_pb.ExportLogsServiceResponse()

    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    trace_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    metrics_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    logs_grpc.add_LogsServiceServicer_to_server(Logs(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", received
    finally:
        server.stop(grace=None).wait()


@contextlib.contextmanager
def http_collector() -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP receiver on 127.0.0.1 decoding the protobuf request of each path."""
    received = Received()
    requests = {"/v1/traces": (trace_pb.ExportTraceServiceRequest, received.traces,
                               trace_pb.ExportTraceServiceResponse),
                "/v1/metrics": (metrics_pb.ExportMetricsServiceRequest, received.metrics,
                                metrics_pb.ExportMetricsServiceResponse),
                "/v1/logs": (logs_pb.ExportLogsServiceRequest, received.logs,
                             logs_pb.ExportLogsServiceResponse)}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.paths.append(self.path)
            received.content_types.add(self.headers.get("Content-Type", ""))
            if self.path not in requests:
                self.send_response(404)
                self.end_headers()
                return
            request, into, response = requests[self.path]
            into.append(request.FromString(body))
            answer = response().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


COLLECTORS = {"grpc": grpc_collector, "http/protobuf": http_collector}


# --- a server exporting to them ---------------------------------------------------------------

@contextlib.asynccontextmanager
async def exporting_server(sim: SimServer, tmp_path: Path) -> AsyncIterator[tuple[str, Telemetry]]:
    """A server whose telemetry is what the environment asks for; shut down (flushed) on
    leaving."""
    settings = settings_for(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    telemetry = setup(settings.cluster_name, log_level="DEBUG")
    try:
        async with live_graph(settings, informers=FAST) as graph:
            server = HttpServer(build_service(graph, settings, telemetry=telemetry), settings)
            url = await server.start()
            try:
                await eventually(lambda: graph.ready)
                yield f"{url}/mcp", telemetry
            finally:
                await server.stop()
    finally:
        telemetry.shutdown()


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
async def test_all_three_signals_reach_an_otlp_collector_by_the_conventions(
        sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, protocol: str) -> None:
    caplog.set_level(logging.DEBUG, logger="netsight.server.mcp_tools")  # "tool … answered"
    with COLLECTORS[protocol]() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "netsight-eu")
        monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
        async with exporting_server(sim, tmp_path) as (mcp_url, telemetry):
            wire = "otlp_proto_grpc" if protocol == "grpc" else "otlp_proto_http"
            assert telemetry.exporting == (f"traces: {wire}", f"metrics: {wire}",
                                           f"logs: {wire}")
            async with Client(mcp_url, mode="legacy") as client:
                await client.list_tools()
                structured(await client.call_tool(
                    "diagnose_service", {"service": "shop/cart"},
                    meta={"traceparent": TRACEPARENT}))
                missing = await client.call_tool("diagnose_service", {"service": "shop/nope"})
        # exporting_server shut the providers down: every batch is flushed.
    assert error_json(missing)["code"] == "NOT_FOUND"
    if protocol == "http/protobuf":
        assert {"/v1/traces", "/v1/metrics", "/v1/logs"} <= set(received.paths)
        assert received.content_types == {"application/x-protobuf"}

    # Traces: one SERVER span per message, named {mcp.method.name} {target}.
    names = {span.name for _, span in received.spans()}
    assert {"initialize", "notifications/initialized", "tools/list",
            "tools/call diagnose_service"} <= names
    call = next(s for _, s in received.spans() if s.name == "tools/call diagnose_service"
                and s.trace_id.hex() == TRACE_ID)
    assert call.kind == Span.SPAN_KIND_SERVER
    assert call.parent_span_id.hex() == AGENT_SPAN_ID
    span_attributes = attributes(call.attributes)
    assert span_attributes["mcp.method.name"] == "tools/call"
    assert span_attributes["gen_ai.tool.name"] == "diagnose_service"
    assert span_attributes["gen_ai.operation.name"] == "execute_tool"
    assert span_attributes["network.transport"] == "tcp"
    assert span_attributes["network.protocol.name"] == "http"
    assert span_attributes["jsonrpc.request.id"]
    assert span_attributes["mcp.session.id"]
    assert span_attributes["mcp.protocol.version"]
    assert "gen_ai.tool.call.arguments" not in span_attributes  # opt-in
    failed = next(s for _, s in received.spans() if s.name == "tools/call diagnose_service"
                  and s.trace_id.hex() != TRACE_ID)
    assert failed.status.code == Status.STATUS_CODE_ERROR
    assert attributes(failed.attributes)["error.type"] == "tool_error"
    assert attributes(failed.attributes)["netsight.error.code"] == "NOT_FOUND"
    resource, _ = received.spans()[0]
    assert resource["service.name"] == "netsight-eu"  # OTEL_SERVICE_NAME wins
    assert resource["deployment.environment.name"] == "test"
    assert resource["k8s.cluster.name"] == "sim"

    # Metrics: the conventions' histograms with their advised buckets, netsight's counters.
    [*durations] = received.metric("mcp.server.operation.duration")
    assert durations
    points = [p for m in durations for p in m.histogram.data_points]
    tool_points = [p for p in points
                   if attributes(p.attributes).get("gen_ai.tool.name") == "diagnose_service"]
    assert {attributes(p.attributes).get("error.type") for p in tool_points} == {
        None, "tool_error"}
    assert all(list(p.explicit_bounds) == ADVISED_BUCKETS for p in points)
    assert durations[0].unit == "s"
    sessions = [p for m in received.metric("mcp.server.session.duration")
                for p in m.histogram.data_points]
    assert sum(p.count for p in sessions) == 1
    errors = [p for m in received.metric("netsight.tool.errors") for p in m.sum.data_points]
    assert {(attributes(p.attributes)["netsight.error.code"], p.as_int) for p in errors} == {
        ("NOT_FOUND", 1)}
    assert received.metric("netsight.tool.findings")
    assert not [m for request in received.metrics for rm in request.resource_metrics
                for sm in rm.scope_metrics for m in sm.metrics
                if m.name.startswith("mcp.") and not m.name.startswith("mcp.server.")]

    # Logs: the call's own line, with the call's trace and span ids.
    answered = [(res, r) for res, r in received.log_records()
                if value(r.body).startswith("tool diagnose_service answered")]
    assert answered
    assert any(r.trace_id.hex() == TRACE_ID and r.span_id == call.span_id
               for _, r in answered)
    assert answered[0][0]["service.name"] == "netsight-eu"


async def test_each_signal_follows_its_own_endpoint_and_protocol(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with grpc_collector() as (grpc_endpoint, over_grpc), \
            http_collector() as (http_endpoint, over_http):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", grpc_endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
        # A signal's own OTLP/HTTP endpoint is used as given: no /v1/... is added.
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", f"{http_endpoint}/v1/metrics")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", f"{http_endpoint}/v1/logs")
        telemetry = setup("sim")
        assert telemetry.exporting == ("traces: otlp_proto_grpc", "metrics: otlp_proto_http",
                                       "logs: otlp_proto_http")
        await telemetry.middleware(stdio_call(), answer)  # type: ignore[arg-type]
        logging.getLogger("netsight.test.otlp").warning("a line to export")
        telemetry.shutdown()
    assert [s.name for _, s in over_grpc.spans()] == ["tools/call diagnose_service"]
    assert over_grpc.metrics == over_grpc.logs == []
    assert over_http.traces == []
    assert over_http.metric("mcp.server.operation.duration")
    assert "a line to export" in [value(r.body) for _, r in over_http.log_records()]


def stdio_call() -> SimpleNamespace:
    return SimpleNamespace(method="tools/call", meta=None, protocol_version="2025-11-25",
                           request_id=1, request=None, session=None,
                           params={"name": "diagnose_service", "arguments": {}})


async def answer(_: Any) -> dict[str, Any]:
    logging.getLogger("netsight.test.otlp").warning("inside the call")
    return {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}


async def test_console_exporters_write_to_stderr_never_stdout(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for signal in ("TRACES", "METRICS", "LOGS"):
        monkeypatch.setenv(f"OTEL_{signal}_EXPORTER", "console")
    telemetry = setup("sim")
    assert telemetry.exporting == ("traces: console", "metrics: console", "logs: console")
    await telemetry.middleware(stdio_call(), answer)  # type: ignore[arg-type]
    telemetry.shutdown()
    out, err = capsys.readouterr()
    assert out == ""  # over stdio, stdout is the MCP channel
    assert '"name": "tools/call diagnose_service"' in err
    assert '"mcp.method.name": "tools/call"' in err
    assert '"name": "mcp.server.operation.duration"' in err
    assert '"body": "inside the call"' in err


async def test_none_turns_one_signal_off(monkeypatch: pytest.MonkeyPatch) -> None:
    with http_collector() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
        monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
        telemetry = setup("sim")
        assert telemetry.exporting == ("metrics: otlp_proto_http",)
        assert isinstance(telemetry.tracer_provider, trace.NoOpTracerProvider)
        assert telemetry.logger_provider is None
        await telemetry.middleware(stdio_call(), answer)  # type: ignore[arg-type]
        telemetry.shutdown()
    assert set(received.paths) == {"/v1/metrics"}


def test_exporter_names_follow_the_sdk_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    assert exporter_names("traces") == []  # nothing asked, no endpoint: nothing leaves
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    # The specification's default protocol, not the Python SDK's grpc.
    assert exporter_names("traces") == ["otlp_proto_http"]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert exporter_names("logs") == ["otlp_proto_grpc"]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
    assert exporter_names("metrics") == ["otlp_proto_http"]  # a signal's own wins
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp,console")
    assert exporter_names("traces") == ["otlp_proto_grpc", "console"]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert exporter_names("traces") == []
    # /metrics is served anyway: the SDK's own Prometheus server is not started as well.
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    assert exporter_names("metrics") == []


@pytest.mark.parametrize(("variables", "named"), [
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http"},
     "OTEL_EXPORTER_OTLP_PROTOCOL: grpc or http/protobuf"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "json"},
     "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: grpc or http/protobuf"),
    ({"OTEL_LOGS_EXPORTER": "zipkin"}, "OTEL_LOGS_EXPORTER: otlp, console or none"),
])
def test_a_bad_variable_stops_the_server_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                   variables: dict[str, str],
                                                   named: str) -> None:
    for variable, given in variables.items():
        monkeypatch.setenv(variable, given)
    with pytest.raises(ConfigError, match=named):
        setup("sim")
