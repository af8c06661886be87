"""Where telemetry goes: providers for one server, configured by the OpenTelemetry SDK's
environment variables.

Each signal (traces, metrics, logs) goes to the exporters ``OTEL_{SIGNAL}_EXPORTER`` names
(``otlp``, ``console``, ``none``, a comma-separated list), chosen and loaded by the SDK's own
configuration code (``opentelemetry.sdk._configuration``: the ``otlp`` name resolved by
``OTEL_EXPORTER_OTLP_{SIGNAL}_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL`` to the ``grpc`` or
``http/protobuf`` exporter, exporters found by their entry points; private functions of the
SDK, at the version the locks pin, which test_telemetry_exports_otlp.py exercises, rather than
a copy of their rules that would drift from the SDK's). The exporters read their
endpoint, headers, certificates, compression and timeout from ``OTEL_EXPORTER_OTLP_*``
themselves, the batch processors their ``OTEL_BSP_*``/``OTEL_BLRP_*`` limits, the metric
reader ``OTEL_METRIC_EXPORT_INTERVAL``, the tracer provider ``OTEL_TRACES_SAMPLER``, and the
resource ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.

netsight differs from the SDK's auto-configuration in two defaults, both so that nothing
leaves the process unless asked for and nothing is lost when it is:

- a signal whose ``OTEL_{SIGNAL}_EXPORTER`` is unset is exported over OTLP only when an OTLP
  endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT`` or the signal's own), else not at all
  (the SDK would send to localhost and warn forever);
- with no protocol set, OTLP is ``http/protobuf``, the specification's default (the Python
  SDK keeps ``grpc`` for its own backward compatibility), and what netsight always sent.

Console exporters write to stderr: over stdio, stdout is the MCP channel.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry.sdk._configuration import _get_exporter_entry_point, _import_exporters
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, ConsoleLogRecordExporter
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

from netsight.server.config import ConfigError

SERVICE_NAME = "netsight"
Signal = Literal["traces", "metrics", "logs"]
SIGNALS: tuple[Signal, ...] = ("traces", "metrics", "logs")
OTLP = "otlp"
# netsight serves /metrics itself; the SDK's "prometheus" reader would open a second port.
SERVED_ELSEWHERE = frozenset({"prometheus"})
CONSOLE = (ConsoleSpanExporter, ConsoleMetricExporter, ConsoleLogRecordExporter)


@dataclass
class Providers:
    """The SDK providers of one server; ``None``: the signal is not recorded at all."""

    resource: Resource
    tracer: TracerProvider | None = None
    meter: MeterProvider | None = None
    logger: LoggerProvider | None = None
    exporting: list[str] = field(default_factory=list)  # e.g. "traces: otlp_proto_grpc"


def exporter_names(signal: Signal) -> list[str]:
    """The SDK's entry-point names of the exporters the environment asks for, ``[]``: none.

    Raises:
        ConfigError: an OTLP protocol that is neither ``grpc`` nor ``http/protobuf``.
    """
    given = os.environ.get(f"OTEL_{signal.upper()}_EXPORTER", "")
    asked = [name.strip() for name in given.split(",") if name.strip()]
    if not asked and _endpoint_set(signal):
        asked = [OTLP]
    names = []
    for name in asked:
        if name.lower() == "none" or name in SERVED_ELSEWHERE:
            continue
        if name == OTLP and not _protocol_set(signal):
            names.append("otlp_proto_http")  # the specification's default, not the SDK's
            continue
        try:  # the SDK's choice: otlp by protocol, and a warning where they conflict
            names.append(_get_exporter_entry_point(name, signal))
        except RuntimeError as exc:  # "Unsupported OTLP protocol ..."
            raise ConfigError(_protocol_variable(signal),
                              f"grpc or http/protobuf ({exc})") from None
    return names


def _endpoint_set(signal: Signal) -> bool:
    return bool(os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
                or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())


def _protocol_variable(signal: Signal) -> str:
    own = f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL"
    return own if os.environ.get(own, "").strip() else "OTEL_EXPORTER_OTLP_PROTOCOL"


def _protocol_set(signal: Signal) -> bool:
    return bool(os.environ.get(_protocol_variable(signal), "").strip())


def exporters(signal: Signal) -> list[tuple[str, Any]]:
    """(name, exporter) for ``signal``, built as the environment asks.

    Raises:
        ConfigError: naming the variable whose value names no installed exporter.
    """
    names = exporter_names(signal)
    if not names:
        return []
    try:
        loaded = _import_exporters(*(names if s == signal else [] for s in SIGNALS))
    except RuntimeError as exc:  # "Requested component 'x' not found in entry point ..."
        raise ConfigError(f"OTEL_{signal.upper()}_EXPORTER",
                          f"otlp, console or none ({exc})") from None
    classes: dict[str, Any] = loaded[SIGNALS.index(signal)]
    return [(name, cls(out=sys.stderr) if issubclass(cls, CONSOLE) else cls())
            for name, cls in classes.items()]


def resource(cluster_name: str, version: str) -> Resource:
    """netsight's resource, under what ``OTEL_RESOURCE_ATTRIBUTES``/``OTEL_SERVICE_NAME`` say
    (they win: an operator's explicit names)."""
    own = Resource.create({"service.name": SERVICE_NAME, "service.version": version,
                           "k8s.cluster.name": cluster_name})
    return own.merge(OTELResourceDetector().detect())


def providers(cluster_name: str, version: str, *,
              span_processors: Sequence[SpanProcessor] = (),
              metric_readers: Sequence[MetricReader] = (),
              log_processors: Sequence[LogRecordProcessor] = (),
              export: bool = True) -> Providers:
    """The providers for one server: the exporters the environment names (``export``), plus
    ``span_processors``/``metric_readers``/``log_processors`` (``/metrics``; tests)."""
    built = Providers(resource(cluster_name, version))
    spans, readers, records = list(span_processors), list(metric_readers), list(log_processors)
    if export:
        for name, exporter in exporters("traces"):
            spans.append(BatchSpanProcessor(exporter))
            built.exporting.append(f"traces: {name}")
        for name, exporter in exporters("metrics"):
            readers.append(exporter if isinstance(exporter, MetricReader)
                           else PeriodicExportingMetricReader(exporter))
            built.exporting.append(f"metrics: {name}")
        for name, exporter in exporters("logs"):
            records.append(BatchLogRecordProcessor(exporter))
            built.exporting.append(f"logs: {name}")
    if spans:
        built.tracer = TracerProvider(resource=built.resource, shutdown_on_exit=False)
        for processor in spans:
            built.tracer.add_span_processor(processor)
    if readers:
        # Exemplars point from histogram buckets to traces: without tracing there are none
        # (Prometheus text does not carry them either), so their bookkeeping is skipped.
        built.meter = MeterProvider(
            resource=built.resource, metric_readers=readers, shutdown_on_exit=False,
            exemplar_filter=None if spans else AlwaysOffExemplarFilter())
    if records:
        built.logger = LoggerProvider(resource=built.resource, shutdown_on_exit=False)
        for record_processor in records:
            built.logger.add_log_record_processor(record_processor)
    return built
