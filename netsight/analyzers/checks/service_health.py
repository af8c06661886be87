"""Service findings for analyze_config: each Service inspected as diagnose_service does."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.services.inspection import inspect
from netsight.graph.model.kinds import WORKLOAD_KINDS, Kind
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphView

METADATA = AnalyzerMetadata(
    name="services",
    description="Selectors that match nothing, unresolvable target ports, protocol "
    "mismatches, ExternalName and headless pitfalls, endpoint health, and "
    "EndpointSlices that disagree with the selector.",
    # Namespace: the near-miss hint of NS0101 looks for matching pods in other namespaces.
    reads=frozenset(
        {Kind.SERVICE, Kind.POD, Kind.ENDPOINT_SLICE, Kind.ENDPOINTS, Kind.NAMESPACE,
         *WORKLOAD_KINDS}
    ),
    codes=(
        codes.SERVICE_SELECTS_NO_PODS,
        codes.SERVICE_NO_READY_ENDPOINTS,
        codes.SERVICE_ENDPOINTS_PARTIALLY_READY,
        codes.TARGET_PORT_NOT_DECLARED,
        codes.NAMED_TARGET_PORT_NOT_FOUND,
        codes.PORT_PROTOCOL_MISMATCH,
        codes.APP_PROTOCOL_MISMATCH,
        codes.SERVICE_HAS_NO_PORTS,
        codes.EXTERNAL_NAME_MISSING,
        codes.EXTERNAL_NAME_IS_IP,
        codes.EXTERNAL_NAME_TARGET_NOT_FOUND,
        codes.EXTERNAL_NAME_SELECTOR_IGNORED,
        codes.HEADLESS_PORT_REMAP_IGNORED,
        codes.ENDPOINT_TARGETS_UNSELECTED_POD,
        codes.SELECTED_POD_MISSING_FROM_ENDPOINTS,
        codes.ENDPOINT_ADDRESS_MISMATCH,
        codes.ENDPOINT_PORTS_MISMATCH,
        codes.ENDPOINT_TARGET_POD_NOT_FOUND,
        codes.ENDPOINT_UPDATES_FAILING,
        codes.PODS_WAITING,
        codes.READINESS_PROBE_FAILING,
    ),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    for service in view.for_each(Kind.SERVICE, namespace):
        assert isinstance(service, ServiceRecord)
        yield from inspect(view, service).findings


CHECK = Check(METADATA, check)
