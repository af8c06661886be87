"""Providers that are down or behind, from a cluster: controllers and node agents not ready
or mid-rollout, GatewayClasses not accepted, Istio tags pointing to no revision.

Only from a cluster: a manifest's status is nobody's report. check_provider_status shows
the same with every healthy component beside them.
"""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding, Severity
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.providers import status
from netsight.graph.store.live import GraphView
from netsight.graph.store.sync_status import Source

METADATA = AnalyzerMetadata(
    name="provider_health",
    description="Provider controllers and agents not ready, GatewayClasses not accepted.",
    reads=status.READS,
    codes=(codes.PROVIDER_CONTROLLER_NOT_READY, codes.PROVIDER_ROLLOUT_INCOMPLETE,
           codes.PROVIDER_AGENTS_MISSING_NODES, codes.PROVIDER_VERSIONS_DIFFER,
           codes.GATEWAY_CLASS_NOT_ACCEPTED, codes.ISTIO_TAG_REVISION_MISSING,
           codes.PROVIDER_STATUS),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    if view.source is Source.MANIFESTS:
        return
    for finding in status.evaluate(view, None).findings:
        if finding.severity is Severity.OK:
            continue  # the healthy components: check_provider_status lists them
        where = finding.resource.namespace if finding.resource is not None else None
        if namespace is None or where == namespace:
            yield finding


CHECK = Check(METADATA, check)
