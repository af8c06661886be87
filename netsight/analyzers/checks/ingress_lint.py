"""Ingress findings for analyze_config: class, backends, TLS secrets, conflicting rules."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.routing import ingress_checks
from netsight.analyzers.routing.gateway_objects import SECRET
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import IngressRecord
from netsight.graph.store.live import GraphView

METADATA = AnalyzerMetadata(
    name="ingresses",
    description="Ingresses no controller claims (missing or ambiguous class), backends that "
    "name missing Services or ports, missing TLS Secrets, and rules that several Ingresses "
    "of one class claim.",
    reads=frozenset({Kind.INGRESS, Kind.INGRESS_CLASS, Kind.SERVICE, SECRET}),
    codes=(codes.INGRESS_CLASS_NOT_FOUND, codes.INGRESS_HAS_NO_CLASS,
           codes.INGRESS_BACKEND_NOT_FOUND, codes.INGRESS_TLS_SECRET_NOT_FOUND,
           codes.INGRESS_RULE_CONFLICT),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    # Conflicts span namespaces (one host, many teams): every Ingress is inspected, and the
    # findings are filtered to the namespace asked about.
    reports = [ingress_checks.inspect(view, r) for r in view.for_each(Kind.INGRESS)
               if isinstance(r, IngressRecord)]
    for report in reports:
        if namespace is None or report.ingress.namespace == namespace:
            yield from report.findings
    for finding in ingress_checks.conflicts(reports):
        if namespace is None or (finding.resource and finding.resource.namespace == namespace):
            yield finding


CHECK = Check(METADATA, check)
