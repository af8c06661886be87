"""Telemetry of tool calls, over the real MCP client and HTTP against the simulator: one
``execute_tool {tool}`` span per call under the agent's trace (``params._meta``), errors as
span status and ``mcp.errors.total``, findings by severity, ``/metrics`` in Prometheus text,
and nothing sent anywhere without an OTLP endpoint.

Providers are the SDK's in-memory span exporter and metric reader, injected into the server's
``Telemetry``: OpenTelemetry's global providers are never set."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client.parser import text_string_to_metric_families

from netsight.server.app import build_service
from netsight.server.cluster import live_graph
from netsight.server.running import HttpServer
from netsight.server.telemetry import Telemetry, otlp_endpoint, setup
from netsight.sim.apiserver import SimServer
from tests.server.conftest import Served, error_json, eventually, settings_for, structured
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]  # auto negotiates 2026-07-28: no session
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{AGENT_SPAN_ID}-01"


@dataclass
class Observed:
    served: Served
    telemetry: Telemetry
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def tool_spans(self) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith("execute_tool")]

    def points(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        """(attributes, point) of metric ``name`` as the in-memory reader collects it."""
        found: list[tuple[dict[str, Any], Any]] = []
        data = self.metrics.get_metrics_data()
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend((dict(p.attributes or {}), p)
                                     for p in metric.data.data_points)
        return found


@contextlib.asynccontextmanager
async def observed_server(sim: SimServer, tmp_path: Path,
                          environ: dict[str, str] | None = None) -> AsyncIterator[Observed]:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    settings = settings_for(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    telemetry = setup(settings.cluster_name, environ=environ or {},
                      span_processors=[SimpleSpanProcessor(spans)], metric_readers=[reader])
    try:
        async with live_graph(settings, informers=FAST) as graph:
            service = build_service(graph, settings, telemetry=telemetry)
            server = HttpServer(service, settings)
            url = await server.start()
            try:
                await eventually(lambda: graph.ready)
                yield Observed(Served(sim, graph, service, url, server), telemetry, spans,
                               reader)
            finally:
                await server.stop()
    finally:
        telemetry.shutdown()


@pytest.fixture
async def observed(sim: SimServer, tmp_path: Path) -> AsyncIterator[Observed]:
    async with observed_server(sim, tmp_path) as running:
        yield running


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_call_is_one_server_span_under_the_agents_trace(observed: Observed,
                                                                    mode: str) -> None:
    async with Client(observed.served.mcp_url, mode=mode) as client:
        result = await client.call_tool("diagnose_service", {"service": "shop/cart"},
                                        meta={"traceparent": TRACEPARENT,
                                              "tracestate": "rojo=00f067aa0ba902b7"})
    answer = structured(result)
    [span] = observed.tool_spans()
    assert span.name == "execute_tool diagnose_service"
    assert span.kind is SpanKind.SERVER
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None
    assert span.parent.is_remote
    assert format(span.parent.span_id, "016x") == AGENT_SPAN_ID
    assert span.context.trace_state.get("rojo") == "00f067aa0ba902b7"
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "diagnose_service"
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["mcp.protocol.version"]
    assert attributes["jsonrpc.request.id"]
    assert attributes["network.transport"] == "tcp"
    assert attributes["gen_ai.tool.call.arguments"] == '{"service":"shop/cart"}'
    assert attributes["netsight.findings.count"] == len(answer["findings"]) > 0
    assert attributes["netsight.graph.generation"] == answer["metadata"]["graphGeneration"]
    assert "gen_ai.tool.call.result" not in attributes  # opt-in: may name other teams' objects
    assert "error.type" not in attributes
    assert span.status.status_code is StatusCode.UNSET
    assert ("mcp.session.id" in attributes) == (mode == "legacy")
    resource = dict(span.resource.attributes)
    assert resource["service.name"] == "netsight"
    assert resource["k8s.cluster.name"] == "sim"


async def test_without_trace_context_a_call_starts_its_own_trace(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="auto") as client:
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
    first, second = observed.tool_spans()
    assert first.parent is None
    assert second.parent is None
    assert first.context.trace_id != second.context.trace_id


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_error_sets_span_status_and_counts_in_errors_total(observed: Observed,
                                                                       mode: str) -> None:
    async with Client(observed.served.mcp_url, mode=mode) as client:
        missing = await client.call_tool("diagnose_service", {"service": "shop/nope"})
        unknown = await client.call_tool("diagnose_servic", {"service": "shop/cart"})
    assert error_json(missing)["code"] == "NOT_FOUND"
    assert error_json(unknown)["code"] == "INVALID_INPUT"
    by_name = {span.name: span for span in observed.tool_spans()}
    span = by_name["execute_tool diagnose_service"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == error_json(missing)["message"]
    assert dict(span.attributes or {})["error.type"] == "NOT_FOUND"
    # Not a catalog tool: its name is on the span, never in a span name or a metric label.
    unknown_span = dict(by_name["execute_tool"].attributes or {})
    assert unknown_span["gen_ai.tool.name"] == "diagnose_servic"
    assert unknown_span["error.type"] == "INVALID_INPUT"
    errors = {(a["gen_ai.tool.name"], a["error.type"]): p.value
              for a, p in observed.points("mcp.errors.total")}
    assert errors == {("diagnose_service", "NOT_FOUND"): 1, ("_OTHER", "INVALID_INPUT"): 1}
    durations = {(a["gen_ai.tool.name"], a.get("error.type")): p.count
                 for a, p in observed.points("gen_ai.server.request.duration")}
    assert durations == errors


async def test_findings_are_counted_by_tool_and_severity(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="auto") as client:
        service = structured(await client.call_tool("diagnose_service",
                                                    {"service": "shop/cart"}))
        namespace = structured(await client.call_tool("analyze_config",
                                                      {"namespace": "shop"}))
        structured(await client.call_tool("analyze_config", {"namespace": "shop"}))
    expected: Counter[tuple[str, str]] = Counter()
    for tool, answer, times in (("diagnose_service", service, 1),
                                ("analyze_config", namespace, 2)):
        for finding in answer["findings"]:
            expected[(tool, finding["severity"])] += times
    counted = {(a["gen_ai.tool.name"], a["severity"]): p.value
               for a, p in observed.points("mcp.findings.total")}
    assert counted == dict(expected)
    assert any(severity == "critical" for _, severity in counted)
    durations = {a["gen_ai.tool.name"]: p for a, p in
                 observed.points("gen_ai.server.request.duration")}
    assert durations["analyze_config"].count == 2
    assert 0 < durations["analyze_config"].sum < 10


async def test_metrics_serves_prometheus_text_with_the_duration_histogram(
        observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="auto") as client:
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        await client.call_tool("diagnose_service", {"service": "shop/nope"})
    async with aiohttp.ClientSession() as http, \
            http.get(f"{observed.served.url}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    histogram = families["gen_ai_server_request_duration_seconds"]
    assert histogram.type == "histogram"
    buckets = [s for s in histogram.samples if s.name.endswith("_bucket")
               and s.labels["gen_ai_tool_name"] == "diagnose_service"]
    # An empty label is an absent one to Prometheus: the answers without an error.
    assert {s.labels.get("error_type", "") for s in buckets} == {"", "NOT_FOUND"}
    assert "le" in buckets[0].labels
    assert families["mcp_findings"].type == "counter"
    assert any(s.labels.get("severity") == "critical" for s in families["mcp_findings"].samples)
    errors = [s for s in families["mcp_errors"].samples if s.name == "mcp_errors_total"]
    assert [(s.labels["error_type"], s.value) for s in errors] == [("NOT_FOUND", 1.0)]
    graph = observed.served.graph.store
    [nodes] = families["netsight_graph_nodes"].samples
    assert nodes.value == graph.view().node_count > 0
    synced = {s.labels["k8s_kind"]: s.value for s in families["netsight_informer_synced"].samples}
    assert set(synced) == set(graph.sync)
    assert set(synced.values()) == {1.0}
    assert "netsight_graph_generation" in families
    assert "netsight_tool_calls_in_flight" in families
    [info] = families["target_info"].samples
    assert info.labels["service_name"] == "netsight"
    assert info.labels["k8s_cluster_name"] == "sim"


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that only notes the paths it was sent to."""

    received: list[str]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.received.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def collector() -> Iterator[tuple[str, list[str]]]:
    received: list[str] = []
    handler = type("Handler", (Collector,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_without_an_otlp_endpoint_nothing_leaves_the_process(sim: SimServer,
                                                                   tmp_path: Path) -> None:
    with collector() as (url, received):
        environ = {"OTEL_SERVICE_NAME": "other", "OTEL_EXPORTER_OTLP_HEADERS": "x=1",
                   "COLLECTOR_URL": url}  # an endpoint in the environment, but not OTLP's
        async with observed_server(sim, tmp_path, environ) as running:
            assert running.telemetry.exporting == ()
            async with Client(running.served.mcp_url, mode="auto") as client:
                structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
            assert len(running.tool_spans()) == 1  # the in-memory processor still gets it
        assert received == []
    quiet = setup("sim", environ={})
    assert quiet.exporting == ()
    assert isinstance(quiet.tracer_provider, trace.NoOpTracerProvider)  # no spans at all
    quiet.shutdown()


async def test_with_an_otlp_endpoint_spans_and_metrics_are_posted_to_it(
        sim: SimServer, tmp_path: Path) -> None:
    with collector() as (url, received):
        environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": url}
        async with observed_server(sim, tmp_path, environ) as running:
            assert len(running.telemetry.exporting) == 2
            async with Client(running.served.mcp_url, mode="auto") as client:
                structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        # observed_server shut the providers down: batched spans and metrics are flushed.
        assert "/v1/traces" in received
        assert "/v1/metrics" in received


def test_otlp_endpoints_follow_the_exporter_environment_variables() -> None:
    def endpoints(**environ: str) -> tuple[str | None, str | None]:
        return otlp_endpoint(environ, "TRACES"), otlp_endpoint(environ, "METRICS")

    assert endpoints() == (None, None)
    assert endpoints(OTEL_EXPORTER_OTLP_ENDPOINT="http://otel:4318/") == (
        "http://otel:4318/v1/traces", "http://otel:4318/v1/metrics")
    assert endpoints(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://t:1/x") == ("http://t:1/x", None)
    assert endpoints(OTEL_EXPORTER_OTLP_ENDPOINT="http://otel:4318",
                     OTEL_METRICS_EXPORTER="none") == ("http://otel:4318/v1/traces", None)
    disabled = setup("sim", environ={"OTEL_SDK_DISABLED": "true",
                                     "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318"})
    assert disabled.exporting == ()
    assert disabled.registry is None
