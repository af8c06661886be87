"""diagnose_service: why a Service does or does not deliver traffic."""

from __future__ import annotations

from pydantic import Field

from netsight.analyzers.checks import service_health
from netsight.analyzers.core.arguments import Port, ToolArgs
from netsight.analyzers.core.base import did_you_mean, metadata
from netsight.analyzers.core.contracts import (
    ErrorCode,
    Finding,
    Model,
    Severity,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import locate, services_at
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.quoting import quoted
from netsight.analyzers.policy.results import DetailAware
from netsight.analyzers.routing import service_stack
from netsight.analyzers.services import inspection
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphView

NAME = "diagnose_service"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="A Service layer by layer: pods, ports, endpoints, routes, policies, mesh, "
    "DNS, events. Use it first.",
    reads=service_health.METADATA.reads | service_stack.READS,
    codes=service_health.METADATA.codes,
    events=True,
)


class Args(ToolArgs):
    service: ObjectName = Field(description="'namespace/name'")
    port: Port | None = Field(
        default=None, description="Only this port"
    )


class PodCounts(Model):
    selected: int
    ready: int
    not_ready: int
    unknown: int = Field(description="Pods whose readiness the input does not state")


class EndpointSummary(Model):
    source: str = Field(description='"EndpointSlice", "Endpoints", "pods" (derived) or "none"')
    ready: int
    not_ready: int
    terminating: int
    serving_terminating: int = Field(description="Terminating, still serving (fallback)")


class Layer(DetailAware):
    _detail_only = ("items",)
    _nullable = ("status",)

    layer: str
    status: Severity | None = Field(description="null: cannot tell")
    summary: str
    items: list[str] | None = Field(default=None, description="Detail mode only")


class Result(ToolResult):
    service: str
    status: Severity = Field(description="The worst finding's severity, or ok")
    type: str
    headless: bool
    cluster_ip: str | None
    selector: str | None = Field(description="As kubectl -l takes it; null: no selector")
    ports: list[str]
    pods: PodCounts
    workloads: list[str] = Field(description="Workloads whose pod template the selector matches")
    endpoints: EndpointSummary
    layers: list[Layer]
    findings: list[Finding]
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")


def find_service(view: GraphView, name: ObjectName, *, tool: str) -> ServiceRecord:
    named = locate(view, name, ("Service",), argument="service", tool=tool,
                   at_address=services_at)
    namespace, short = named.namespace, named.name
    record = view.get(make_key(Kind.SERVICE, namespace, short))
    if not isinstance(record, ServiceRecord):
        known = {r.name for r in view.for_each(Kind.SERVICE, namespace)}
        where = f" in namespace {namespace}" if known else \
            f"; namespace {namespace} has no Services"
        raise ToolFailure(
            ErrorCode.NOT_FOUND,
            f"service: Service {quoted(str(name))} not found{where}"
            f"{did_you_mean(short, known)}",
            tool=tool,
        )
    return record


def analyze(view: GraphView, args: Args) -> Result:
    service = find_service(view, args.service, tool=NAME)
    indexes = None
    if args.port is not None:
        indexes = [i for i, p in enumerate(service.ports)
                   if p.port == args.port or (p.name is not None and p.name == args.port)]
        if not indexes:
            have = ", ".join(p.describe() for p in service.ports) or "none"
            raise ToolFailure(
                ErrorCode.NOT_FOUND,
                f"port: Service {service.namespace}/{service.name} has no port "
                f"{args.port!r}; its ports: {have}",
                tool=NAME,
            )
    report = inspection.inspect(view, service, indexes)
    pods = report.pods
    counts = report.endpoints
    return Result(
        metadata=metadata(view, service.namespace),
        service=f"{service.namespace}/{service.name}",
        status=report.worst,
        type=service.type,
        headless=service.headless,
        cluster_ip=service.cluster_ips[0] if service.cluster_ips else None,
        selector=None if service.selector is None else
        ",".join(f"{k}={v}" for k, v in sorted(service.selector.items())),
        ports=[p.describe() for p in service.ports],
        pods=PodCounts(
            selected=len(pods),
            ready=sum(1 for p in pods if p.ready is True),
            not_ready=sum(1 for p in pods if p.ready is False),
            unknown=sum(1 for p in pods if p.ready is None),
        ),
        workloads=[f"{w.kind}/{w.name}" for w in report.templates],
        endpoints=EndpointSummary(source=counts.source, ready=counts.ready,
                                  not_ready=counts.not_ready, terminating=counts.terminating,
                                  serving_terminating=counts.serving_terminating),
        layers=[Layer(layer=layer.name, status=layer.status, summary=layer.summary,
                      items=layer.items) for layer in service_stack.layers(view, report)],
        findings=sorted(report.findings, key=lambda f: (f.severity.rank, f.code)),
        not_evaluated=report.not_evaluated,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.CORE)
