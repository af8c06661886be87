"""EndpointSlices against the Service's selector: pods listed that it does not select, or
at another address, ready pods missing, and Service ports a slice lacks."""

from __future__ import annotations

from collections.abc import Sequence

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.services.service_reports import ServiceReport, some_names
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import EndpointSliceRecord, PodRecord
from netsight.graph.store.live import GraphView, Source

ENDPOINTSLICE_CONTROLLER = "endpointslice-controller.k8s.io"


def check_slices(
    view: GraphView, report: ServiceReport, slices: list[EndpointSliceRecord],
    ports: Sequence[int],
) -> None:
    service = report.service
    if service.selector is None:
        return  # endpoints are managed by hand; nothing to compare with
    # In a cluster the controller labels every slice it manages; hand-written manifests
    # often leave the label out, so there an unlabelled slice counts as the controller's.
    managers = {ENDPOINTSLICE_CONTROLLER} if view.source is not Source.MANIFESTS else \
        {None, ENDPOINTSLICE_CONTROLLER}
    managed = [s for s in slices if s.managed_by in managers]
    selected = {pod.name for pod in report.pods}
    listed: set[str] = set()
    for slice_ in managed:
        for i, endpoint in enumerate(slice_.group.endpoints):
            if endpoint.target_pod is None:
                continue
            listed.add(endpoint.target_pod)
            pod = view.get(make_key(Kind.POD, slice_.namespace, endpoint.target_pod))
            path = f"endpoints[{i}]"
            if pod is None:
                if view.source is not Source.MANIFESTS:
                    report.findings.append(codes.ENDPOINT_TARGET_POD_NOT_FOUND.finding(
                        ref(slice_),
                        f"EndpointSlice {slice_.ref} targets pod {endpoint.target_pod}, "
                        "which does not exist",
                        detail="The slice is stale: its pod is gone. Traffic to "
                        f"{', '.join(endpoint.addresses)} fails until the controller "
                        "catches up.",
                        evidence=[evidence(slice_, f"{path}.targetRef.name",
                                           endpoint.target_pod)],
                    ))
                continue
            assert isinstance(pod, PodRecord)
            if pod.name not in selected:
                report.findings.append(codes.ENDPOINT_TARGETS_UNSELECTED_POD.finding(
                    ref(slice_),
                    f"EndpointSlice {slice_.ref} lists pod {pod.name}, which Service "
                    f"{service.name}'s selector does not match",
                    detail="The EndpointSlice controller only lists pods the selector "
                    "matches; this slice is stale, or was written by hand with the "
                    "controller's label.",
                    evidence=[evidence(slice_, f"{path}.targetRef.name", pod.name)],
                ))
            elif pod.ips and not set(endpoint.addresses) & set(pod.ips):
                report.findings.append(codes.ENDPOINT_ADDRESS_MISMATCH.finding(
                    ref(slice_),
                    f"EndpointSlice {slice_.ref} gives pod {pod.name} address "
                    f"{', '.join(endpoint.addresses)}, the pod has {', '.join(pod.ips)}",
                    detail="Traffic goes to an address the pod does not hold (a stale "
                    "slice after the pod was recreated?).",
                    evidence=[evidence(slice_, f"{path}.addresses", list(endpoint.addresses))],
                ))
    missing = [p for p in report.pods
               if p.ready and p.ips and not p.terminating and p.name not in listed]
    if managed and missing:
        report.findings.append(codes.SELECTED_POD_MISSING_FROM_ENDPOINTS.finding(
            ref(service),
            f"{len(missing)} ready pod(s) selected by {service.ref} are missing from its "
            "EndpointSlices",
            detail=f"{some_names(missing)} are ready and match the selector but no slice lists "
            "them, so they receive no traffic. The controller may be lagging or failing.",
            suggestion="Check kube-controller-manager's endpointslice controller logs.",
        ))
    _slice_ports(report, managed, ports)


def _slice_ports(
    report: ServiceReport, slices: list[EndpointSliceRecord], ports: Sequence[int]
) -> None:
    """Service ports (only those at ``ports``, the indexes asked about) each slice lacks."""
    service = report.service
    flagged = {f.evidence[0].field_path for f in report.findings
               if f.code in (codes.NAMED_TARGET_PORT_NOT_FOUND.code,
                             codes.PORT_PROTOCOL_MISMATCH.code) and f.evidence}
    for slice_ in slices:
        if not slice_.group.endpoints:
            continue
        have = {(p.name or "", p.protocol) for p in slice_.group.ports}
        for index in ports:
            port = service.ports[index]
            if any(path.startswith(f"spec.ports[{index}]") for path in flagged):
                continue  # an unresolvable named port explains the gap already
            if (port.name or "", port.protocol) not in have:
                report.findings.append(codes.ENDPOINT_PORTS_MISMATCH.finding(
                    ref(slice_),
                    f"EndpointSlice {slice_.ref} has no port "
                    f"{port.name or port.port}/{port.protocol} of Service {service.name}",
                    detail="Slice ports are matched to Service ports by name and protocol; "
                    "without it, kube-proxy has no backends for that Service port.",
                    evidence=[evidence(slice_, "ports",
                                       [f"{p.name or ''}:{p.port}/{p.protocol}"
                                        for p in slice_.group.ports])],
                ))
