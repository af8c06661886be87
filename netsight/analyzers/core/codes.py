"""The one table of finding codes.

Codes are stable: agents and pipelines match on them. Never reuse or renumber a code; a
retired code stays here as a comment. ``equivalent`` lists istioctl (IST....) or Kiali
(KIA....) codes only where they report the same problem.

Ranges: NS00xx input problems · NS01xx Services · NS02xx endpoints · NS03xx workloads ·
NS04xx policies · NS05xx Gateway API routing · NS06xx-NS07xx mesh (Istio networking)
configuration · NS08xx cluster DNS: how a name resolves, and the Corefile · NS09xx Linkerd
and Kuma (NS0900-NS0949 Linkerd, NS0950-NS0999 Kuma) · NS10xx providers: CNI and controller
health.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netsight.analyzers.core.contracts import (
    Category,
    Evidence,
    Finding,
    ResourceRef,
    Severity,
)
from netsight.analyzers.core.signatures import finding_pattern, hash_of


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    name: str
    severity: Severity
    category: Category
    description: str
    equivalent: tuple[str, ...] = ()

    def finding(
        self,
        resource: ResourceRef | None,
        summary: str,
        *,
        detail: str,
        suggestion: str | None = None,
        evidence: Iterable[Evidence] = (),
        severity: Severity | None = None,
        category: Category | None = None,
    ) -> Finding:
        evidence = list(evidence)
        severity = severity or self.severity
        pattern = finding_pattern(self.code, severity.value, resource, evidence,
                                  default_severity=self.severity.value)
        return Finding(
            code=self.code,
            severity=severity,
            category=category or self.category,
            resource=resource,
            summary=summary,
            equivalent_codes=list(self.equivalent) or None,
            detail=detail,
            suggestion=suggestion,
            evidence=evidence or None,
            signature=hash_of(pattern),
        )


C, W, I = Severity.CRITICAL, Severity.WARNING, Severity.INFO  # noqa: E741
CONN, DNS = Category.CONNECTIVITY, Category.DNS
ROUTING = Category.ROUTING

# --- NS00xx: inputs netsight could not take as they are -----------------------------------
MANIFEST_UNPARSEABLE = Code(
    "NS0001", "ManifestUnparseable", W, CONN,
    "A manifest document is not valid YAML or JSON; it was skipped.",
)
NOT_A_KUBERNETES_OBJECT = Code(
    "NS0002", "NotAKubernetesObject", W, CONN,
    "A document parsed but lacks apiVersion, kind or metadata.name; it was skipped.",
)
MALFORMED_OBJECT = Code(
    "NS0003", "MalformedObject", W, CONN,
    "An object has a field of the wrong shape; it was left out of the graph (or, from a "
    "cluster, its last valid version kept).",
)
DUPLICATE_OBJECT = Code(
    "NS0004", "DuplicateObject", W, CONN,
    "The same object is defined twice in the manifests; the later definition wins.",
)
INVALID_FIELD_VALUE = Code(
    "NS0005", "InvalidFieldValue", W, CONN,
    "A field holds a value the API server rejects (e.g. port protocol HTTP); netsight kept "
    "the object as written and analyzes it as such.",
)

# --- NS01xx: Services ----------------------------------------------------------------------
SERVICE_SELECTS_NO_PODS = Code(
    "NS0101", "ServiceSelectorMatchesNoPods", C, CONN,
    "The Service's selector matches no pods (and no workload pod template).",
)
SERVICE_NO_READY_ENDPOINTS = Code(
    "NS0102", "ServiceHasNoReadyEndpoints", C, CONN,
    "The Service has no ready endpoints: connections to it fail or hang.",
)
SERVICE_ENDPOINTS_PARTIALLY_READY = Code(
    "NS0103", "ServiceEndpointsPartiallyReady", W, CONN,
    "Some of the Service's endpoints are not ready.",
)
TARGET_PORT_NOT_DECLARED = Code(
    "NS0104", "TargetPortNotDeclared", W, CONN,
    "A numeric targetPort is declared by none of the selected pods' containers.",
    ("KIA0701",),
)
NAMED_TARGET_PORT_NOT_FOUND = Code(
    "NS0105", "NamedTargetPortNotFound", C, CONN,
    "A named targetPort resolves on none (critical) or only some (warning) of the selected "
    "pods; pods where it does not resolve get no endpoint for that port.",
    ("KIA0701",),
)
PORT_PROTOCOL_MISMATCH = Code(
    "NS0106", "PortProtocolMismatch", W, CONN,
    "The Service port's protocol differs from the protocol of the container port it targets.",
)
APP_PROTOCOL_MISMATCH = Code(
    "NS0107", "AppProtocolMismatch", W, CONN,
    "The port's appProtocol contradicts its name's protocol prefix or its transport protocol.",
)
SERVICE_HAS_NO_PORTS = Code(
    "NS0108", "ServiceHasNoPorts", C, CONN,
    "A non-headless Service without ports: the API server rejects it and nothing can "
    "connect to it.",
)
EXTERNAL_NAME_MISSING = Code(
    "NS0110", "ExternalNameMissing", C, DNS,
    "A Service of type ExternalName has no spec.externalName.",
)
EXTERNAL_NAME_IS_IP = Code(
    "NS0111", "ExternalNameIsIPAddress", W, DNS,
    "spec.externalName is an IP address; cluster DNS serves it as a CNAME to a name made of "
    "digits, which does not resolve.",
)
EXTERNAL_NAME_TARGET_NOT_FOUND = Code(
    "NS0112", "ExternalNameTargetNotFound", W, DNS,
    "spec.externalName names an in-cluster Service that does not exist.",
)
EXTERNAL_NAME_SELECTOR_IGNORED = Code(
    "NS0113", "ExternalNameSelectorIgnored", I, DNS,
    "An ExternalName Service has a selector; it is ignored and no endpoints are made.",
)
HEADLESS_PORT_REMAP_IGNORED = Code(
    "NS0114", "HeadlessPortRemapIgnored", W, DNS,
    "A headless Service maps port to a different targetPort; clients reach pod IPs directly, "
    "so connections to the Service port do not reach the targetPort.",
)

# --- NS02xx: EndpointSlices and Endpoints --------------------------------------------------
ENDPOINTS_SERVICE_NOT_FOUND = Code(
    "NS0201", "EndpointsServiceNotFound", W, CONN,
    "An EndpointSlice or Endpoints object belongs to a Service that does not exist.",
)
ENDPOINT_TARGETS_UNSELECTED_POD = Code(
    "NS0202", "EndpointTargetsUnselectedPod", W, CONN,
    "A controller-managed EndpointSlice lists a pod the Service's selector does not match "
    "(stale slice).",
)
SELECTED_POD_MISSING_FROM_ENDPOINTS = Code(
    "NS0203", "SelectedPodMissingFromEndpoints", W, CONN,
    "A ready pod the Service selects is missing from its EndpointSlices.",
)
ENDPOINT_ADDRESS_MISMATCH = Code(
    "NS0204", "EndpointAddressMismatch", W, CONN,
    "An endpoint's address is not an IP of the pod it targets.",
)
ENDPOINT_PORTS_MISMATCH = Code(
    "NS0205", "EndpointPortsMismatch", W, CONN,
    "A controller-managed EndpointSlice lacks a port the Service defines.",
)
ENDPOINT_TARGET_POD_NOT_FOUND = Code(
    "NS0206", "EndpointTargetPodNotFound", W, CONN,
    "An endpoint targets a pod that does not exist.",
)
# NS0210-NS0219: endpoints, as Events tell it.
ENDPOINT_UPDATES_FAILING = Code(
    "NS0210", "EndpointUpdatesFailing", W, CONN,
    "The endpoint controllers recently failed to write the Service's EndpointSlices or "
    "Endpoints (a Warning Event): its endpoints may be stale.",
)

# --- NS03xx: workloads ---------------------------------------------------------------------
STATEFULSET_SERVICE_NOT_FOUND = Code(
    "NS0301", "StatefulSetServiceNotFound", W, DNS,
    "A StatefulSet's serviceName names no Service: its pods get no stable DNS names.",
)
STATEFULSET_SERVICE_NOT_HEADLESS = Code(
    "NS0302", "StatefulSetServiceNotHeadless", W, DNS,
    "A StatefulSet's governing Service is not headless: per-pod DNS records are not made.",
)
# NS0310-NS0319: workloads' pods, from their status and Events.
PODS_WAITING = Code(
    "NS0310", "ServicePodsWaiting", W, CONN,
    "Pods the Service selects have a container that does not run (CrashLoopBackOff, "
    "ImagePullBackOff, ...): they serve nothing.",
)
READINESS_PROBE_FAILING = Code(
    "NS0311", "ReadinessProbeFailing", W, CONN,
    "Pods the Service selects recently failed their readiness probe (a Warning Event): "
    "they are taken out of its endpoints.",
)

# --- NS04xx: policies (NetworkPolicy, AdminNetworkPolicy, BaselineAdminNetworkPolicy) -----
NETWORK_POLICY_SELECTS_NO_PODS = Code(
    "NS0401", "NetworkPolicySelectsNoPods", W, Category.POLICY,
    "A NetworkPolicy's podSelector matches no pods (and no workload template) in its "
    "namespace: it isolates nothing.",
)
POLICY_RULE_ALLOWS_ALL = Code(
    "NS0402", "PolicyRuleAllowsAll", I, Category.POLICY,
    "A NetworkPolicy rule has no peers and no ports: it admits all traffic in its direction "
    "for the selected pods.",
)
POLICY_NAMED_PORT_NOT_FOUND = Code(
    "NS0403", "PolicyNamedPortNotFound", W, Category.POLICY,
    "A named port in a NetworkPolicy ingress rule resolves on none of the pods the policy "
    "selects (by name and protocol): the entry admits nothing.",
)
POLICY_RULES_IGNORED_BY_POLICY_TYPES = Code(
    "NS0404", "PolicyRulesIgnoredByPolicyTypes", W, Category.POLICY,
    "A NetworkPolicy has ingress or egress rules but spec.policyTypes leaves that direction "
    "out: the rules have no effect.",
)
POLICY_NOT_EVALUATED = Code(
    "NS0405", "PolicyNotEvaluated", W, Category.POLICY,
    "A policy has a shape netsight does not evaluate (or the API server rejects): flows it "
    "could decide are answered with allowed: null.",
)
ADMIN_POLICY_PRIORITY_SHARED = Code(
    "NS0406", "AdminNetworkPolicyPriorityShared", W, Category.POLICY,
    "AdminNetworkPolicies share a priority: the spec leaves their relative order undefined.",
)

# NS0410-NS0419: Cilium (CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy)
CILIUM_POLICY_SELECTS_NO_PODS = Code(
    "NS0410", "CiliumPolicySelectsNoPods", W, Category.POLICY,
    "A Cilium policy rule's endpointSelector matches no pod (a CNP's only in its namespace): "
    "the rule has no effect.",
)
CILIUM_CIDR_RULE_COVERS_PODS = Code(
    "NS0411", "CiliumCIDRRuleCoversPods", W, Category.POLICY,
    "A Cilium CIDR peer (fromCIDR/toCIDR/…CIDRSet) covers pod addresses, but CIDR rules never "
    "match Cilium-managed endpoints or nodes: it admits (or denies) none of those pods.",
)
CILIUM_L7_RULES_NOT_EVALUATED = Code(
    "NS0412", "CiliumL7RulesNotEvaluated", I, Category.POLICY,
    "A Cilium rule carries L7 rules (http, dns, kafka, …): netsight answers for L4 only; "
    "requests may still be refused by the proxy.",
)

# NS0420-NS0429: Calico (NetworkPolicy, GlobalNetworkPolicy, Tier)
CALICO_SELECTOR_INVALID = Code(
    "NS0420", "CalicoSelectorInvalid", W, Category.POLICY,
    "A Calico policy's selector does not parse (Calico rejects the policy): flows it could "
    "decide are answered with allowed: null.",
)
CALICO_TIER_NOT_FOUND = Code(
    "NS0421", "CalicoTierNotFound", W, Category.POLICY,
    "A Calico policy names a tier no Tier object defines (Calico rejects it).",
)
CALICO_POLICY_SELECTS_NO_PODS = Code(
    "NS0422", "CalicoPolicySelectsNoPods", W, Category.POLICY,
    "A Calico policy's selector matches no pod (a namespaced policy's only in its "
    "namespace): it has no effect on pods.",
)

# NS0430-NS0439: Istio security policies (AuthorizationPolicy, PeerAuthentication)
ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD = Code(
    "NS0430", "IstioPolicySelectsNoMeshWorkload", W, Category.POLICY,
    "An AuthorizationPolicy's scope (its namespace, or its selector) takes in no workload "
    "in the mesh: only sidecars and ztunnel enforce it, so it has no effect.",
    ("IST0127",),
)
ISTIO_POLICY_NAMESPACE_NOT_FOUND = Code(
    "NS0431", "IstioPolicyNamespaceNotFound", W, Category.POLICY,
    "An AuthorizationPolicy rule's namespaces or notNamespaces entry matches no namespace.",
    ("IST0101", "KIA0101"),
)
ISTIO_POLICY_NOT_EVALUATED = Code(
    "NS0432", "IstioPolicyNotEvaluated", W, Category.POLICY,
    "An Istio AuthorizationPolicy or PeerAuthentication has a spec Istio's validation "
    "rejects (or netsight cannot read): flows it could govern are answered with "
    "allowed: null.",
    ("IST0106",),
)

# NS0440-NS0449: policies across a data path (a Gateway's pods to its routes' backends)
GATEWAY_DENIED_TO_BACKEND = Code(
    "NS0440", "GatewayPodsDeniedToBackend", C, Category.POLICY,
    "A route's Gateway runs in pods that network policies do not allow to connect to the "
    "route's backend pods on the backend port: requests the route accepts fail there "
    "(warning when only some of the pairs are denied).",
)

# --- NS05xx: Gateway API routing -----------------------------------------------------------
ROUTE_NOT_ACCEPTED = Code(
    "NS0501", "RouteNotAccepted", C, ROUTING,
    "A Gateway does not accept a route parentRef (Accepted=False: NoMatchingParent, "
    "NotAllowedByListeners, NoMatchingListenerHostname, UnsupportedValue, …); the route "
    "gets no traffic through that Gateway.",
)
ROUTE_PARENT_NOT_FOUND = Code(
    "NS0502", "RouteParentNotFound", C, ROUTING,
    "A route's parentRef names a Gateway that does not exist (or a ListenerSet that does "
    "not, or whose Gateway does not); no controller attaches it.",
    ("KIA1401",),
)
ROUTE_BACKEND_REF_NOT_PERMITTED = Code(
    "NS0503", "RouteBackendRefNotPermitted", C, ROUTING,
    "A backendRef points into another namespace and no ReferenceGrant there allows it "
    "(ResolvedRefs=False/RefNotPermitted); its share of requests fails.",
)
ROUTE_BACKEND_INVALID_KIND = Code(
    "NS0504", "RouteBackendInvalidKind", C, ROUTING,
    "A backendRef names a group/kind that is not a supported backend "
    "(ResolvedRefs=False/InvalidKind); its share of requests fails.",
)
ROUTE_BACKEND_NOT_FOUND = Code(
    "NS0505", "RouteBackendNotFound", C, ROUTING,
    "A backendRef names a Service (or a Service port) that does not exist "
    "(ResolvedRefs=False/BackendNotFound); its share of requests fails.",
)
ROUTE_BACKEND_NO_READY_ENDPOINTS = Code(
    "NS0506", "RouteBackendHasNoReadyEndpoints", W, ROUTING,
    "A route's backend Service resolves but has no ready endpoints: its share of requests "
    "fails (not a status condition; the route stays Accepted).",
)
ROUTE_RULES_DROPPED = Code(
    "NS0507", "RouteRulesDropped", W, ROUTING,
    "Some rules of an accepted route are invalid (PartiallyInvalid=True): values a "
    "conformant controller does not support (those rules are dropped), or an ExternalAuth "
    "backendRef that does not resolve (the requests they match are refused).",
)
GATEWAY_CLASS_UNAVAILABLE = Code(
    "NS0508", "GatewayClassUnavailable", C, ROUTING,
    "A Gateway's GatewayClass does not exist or was rejected by its controller: nothing "
    "reconciles the Gateway or the routes attached to it.",
)
LISTENER_INVALID_ROUTE_KINDS = Code(
    "NS0509", "ListenerInvalidRouteKinds", W, ROUTING,
    "A listener's allowedRoutes.kinds lists kinds its protocol cannot carry "
    "(ResolvedRefs=False/InvalidRouteKinds); they are left out of supportedKinds.",
)
LISTENER_CERTIFICATE_REF_INVALID = Code(
    "NS0510", "ListenerCertificateRefInvalid", C, Category.TLS,
    "A TLS-terminating listener's certificateRef (or a caCertificateRef of the Gateway's "
    "client certificate validation) is missing, of an unsupported kind, not permitted by a "
    "ReferenceGrant, or (where the input carries the data) not PEM; the listener is not "
    "programmed.",
)
LISTENER_CONFLICTED = Code(
    "NS0511", "ListenerConflicted", C, ROUTING,
    "Listeners of one Gateway share a port with incompatible protocols or the same "
    "hostname (Conflicted=True), or one name both terminated and passed through; the "
    "port is not configured and the listeners are not accepted.",
)
LISTENER_NOT_ACCEPTED = Code(
    "NS0512", "ListenerNotAccepted", C, ROUTING,
    "A listener is invalid (unsupported protocol, missing or misplaced tls, unsupported "
    "allowedRoutes value); no data plane configuration is made for it.",
)
CONTROLLER_STATUS_DISAGREES = Code(
    "NS0513", "ControllerStatusDisagrees", W, ROUTING,
    "The status the cluster's controller wrote differs from what a conformant controller "
    "would set for the current spec (stale status, or a controller-specific decision).",
)
REQUEST_NOT_ROUTED = Code(
    "NS0514", "RequestNotRouted", W, ROUTING,
    "No listener, route or rule takes the request: the Gateway answers 404 (or nothing "
    "serves the host at all).",
)
REQUEST_GETS_ERROR = Code(
    "NS0515", "RequestGetsErrorResponse", C, ROUTING,
    "The rule that takes the request forwards to no usable backend: invalid backendRefs "
    "give 500, no backends or no ready endpoints give 503.",
)
REQUEST_MISSES_EXPECTED_BACKEND = Code(
    "NS0516", "RequestMissesExpectedBackend", W, ROUTING,
    "The request does not reach the backend it was expected to: another rule takes "
    "precedence, or no rule routes there.",
)
ROUTE_MESH_PARENT_NOT_FOUND = Code(
    "NS0517", "RouteMeshParentNotFound", C, ROUTING,
    "A route's parentRef names a Service (a mesh, GAMMA, parent) that does not exist; no "
    "mesh applies the route.",
)
GATEWAY_NOT_ACCEPTED = Code(
    "NS0518", "GatewayNotAccepted", C, ROUTING,
    "A Gateway itself is not accepted (Accepted=False: it has no listeners, or its "
    "spec.infrastructure.parametersRef cannot be found); nothing is programmed for it and no "
    "route attaches through it. Listeners invalid one by one are reported per listener.",
)
GATEWAY_BACKEND_CLIENT_CERTIFICATE_INVALID = Code(
    "NS0519", "GatewayBackendClientCertificateInvalid", C, Category.TLS,
    "A Gateway's spec.tls.backend.clientCertificateRef, the certificate it presents to "
    "backends, does not resolve (ResolvedRefs=False: no such Secret, an unsupported kind, or "
    "no ReferenceGrant for another namespace); backends that require a client certificate "
    "refuse its connections.",
)
INGRESS_CLASS_NOT_FOUND = Code(
    "NS0520", "IngressClassNotFound", C, ROUTING,
    "spec.ingressClassName names an IngressClass that does not exist: no controller claims "
    "the Ingress.",
)
INGRESS_HAS_NO_CLASS = Code(
    "NS0521", "IngressHasNoClass", W, ROUTING,
    "An Ingress names no class and there is no single default IngressClass: only a "
    "controller that watches class-less Ingresses serves it.",
)
INGRESS_BACKEND_NOT_FOUND = Code(
    "NS0522", "IngressBackendNotFound", C, ROUTING,
    "An Ingress backend names a Service, or a Service port, that does not exist.",
)
INGRESS_TLS_SECRET_NOT_FOUND = Code(
    "NS0523", "IngressTLSSecretNotFound", W, Category.TLS,
    "An Ingress's tls.secretName names a Secret that does not exist: the controller serves "
    "its default certificate.",
)
INGRESS_RULE_CONFLICT = Code(
    "NS0524", "IngressRuleConflict", W, ROUTING,
    "Ingresses of one class claim the same host, path and pathType: the controller serves "
    "only one of them.",
)
# NS0530-NS0549: policies attached through targetRefs (BackendTLSPolicy, GEP-713).
BACKEND_TLS_POLICY_CONFLICTED = Code(
    "NS0530", "BackendTLSPolicyConflicted", W, Category.TLS,
    "An older BackendTLSPolicy (by creationTimestamp, then namespace/name) targets the same "
    "Service and sectionName (Accepted=False/Conflicted): this policy is ignored there.",
)
BACKEND_TLS_POLICY_INVALID = Code(
    "NS0531", "BackendTLSPolicyInvalid", C, Category.TLS,
    "A BackendTLSPolicy's spec cannot be used (no hostname, neither or both of "
    "caCertificateRefs and wellKnownCACertificates, an unknown wellKnownCACertificates "
    "value): Accepted=False/Invalid.",
)
BACKEND_TLS_POLICY_TARGET_NOT_FOUND = Code(
    "NS0532", "BackendTLSPolicyTargetNotFound", W, Category.TLS,
    "No Service (or Service port named by sectionName) a BackendTLSPolicy targets exists: "
    "the policy configures nothing (Accepted=False/TargetNotFound).",
)
BACKEND_TLS_CA_CERTIFICATE_REF_INVALID = Code(
    "NS0533", "BackendTLSCACertificateRefInvalid", C, Category.TLS,
    "A BackendTLSPolicy's caCertificateRef names a ConfigMap that does not exist "
    "(ResolvedRefs=False/InvalidCACertificateRef): connections using it fail with 5xx.",
)
BACKEND_TLS_CA_CERTIFICATE_KIND_INVALID = Code(
    "NS0534", "BackendTLSCACertificateKindInvalid", C, Category.TLS,
    "A BackendTLSPolicy's caCertificateRef is not a core ConfigMap "
    "(ResolvedRefs=False/InvalidKind); other kinds are implementation-specific.",
)
BACKEND_TLS_NO_VALID_CA_CERTIFICATE = Code(
    "NS0535", "BackendTLSNoValidCACertificate", C, Category.TLS,
    "Every caCertificateRef of a BackendTLSPolicy is invalid "
    "(Accepted=False/NoValidCACertificate): the Gateway cannot verify the backend and "
    "requests to it fail with 5xx.",
)
POLICY_TARGET_SECTION_NOT_FOUND = Code(
    "NS0536", "PolicyTargetSectionNotFound", W, ROUTING,
    "A policy's targetRef names a Gateway listener (sectionName) the Gateway does not have: "
    "the policy applies nowhere on that Gateway.",
)
POLICY_TARGET_NOT_FOUND = Code(
    "NS0537", "PolicyTargetNotFound", W, ROUTING,
    "A policy's targetRef names a Gateway, route or GatewayClass that does not exist: the "
    "policy applies nowhere until it does.",
)

# NS0550-NS0559: ListenerSets (GEP-1713). Their listeners' problems read as a Gateway
# listener's (NS0511, NS0512, ...), reported on the ListenerSet.
LISTENER_SET_NOT_ACCEPTED = Code(
    "NS0550", "ListenerSetNotAccepted", C, ROUTING,
    "A ListenerSet is not accepted (Accepted=False): its Gateway's spec.allowedListeners "
    "does not take ListenerSets from its namespace (NotAllowed; the default takes none), "
    "the Gateway is not accepted (ParentNotAccepted), or none of its listeners is valid "
    "(ListenersNotValid, conflicts with the Gateway's or an older ListenerSet's listeners "
    "included); its listeners are not programmed and routes attached to it go nowhere.",
)

# --- NS06xx: mesh configuration (Istio networking.istio.io, and Services as Istio reads them)
MESH = Category.MESH
MESH_DESTINATION_HOST_NOT_FOUND = Code(
    "NS0601", "MeshDestinationHostNotFound", C, MESH,
    "A VirtualService route or mirror names a destination host no Service or ServiceEntry "
    "visible in its namespace provides (short names resolve in the VirtualService's "
    "namespace; exportTo limits visibility): requests routed there fail.",
    ("IST0101",),
)
MESH_DESTINATION_PORT_NOT_FOUND = Code(
    "NS0602", "MeshDestinationPortNotFound", C, MESH,
    "A VirtualService destination names a port its Service or ServiceEntry does not "
    "define: requests routed there fail.",
    ("IST0101",),
)
MESH_DESTINATION_PORT_REQUIRED = Code(
    "NS0603", "MeshDestinationPortRequired", W, MESH,
    "A VirtualService destination names no port, but its Service or ServiceEntry has "
    "several: Istio cannot tell which one to route to.",
    ("IST0112",),
)
MESH_DESTINATION_SUBSET_NOT_FOUND = Code(
    "NS0604", "MeshDestinationSubsetNotFound", C, MESH,
    "A VirtualService destination names a subset that no DestinationRule for its host "
    "defines: requests routed there fail (503, no healthy upstream).",
    ("IST0101",),
)
VIRTUAL_SERVICE_GATEWAY_NOT_FOUND = Code(
    "NS0605", "VirtualServiceGatewayNotFound", C, MESH,
    "A VirtualService's gateways entry names an Istio Gateway (or Gateway API Gateway) "
    "that does not exist: the VirtualService is not applied there.",
    ("IST0101",),
)
VIRTUAL_SERVICE_HOST_NOT_IN_GATEWAY = Code(
    "NS0606", "VirtualServiceHostNotInGateway", W, MESH,
    "None of a VirtualService's hosts is among the hosts the Gateway it binds to serves "
    "for its namespace: the Gateway routes none of its traffic.",
    ("IST0132",),
)
VIRTUAL_SERVICE_INTERNAL_GATEWAY_REF = Code(
    "NS0607", "VirtualServiceReferencesInternalGateway", W, MESH,
    "A VirtualService binds to an Istio-generated Gateway of a Gateway API Gateway "
    "(name containing ~istio-autogenerated-k8s-gateway~): an internal name that may change.",
    ("IST0165",),
)
CONFLICTING_MESH_VIRTUAL_SERVICE_HOSTS = Code(
    "NS0608", "ConflictingMeshVirtualServiceHosts", W, MESH,
    "Several VirtualServices bound to the mesh claim the same host in the same (or an "
    "exported-to-all) scope: which one a sidecar uses is undefined.",
    ("IST0109",),
)
VIRTUAL_SERVICE_UNREACHABLE_RULE = Code(
    "NS0609", "VirtualServiceUnreachableRule", W, MESH,
    "A VirtualService rule can never take traffic: an earlier rule without match takes "
    "everything, or every match of the rule repeats an earlier one.",
    ("IST0130",),
)
VIRTUAL_SERVICE_INEFFECTIVE_MATCH = Code(
    "NS0610", "VirtualServiceIneffectiveMatch", I, MESH,
    "A VirtualService match entry never matches: it repeats, or is covered by (a longer "
    "prefix under the same conditions), an entry of an earlier rule.",
    ("IST0131",),
)
INGRESS_SUBSET_IGNORED = Code(
    "NS0611", "IngressRouteSubsetIgnored", W, MESH,
    "A gateway-bound VirtualService routes to a host without subset while a mesh "
    "VirtualService for that host splits it by subset: requests from the gateway ignore "
    "that split.",
    ("IST0140",),
)
ISTIO_GATEWAY_SELECTS_NO_PODS = Code(
    "NS0620", "IstioGatewaySelectsNoPods", C, MESH,
    "An Istio Gateway's selector matches no gateway pod: no proxy serves its servers.",
    ("IST0101",),
)
ISTIO_GATEWAY_PORT_NOT_ON_SERVICE = Code(
    "NS0621", "IstioGatewayPortNotOnService", W, MESH,
    "An Istio Gateway server's port is not a TCP port of any Service in front of the "
    "gateway pods it selects: clients cannot reach that server.",
    ("IST0162",),
)
CONFLICTING_ISTIO_GATEWAYS = Code(
    "NS0622", "ConflictingIstioGateways", W, MESH,
    "Istio Gateways for the same gateway pods declare servers on the same port for the "
    "same host (and bind address): the gateway keeps only one of them.",
    ("IST0145",),
)
ISTIO_GATEWAY_SERVES_NOTHING = Code(
    "NS0623", "IstioGatewayServesNothing", W, MESH,
    "An Istio Gateway has no servers and no other Gateway with its selector has any: it "
    "configures no listener on the gateway pods.",
    ("IST0101",),
)
SERVICE_PORT_NAME_NOT_PROTOCOL = Code(
    "NS0630", "ServicePortNameNotProtocol", I, MESH,
    "A Service port's name (or appProtocol) does not start with a protocol Istio knows "
    "(http, http2, https, grpc, grpc-web, tcp, tls, mongo, mysql, redis, ...): the mesh "
    "sniffs the protocol or treats the port as plain TCP.",
    ("IST0118",),
)
EXTERNAL_NAME_PORT_NAME_INVALID = Code(
    "NS0631", "ExternalNamePortNameInvalid", W, MESH,
    "An ExternalName Service port is named tcp (or with no protocol Istio knows): proxies "
    "may not forward its TCP traffic correctly.",
    ("IST0150",),
)
DESTINATION_RULE_HOST_NOT_FOUND = Code(
    "NS0640", "DestinationRuleHostNotFound", W, MESH,
    "A DestinationRule's host matches no Service or ServiceEntry visible in its namespace: "
    "its traffic policy and subsets apply to nothing.",
    ("IST0174",),
)
DESTINATION_RULE_SUBSET_SELECTS_NO_PODS = Code(
    "NS0641", "DestinationRuleSubsetSelectsNoPods", W, MESH,
    "No pod carries the labels of a DestinationRule subset: traffic routed to the subset "
    "finds no endpoint (503).",
    ("IST0173",),
)
MESH_CONFIG_NOT_EVALUATED = Code(
    "NS0650", "MeshConfigNotEvaluated", W, MESH,
    "An Istio networking object has a field of a shape Istio's schema rejects (or netsight "
    "cannot read): the mesh checks that need it leave the object out.",
    ("IST0106",),
)
SIDECAR_SELECTS_NO_PODS = Code(
    "NS0660", "SidecarSelectsNoPods", W, MESH,
    "A Sidecar's workloadSelector matches no pod of its namespace: its egress, ingress and "
    "outbound settings apply to nothing.",
    ("IST0101",),
)
CONFLICTING_SIDECAR_SELECTORS = Code(
    "NS0661", "ConflictingSidecarSelectors", W, MESH,
    "Several Sidecars select the same pod: which one its proxy uses is undefined.",
    ("IST0110",),
)
MULTIPLE_DEFAULT_SIDECARS = Code(
    "NS0662", "MultipleDefaultSidecars", W, MESH,
    "Several Sidecars of one namespace have no workloadSelector: which one is the "
    "namespace's default is undefined.",
    ("IST0111",),
)
SIDECAR_INEFFECTIVE_IN_AMBIENT = Code(
    "NS0663", "SidecarIneffectiveInAmbient", W, MESH,
    "A Sidecar applies to an ambient-mode namespace or pod, which runs no sidecar proxy: "
    "it has no effect.",
    ("IST0167",),
)
DESTINATION_RULE_TLS_WITHOUT_CA = Code(
    "NS0670", "DestinationRuleTlsWithoutCa", W, MESH,
    "A DestinationRule originates TLS (mode SIMPLE or MUTUAL) without caCertificates: the "
    "proxy is not told which CA signs the server's certificate, so it checks the server "
    "against its default roots only, or not at all.",
    ("IST0128",),
)
DESTINATION_RULE_PORT_TLS_WITHOUT_CA = Code(
    "NS0671", "DestinationRulePortTlsWithoutCa", W, MESH,
    "A DestinationRule's port-level setting originates TLS (mode SIMPLE or MUTUAL) "
    "without caCertificates: the server's certificate on that port is checked against the "
    "proxy's default roots only, or not at all.",
    ("IST0129",),
)
SERVICE_ENTRY_ADDRESSES_REQUIRED = Code(
    "NS0680", "ServiceEntryAddressesRequired", W, MESH,
    "A ServiceEntry port serves TCP (or no protocol) but the entry has no addresses and "
    "none was allocated: sidecars cannot tell its connections from others to the same "
    "port, and a wildcard listener on that port takes them all.",
    ("IST0134",),
)
ISTIO_GATEWAY_DUPLICATE_CERTIFICATE = Code(
    "NS0690", "IstioGatewayDuplicateCertificate", W, MESH,
    "Two Istio Gateways for the same gateway pods serve the same certificate on different "
    "servers: a client reusing its HTTP/2 connection for another host the certificate "
    "covers reaches the wrong server and gets 404.",
    ("IST0138",),
)
ISTIO_GATEWAY_SECRET_NOT_FOUND = Code(
    "NS0691", "IstioGatewaySecretNotFound", C, MESH,
    "An Istio Gateway server's tls.credentialName names a Secret that does not exist in the "
    "namespace of the gateway pods: the gateway has no certificate for that server and "
    "TLS handshakes for its hosts fail.",
    ("IST0101",),
)
ISTIO_GATEWAY_CREDENTIAL_INVALID = Code(
    "NS0692", "IstioGatewayCredentialInvalid", C, MESH,
    "An Istio Gateway server's credentialName Secret holds no certificate the gateway can "
    "serve: neither keys cert/key nor tls.crt/tls.key with values, a certificate that is "
    "not X.509 PEM, or one expired or not yet valid; TLS handshakes for its hosts fail.",
    ("IST0161",),
)
MESH_WORKLOAD_PORT_PROTOCOL_CONFLICT = Code(
    "NS0695", "MeshWorkloadPortProtocolConflict", W, MESH,
    "Services selecting the pods of one mesh workload give one port different protocols "
    "(TCP and UDP): Istio requires one protocol per port of a mesh workload; its sidecar "
    "proxies only the TCP side.",
    ("IST0116",),
)
MESH_WORKLOAD_TARGET_PORT_CONFLICT = Code(
    "NS0696", "MeshWorkloadTargetPortConflict", W, MESH,
    "Services selecting the pods of one mesh workload send different ports to the same "
    "targetPort: Istio requires them to use the same port number, or traffic to one of "
    "them may be misrouted.",
    ("IST0137",),
)
JWT_CLAIM_ROUTE_WITHOUT_REQUEST_AUTHENTICATION = Code(
    "NS0697", "JwtClaimRouteWithoutRequestAuthentication", C, MESH,
    "A gateway-bound VirtualService routes on a JWT claim (@request.auth.claims.*) but no "
    "RequestAuthentication applies to the gateway pods: the claims are never available, so "
    "the match never holds.",
    ("IST0149",),
)
POLICY_SELECTOR_ON_KUBERNETES_GATEWAY = Code(
    "NS0698", "PolicySelectorOnKubernetesGateway", W, MESH,
    "An Istio policy (AuthorizationPolicy, RequestAuthentication, Telemetry, WasmPlugin) "
    "selects the pods of a Gateway API Gateway by workload selector: Istio does not apply "
    "it there; such a Gateway takes policies through targetRefs.",
    ("IST0166",),
)
CONFLICTING_SERVICE_ENTRY_PROTOCOLS = Code(
    "NS0681", "ConflictingServiceEntryProtocols", W, MESH,
    "ServiceEntries visible in one namespace give the same host and port different "
    "protocols: Istio uses one of them, so traffic may be handled with a protocol its "
    "author did not expect.",
    ("IST0177",),
)

# --- NS07xx: mesh configuration, continued (istioctl analyzers added later)
VIRTUAL_SERVICE_INVALID_REGEX = Code(
    "NS0700", "VirtualServiceInvalidRegex", C, MESH,
    "A regex in a VirtualService match (uri, scheme, method, authority, headers, "
    "queryParams) or CORS allowOrigins is not valid RE2, the syntax Envoy compiles it "
    "with: Istio's validation or the proxies refuse the route configuration. (Newer "
    "istioctl releases retired IST0122: Istio's validation refuses such regexes.)",
    ("IST0122",),
)
VIRTUAL_SERVICE_REGEX_TOO_LARGE = Code(
    "NS0701", "VirtualServiceRegexTooLarge", C, MESH,
    "A regex in a VirtualService match compiles to an RE2 program larger than Envoy's "
    "re2.max_program_size.error_level (32768 as Istio sets it): the proxies refuse the "
    "route configuration that carries it.",
)
TELEMETRY_SELECTS_NO_PODS = Code(
    "NS0702", "TelemetrySelectsNoPods", W, MESH,
    "A Telemetry's workload selector matches no pod of its namespace: it applies to "
    "nothing.",
    ("IST0101",),
)
CONFLICTING_TELEMETRY_SELECTORS = Code(
    "NS0703", "ConflictingTelemetrySelectors", W, MESH,
    "Telemetries of one namespace select the same pods: which one applies to them is "
    "undefined.",
    ("IST0159",),
)
MULTIPLE_NAMESPACE_WIDE_TELEMETRIES = Code(
    "NS0704", "MultipleNamespaceWideTelemetries", W, MESH,
    "A namespace holds more than one Telemetry without selector (or targetRefs): which "
    "one applies to its workloads is undefined.",
    ("IST0160",),
)
DEPRECATED_ISTIO_FIELD = Code(
    "NS0705", "DeprecatedIstioField", W, MESH,
    "An Istio networking object sets a deprecated or ignored field (a VirtualService fault "
    "delay's integer percent, a Sidecar's outboundTrafficPolicy.egressProxy).",
    ("IST0002",),
)
# EnvoyFilter patches (istioctl's envoyfilter.EnvoyPatchAnalyzer), NS0720-NS0729.
ENVOY_FILTER_RELATIVE_PATCH = Code(
    "NS0720", "EnvoyFilterRelativePatchWithoutPriority", W, MESH,
    "An EnvoyFilter without priority patches relative to other configuration (REMOVE, "
    "REPLACE, INSERT_BEFORE, INSERT_AFTER): whether what it patches is there depends on the "
    "order EnvoyFilters are applied in, which only a priority fixes.",
    ("IST0151",),
)
ENVOY_FILTER_REPLACE_NOT_APPLICABLE = Code(
    "NS0721", "EnvoyFilterReplaceNotApplicable", W, MESH,
    "An EnvoyFilter patch REPLACEs something other than an HTTP_FILTER or NETWORK_FILTER, "
    "the only targets REPLACE applies to: the patch is ignored.",
    ("IST0152",),
)
ENVOY_FILTER_ADD_IGNORED = Code(
    "NS0722", "EnvoyFilterAddOnRoutes", W, MESH,
    "An EnvoyFilter patch ADDs to a ROUTE_CONFIGURATION or HTTP_ROUTE, where istioctl "
    "reports the operation as ignored.",
    ("IST0153",),
)
ENVOY_FILTER_REMOVE_IGNORED = Code(
    "NS0723", "EnvoyFilterRemoveOnRoutes", W, MESH,
    "An EnvoyFilter patch REMOVEs a ROUTE_CONFIGURATION or HTTP_ROUTE, where istioctl "
    "reports the operation as ignored.",
    ("IST0154",),
)
ENVOY_FILTER_RELATIVE_PATCH_WITH_PROXY_VERSION = Code(
    "NS0724", "EnvoyFilterRelativePatchWithProxyVersion", W, MESH,
    "An EnvoyFilter without priority patches relative to a filter that an earlier patch "
    "matching a proxyVersion also patches: after an upgrade changes the proxy version, the "
    "patches apply in another order, or not at all.",
    ("IST0155",),
)
# Sidecar injection (istioctl's injection.Analyzer), NS0725-NS0729.
NAMESPACE_NOT_INJECTED = Code(
    "NS0725", "NamespaceNotInjected", I, MESH,
    "A namespace has neither the istio-injection nor the istio.io/rev label (and Istio does "
    "not inject namespaces by default): its pods get no sidecar and are outside the mesh.",
    ("IST0102",),
)
POD_MISSING_MESH_PROXY = Code(
    "NS0726", "PodMissingMeshProxy", W, MESH,
    "A pod of a namespace labelled istio-injection=enabled runs no istio-proxy container "
    "(and does not opt out of injection, nor run on the host network): it was created "
    "before injection was enabled, or injection failed; it is outside the mesh.",
    ("IST0103",),
)
NAMESPACE_MULTIPLE_INJECTION_LABELS = Code(
    "NS0727", "NamespaceMultipleInjectionLabels", W, MESH,
    "A namespace carries more than one of istio-injection, istio.io/rev and "
    "istio.io/dataplane-mode: which one decides how its pods join the mesh is not obvious.",
    ("IST0123",),
)
# Istio mTLS: what a DestinationRule's TLS meets at its servers, and Kiali's mTLS
# consistency validations (business/checkers/{destinationrules,peerauthentications}),
# NS0760-NS0779. Kiali's checks hold with auto mTLS on unless the mesh config turns it off.
DESTINATION_RULE_TLS_REFUSED = Code(
    "NS0760", "DestinationRuleTlsRefused", C, Category.TLS,
    "A DestinationRule makes its clients' sidecars send what the servers of its host refuse: "
    "plaintext (DISABLE) or TLS of their own (SIMPLE, MUTUAL) toward workloads under a "
    "STRICT PeerAuthentication, or Istio mTLS toward pods without a sidecar or under "
    "DISABLE; the connection is reset.",
)
DESTINATION_RULE_MULTI_MATCH = Code(
    "NS0761", "DestinationRuleMultiMatch", W, MESH,
    "Several DestinationRules visible in one namespace give the same host and subset (or "
    "one without subsets): Istio merges them or takes the oldest, so one's settings are "
    "silently lost.",
    ("KIA0201",),
)
DESTINATION_RULE_TLS_OVERRIDDEN = Code(
    "NS0762", "DestinationRuleOverridesMtls", W, MESH,
    "A DestinationRule without TLS settings is more specific than a mesh-wide or "
    "namespace-wide DestinationRule enabling ISTIO_MUTUAL: clients take it instead, and "
    "with it no mTLS setting.",
    ("KIA0204",),
)
MESH_MTLS_PEER_AUTHENTICATION_MISSING = Code(
    "NS0763", "MeshWideMtlsPeerAuthenticationMissing", W, MESH,
    "A DestinationRule for *.local enables ISTIO_MUTUAL mesh-wide, auto mTLS is off, and "
    "no mesh-wide PeerAuthentication enables mTLS.",
    ("KIA0205",),
)
NAMESPACE_MTLS_PEER_AUTHENTICATION_MISSING = Code(
    "NS0764", "NamespaceMtlsPeerAuthenticationMissing", W, MESH,
    "A DestinationRule for *.<namespace>.svc.cluster.local enables ISTIO_MUTUAL for the "
    "namespace, auto mTLS is off, and no namespace or mesh PeerAuthentication enables mTLS.",
    ("KIA0206",),
)
DESTINATION_RULE_DISABLES_MTLS_UNDER_STRICT = Code(
    "NS0765", "NamespaceDestinationRuleDisablesStrictMtls", C, MESH,
    "A namespace-wide DestinationRule disables TLS while the namespace's PeerAuthentication "
    "is STRICT: its clients send plaintext the servers refuse.",
    ("KIA0207",),
)
DESTINATION_RULE_DISABLES_MESH_MTLS = Code(
    "NS0766", "DestinationRuleDisablesMeshStrictMtls", C, MESH,
    "A mesh-wide or namespace-wide DestinationRule disables TLS while the mesh-wide "
    "PeerAuthentication is STRICT (and no namespace PeerAuthentication relaxes it).",
    ("KIA0208",),
)
MESH_MTLS_DESTINATION_RULE_MISSING = Code(
    "NS0767", "MeshWideMtlsDestinationRuleMissing", C, MESH,
    "The mesh-wide PeerAuthentication is STRICT, auto mTLS is off, and no DestinationRule "
    "for *.local enables ISTIO_MUTUAL: sidecar clients send plaintext, which is refused.",
    ("KIA0401",),
)
NAMESPACE_MTLS_DESTINATION_RULE_MISSING = Code(
    "NS0768", "NamespaceMtlsDestinationRuleMissing", C, MESH,
    "A namespace's PeerAuthentication is STRICT, auto mTLS is off, and no namespace-wide or "
    "mesh-wide DestinationRule enables ISTIO_MUTUAL: sidecar clients send plaintext, which "
    "is refused.",
    ("KIA0501",),
)
NAMESPACE_MTLS_DISABLED_BUT_REQUESTED = Code(
    "NS0769", "NamespaceMtlsDisabledDestinationRuleEnables", C, MESH,
    "A namespace's PeerAuthentication disables mTLS while a namespace-wide (or, without one "
    "disabling it, a mesh-wide) DestinationRule enables it: clients open TLS the servers do "
    "not terminate.",
    ("KIA0505",),
)
MESH_MTLS_DISABLED_BUT_REQUESTED = Code(
    "NS0770", "MeshMtlsDisabledDestinationRuleEnables", C, MESH,
    "The mesh-wide PeerAuthentication disables mTLS while a DestinationRule for *.local "
    "enables it: clients open TLS the servers do not terminate.",
    ("KIA0506",),
)
# Kiali's AuthorizationPolicy and Sidecar reference validations (business/checkers/
# authorization, business/checkers/sidecars), NS0771-NS0789. Kiali's root namespace is
# istio-system.
AUTHORIZATION_POLICY_INVALID_METHOD = Code(
    "NS0771", "AuthorizationPolicyInvalidMethod", W, Category.POLICY,
    "An AuthorizationPolicy operation's methods entry is neither an HTTP method nor an Istio "
    "wildcard of one (a gRPC name belongs in paths: gRPC requests are POST): it matches no "
    "request.",
    ("KIA0102",),
)
AUTHORIZATION_POLICY_HOST_NOT_FOUND = Code(
    "NS0772", "AuthorizationPolicyHostNotFound", W, Category.POLICY,
    "An AuthorizationPolicy operation's hosts entry names a Service host (name or "
    "name.namespace) that no Service, ServiceEntry or VirtualService of the mesh has.",
    ("KIA0104",),
)
SIDECAR_EGRESS_HOST_NOT_FOUND = Code(
    "NS0773", "SidecarEgressHostNotFound", W, MESH,
    "A Sidecar egress hosts entry names a host no Service or ServiceEntry provides: its "
    "proxies get no route to it.",
    ("KIA1004",),
)
AUTHORIZATION_POLICY_REQUIRES_MTLS = Code(
    "NS0775", "AuthorizationPolicyRequiresMtls", C, Category.POLICY,
    "An AuthorizationPolicy matches on peer identities (source principals or namespaces, "
    "or conditions on them or the SNI) where mTLS is not enabled: plaintext requests carry "
    "no identity, so those fields never match.",
    ("KIA0105",),
)
AUTHORIZATION_POLICY_PRINCIPAL_NOT_FOUND = Code(
    "NS0776", "AuthorizationPolicyPrincipalNotFound", W, Category.POLICY,
    "An AuthorizationPolicy principals entry of the mesh's trust domain names a service "
    "account no workload of the cluster runs as.",
    ("KIA0106",),
)
ROOT_SIDECAR_HAS_SELECTOR = Code(
    "NS0774", "RootSidecarHasWorkloadSelector", W, MESH,
    "A Sidecar in the root namespace (istio-system) has a workloadSelector: it is not the "
    "mesh-wide default, and selects only pods of the root namespace.",
    ("KIA1006",),
)

# --- NS08xx: cluster DNS (check_dns_resolution, and the Corefile in analyze_config) ---------
DNS_NAME_INVALID = Code(
    "NS0801", "DnsNameInvalid", C, DNS,
    "The name is not a valid DNS name (RFC 1123 labels of at most 63 characters, 253 in "
    "all): resolvers refuse it or nothing answers it.",
)
DNS_SEARCH_PATH_WALK = Code(
    "NS0802", "DnsSearchPathWalk", W, DNS,
    "A name outside the cluster has fewer dots than the pod's ndots (5 by default): the "
    "resolver first tries it under every search domain, each an extra round trip (twice, "
    "for A and AAAA) before the query that answers.",
)
DNS_CLUSTER_NAME_NOT_FOUND = Code(
    "NS0803", "DnsClusterNameNotFound", C, DNS,
    "A cluster name names a Service, namespace, port or pod hostname that does not exist: "
    "cluster DNS answers NXDOMAIN.",
)
DNS_SHORT_NAME_IN_OTHER_NAMESPACE = Code(
    "NS0804", "DnsShortNameInOtherNamespace", W, DNS,
    "A short Service name resolves only in the asking pod's own namespace; the Service is "
    "in another one, so the name must carry its namespace.",
)
DNS_HEADLESS_NO_READY_ENDPOINTS = Code(
    "NS0805", "DnsHeadlessServiceHasNoReadyEndpoints", C, DNS,
    "A headless Service's name resolves to its ready endpoints' addresses; with none, "
    "cluster DNS answers no address at all.",
)
DNS_POD_RECORDS_DISABLED = Code(
    "NS0806", "DnsPodRecordsDisabled", C, DNS,
    "A pod-form name (1-2-3-4.namespace.pod.<domain>) with the kubernetes plugin's pods "
    "mode disabled (its default): cluster DNS answers NXDOMAIN.",
)
DNS_POD_RECORDS_INSECURE = Code(
    "NS0807", "DnsPodRecordsUnverified", I, DNS,
    "Pod-form names are answered with pods insecure: any address-shaped name resolves, "
    "whether a pod has that address or not.",
)
DNS_POLICY_DEFAULT = Code(
    "NS0808", "DnsPolicyDefaultSkipsClusterDns", W, DNS,
    "The pod's dnsPolicy is Default: it uses its node's resolvers, not cluster DNS, so "
    "cluster names do not resolve (unless the node forwards them).",
)
DNS_HOST_NETWORK_WITHOUT_CLUSTER_FIRST = Code(
    "NS0809", "DnsHostNetworkWithoutClusterFirstWithHostNet", W, DNS,
    "A host-network pod with dnsPolicy ClusterFirst gets its node's resolv.conf, not "
    "cluster DNS; ClusterFirstWithHostNet is needed for cluster names.",
)
DNS_NAME_REWRITTEN = Code(
    "NS0810", "DnsNameRewritten", I, DNS,
    "A rewrite rule of the Corefile changes the queried name before it is answered.",
)
DNS_NAMESPACE_NOT_SERVED = Code(
    "NS0811", "DnsNamespaceNotServed", C, DNS,
    "The kubernetes plugin's namespaces option leaves out the name's namespace: cluster DNS "
    "answers NXDOMAIN for it.",
)
COREFILE_FORWARD_NOT_AN_ADDRESS = Code(
    "NS0812", "CorefileForwardNotAnAddress", C, DNS,
    "A forward destination is neither an IP address nor a file: CoreDNS refuses the "
    "Corefile.",
)
COREFILE_ZONE_SHADOWS_CLUSTER_DOMAIN = Code(
    "NS0813", "CorefileZoneShadowsClusterDomain", W, DNS,
    "A server block (a stub domain) serves a zone inside the cluster domain without the "
    "kubernetes plugin: names under it no longer reach the cluster's records.",
)
COREFILE_TTL_PITFALL = Code(
    "NS0814", "CorefileTtlPitfall", W, DNS,
    "A cache TTL of zero or less (CoreDNS refuses it), or a kubernetes ttl so long that "
    "moved pods' and recreated Services' addresses are served stale.",
)
COREFILE_UNPARSEABLE = Code(
    "NS0815", "CorefileUnparseable", W, DNS,
    "The Corefile does not parse: CoreDNS refuses it, and netsight evaluates none of it.",
)
COREFILE_NO_KUBERNETES = Code(
    "NS0816", "CorefileNoKubernetesPlugin", C, DNS,
    "No server block has the kubernetes plugin: no Service or pod name resolves.",
)

# --- NS09xx: Linkerd (NS0900-NS0949) and Kuma (NS0950-NS0999) policy objects -------------
LINKERD_AUTHORIZATION_TARGET_NOT_FOUND = Code(
    "NS0900", "LinkerdAuthorizationTargetNotFound", W, Category.POLICY,
    "A ServerAuthorization or AuthorizationPolicy names a Server (or HTTPRoute) its namespace "
    "does not have: it authorizes nothing.",
)
LINKERD_SERVER_SELECTS_NO_PODS = Code(
    "NS0901", "LinkerdServerSelectsNoPods", W, Category.POLICY,
    "A Linkerd Server's podSelector matches no pod or workload of its namespace.",
)
LINKERD_AUTHENTICATION_NOT_FOUND = Code(
    "NS0902", "LinkerdAuthenticationNotFound", C, Category.POLICY,
    "An AuthorizationPolicy requires a MeshTLSAuthentication or NetworkAuthentication that "
    "does not exist: Linkerd ignores the policy, so it admits no one.",
)
KUMA_PERMISSION_TARGETS_NOTHING = Code(
    "NS0950", "KumaPermissionTargetsNothing", W, Category.POLICY,
    "A MeshTrafficPermission's top-level targetRef selects no pod within its reach.",
)

# --- NS10xx: providers: the CNI, and the health of controllers --------------------------
CNI_ENFORCES_NO_POLICY = Code(
    "NS1000", "CniEnforcesNoPolicy", C, Category.POLICY,
    "Network policies exist, but the detected CNI enforces none of them: every flow they "
    "deny still passes.",
)
CNI_ENFORCEMENT_UNKNOWN = Code(
    "NS1001", "CniEnforcementUnknown", I, Category.POLICY,
    "Network policies exist, but whether the CNI enforces them cannot be told (its "
    "setting is not readable, or from a cluster no CNI was detected).",
)
PROVIDER_CONTROLLER_NOT_READY = Code(
    "NS1010", "ProviderControllerNotReady", C, CONN,
    "A provider's controller or agent has fewer ready pods than it wants (none: critical, "
    "some: warning).",
)
PROVIDER_ROLLOUT_INCOMPLETE = Code(
    "NS1011", "ProviderRolloutIncomplete", W, CONN,
    "A provider's controller or agent runs pods of an older template than its current one, "
    "or has not yet seen its latest spec.",
)
PROVIDER_AGENTS_MISSING_NODES = Code(
    "NS1012", "ProviderAgentsMissingNodes", W, CONN,
    "A node agent (CNI, ztunnel) is scheduled on fewer nodes than the cluster has: pods on "
    "the others lack it.",
)
PROVIDER_VERSIONS_DIFFER = Code(
    "NS1013", "ProviderVersionsDiffer", I, CONN,
    "A provider's components run different versions (image tags), as during an upgrade "
    "or a canary revision.",
)
GATEWAY_CLASS_NOT_ACCEPTED = Code(
    "NS1020", "GatewayClassNotAccepted", C, ROUTING,
    "A GatewayClass is not Accepted by its controller (or no controller has reported on "
    "it): its Gateways are not programmed.",
)
ISTIO_TAG_REVISION_MISSING = Code(
    "NS1030", "IstioTagRevisionMissing", C, Category.MESH,
    "An Istio revision tag (or revision webhook) points to a revision no istiod Deployment "
    "runs: namespaces using it get no sidecar injection.",
)
PROVIDER_STATUS = Code(
    "NS1040", "ProviderStatus", Severity.OK, CONN,
    "A provider's component as seen: its readiness, version and what it serves.",
)

CODES: dict[str, Code] = {
    code.code: code for code in globals().values() if isinstance(code, Code)
}
