"""Istio networking configuration lint, for analyze_config and check_mesh_config.

The rules are istioctl analyze's (istio/istio pkg/config/analysis/analyzers), each in a
module of ``analyzers/mesh``; ``UPSTREAM`` says which netsight codes stand for which
upstream analyzer, so the shared istioctl corpus can be checked analyzer by analyzer.
Where an input netsight needs is not known (a kind not watched, not listed yet, or
forbidden), the check is skipped and says so instead of reporting a guess.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from netsight.analyzers import codes
from netsight.analyzers.base import AnalyzerMetadata
from netsight.analyzers.codes import Code
from netsight.analyzers.contracts import Finding
from netsight.analyzers.mesh import (
    deprecations,
    destination_rules,
    gateway_api_selectors,
    gateways,
    jwt_claim_routes,
    port_names,
    regexes,
    service_entry_protocols,
    telemetry_selectors,
    virtual_services,
)
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.objects import (
    DESTINATION_RULE,
    ISTIO_GATEWAY,
    K8S_GATEWAY,
    NODE,
    SERVICE_ENTRY,
    VIRTUAL_SERVICE,
)
from netsight.graph.model import POD_LIKE_KINDS, Kind
from netsight.graph.store import GraphView

# istioctl analyzer name -> the netsight codes that report what it reports.
UPSTREAM: dict[str, tuple[Code, ...]] = {
    "virtualservice.DestinationHostAnalyzer": (
        codes.MESH_DESTINATION_HOST_NOT_FOUND, codes.MESH_DESTINATION_PORT_NOT_FOUND,
        codes.MESH_DESTINATION_PORT_REQUIRED, codes.INGRESS_SUBSET_IGNORED),
    "virtualservice.DestinationRuleAnalyzer": (codes.MESH_DESTINATION_SUBSET_NOT_FOUND,),
    "virtualservice.GatewayAnalyzer": (
        codes.VIRTUAL_SERVICE_GATEWAY_NOT_FOUND, codes.VIRTUAL_SERVICE_HOST_NOT_IN_GATEWAY,
        codes.VIRTUAL_SERVICE_INTERNAL_GATEWAY_REF),
    "virtualservice.ConflictingMeshGatewayHostsAnalyzer": (
        codes.CONFLICTING_MESH_VIRTUAL_SERVICE_HOSTS,),
    "schemaValidation.CollectionValidationAnalyzer(collections.VirtualService)": (
        codes.VIRTUAL_SERVICE_UNREACHABLE_RULE, codes.VIRTUAL_SERVICE_INEFFECTIVE_MATCH,
        codes.MESH_CONFIG_NOT_EVALUATED),
    "gateway.IngressGatewayPortAnalyzer": (
        codes.ISTIO_GATEWAY_SELECTS_NO_PODS, codes.ISTIO_GATEWAY_PORT_NOT_ON_SERVICE),
    "gateway.ConflictingGatewayAnalyzer": (codes.CONFLICTING_ISTIO_GATEWAYS,
                                           codes.ISTIO_GATEWAY_SERVES_NOTHING),
    "service.PortNameAnalyzer": (
        codes.SERVICE_PORT_NAME_NOT_PROTOCOL, codes.EXTERNAL_NAME_PORT_NAME_INVALID),
    "destinationrule.PodNotSelectedAnalyzer": (
        codes.DESTINATION_RULE_HOST_NOT_FOUND, codes.DESTINATION_RULE_SUBSET_SELECTS_NO_PODS),
    "virtualservice.RegexAnalyzer": (codes.VIRTUAL_SERVICE_INVALID_REGEX,),
    "virtualservice.JWTClaimRouteAnalyzer": (
        codes.VIRTUAL_SERVICE_JWT_CLAIM_ROUTE_UNAUTHENTICATED,),
    "k8sgateway.SelectorAnalyzer": (codes.SELECTOR_ON_GATEWAY_API_PODS,),
    "serviceentry.ConflictingServiceEntryProtocolAnalyzer": (
        codes.CONFLICTING_SERVICE_ENTRY_PROTOCOLS,),
    "telemetry.SelectorAnalyzer": (codes.TELEMETRY_SELECTS_NO_PODS,
                                   codes.CONFLICTING_TELEMETRY_SELECTORS),
    "telemetry.DefaultSelectorAnalyzer": (codes.MULTIPLE_NAMESPACE_WIDE_TELEMETRIES,),
    # testGrid names the Go type; the analyzer's Metadata name is the second.
    "deprecation.FieldAnalyzer": (codes.DEPRECATED_ISTIO_FIELD,),
    "deprecation.DeprecationAnalyzer": (codes.DEPRECATED_ISTIO_FIELD,),
    # Istio security policy lint is the istio_policies analyzer's (analyze_config runs
    # both); testGrid names the Go type, istioctl's output the analyzer's Metadata name.
    "authz.AuthorizationPoliciesAnalyzer": (
        codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD, codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND),
    "auth.AuthorizationPoliciesAnalyzer": (
        codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD, codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND),
}
# Codes of checks istioctl does not make (no IST equivalent).
OWN_CODES: tuple[Code, ...] = (codes.VIRTUAL_SERVICE_REGEX_TOO_LARGE,)
# Codes of UPSTREAM that another analyzer of analyze_config reports (istio_policies).
ELSEWHERE: frozenset[Code] = frozenset({codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD,
                                        codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND})

CHECKED = ("VirtualService destinations (host, port, subset) that resolve to nothing, gateways "
    "that do not exist or do not serve the VirtualService's hosts, VirtualServices that "
    "claim the same mesh host, rules and matches that never take traffic, Gateways without "
    "pods, without a Service port or in conflict, DestinationRules whose host or subsets "
    "match nothing, Service ports whose protocol Istio cannot tell, and VirtualService "
    "match regexes Envoy's RE2 refuses (bad syntax, or a program over Istio's size "
    "limit), gateway VirtualServices routing on JWT claims where no "
    "RequestAuthentication covers the gateway pods, Istio policies selecting a Gateway "
    "API gateway's pods by label instead of targetRefs, ServiceEntries visible "
    "together that give one host and port different protocols, and Telemetries that "
    "select no pod, select the same pods as another, or share a namespace with another "
    "without selector, and deprecated or ignored fields (fault delay percent, Sidecar "
    "egressProxy).")

METADATA = AnalyzerMetadata(
    name="mesh_config",
    description=f"Istio networking configuration as istioctl analyze checks it: {CHECKED}",
    reads=frozenset({VIRTUAL_SERVICE, DESTINATION_RULE, SERVICE_ENTRY, ISTIO_GATEWAY,
                     K8S_GATEWAY, NODE, Kind.SERVICE, Kind.NAMESPACE, *POD_LIKE_KINDS,
                     jwt_claim_routes.REQUEST_AUTHENTICATION,
                     *(kind for kind, _ in gateway_api_selectors.POLICY_KINDS),
                     deprecations.SIDECAR}),
    codes=tuple(dict.fromkeys([*(c for group in UPSTREAM.values() for c in group
                                 if c not in ELSEWHERE), *OWN_CODES])),
)

CHECKS = (virtual_services.destination_hosts, virtual_services.destination_subsets,
          virtual_services.gateways, virtual_services.conflicting_mesh_hosts,
          virtual_services.unreachable_rules, gateways.ingress_ports, gateways.conflicting,
          destination_rules.subsets_select_pods, port_names.port_names,
          regexes.invalid_regexes, jwt_claim_routes.claim_routes_authenticated,
          gateway_api_selectors.selectors_on_gateway_pods,
          service_entry_protocols.conflicting_protocols, telemetry_selectors.selectors,
          deprecations.deprecated_fields)


@dataclass(frozen=True, slots=True)
class Evaluation:
    findings: list[Finding]
    not_evaluated: list[str]


def evaluate(view: GraphView, namespace: str | None) -> Evaluation:
    ctx = MeshContext(view, namespace)
    for run in CHECKS:
        run(ctx)
    return Evaluation(ctx.findings, ctx.not_evaluated)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    yield from evaluate(view, namespace).findings
