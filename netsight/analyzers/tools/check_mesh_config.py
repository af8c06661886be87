"""check_mesh_config: the Istio networking configuration lint of mesh_config, as a tool."""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from netsight.analyzers.checks import mesh_config
from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import Finding, Page, Severity, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.graph.store.live import GraphView

NAME = "check_mesh_config"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Istio configuration checked as istioctl analyze does (NS06xx, NS07xx, with "
    "IST codes). Use it when mesh routing or sidecars misbehave.",
    reads=mesh_config.METADATA.reads,
    codes=mesh_config.METADATA.codes,
)


class Args(PagedArgs):
    namespace: Namespace | None = Field(
        default=None, description="Only findings about this namespace's objects "
        "(checked against the whole mesh)")


class Result(ToolResult):
    findings: list[Finding]
    counts: dict[Severity, int] = Field(description="Findings per severity (all pages)")
    by_code: dict[str, int] = Field(description="Findings per code (all pages)")
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")
    page: Page


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    evaluation = mesh_config.evaluate(view, args.namespace)
    findings = sorted(evaluation.findings,
                      key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    chunk, page = paginate(findings, limit=args.limit, cursor=args.cursor,
                           fingerprint=query_fingerprint(NAME, args.namespace), tool=NAME)
    return Result(
        metadata=metadata(view, args.namespace),
        findings=chunk,
        counts=dict(Counter(f.severity for f in findings)),
        by_code=dict(sorted(Counter(f.code for f in findings).items())),
        not_evaluated=evaluation.not_evaluated,
        page=page,
    )


# Offered by a live server only while the Istio CRDs are installed.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.MESH, provider="istio")
