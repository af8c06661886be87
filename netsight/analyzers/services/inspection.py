"""Service health: selector, ports, protocols, endpoints, and the slices behind them.

One inspection per Service, shared by ``diagnose_service`` (one Service in depth),
``list_services`` (health per Service) and the ``services`` check of ``analyze_config``.

Rules follow what Kubernetes itself does: a named targetPort resolves by name *and*
protocol on each pod's containers and restartable init containers (``podutil.FindPort``);
an endpoint with ``ready`` unset counts as ready (EndpointConditions); an ExternalName
Service gets no endpoints and its selector is ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.services.endpoint_health import check_endpoints
from netsight.analyzers.services.external_names import check_external_name
from netsight.analyzers.services.pod_selection import selects_nothing
from netsight.analyzers.services.service_events import check_events
from netsight.analyzers.services.service_reports import ServiceReport
from netsight.analyzers.services.target_ports import check_port
from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.records import PodRecord, ServiceRecord, WorkloadRecord
from netsight.graph.store.live import GraphView, Source


def inspect(
    view: GraphView, service: ServiceRecord, ports: Sequence[int] | None = None
) -> ServiceReport:
    """Everything netsight can tell about one Service; ``ports`` narrows to those indexes."""
    report = ServiceReport(service)
    if service.type == "ExternalName":
        check_external_name(view, report)
        return report
    if not service.ports and not service.headless:
        report.findings.append(codes.SERVICE_HAS_NO_PORTS.finding(
            ref(service), f"Service {service.ref} defines no ports",
            detail="Only headless (clusterIP: None) and ExternalName Services may omit "
            "spec.ports; the API server rejects this one.",
            suggestion="Add spec.ports, or make the Service headless.",
            evidence=[evidence(service, "spec.ports", [])],
        ))
    pods_unreadable = view.unreadable(Kind.POD)
    if pods_unreadable:
        report.not_evaluated.append(f"pods: {pods_unreadable}")
    if service.selector is not None and not pods_unreadable:
        for record in view.neighbors(service.key, Rel.SELECTS):
            if isinstance(record, PodRecord):
                report.pods.append(record)
            elif isinstance(record, WorkloadRecord):
                report.templates.append(record)
        report.pods.sort(key=lambda p: p.name)
        report.templates.sort(key=lambda w: w.key)
        if not report.pods and (view.source is not Source.MANIFESTS or not report.templates):
            report.findings.append(selects_nothing(view, report))
    indexes = range(len(service.ports)) if ports is None else ports
    for index in indexes:
        check_port(report, index, service.ports[index])
    check_endpoints(view, report, indexes)
    report.warnings = check_events(view, report)
    return report
