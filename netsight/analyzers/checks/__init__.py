"""The checks analyze_config runs, each reporting findings with stable codes.

:data:`CHECKS` is their order in analyze_config's answer; a new check module is added here.
"""

from __future__ import annotations

from netsight.analyzers.checks import (
    cluster_dns_config,
    cni_enforcement,
    gateway_backend_access,
    gateway_routes,
    ingress_lint,
    input_problems,
    istio_policy_lint,
    mesh_authz_lint,
    mesh_config,
    mtls_consistency,
    network_policy_lint,
    orphan_slices,
    provider_health,
    service_health,
    statefulset_services,
)
from netsight.analyzers.core.declarations import Check

CHECKS: tuple[Check, ...] = (input_problems.CHECK, service_health.CHECK, orphan_slices.CHECK,
                             statefulset_services.CHECK, gateway_routes.CHECK,
                             gateway_backend_access.CHECK,
                             network_policy_lint.CHECK, cni_enforcement.CHECK,
                             istio_policy_lint.CHECK,
                             mesh_config.CHECK, mtls_consistency.CHECK, ingress_lint.CHECK,
                             cluster_dns_config.CHECK, mesh_authz_lint.CHECK,
                             provider_health.CHECK)
