"""check_route_resolution: the status a conformant Gateway API controller would give routes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from netsight.analyzers.core import deadline
from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import did_you_mean, metadata, require_namespace
from netsight.analyzers.core.contracts import ErrorCode, Finding, Page, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import locate
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.attachment import Resolver, RouteResult
from netsight.analyzers.routing.backend_tls import BACKEND_TLS_POLICY
from netsight.analyzers.routing.declared import ROUTE_CODES, ROUTE_READS
from netsight.analyzers.routing.findings import route_findings
from netsight.analyzers.routing.gateway_objects import (
    ROUTE_KINDS,
    Route,
    is_gateway_api,
    read_route,
)
from netsight.analyzers.routing.policy_findings import backend_tls_findings
from netsight.analyzers.routing.report import RouteOut, route_out
from netsight.analyzers.services.object_events import warning_lines
from netsight.analyzers.services.service_events import since
from netsight.graph.model.kinds import make_key
from netsight.graph.store.live import GraphView

NAME = "check_route_resolution"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Gateway API routes resolved as a conformant controller would: conditions, "
    "listeners, backends. Use it when a route is not accepted or sends nowhere.",
    reads=ROUTE_READS,
    codes=ROUTE_CODES,
    events=True,
)

RouteKind = Literal["HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"]


class Args(PagedArgs):
    # A cluster's routes are usually asked about together (a Gateway and its routes): a
    # larger first page than elsewhere, troubled ones first.
    limit: int = Field(default=50, ge=1, le=500, description="Items per page")
    route: ObjectName | None = Field(
        default=None, description="One route as 'namespace/name'; default: every route")
    kind: RouteKind | None = Field(
        default=None, description="Only routes of this kind (when two kinds share the "
        "name)")
    namespace: Namespace | None = Field(default=None, description="Only this namespace")


class Result(ToolResult):
    routes: list[RouteOut]
    findings: list[Finding]
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")
    page: Page


def find_routes(view: GraphView, resolver: Resolver, args: Args) -> list[Route]:
    kinds = (args.kind,) if args.kind else ROUTE_KINDS
    if args.route is None:
        require_namespace(view, args.namespace, tool=NAME)
        return [r for r in resolver.routes(args.namespace) if r.kind in kinds]
    named = locate(view, args.route, kinds, argument="route", tool=NAME)
    namespace, name = named.namespace, named.name
    if named.kind is not None:
        kinds = (named.kind,)
    if args.namespace is not None and args.namespace != namespace:
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"namespace: {args.namespace!r} differs from the namespace of route "
                          f"{args.route!r}; give one of them", tool=NAME)
    found = []
    for kind in kinds:
        record = view.get(make_key(kind, namespace, name))
        if record is not None and is_gateway_api(record):
            found.append(read_route(record))
    if not found:
        known = {r.record.name for r in resolver.routes(namespace) if r.kind in kinds}
        where = f" in namespace {namespace}" if known else \
            f"; namespace {namespace} has no {args.kind or 'Gateway API route'}s"
        raise ToolFailure(ErrorCode.NOT_FOUND,
                          f"route: no {args.kind or 'route'} {args.route!r}{where}"
                          f"{did_you_mean(name, known)}", tool=NAME)
    return found


def _troubled(result: RouteResult) -> bool:
    return any(not p.conditions[c.ACCEPTED].ok or not p.conditions[c.RESOLVED_REFS].ok
               for p in result.parents) or not result.parents


def analyze(view: GraphView, args: Args) -> Result:
    resolver = Resolver(view)
    routes = find_routes(view, resolver, args)
    results = [resolver.resolve(route) for route in deadline.checked(routes)]
    # Routes in trouble first: that is what the question is usually about.
    results.sort(key=lambda r: (not _troubled(r), r.route.ref, r.route.kind))
    fingerprint = query_fingerprint(NAME, args.route, args.kind, args.namespace)
    chunk, page = paginate(results, limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    findings = [f for result in chunk for f in route_findings(view, result)]
    # The TLS a backend is reached with: a policy that does not resolve fails its requests.
    tls = {b.tls.ref: b.tls for result in chunk for b in result.backends if b.tls is not None}
    findings.extend(f for key in sorted(tls) for f in backend_tls_findings(tls[key]))
    findings = list({(f.code, str(f.resource), f.summary): f for f in findings}.values())
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    notes = [note for result in chunk for note in result.notes]
    notes.extend(note for key in sorted(tls) for note in tls[key].notes)
    unlisted = view.unreadable(BACKEND_TLS_POLICY)
    if unlisted is not None:
        notes.append(f"{unlisted}: a backend shown without tls may have a BackendTLSPolicy")
    for result in chunk:
        notes.extend(note for p in result.parents if p.gateway is not None and not p.hidden
                     for note in p.gateway.notes)
        if not result.route.parent_refs:
            notes.append(f"{result.route.ref}: no parentRefs; the route attaches nowhere")
    after = since(view)  # once: from manifests it looks at every event held
    return Result(
        metadata=metadata(view, args.namespace),
        routes=[route_out(r).model_copy(update={
            "events": warning_lines(view, [r.route.record], after) or None}) for r in chunk],
        findings=findings,
        not_evaluated=list(dict.fromkeys(notes)),
        page=page,
    )


# Offered by a live server only while the Gateway API CRDs are installed.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.ROUTING, provider="gateway-api")
