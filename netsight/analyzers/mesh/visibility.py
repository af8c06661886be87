"""Which destination hosts exist, and where they are visible: istioctl's service-entry map.

Every ServiceEntry host is registered under each scope its exportTo gives; every
Kubernetes Service as ``name.namespace.svc.cluster.local`` under the scopes of its
``networking.istio.io/exportTo`` annotation (all namespaces without one).
"""

from __future__ import annotations

from netsight.analyzers.mesh import defaults
from netsight.analyzers.mesh.hosts import (
    EXPORT_ALL,
    EXPORT_LOCAL,
    EXPORT_TO_ANNOTATION,
    HostEntry,
    HostRegistry,
)
from netsight.analyzers.mesh.istio_objects import (
    SERVICE_ENTRY,
    Unreadable,
    istio_records,
    read_service_entry,
)
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphView


def build_hosts(view: GraphView) -> HostRegistry:
    registry = HostRegistry()
    for record in istio_records(view, SERVICE_ENTRY):
        try:
            entry = read_service_entry(record)
        except Unreadable:
            continue  # reported by the analyzer that reads it; its hosts stay unknown
        for i, host in enumerate(entry.hosts):
            value = HostEntry(record, entry.ports, entry.workload_selector,
                              field_path=f"spec.hosts[{i}]")
            if not entry.export_to or EXPORT_ALL in entry.export_to:
                registry.add(EXPORT_ALL, record.namespace, host, value)
                continue
            for scope in entry.export_to:
                registry.add(record.namespace if scope == EXPORT_LOCAL else scope,
                             record.namespace, host, value)
    services = [r for r in view.for_each(Kind.SERVICE) if isinstance(r, ServiceRecord)]
    stand_in = defaults.assumed_service(view)
    for service in sorted(services, key=lambda r: r.key):
        _add_service(registry, service, assumed=False)
    if stand_in is not None:
        _add_service(registry, stand_in, assumed=True)
    return registry


def _add_service(registry: HostRegistry, service: ServiceRecord, *, assumed: bool) -> None:
    value = HostEntry(service, tuple(p.port for p in service.ports), assumed=assumed)
    annotation = service.annotations.get(EXPORT_TO_ANNOTATION, "")
    # Entries are trimmed ("shop, ." is shop and the Service's own namespace), as istiod
    # and istioctl read the annotation.
    entries = [s.strip() for s in annotation.split(",")]
    scopes = [EXPORT_ALL] if not annotation else \
        [service.namespace if s == EXPORT_LOCAL else s for s in entries]
    for scope in scopes:
        registry.add(scope, service.namespace, service.name, value)
