"""Workload settings that decide DNS: a StatefulSet's governing Service."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import ServiceRecord, WorkloadRecord
from netsight.graph.store.live import GraphView

METADATA = AnalyzerMetadata(
    name="workloads",
    description="StatefulSets whose serviceName names no Service, or a Service that is "
    "not headless.",
    reads=frozenset({Kind.STATEFUL_SET, Kind.SERVICE}),
    codes=(codes.STATEFULSET_SERVICE_NOT_FOUND, codes.STATEFULSET_SERVICE_NOT_HEADLESS),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    for record in view.for_each(Kind.STATEFUL_SET, namespace):
        assert isinstance(record, WorkloadRecord)
        name = record.service_name
        if not name:
            continue
        service = view.get(make_key(Kind.SERVICE, record.namespace, name))
        pod_dns = f"<pod>.{name}.{record.namespace}.svc"
        if service is None:
            yield codes.STATEFULSET_SERVICE_NOT_FOUND.finding(
                ref(record),
                f"StatefulSet {record.ref} names Service {name}, which does not exist",
                detail=f"Pods of a StatefulSet get DNS names {pod_dns} only through "
                "their governing Service; without it those names do not resolve.",
                suggestion=f"Create a headless Service {record.namespace}/{name} "
                "(clusterIP: None) selecting the StatefulSet's pods.",
                evidence=[evidence(record, "spec.serviceName", name)],
            )
        elif isinstance(service, ServiceRecord) and not service.headless:
            yield codes.STATEFULSET_SERVICE_NOT_HEADLESS.finding(
                ref(service),
                f"Service {service.ref}, governing StatefulSet {record.name}, is not headless",
                detail=f"Per-pod DNS records ({pod_dns}) are published only for headless "
                "Services.",
                suggestion="Set clusterIP: None (a new Service: clusterIP is immutable).",
                evidence=[evidence(service, "spec.clusterIP",
                                   service.cluster_ips[0] if service.cluster_ips else None)],
            )


CHECK = Check(METADATA, check)
