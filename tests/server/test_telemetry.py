"""Telemetry of MCP messages by the OpenTelemetry MCP semantic conventions, over the real MCP
client and HTTP against the simulator: a SERVER span per message named ``{method} {target}``
under the agent's trace (``params._meta``), tool errors as ``error.type = tool_error`` with
netsight's code beside it, ``mcp.server.operation.duration`` and
``mcp.server.session.duration`` with the advised buckets, netsight's counters under
``netsight.*``, and ``/metrics`` in Prometheus text.

Providers are the SDK's in-memory span exporter and metric reader, injected into the server's
``Telemetry``: OpenTelemetry's global providers are never set. What leaves the process over
OTLP is test_telemetry_exports_otlp.py's."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client.parser import text_string_to_metric_families

from netsight.graph.store.sync_status import SyncState
from netsight.server.app import build_service
from netsight.server.cluster import live_graph
from netsight.server.running import HttpServer
from netsight.server.telemetry import CAPTURE_CONTENT, DURATION_BUCKETS, Telemetry, setup
from netsight.sim.apiserver import SimServer
from tests.server.conftest import Served, error_json, eventually, settings_for, structured
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]  # auto negotiates 2026-07-28: no session
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{AGENT_SPAN_ID}-01"
# The MCP conventions' advice for both duration histograms (semantic-conventions-genai).
ADVISED_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


@dataclass
class Observed:
    served: Served
    telemetry: Telemetry
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith(prefix)]

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

    def tool_durations(self) -> dict[tuple[str, str | None], Any]:
        return {(a["gen_ai.tool.name"], a.get("error.type")): p
                for a, p in self.points("mcp.server.operation.duration")
                if a["mcp.method.name"] == "tools/call"}


@contextlib.asynccontextmanager
async def observed_server(sim: SimServer, tmp_path: Path) -> AsyncIterator[Observed]:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    settings = settings_for(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    telemetry = setup(settings.cluster_name, export=False,
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
    [span] = observed.named("tools/call")
    assert span.name == "tools/call diagnose_service"
    assert span.kind is SpanKind.SERVER
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None
    assert span.parent.is_remote
    assert format(span.parent.span_id, "016x") == AGENT_SPAN_ID
    assert span.context.trace_state.get("rojo") == "00f067aa0ba902b7"
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "diagnose_service"
    assert attributes["mcp.protocol.version"]
    assert attributes["jsonrpc.request.id"]
    assert attributes["network.transport"] == "tcp"
    assert attributes["network.protocol.name"] == "http"
    assert attributes["network.protocol.version"] == "1.1"
    assert attributes["client.address"] == "127.0.0.1"
    assert isinstance(attributes["client.port"], int)
    assert attributes["netsight.findings.count"] == len(answer["findings"]) > 0
    assert attributes["netsight.graph.generation"] == answer["metadata"]["graphGeneration"]
    # Opt-in only: arguments and answers may name other teams' objects.
    assert "gen_ai.tool.call.arguments" not in attributes
    assert "gen_ai.tool.call.result" not in attributes
    assert "error.type" not in attributes
    assert span.status.status_code is StatusCode.UNSET
    assert ("mcp.session.id" in attributes) == (mode == "legacy")
    resource = dict(span.resource.attributes)
    assert resource["service.name"] == "netsight"
    assert resource["k8s.cluster.name"] == "sim"


async def test_the_handshake_and_the_tool_list_are_spans_too(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="legacy") as client:
        await client.list_tools()
    spans = {s.name: s for s in observed.spans.get_finished_spans()}
    assert {"initialize", "notifications/initialized", "tools/list"} <= set(spans)
    listing = dict(spans["tools/list"].attributes or {})
    assert listing["mcp.method.name"] == "tools/list"
    assert "gen_ai.operation.name" not in listing  # only for tool calls, say the conventions
    assert "gen_ai.tool.name" not in listing
    assert listing["mcp.session.id"]
    # A notification has no request id.
    assert "jsonrpc.request.id" not in dict(spans["notifications/initialized"].attributes or {})
    assert dict(spans["initialize"].attributes or {})["jsonrpc.request.id"]
    methods = {a["mcp.method.name"] for a, _ in observed.points("mcp.server.operation.duration")}
    assert {"initialize", "notifications/initialized", "tools/list"} <= methods


async def test_arguments_and_answers_are_recorded_when_opted_in(
        sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT, "true")
    async with observed_server(sim, tmp_path) as observed, \
            Client(observed.served.mcp_url, mode="auto") as client:
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        [span] = observed.named("tools/call")
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.tool.call.arguments"] == '{"service":"shop/cart"}'
    assert "shop/cart" in attributes["gen_ai.tool.call.result"]


async def test_without_trace_context_a_call_starts_its_own_trace(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="auto") as client:
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
    first, second = observed.named("tools/call")
    assert first.parent is None
    assert second.parent is None
    assert first.context.trace_id != second.context.trace_id


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_error_is_a_tool_error_with_netsights_code_beside_it(
        observed: Observed, mode: str) -> None:
    async with Client(observed.served.mcp_url, mode=mode) as client:
        missing = await client.call_tool("diagnose_service", {"service": "shop/nope"})
        unknown = await client.call_tool("diagnose_servic", {"service": "shop/cart"})
    assert error_json(missing)["code"] == "NOT_FOUND"
    assert error_json(unknown)["code"] == "INVALID_INPUT"
    by_name = {span.name: span for span in observed.named("tools/call")}
    span = by_name["tools/call diagnose_service"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == error_json(missing)["message"]
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "tool_error"  # the conventions' value for isError
    assert attributes["netsight.error.code"] == "NOT_FOUND"
    assert "rpc.response.status_code" not in attributes  # the JSON-RPC call itself succeeded
    # Not a catalog tool: its name is on the span, never in a span name or a metric label.
    unknown_span = dict(by_name["tools/call"].attributes or {})
    assert unknown_span["gen_ai.tool.name"] == "diagnose_servic"
    assert unknown_span["netsight.error.code"] == "INVALID_INPUT"
    errors = {(a["gen_ai.tool.name"], a["netsight.error.code"]): p.value
              for a, p in observed.points("netsight.tool.errors")}
    assert errors == {("diagnose_service", "NOT_FOUND"): 1, ("_OTHER", "INVALID_INPUT"): 1}
    durations = {key: p.count for key, p in observed.tool_durations().items()}
    assert durations == {("diagnose_service", "tool_error"): 1, ("_OTHER", "tool_error"): 1}


async def test_a_json_rpc_error_sets_its_code(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="legacy") as client:
        with pytest.raises(MCPError, match=r"(?i)not found"):
            await client.read_resource("netsight://nothing")
    [span] = observed.named("resources/read")
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == attributes["rpc.response.status_code"] == "-32601"
    assert span.status.status_code is StatusCode.ERROR
    [(labels, _)] = [(a, p) for a, p in observed.points("mcp.server.operation.duration")
                     if a["mcp.method.name"] == "resources/read"]
    assert labels["error.type"] == labels["rpc.response.status_code"] == "-32601"


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
    counted = {(a["gen_ai.tool.name"], a["netsight.finding.severity"]): p.value
               for a, p in observed.points("netsight.tool.findings")}
    assert counted == dict(expected)
    assert any(severity == "critical" for _, severity in counted)
    durations = observed.tool_durations()
    analyze = durations["analyze_config", None]
    assert analyze.count == 2
    assert 0 < analyze.sum < 10
    assert list(analyze.explicit_bounds) == ADVISED_BUCKETS
    assert list(DURATION_BUCKETS) == ADVISED_BUCKETS


async def test_a_session_is_timed_from_initialize_until_it_closes(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="legacy") as client:
        await client.list_tools()
    await eventually(lambda: bool(observed.points("mcp.server.session.duration")))
    [(attributes, point)] = observed.points("mcp.server.session.duration")
    assert point.count == 1
    assert 0 < point.sum < 10
    assert list(point.explicit_bounds) == ADVISED_BUCKETS
    assert attributes["network.transport"] == "tcp"
    assert attributes["mcp.protocol.version"]


async def test_metrics_serves_prometheus_text(observed: Observed) -> None:
    async with Client(observed.served.mcp_url, mode="auto") as client:
        structured(await client.call_tool("diagnose_service", {"service": "shop/cart"}))
        await client.call_tool("diagnose_service", {"service": "shop/nope"})
    async with aiohttp.ClientSession() as http, \
            http.get(f"{observed.served.url}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    histogram = families["mcp_server_operation_duration_seconds"]
    assert histogram.type == "histogram"
    buckets = [s for s in histogram.samples if s.name.endswith("_bucket")
               and s.labels.get("gen_ai_tool_name") == "diagnose_service"]
    # An empty label is an absent one to Prometheus: the answers without an error.
    assert {s.labels.get("error_type", "") for s in buckets} == {"", "tool_error"}
    assert {s.labels["mcp_method_name"] for s in buckets} == {"tools/call"}
    assert sorted({float(s.labels["le"]) for s in buckets}) == [*ADVISED_BUCKETS, float("inf")]
    # netsight's own counters live under netsight_*, none under the conventions' mcp_*.
    assert {name for name in families if name.startswith("mcp_")} == {
        "mcp_server_operation_duration_seconds"}
    assert families["netsight_tool_findings"].type == "counter"
    assert any(s.labels.get("netsight_finding_severity") == "critical"
               for s in families["netsight_tool_findings"].samples)
    errors = [s for s in families["netsight_tool_errors"].samples
              if s.name == "netsight_tool_errors_total"]
    assert [(s.labels["netsight_error_code"], s.value) for s in errors] == [("NOT_FOUND", 1.0)]
    graph = observed.served.graph.store
    [nodes] = families["netsight_graph_nodes"].samples
    assert nodes.value == graph.view().node_count > 0
    [ready] = families["netsight_ready"].samples
    assert ready.value == 1.0
    # A 0/1 gauge whose labels never change: the kind only.
    synced = {s.labels["k8s_kind"]: s.value for s in families["netsight_informer_synced"].samples}
    assert {label for s in families["netsight_informer_synced"].samples for label in s.labels
            } == {"k8s_kind"}
    assert set(synced) == set(graph.sync)
    assert set(synced.values()) == {1.0}
    # Every state of every kind, 1 for the one it is in.
    states = {(s.labels["k8s_kind"], s.labels["state"]): s.value
              for s in families["netsight_informer_state"].samples}
    assert states == {(kind, state.value): float(state is SyncState.SYNCED)
                      for kind in graph.sync for state in SyncState}
    assert "netsight_graph_generation" in families
    assert "netsight_tool_calls_in_flight" in families
    [info] = families["target_info"].samples
    assert info.labels["service_name"] == "netsight"
    assert info.labels["k8s_cluster_name"] == "sim"


async def test_without_exporters_no_spans_are_made(sim: SimServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings of the exporters, but no exporter asked for and no endpoint: nothing leaves.
    monkeypatch.setenv("OTEL_SERVICE_NAME", "other")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x=1")
    quiet = setup("sim")
    assert quiet.exporting == ()
    assert isinstance(quiet.tracer_provider, trace.NoOpTracerProvider)  # no spans at all
    assert quiet.logger_provider is None
    assert quiet.registry is not None  # /metrics still serves
    quiet.shutdown()
