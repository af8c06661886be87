"""list_ingresses: every Ingress with its class, rules, backends and health, worst first."""

from __future__ import annotations

from pydantic import Field

from netsight.analyzers.checks import ingress_lint
from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import Finding, OmitNone, Page, Severity, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.routing import ingress_checks
from netsight.analyzers.routing.ingresses import backend_target
from netsight.analyzers.routing.references import ready_endpoints
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import IngressBackend, IngressRecord
from netsight.graph.store.live import GraphView

NAME = "list_ingresses"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Ingresses with class, hosts, paths, backends and findings, unhealthy first. "
    "Use it when an Ingress host fails.",
    reads=ingress_lint.METADATA.reads | {Kind.ENDPOINT_SLICE, Kind.NAMESPACE},
    codes=ingress_lint.METADATA.codes,
)


class Args(PagedArgs):
    namespace: Namespace | None = Field(default=None, description="Only this namespace")
    ingress_class: str | None = Field(default=None, description="Only Ingresses of this class")


class PathOut(OmitNone):
    host: str = Field(description='"*" for a rule without host')
    path: str | None = Field(default=None, description="Absent for the default backend")
    path_type: str | None = None
    backend: str = Field(description='"namespace/service:port", or the resource')
    resolved: bool
    ready_endpoints: int | None = None


class IngressOut(OmitNone):
    ingress: str
    ingress_class: str | None = None
    class_source: str = Field(description='"spec", "annotation", "default" or "none"')
    paths: list[PathOut]
    tls_hosts: list[str] | None = None
    status: Severity = Field(description="The worst finding's severity, or ok")
    codes: list[str] | None = None


class Result(ToolResult):
    ingresses: list[IngressOut]
    findings: list[Finding]
    not_evaluated: list[str]
    page: Page


def _path(view: GraphView, ingress: IngressRecord, host: str, backend: IngressBackend,
          path: str | None = None, path_type: str | None = None) -> PathOut:
    if backend.resource is not None:
        return PathOut(host=host, path=path, path_type=path_type, resolved=True,
                       backend=f"{backend.resource[0]}/{backend.resource[1]}")
    service, _, problem = backend_target(view, ingress, backend)
    return PathOut(host=host, path=path, path_type=path_type,
                   backend=f"{ingress.namespace}/{backend.service}:{backend.port}",
                   resolved=problem is None,
                   ready_endpoints=ready_endpoints(view, service)
                   if service is not None and problem is None else None)


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    reports = [ingress_checks.inspect(view, r) for r in view.for_each(Kind.INGRESS)
               if isinstance(r, IngressRecord)]
    conflicts = list(ingress_checks.conflicts(reports))
    chosen = [r for r in reports
              if (args.namespace is None or r.ingress.namespace == args.namespace)
              and (args.ingress_class is None or r.klass.name == args.ingress_class)]
    items: list[tuple[IngressOut, list[Finding], list[str]]] = []
    for report in chosen:
        ingress = report.ingress
        found = report.findings + [f for f in conflicts if f.resource is not None
                                   and f.resource.name == ingress.name
                                   and f.resource.namespace == ingress.namespace]
        paths = [_path(view, ingress, (rule.host or "*"), p.backend, p.path, p.path_type)
                 for rule in ingress.rules for p in rule.paths]
        if ingress.default_backend is not None:
            paths.append(_path(view, ingress, "*", ingress.default_backend))
        worst = min((f.severity for f in found), key=lambda s: s.rank, default=Severity.OK)
        hosts = [h for hosts_, _ in ingress.tls for h in hosts_]
        items.append((IngressOut(
            ingress=ingress.ref, ingress_class=report.klass.name,
            class_source=report.klass.source, paths=paths, tls_hosts=hosts or None,
            status=worst, codes=sorted({f.code for f in found}) or None,
        ), found, report.not_evaluated))
    items.sort(key=lambda item: (item[0].status.rank, item[0].ingress))
    fingerprint = query_fingerprint(NAME, args.namespace, args.ingress_class)
    chunk, page = paginate(items, limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    findings = [f for _, found, _ in chunk for f in found]
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    return Result(
        metadata=metadata(view, args.namespace),
        ingresses=[out for out, _, _ in chunk],
        findings=findings,
        not_evaluated=list(dict.fromkeys(n for _, _, notes in chunk for n in notes)),
        page=page,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.ROUTING)
