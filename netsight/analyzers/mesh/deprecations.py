"""Deprecated or ignored Istio networking fields (istioctl's deprecation.FieldAnalyzer).

Upstream's list is hand-made, and so is this one, limited to what it checks in the
networking API: a VirtualService fault delay given by the deprecated integer ``percent``
(replaced by ``percentage``), and a Sidecar's ``outboundTrafficPolicy.egressProxy``, which
Istio ignores. Upstream also reports the removed rbac.istio.io CustomResourceDefinitions;
netsight does not read CustomResourceDefinitions, so that part is not evaluated.
"""

from __future__ import annotations

from collections.abc import Mapping

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import SIDECAR, istio_records


def deprecated_fields(ctx: MeshContext) -> None:
    for vs in ctx.virtual_services:
        if not ctx.in_scope(vs.record):
            continue
        spec = vs.record.spec if isinstance(vs.record.spec, Mapping) else {}
        http = spec.get("http")
        for i, rule in enumerate(http if isinstance(http, list) else ()):
            fault = rule.get("fault") if isinstance(rule, Mapping) else None
            delay = fault.get("delay") if isinstance(fault, Mapping) else None
            percent = delay.get("percent") if isinstance(delay, Mapping) else None
            if isinstance(percent, int) and not isinstance(percent, bool) and percent > 0:
                path = f"spec.http[{i}].fault.delay.percent"
                ctx.report(codes.DEPRECATED_ISTIO_FIELD.finding(
                    ref(vs.record), f"VirtualService {vs.record.ref} sets {path}, which is "
                    "deprecated",
                    detail="HTTPRoute.fault.delay.percent is deprecated in favour of "
                    "HTTPRoute.fault.delay.percentage (a fraction such as 50.0), and may "
                    "stop being honoured.",
                    suggestion=f"Replace percent: {percent} with percentage: "
                    f"{{value: {percent}.0}}.",
                    evidence=[evidence(vs.record, path, percent)],
                ))
    for record in istio_records(ctx.view, SIDECAR):
        if not ctx.in_scope(record):
            continue
        spec = record.spec if isinstance(record.spec, Mapping) else {}
        policy = spec.get("outboundTrafficPolicy")
        proxy = policy.get("egressProxy") if isinstance(policy, Mapping) else None
        if proxy is not None:
            path = "spec.outboundTrafficPolicy.egressProxy"
            ctx.report(codes.DEPRECATED_ISTIO_FIELD.finding(
                ref(record), f"Sidecar {record.ref} sets {path}, which Istio ignores",
                detail="OutboundTrafficPolicy.egressProxy is ignored: unmatched outbound "
                "traffic is not sent to that proxy.",
                suggestion="Remove egressProxy; route external traffic through an egress "
                "gateway with a ServiceEntry and a VirtualService instead.",
                evidence=[evidence(record, path, proxy)],
            ))
