"""check_gateway_status: Gateway and listener status as a conformant controller would set it."""

from __future__ import annotations

from pydantic import Field

from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import did_you_mean, metadata, require_namespace
from netsight.analyzers.core.contracts import ErrorCode, Finding, Page, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import locate
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.addresses import gateways_at
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.declared import GATEWAY_CODES, GATEWAY_READS
from netsight.analyzers.routing.findings import gateway_findings
from netsight.analyzers.routing.gateway_objects import GATEWAY, is_gateway_api
from netsight.analyzers.routing.gateways import GatewayState
from netsight.analyzers.routing.report import GatewayOut, gateway_out
from netsight.analyzers.services.object_events import warning_lines
from netsight.analyzers.services.service_events import since
from netsight.graph.store.live import GraphView

NAME = "check_gateway_status"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Gateways' and listeners' conditions as a conformant controller would set "
    "them, beside the controller's. Use it when a Gateway is not programmed.",
    reads=GATEWAY_READS,
    codes=GATEWAY_CODES,
    events=True,
)


class Args(PagedArgs):
    # A cluster's gateways are usually asked about together (a Gateway and its routes): a
    # larger first page than elsewhere, troubled ones first.
    limit: int = Field(default=50, ge=1, le=500, description="Items per page")
    gateway: ObjectName | None = Field(
        default=None, description="One Gateway as 'namespace/name'; default: every Gateway")
    namespace: Namespace | None = Field(default=None, description="Only this namespace")


class Result(ToolResult):
    gateways: list[GatewayOut]
    findings: list[Finding]
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")
    page: Page


def find_gateways(view: GraphView, resolver: Resolver, args: Args) -> list[GatewayState]:
    if args.gateway is None:
        require_namespace(view, args.namespace, tool=NAME)
        found = [resolver.gateway(r.namespace, r.name)
                 for r in view.for_each(GATEWAY, args.namespace) if is_gateway_api(r)]
        return sorted((g for g in found if g is not None), key=lambda g: g.ref)
    named = locate(view, args.gateway, (GATEWAY,), argument="gateway", tool=NAME,
                   at_address=gateways_at)
    namespace, name = named.namespace, named.name
    if args.namespace is not None and args.namespace != namespace:
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"namespace: {args.namespace!r} differs from the namespace of gateway "
                          f"{args.gateway!r}; give one of them", tool=NAME)
    state = resolver.gateway(namespace, name)
    if state is None:
        known = {r.name for r in view.for_each(GATEWAY, namespace) if is_gateway_api(r)}
        where = f" in namespace {namespace}" if known else \
            f"; namespace {namespace} has no Gateways"
        raise ToolFailure(ErrorCode.NOT_FOUND,
                          f"gateway: Gateway {args.gateway!r} not found{where}"
                          f"{did_you_mean(name, known)}", tool=NAME)
    return [state]


def _troubled(state: GatewayState) -> bool:
    return not state.conditions[c.ACCEPTED].ok or any(
        not ls.conditions[c.PROGRAMMED].ok or not ls.conditions[c.RESOLVED_REFS].ok
        for ls in state.listeners) or any(
        not s.conditions[c.ACCEPTED].ok for s in state.listener_sets)


def analyze(view: GraphView, args: Args) -> Result:
    resolver = Resolver(view)
    states = find_gateways(view, resolver, args)
    states.sort(key=lambda g: (not _troubled(g), g.ref))
    fingerprint = query_fingerprint(NAME, args.gateway, args.namespace)
    chunk, page = paginate(states, limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    for state in chunk:
        resolver.count_attached(state)
    findings = [f for state in chunk for f in gateway_findings(state)]
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    after = since(view)  # once: from manifests it looks at every event held
    return Result(
        metadata=metadata(view, args.namespace),
        gateways=[gateway_out(s).model_copy(update={
            "events": warning_lines(view, [s.record], after) or None}) for s in chunk],
        findings=findings,
        not_evaluated=list(dict.fromkeys(n for s in chunk for n in s.notes)),
        page=page,
    )


# Offered by a live server only while the Gateway API CRDs are installed.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.ROUTING, provider="gateway-api")
