"""Gateway API findings for analyze_config: every route and Gateway, resolved once."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.routing.attachment import Resolver
from netsight.analyzers.routing.backend_tls import BACKEND_TLS_POLICY
from netsight.analyzers.routing.declared import (
    ATTACHED_CODES,
    ATTACHED_READS,
    GATEWAY_CODES,
    REQUEST_CODES,
    ROUTE_CODES,
)
from netsight.analyzers.routing.findings import (
    gateway_findings,
    listener_set_findings,
    route_findings,
)
from netsight.analyzers.routing.gateway_objects import GATEWAY, LISTENER_SET_KINDS, is_gateway_api
from netsight.analyzers.routing.policies import KNOWN_KINDS, gateway_attachments
from netsight.analyzers.routing.policy_findings import (
    attachment_findings,
    backend_tls_findings,
    missing_target_findings,
)
from netsight.graph.model.kinds import api_group
from netsight.graph.store.live import GraphView

METADATA = AnalyzerMetadata(
    name="gateway_api",
    description="Gateway API routes not accepted by their Gateways, unresolved or empty "
    "backends, invalid or conflicting listeners, missing GatewayClasses, controller "
    "status that disagrees with the spec, BackendTLSPolicies that are not accepted or do "
    "not resolve, and policies attached to listeners or objects that do not exist.",
    reads=ATTACHED_READS,
    # The registry keeps one owner per code: the NS05xx range is registered here, including
    # the request codes only diff_routes reports (a request is not part of the config).
    codes=tuple(dict.fromkeys((*ROUTE_CODES, *GATEWAY_CODES, *REQUEST_CODES, *ATTACHED_CODES,
                               codes.POLICY_TARGET_NOT_FOUND))),
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
            found.extend(attachment_findings(state, gateway_attachments(view, state)))
    # A ListenerSet is reported where it lives, also when its Gateway is elsewhere (another
    # namespace, or one the caller may not read); the Gateway's findings above hold it too.
    for kind in LISTENER_SET_KINDS:
        for record in view.for_each(kind, namespace):
            listener_set = resolver.listener_set(record) if is_gateway_api(record) else None
            if listener_set is not None:
                found.extend(listener_set_findings(listener_set))
    for record in view.for_each(BACKEND_TLS_POLICY, namespace):
        if is_gateway_api(record):
            found.extend(backend_tls_findings(resolver.backend_tls.evaluate(record)))
    for group, kind in KNOWN_KINDS:
        for record in view.for_each(kind, namespace):
            if api_group(record.api_version) == group:
                found.extend(missing_target_findings(view, record))
    for finding in found:
        key = (finding.code, str(finding.resource), finding.summary)
        if key not in seen:
            seen.add(key)
            yield finding


CHECK = Check(METADATA, check)
