"""Gateway API findings for analyze_config: every route and Gateway, resolved once."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers import check_gateway_status, check_route_resolution, diff_routes
from netsight.analyzers.base import AnalyzerMetadata
from netsight.analyzers.contracts import Finding
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.findings import gateway_findings, route_findings
from netsight.analyzers.routing.objects import GATEWAY, is_gateway_api
from netsight.graph.store import GraphView

METADATA = AnalyzerMetadata(
    name="gateway_api",
    description="Gateway API routes not accepted by their Gateways, unresolved or empty "
    "backends, invalid or conflicting listeners, missing GatewayClasses, and controller "
    "status that disagrees with the spec.",
    reads=check_route_resolution.METADATA.reads,
    # The registry keeps one owner per code: the NS05xx range is registered here, including
    # the request codes only diff_routes reports (a request is not part of the config).
    codes=tuple(dict.fromkeys((*check_route_resolution.METADATA.codes,
                               *check_gateway_status.METADATA.codes,
                               *diff_routes.METADATA.codes))),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    resolver = Resolver(view)
    seen: set[tuple[str, str, str]] = set()
    found: list[Finding] = []
    for route in resolver.routes(namespace):
        found.extend(route_findings(view, resolver.resolve(route)))
    for record in view.for_each(GATEWAY, namespace):
        state = resolver.gateway(record.namespace, record.name) \
            if is_gateway_api(record) else None
        if state is not None:
            resolver.count_attached(state)
            found.extend(gateway_findings(state))
    for finding in found:
        key = (finding.code, str(finding.resource), finding.summary)
        if key not in seen:
            seen.add(key)
            yield finding
