"""Log records emitted inside a tool call's span carry its trace and span ids; records outside
one carry none. And a call that is cancelled (shutdown) still ends its span and is timed."""

from __future__ import annotations

import asyncio
import io
import logging
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from mcp_types import CallToolRequestParams, CallToolResult
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from netsight.server.telemetry import LOG_FORMAT, Telemetry, TraceContextFilter, setup

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def telemetry(spans: InMemorySpanExporter) -> Iterator[Telemetry]:
    telemetry = setup("sim", environ={}, span_processors=[SimpleSpanProcessor(spans)])
    yield telemetry
    telemetry.shutdown()


def stdio_request(meta: dict[str, str] | None = None) -> SimpleNamespace:
    """What the SDK hands ``on_call_tool`` over stdio: no HTTP request, no session."""
    return SimpleNamespace(meta=meta, protocol_version="2025-11-25", request_id=7, request=None)


PARAMS = CallToolRequestParams(name="diagnose_service", arguments={"service": "shop/cart"})


def test_records_inside_a_span_carry_its_ids(telemetry: Telemetry,
                                             spans: InMemorySpanExporter) -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(TraceContextFilter())
    logger = logging.getLogger("netsight.test.telemetry")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("before")
        with telemetry.tool_call(stdio_request({"traceparent": TRACEPARENT}), PARAMS):
            logger.warning("inside")
        logger.warning("after")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    [span] = spans.get_finished_spans()
    before, inside, after = out.getvalue().splitlines()
    assert before.endswith("netsight.test.telemetry: before")
    assert inside.endswith(f"inside trace_id=4bf92f3577b34da6a3ce929d0e0e4736 "
                           f"span_id={span.context.span_id:016x}")
    assert after.endswith(": after")
    assert dict(span.attributes or {})["network.transport"] == "pipe"
    assert dict(span.attributes or {})["jsonrpc.request.id"] == "7"


def test_a_cancelled_call_ends_its_span_as_an_error_and_is_timed(
        spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    telemetry = setup("sim", environ={}, span_processors=[SimpleSpanProcessor(spans)],
                      metric_readers=[reader])
    with pytest.raises(asyncio.CancelledError), telemetry.tool_call(stdio_request(), PARAMS):
        raise asyncio.CancelledError
    [span] = spans.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "CancelledError"
    data = reader.get_metrics_data()
    assert data is not None
    [duration] = [m for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics
                  if m.name == "gen_ai.server.request.duration"]
    [point] = duration.data.data_points
    assert dict(point.attributes or {})["error.type"] == "CancelledError"
    telemetry.shutdown()


def test_disabled_telemetry_records_nothing_and_serves_no_metrics() -> None:
    telemetry = Telemetry.disabled()
    with telemetry.tool_call(stdio_request({"traceparent": TRACEPARENT}), PARAMS) as call:
        assert call.span is None  # the API's no-op span: no attributes are even built
    assert telemetry.registry is None



class StuckTracerProvider(trace.NoOpTracerProvider):
    """A provider whose flush waits on a collector that does not answer."""

    def __init__(self) -> None:
        self.answer = threading.Event()

    def shutdown(self) -> None:
        self.answer.wait(10)


def test_shutdown_gives_up_on_a_collector_that_does_not_answer(
        caplog: pytest.LogCaptureFixture) -> None:
    stuck = StuckTracerProvider()
    telemetry = Telemetry(tracer_provider=stuck, meter_provider=metrics.NoOpMeterProvider())
    started = time.monotonic()
    telemetry.shutdown(timeout=0.2)
    assert time.monotonic() - started < 1
    assert "not flushed within 0.2s" in caplog.text
    stuck.answer.set()  # the abandoned flush thread ends
    telemetry.shutdown()  # again: nothing left to stop


def test_telemetry_never_fails_a_call(telemetry: Telemetry,
                                      spans: InMemorySpanExporter) -> None:
    odd = CallToolRequestParams(name="diagnose_service", arguments={"limit": 10**30})
    answer = CallToolResult(content=[], structured_content={"findings": ["not an object"]})
    with telemetry.tool_call(stdio_request(), odd) as call:
        assert call.answered(answer) is answer
    [span] = spans.get_finished_spans()
    assert dict(span.attributes or {})["gen_ai.tool.call.arguments"] == str({"limit": 10**30})
