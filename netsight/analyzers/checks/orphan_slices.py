"""EndpointSlices and Endpoints that belong to no Service.

Slices that disagree with their Service's selector are checked with the Service
(``services``); this analyzer covers the objects no Service inspection reaches.
"""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import EndpointSliceRecord, EndpointsRecord
from netsight.graph.store.live import GraphView

METADATA = AnalyzerMetadata(
    name="endpoints",
    description="EndpointSlices and Endpoints whose Service does not exist.",
    reads=frozenset({Kind.ENDPOINT_SLICE, Kind.ENDPOINTS, Kind.SERVICE}),
    codes=(codes.ENDPOINTS_SERVICE_NOT_FOUND,),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    for kind in (Kind.ENDPOINT_SLICE, Kind.ENDPOINTS):
        for record in view.for_each(kind, namespace):
            if isinstance(record, EndpointSliceRecord):
                service, path = record.service_name, "metadata.labels[kubernetes.io/service-name]"
                if service is None:
                    continue  # a slice no Service claims is legitimate (e.g. for a mesh)
            else:
                assert isinstance(record, EndpointsRecord)
                service, path = record.name, "metadata.name"
            if not any(group.endpoints for group in record.groups):
                continue  # nothing to route (e.g. a leader-election lock Endpoints)
            if view.get(make_key(Kind.SERVICE, record.namespace, service)) is None:
                yield codes.ENDPOINTS_SERVICE_NOT_FOUND.finding(
                    ref(record),
                    f"{record.kind} {record.ref} belongs to Service {service}, which does "
                    "not exist",
                    detail=f"Nothing routes to these endpoints without Service "
                    f"{record.namespace}/{service}; the object is left over, or the Service "
                    "is missing from the manifests.",
                    suggestion=f"Create Service {record.namespace}/{service}, or delete "
                    f"the {record.kind}.",
                    evidence=[evidence(record, path, service)],
                )


CHECK = Check(METADATA, check)
