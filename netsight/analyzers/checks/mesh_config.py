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

from netsight.analyzers.core import codes, deadline
from netsight.analyzers.core.codes import Code
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.mesh import (
    deprecations,
    destination_rules,
    destination_tls,
    envoy_filters,
    gateway_certificates,
    gateway_policy_selectors,
    gateway_secrets,
    injection,
    invalid_regexes,
    istio_gateways,
    jwt_claim_routes,
    port_names,
    service_entries,
    sidecar_references,
    sidecars,
    telemetry_selectors,
    virtual_services,
    workload_services,
)
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.gateway_policy_selectors import POLICY_KINDS
from netsight.analyzers.mesh.gateway_secrets import SECRET
from netsight.analyzers.mesh.istio_objects import (
    DESTINATION_RULE,
    ISTIO_GATEWAY,
    K8S_GATEWAY,
    NODE,
    SERVICE_ENTRY,
    SIDECAR,
    VIRTUAL_SERVICE,
)
from netsight.analyzers.mesh.jwt_claim_routes import REQUEST_AUTHENTICATION
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind
from netsight.graph.store.live import GraphView

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
    "sidecar.SelectorAnalyzer": (
        codes.SIDECAR_SELECTS_NO_PODS, codes.CONFLICTING_SIDECAR_SELECTORS,
        codes.MULTIPLE_DEFAULT_SIDECARS, codes.SIDECAR_INEFFECTIVE_IN_AMBIENT),
    # Older Istio reported selector-less Sidecars from an analyzer of their own.
    "sidecar.DefaultSelectorAnalyzer": (codes.MULTIPLE_DEFAULT_SIDECARS,),
    "destinationrule.CaCertificateAnalyzer": (
        codes.DESTINATION_RULE_TLS_WITHOUT_CA, codes.DESTINATION_RULE_PORT_TLS_WITHOUT_CA),
    "serviceentry.ProtocolAddressesAnalyzer": (codes.SERVICE_ENTRY_ADDRESSES_REQUIRED,),
    "serviceentry.ConflictingServiceEntryProtocolAnalyzer": (
        codes.CONFLICTING_SERVICE_ENTRY_PROTOCOLS,),
    # The name istioctl's analyzer list gives the same analyzer.
    "serviceentry.Analyzer": (codes.SERVICE_ENTRY_ADDRESSES_REQUIRED,),
    "gateway.CertificateAnalyzer": (codes.ISTIO_GATEWAY_DUPLICATE_CERTIFICATE,),
    # InvalidGatewayCredential (IST0161) is decided where a manifest gives the Secret's
    # data; a Gateway without pods is reported by the pod check it shares with
    # gateway.IngressGatewayPortAnalyzer.
    "gateway.SecretAnalyzer": (codes.ISTIO_GATEWAY_SELECTS_NO_PODS,
                               codes.ISTIO_GATEWAY_SECRET_NOT_FOUND,
                               codes.ISTIO_GATEWAY_CREDENTIAL_INVALID),
    "deployment.ServiceAssociationAnalyzer": (codes.MESH_WORKLOAD_PORT_PROTOCOL_CONFLICT,
                                              codes.MESH_WORKLOAD_TARGET_PORT_CONFLICT),
    "virtualservice.JWTClaimRouteAnalyzer": (
        codes.JWT_CLAIM_ROUTE_WITHOUT_REQUEST_AUTHENTICATION,),
    "k8sgateway.SelectorAnalyzer": (codes.POLICY_SELECTOR_ON_KUBERNETES_GATEWAY,),
    "authz.AuthorizationPoliciesAnalyzer": (codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD,
                                            codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND),
    "virtualservice.RegexAnalyzer": (codes.VIRTUAL_SERVICE_INVALID_REGEX,),
    "telemetry.SelectorAnalyzer": (codes.TELEMETRY_SELECTS_NO_PODS,
                                   codes.CONFLICTING_TELEMETRY_SELECTORS),
    "telemetry.DefaultSelectorAnalyzer": (codes.MULTIPLE_NAMESPACE_WIDE_TELEMETRIES,),
    # testGrid names the Go type; the analyzer's Metadata name is the second.
    "deprecation.FieldAnalyzer": (codes.DEPRECATED_ISTIO_FIELD,),
    "deprecation.DeprecationAnalyzer": (codes.DEPRECATED_ISTIO_FIELD,),
    "injection.Analyzer": (codes.NAMESPACE_NOT_INJECTED, codes.POD_MISSING_MESH_PROXY,
                           codes.NAMESPACE_MULTIPLE_INJECTION_LABELS),
    "envoyfilter.EnvoyPatchAnalyzer": (
        codes.ENVOY_FILTER_RELATIVE_PATCH, codes.ENVOY_FILTER_REPLACE_NOT_APPLICABLE,
        codes.ENVOY_FILTER_ADD_IGNORED, codes.ENVOY_FILTER_REMOVE_IGNORED,
        codes.ENVOY_FILTER_RELATIVE_PATCH_WITH_PROXY_VERSION),
}
# Codes of checks istioctl does not make (no IST equivalent).
OWN_CODES: tuple[Code, ...] = (codes.VIRTUAL_SERVICE_REGEX_TOO_LARGE,
                               # Kiali's Sidecar validations (mesh/sidecar_references.py)
                               codes.SIDECAR_EGRESS_HOST_NOT_FOUND,
                               codes.ROOT_SIDECAR_HAS_SELECTOR)

# Codes of UPSTREAM that another netsight analyzer reports (analyzers/istio_policies reads
# AuthorizationPolicies for reachability and reports these); not mesh_config's own.
ELSEWHERE = frozenset({codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD,
                       codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND})

CHECKED = ("VirtualService destinations (host, port, subset) that resolve to nothing, gateways "
    "that do not exist or do not serve the VirtualService's hosts, VirtualServices that "
    "claim the same mesh host, rules and matches that never take traffic, Gateways without "
    "pods, without a Service port or in conflict, DestinationRules whose host or subsets "
    "match nothing, Service ports whose protocol Istio cannot tell, Sidecars that select no "
    "pod, select a pod another Sidecar selects, compete as a namespace's default or apply "
    "to ambient workloads, DestinationRules originating TLS without the CA to check the "
    "server by, ServiceEntry TCP ports without addresses or with a protocol another "
    "ServiceEntry contradicts, Gateways of the same pods serving "
    "one certificate on separate servers, Gateway credential Secrets that do not exist or "
    "(given in manifests) hold no valid certificate, and "
    "Services giving a mesh workload's port two protocols or sending two ports to one "
    "targetPort, gateway routes on JWT claims that no RequestAuthentication provides, "
    "Istio policies selecting a Gateway API Gateway's pods by label instead of targetRefs, "
    "VirtualService match regexes Envoy's RE2 refuses (bad syntax, or a program over "
    "Istio's size limit), Telemetries that select no pod, select the same pods as another "
    "or share a namespace with another without selector, deprecated or ignored fields "
    "(fault delay percent, Sidecar egressProxy), and EnvoyFilter patches that depend on the "
    "order filters apply in (relative operations without priority, after a proxyVersion "
    "patch) or use an operation that does not apply to their target, namespaces not enabled for "
    "sidecar injection or with several injection labels, pods of injected namespaces "
    "without a sidecar, and (as Kiali) Sidecar egress hosts no Service provides and "
    "root-namespace Sidecars with a workloadSelector.")

METADATA = AnalyzerMetadata(
    name="mesh_config",
    description=f"Istio networking configuration as istioctl analyze checks it: {CHECKED}",
    reads=frozenset({VIRTUAL_SERVICE, DESTINATION_RULE, SERVICE_ENTRY, ISTIO_GATEWAY,
                     SIDECAR, SECRET, REQUEST_AUTHENTICATION, K8S_GATEWAY, NODE,
                     Kind.SERVICE, Kind.NAMESPACE, *POD_LIKE_KINDS,
                     *(kind for kind, _ in POLICY_KINDS), telemetry_selectors.TELEMETRY,
                     envoy_filters.ENVOY_FILTER, injection.CONFIG_MAP}),
    codes=tuple(dict.fromkeys([*(c for group in UPSTREAM.values() for c in group
                                 if c not in ELSEWHERE), *OWN_CODES])),
)

CHECKS = (virtual_services.destination_hosts, virtual_services.destination_subsets,
          virtual_services.gateways, virtual_services.conflicting_mesh_hosts,
          virtual_services.unreachable_rules, istio_gateways.ingress_ports,
          istio_gateways.conflicting,
          destination_rules.subsets_select_pods, port_names.port_names,
          sidecars.selectors, sidecar_references.kiali_checks,
          destination_tls.ca_certificates,
          service_entries.addresses_required, service_entries.conflicting_protocols,
          gateway_certificates.duplicate_certificates,
          gateway_secrets.credentials, workload_services.port_associations,
          jwt_claim_routes.claim_routes, gateway_policy_selectors.selectors,
          invalid_regexes.invalid_regexes, telemetry_selectors.selectors,
          deprecations.deprecated_fields, envoy_filters.patches, injection.injection)


@dataclass(frozen=True, slots=True)
class Evaluation:
    findings: list[Finding]
    not_evaluated: list[str]


def evaluate(view: GraphView, namespace: str | None) -> Evaluation:
    ctx = MeshContext(view, namespace)
    for run in deadline.checked(CHECKS):
        run(ctx)
    return Evaluation(ctx.findings, ctx.not_evaluated)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    yield from evaluate(view, namespace).findings


CHECK = Check(METADATA, check)
