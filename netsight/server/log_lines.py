"""The process's log lines: one format for netsight's records and uvicorn's (which propagate
to the root logger, as ``running.HttpServer`` configures uvicorn), text or JSON
(``LOG_FORMAT``), with the trace and span ids of the span a record was written in; and, when
logs are exported (``OTEL_LOGS_EXPORTER``), the same records sent over OTLP.

Text: ``2026-11-28 09:33:41,120 INFO netsight.server.running: message trace_id=… span_id=…``
(the ids only inside a span). JSON, one object a line, for log pipelines that parse:
``{"time": "2026-11-28T09:33:41.120Z", "level": "INFO", "logger": "…", "message": "…",
"trace_id": "…", "span_id": "…"}``, plus ``exception`` with the traceback when there is one.
"""

from __future__ import annotations

import copy
import logging
import time
from typing import IO

import orjson
from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider

from netsight.server.config import LogFormat

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(trace_context)s"
# The exporters' own complaints (a collector down) are not sent through themselves.
EXPORT_PIPELINE = "opentelemetry"
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


def trace_ids() -> tuple[str, str] | None:
    """(trace id, span id) of the current span, hex as W3C writes them; None outside one."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


class TextFormatter(logging.Formatter):
    """``TEXT_FORMAT``: the record, then `` trace_id=… span_id=…`` inside a span."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        ids = trace_ids()
        # A copy: other handlers (the OTLP one) see the record as it was logged.
        record = copy.copy(record)
        record.trace_context = "" if ids is None else f" trace_id={ids[0]} span_id={ids[1]}"
        return super().format(record)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ms), level, logger, message, trace and span ids."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, str] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                    + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (ids := trace_ids()) is not None:
            line["trace_id"], line["span_id"] = ids
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return orjson.dumps(line).decode()


def configure_logging(level: str, stream: IO[str], log_format: LogFormat = LogFormat.TEXT
                      ) -> None:
    """The root logger at LOG_LEVEL, writing ``log_format`` lines to ``stream``."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if log_format is LogFormat.JSON else TextFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "netsight", False)]:
        root.removeHandler(old)
    handler.netsight = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    # uvicorn's records reach the root's handlers, even where a uvicorn.Config with its
    # default logging configuration (handlers of its own, propagate off) ran before.
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True


class _NotTheExportPipeline(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(EXPORT_PIPELINE)


def export_logs(provider: LoggerProvider, level: str) -> logging.Handler:
    """Sends the root logger's records at ``level`` and above to ``provider``'s exporters
    (OpenTelemetry's logging handler: the span's ids travel as the record's context).
    Returns the handler, for :func:`stop_exporting_logs`."""
    # Imported here: the instrumentation package costs a quarter of a second at start, and
    # only a server that exports logs needs it.
    from opentelemetry.instrumentation.logging.handler import LoggingHandler

    handler = LoggingHandler(level=logging.getLevelName(level), logger_provider=provider)
    handler.addFilter(_NotTheExportPipeline())
    logging.getLogger().addHandler(handler)
    return handler


def stop_exporting_logs(handler: logging.Handler) -> None:
    logging.getLogger().removeHandler(handler)
