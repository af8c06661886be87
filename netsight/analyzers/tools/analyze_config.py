"""analyze_config: every check over one namespace or the whole graph."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from netsight.analyzers.checks import CHECKS
from netsight.analyzers.core import codes, deadline
from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import (
    ErrorCode,
    Finding,
    Page,
    Severity,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.core.quoting import listed
from netsight.graph.store.live import GraphView

NAME = "analyze_config"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Every analyzer over a namespace or the cluster: findings worst first, with "
    "counts. Use it for a namespace health check.",
    reads=frozenset().union(*(check.metadata.reads for check in CHECKS)),
    codes=tuple(c for check in CHECKS for c in check.metadata.codes),
)


class Args(PagedArgs):
    namespace: Namespace | None = Field(default=None, description="Only this namespace")
    min_severity: Literal["critical", "warning", "info"] = Field(
        default="info", description="Leave out findings less severe than this"
    )
    codes: list[str] | None = Field(default=None, min_length=1,
                                    description="Only these finding codes")
    analyzers: list[str] | None = Field(default=None, min_length=1,
                                        description="Only these analyzers")


class Result(ToolResult):
    findings: list[Finding]
    counts: dict[Severity, int] = Field(description="Findings per severity (all pages)")
    by_code: dict[str, int] = Field(description="Findings per code (all pages)")
    analyzers: list[str] = Field(description="The analyzers that ran")
    page: Page


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    available = {check.metadata.name: check for check in CHECKS}
    names = list(dict.fromkeys(args.analyzers or available))  # each analyzer runs once
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ToolFailure(
            ErrorCode.INVALID_INPUT,
            f"analyzers: unknown analyzer(s) {listed(unknown)}; "
            f"available: {', '.join(available)}",
            tool=NAME,
        )
    if args.codes:
        bad = [c for c in args.codes if c not in codes.CODES]
        if bad:
            raise ToolFailure(
                ErrorCode.INVALID_INPUT,
                f"codes: unknown finding code(s) {listed(bad)}; codes look like NS0101",
                tool=NAME,
            )
    threshold = Severity(args.min_severity).rank
    wanted = set(args.codes or ())
    findings: list[Finding] = []
    try:
        for name in deadline.checked(names):
            for finding in available[name].run(view, args.namespace):
                deadline.check(lambda: findings)  # over TOOL_TIMEOUT: the findings so far
                if finding.severity.rank <= threshold and (not wanted or finding.code in wanted):
                    findings.append(finding)
    except deadline.DeadlineExceeded as exceeded:  # within a check: the findings so far too
        raise deadline.DeadlineExceeded(exceeded.seconds, exceeded.finished or findings) \
            from None
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    fingerprint = query_fingerprint(NAME, args.namespace, args.min_severity,
                                    sorted(wanted), names)
    chunk, page = paginate(findings, limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    return Result(
        metadata=metadata(view, args.namespace),
        findings=chunk,
        counts=dict(Counter(f.severity for f in findings)),
        by_code=dict(sorted(Counter(f.code for f in findings).items())),
        analyzers=names,
        page=page,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.CORE)
