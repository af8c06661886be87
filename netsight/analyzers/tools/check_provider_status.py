"""check_provider_status: whether the CNI, the mesh and the gateway controllers run and
are current, as findings (NS10xx)."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from netsight.analyzers.checks import provider_health
from netsight.analyzers.core.arguments import PagedArgs
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import Finding, Model, Page, Severity, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.providers import status
from netsight.graph.store.live import GraphView

NAME = "check_provider_status"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Whether the CNI, Istio, Linkerd, Cilium, Calico and gateway controllers "
    "run ready and current. Use it when a whole provider seems down.",
    reads=status.READS,
    codes=provider_health.METADATA.codes,
)

ProviderName = Literal["istio", "linkerd", "cilium", "calico", "kgateway", "envoy-gateway",
                       "gateway-api", "cni"]


class Args(PagedArgs):
    provider: ProviderName | None = Field(default=None, description="Only this provider")


class ProviderOut(Model):
    name: str
    status: str = Field(description="healthy, degraded, unavailable, unknown (no "
                        "status), not installed, not detected")
    versions: list[str] = Field(description="Image tags its components run")
    served: list[str] = Field(description="group/version its CRDs serve (from CRDs read)")


class Result(ToolResult):
    providers: list[ProviderOut]
    findings: list[Finding]
    counts: dict[Severity, int] = Field(description="Findings per severity (all pages)")
    not_evaluated: list[str] = Field(description="What netsight does not watch, and so "
                                     "cannot tell")
    page: Page


def analyze(view: GraphView, args: Args) -> Result:
    found = status.evaluate(view, args.provider)
    findings = sorted(found.findings, key=lambda f: (f.severity.rank, f.summary))
    chunk, page = paginate(findings, limit=args.limit, cursor=args.cursor,
                           fingerprint=query_fingerprint(NAME, args.provider), tool=NAME)
    return Result(
        metadata=metadata(view),
        providers=[ProviderOut(name=p.name, status=p.status, versions=list(p.versions),
                               served=list(p.served)) for p in found.providers],
        findings=chunk,
        counts=dict(Counter(f.severity for f in findings)),
        not_evaluated=found.not_evaluated,
        page=page,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.PROVIDERS)
