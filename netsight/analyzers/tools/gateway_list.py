"""gateway_list: every Gateway API Gateway with its listeners and a health verdict, worst first."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import OmitNone, Page, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.declared import GATEWAY_READS
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    as_list,
    as_map,
    is_gateway_api,
    spec_of,
    status_of,
)
from netsight.analyzers.routing.gateways import GatewayState
from netsight.analyzers.routing.report import Condition, computed
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

NAME = "gateway_list"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Gateways with class, addresses, listeners and health, unhealthy first. Use "
    "it to find a Gateway (then gateway_get).",
    reads=GATEWAY_READS,
    codes=(),
)


class Health(StrEnum):
    DOWN = "down"  # not accepted, or no listener can be programmed
    DEGRADED = "degraded"  # some listeners invalid, conflicted or with unresolved references
    UNKNOWN = "unknown"  # no controller reconciles it (GatewayClass missing or rejected)
    OK = "ok"


_ORDER = {h: i for i, h in enumerate(Health)}


class Args(PagedArgs):
    limit: int = Field(default=50, ge=1, le=500, description="Items per page")
    namespace: Namespace | None = Field(default=None, description="Only this namespace")


class ListenerSummary(OmitNone):
    name: str
    port: int | None = None
    protocol: str
    hostname: str | None = None
    attached_routes: int


class GatewaySummary(OmitNone):
    gateway: str = Field(description='"namespace/name"')
    gateway_class: str | None = None
    controller: str | None = None
    addresses: list[str] | None = Field(default=None,
                                        description="status.addresses (assigned)")
    requested_addresses: list[str] | None = Field(default=None,
                                                  description="spec.addresses (requested)")
    listeners: list[ListenerSummary]
    attached_routes: int = Field(description="Sum of the listeners' attachedRoutes")
    attached_listener_sets: int | None = Field(
        default=None, description="ListenerSets attached (status.attachedListenerSets); "
        "shown when the Gateway allows ListenerSets or one names it")
    health: Health
    conditions: dict[str, Condition] = Field(description="Accepted and Programmed as a "
                                             "conformant controller would set them")


class Result(ToolResult):
    gateways: list[GatewaySummary]
    counts: dict[Health, int] = Field(description="Gateways per health value (all pages)")
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")
    page: Page


def health(state: GatewayState) -> Health:
    accepted, programmed = state.conditions[c.ACCEPTED], state.conditions[c.PROGRAMMED]
    if accepted.status == c.UNKNOWN:
        return Health.UNKNOWN
    if not accepted.ok or not programmed.ok:
        return Health.DOWN
    if accepted.reason != c.ACCEPTED or any(
            not ls.conditions[c.PROGRAMMED].ok or not ls.conditions[c.RESOLVED_REFS].ok
            for ls in state.listeners):
        return Health.DEGRADED
    return Health.OK


def addresses(raw: object) -> list[str] | None:
    """The values of a Gateway's spec.addresses or status.addresses (type IPAddress,
    Hostname, or an implementation-specific one)."""
    found = [str(as_map(a).get("value")) for a in as_list(raw)
             if isinstance(as_map(a).get("value"), str)]
    return found or None


def summarize(state: GatewayState) -> GatewaySummary:
    record: Record = state.record
    listeners = [ListenerSummary(name=ls.listener.name, port=ls.listener.port,
                                 protocol=ls.listener.protocol, hostname=ls.listener.hostname,
                                 attached_routes=ls.attached_routes)
                 for ls in state.listeners]
    shown = {k: v for k, v in state.conditions.items() if k in (c.ACCEPTED, c.PROGRAMMED)}
    return GatewaySummary(
        gateway=state.ref,
        gateway_class=state.class_name,
        controller=state.controller,
        addresses=addresses(status_of(record).get("addresses")),
        requested_addresses=addresses(spec_of(record).get("addresses")),
        listeners=listeners,
        attached_routes=sum(ls.attached_routes for ls in state.listeners),
        attached_listener_sets=state.attached_listener_sets,
        health=health(state),
        conditions=computed(shown),
    )


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    resolver = Resolver(view)
    found = [resolver.gateway(r.namespace, r.name)
             for r in view.for_each(GATEWAY, args.namespace) if is_gateway_api(r)]
    states = [(health(s), s) for s in found if s is not None]
    counts = {h: sum(1 for verdict, _ in states if verdict is h) for h in Health}
    states.sort(key=lambda pair: (_ORDER[pair[0]], pair[1].ref))
    fingerprint = query_fingerprint(NAME, args.namespace)
    chunk, page = paginate([s for _, s in states], limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    # attachedRoutes resolves routes: only for the Gateways on this page.
    for state in chunk:
        resolver.count_attached(state)
    return Result(
        metadata=metadata(view, args.namespace),
        gateways=[summarize(s) for s in chunk],
        counts={h: n for h, n in counts.items() if n},
        not_evaluated=list(dict.fromkeys(n for s in chunk for n in s.notes)),
        page=page,
    )


# Offered by a live server only while the Gateway API CRDs are installed.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.ROUTING, provider="gateway-api")
