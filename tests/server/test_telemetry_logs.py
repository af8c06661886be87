"""Log lines in one format, text or JSON (LOG_FORMAT), carrying the trace and span ids of the
MCP message they were written for; and the middleware's edges: a stdio message, a cancelled
call, an answer of an odd shape, disabled telemetry, a collector that does not answer."""

from __future__ import annotations

import asyncio
import io
import logging
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from netsight.server.config import LogFormat
from netsight.server.log_lines import (
    UVICORN_LOGGERS,
    JsonFormatter,
    TextFormatter,
    configure_logging,
)
from netsight.server.telemetry import Telemetry, setup
from tests.server.conftest import announced_and_ready

pytestmark = pytest.mark.anyio
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def telemetry(spans: InMemorySpanExporter) -> Iterator[Telemetry]:
    telemetry = setup("sim", export=False, span_processors=[SimpleSpanProcessor(spans)])
    yield telemetry
    telemetry.shutdown()


def stdio_call(meta: dict[str, str] | None = None, **arguments: Any) -> SimpleNamespace:
    """What the SDK hands middleware for a tools/call over stdio: no HTTP request."""
    return SimpleNamespace(
        method="tools/call", meta=meta, protocol_version="2025-11-25", request_id=7,
        request=None, session=None,
        params={"name": "diagnose_service", "arguments": arguments or {"service": "shop/cart"}})


def logged_through(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"netsight.test.{type(formatter).__name__}")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, out


async def log_around_a_call(telemetry: Telemetry, logger: logging.Logger) -> None:
    async def handler(_: Any) -> dict[str, Any]:
        logger.warning("inside")
        return {"content": []}

    logger.warning("before")
    await telemetry.middleware(stdio_call({"traceparent": TRACEPARENT}), handler)  # type: ignore[arg-type]
    logger.warning("after")


async def test_text_lines_inside_a_span_carry_its_ids(telemetry: Telemetry,
                                                      spans: InMemorySpanExporter) -> None:
    logger, out = logged_through(TextFormatter())
    await log_around_a_call(telemetry, logger)
    [span] = spans.get_finished_spans()
    before, inside, after = out.getvalue().splitlines()
    assert before.endswith(f"{logger.name}: before")
    assert inside.endswith(f"inside trace_id={TRACE_ID} span_id={span.context.span_id:016x}")
    assert after.endswith(": after")
    attributes = dict(span.attributes or {})
    assert span.name == "tools/call diagnose_service"
    assert attributes["network.transport"] == "pipe"
    assert attributes["jsonrpc.request.id"] == "7"


async def test_json_lines_inside_a_span_carry_its_ids(telemetry: Telemetry,
                                                      spans: InMemorySpanExporter) -> None:
    logger, out = logged_through(JsonFormatter())
    await log_around_a_call(telemetry, logger)
    [span] = spans.get_finished_spans()
    before, inside, after = (orjson.loads(line) for line in out.getvalue().splitlines())
    assert before == {"time": before["time"], "level": "WARNING", "logger": logger.name,
                      "message": "before"}
    assert before["time"].endswith("Z")
    assert inside["trace_id"] == TRACE_ID
    assert inside["span_id"] == f"{span.context.span_id:016x}"
    assert "trace_id" not in after


def test_a_json_line_carries_the_traceback() -> None:
    logger, out = logged_through(JsonFormatter())
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed")
    line = orjson.loads(out.getvalue())
    assert line["message"] == "failed"
    assert line["exception"].splitlines()[-1] == "ValueError: boom"


def test_configure_logging_writes_the_chosen_format_from_the_root_logger() -> None:
    root = logging.getLogger()
    kept = root.handlers[:], root.level
    uvicorn = [(lg, lg.handlers[:], lg.propagate, lg.level)
               for lg in map(logging.getLogger, UVICORN_LOGGERS)]
    try:
        out = io.StringIO()
        configure_logging("INFO", out, LogFormat.JSON)
        configure_logging("INFO", out, LogFormat.JSON)  # again: still one handler of ours
        # As HttpServer's uvicorn.Config sets it (another test's may have left WARNING).
        logging.getLogger("uvicorn.error").setLevel(logging.INFO)
        logging.getLogger("uvicorn.error").info("Uvicorn running")
        logging.getLogger("netsight.server.running").debug("below LOG_LEVEL")
        [line] = out.getvalue().splitlines()
        assert orjson.loads(line)["logger"] == "uvicorn.error"
    finally:
        root.handlers[:], _ = kept
        root.setLevel(kept[1])
        for logger, handlers, propagate, level in uvicorn:
            logger.handlers[:], logger.propagate = handlers, propagate
            logger.setLevel(level)


async def test_serve_writes_every_line_as_json_with_trace_ids() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "netsight.cli", "serve", "--demo-static", "--port", "0",
        "--log-format", "json", "--log-level", "debug", stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None
    try:
        # A minute: starting a process with the demo takes ~15 s on a machine this loaded.
        url = await announced_and_ready(process, timeout=60)
        async with Client(f"{url}/mcp", mode="auto") as client:
            await client.call_tool("diagnose_service", {"service": "shop/cart"},
                                   meta={"traceparent": TRACEPARENT})
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 10) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    lines = [orjson.loads(line) for line in (await process.stderr.read()).splitlines()]
    loggers = {line["logger"] for line in lines}
    assert {"uvicorn.error", "uvicorn.access", "netsight.server.mcp_tools"} <= loggers
    [answered] = [line for line in lines if line["message"].startswith("tool diagnose_service")]
    assert answered["trace_id"] == TRACE_ID
    assert len(answered["span_id"]) == 16


async def test_a_cancelled_call_ends_its_span_as_an_error_and_is_timed(
        spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    telemetry = setup("sim", export=False, span_processors=[SimpleSpanProcessor(spans)],
                      metric_readers=[reader])

    async def cancelled(_: Any) -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await telemetry.middleware(stdio_call(), cancelled)  # type: ignore[arg-type]
    [span] = spans.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "CancelledError"
    data = reader.get_metrics_data()
    assert data is not None
    [duration] = [m for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics
                  if m.name == "mcp.server.operation.duration"]
    [point] = duration.data.data_points
    assert dict(point.attributes or {})["error.type"] == "CancelledError"
    assert dict(point.attributes or {})["network.transport"] == "pipe"
    telemetry.shutdown()


async def test_disabled_telemetry_records_nothing_and_serves_no_metrics() -> None:
    telemetry = Telemetry.disabled()

    async def answer(_: Any) -> dict[str, Any]:
        assert not trace.get_current_span().is_recording()
        return {"content": []}

    await telemetry.middleware(stdio_call({"traceparent": TRACEPARENT}), answer)  # type: ignore[arg-type]
    assert telemetry.registry is None


def test_the_sdk_kill_switch_turns_everything_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    disabled = setup("sim")
    assert disabled.exporting == ()
    assert disabled.registry is None


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


async def test_telemetry_never_fails_a_call(telemetry: Telemetry,
                                            spans: InMemorySpanExporter) -> None:
    telemetry.capture_content = True
    odd = {"content": "not a list", "structuredContent": {"findings": ["not an object"]}}

    async def answer(_: Any) -> dict[str, Any]:
        return odd

    assert await telemetry.middleware(stdio_call(limit=10**30), answer) is odd  # type: ignore[arg-type]
    model = CallToolResult(content=[TextContent(type="text", text="{}")], is_error=True)

    async def model_answer(_: Any) -> CallToolResult:
        return model

    assert await telemetry.middleware(stdio_call(), model_answer) is model  # type: ignore[arg-type]
    first, second = spans.get_finished_spans()
    assert dict(first.attributes or {})["gen_ai.tool.call.arguments"] == str({"limit": 10**30})
    # An isError answer without a ToolError's JSON: a tool error of an unknown code.
    assert dict(second.attributes or {})["error.type"] == "tool_error"
    assert dict(second.attributes or {})["netsight.error.code"] == "_OTHER"
