"""list_services: every Service with its endpoint health, worst first."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, Strict

from netsight.analyzers.checks import service_health
from netsight.analyzers.core import deadline
from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import Model, Page, Severity, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.services import inspection
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphView

NAME = "list_services"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Services with ports, pods, ready endpoints and health, unhealthy first. Use "
    "it to find Services that are down.",
    reads=service_health.METADATA.reads,
    codes=(),
)


class Health(StrEnum):
    DOWN = "down"  # a critical finding
    DEGRADED = "degraded"  # a warning
    UNKNOWN = "unknown"  # endpoints could not be evaluated from the input
    EXTERNAL = "external"  # ExternalName: DNS only
    OK = "ok"


_ORDER = {h: i for i, h in enumerate(Health)}


class Args(PagedArgs):
    namespace: Namespace | None = Field(default=None, description="Only this namespace")
    # Strict(False): strict mode takes only Health instances, so the JSON strings every
    # client sends ("down") would be rejected; lax enum validation still rejects others.
    health: list[Annotated[Health, Strict(False)]] | None = Field(
        default=None, description="Only Services with one of these health values"
    )


class ServiceSummary(Model):
    service: str
    type: str
    ports: list[str]
    pods: int
    ready_endpoints: int
    endpoints: int
    health: Health
    codes: list[str] = Field(description="Finding codes; diagnose_service explains them")


class Result(ToolResult):
    services: list[ServiceSummary]
    counts: dict[Health, int] = Field(description="Services per health value (all pages)")
    page: Page


def summarize(view: GraphView, service: ServiceRecord) -> ServiceSummary:
    report = inspection.inspect(view, service)
    worst = report.worst
    if worst is Severity.CRITICAL:
        health = Health.DOWN
    elif worst is Severity.WARNING:
        health = Health.DEGRADED
    elif service.type == "ExternalName":
        health = Health.EXTERNAL
    elif report.endpoints.source == "none" or report.endpoints.unknown:
        health = Health.UNKNOWN
    else:
        health = Health.OK
    return ServiceSummary(
        service=service.ref,
        type=service.type,
        ports=[p.describe() for p in service.ports],
        pods=len(report.pods),
        ready_endpoints=report.endpoints.ready,
        endpoints=report.endpoints.total,
        health=health,
        codes=sorted({f.code for f in report.findings}),
    )


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    summaries = [summarize(view, s)
                 for s in deadline.checked(view.for_each(Kind.SERVICE, args.namespace), every=16)
                 if isinstance(s, ServiceRecord)]
    counts = {h: sum(1 for s in summaries if s.health is h) for h in Health}
    if args.health:
        wanted = set(args.health)
        summaries = [s for s in summaries if s.health in wanted]
    summaries.sort(key=lambda s: (_ORDER[s.health], s.service))
    fingerprint = query_fingerprint(NAME, args.namespace, sorted(args.health or []))
    chunk, page = paginate(summaries, limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    return Result(
        metadata=metadata(view, args.namespace),
        services=chunk,
        counts={h: n for h, n in counts.items() if n},
        page=page,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.CORE)
