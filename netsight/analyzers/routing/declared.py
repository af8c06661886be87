"""The kinds the Gateway API engine reads and the codes it reports, per question: declared
once for the tools that ask each question and for the gateway_api check that asks them all."""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.routing.backend_kinds import EXTENSION_BACKEND_KINDS
from netsight.analyzers.routing.backend_tls import BACKEND_TLS_POLICY, CONFIG_MAP
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_CLASS,
    LISTENER_SET_KINDS,
    REFERENCE_GRANT,
    ROUTE_KINDS,
    SECRET,
)
from netsight.analyzers.routing.kgateway_policies import KGATEWAY_POLICY_KINDS
from netsight.analyzers.routing.policies import KNOWN_KINDS
from netsight.analyzers.routing.policy_findings import BACKEND_TLS_CODES
from netsight.analyzers.routing.policy_findings import CODES as POLICY_CODES
from netsight.graph.model.kinds import Kind

# Resolving routes. BackendTLSPolicy and ConfigMap: the TLS a backend Service port is reached
# with. ListenerSet and XListenerSet: listeners added to Gateways, and route parents.
# Implementation-specific backends (kgateway and Envoy Gateway Backends, Istio
# ServiceEntries) and kgateway's policies on the routes of a kgateway Gateway.
EXTENSION_READS = frozenset({*EXTENSION_BACKEND_KINDS, *KGATEWAY_POLICY_KINDS})
ROUTE_READS = frozenset({*ROUTE_KINDS, GATEWAY, GATEWAY_CLASS, REFERENCE_GRANT, SECRET,
                         Kind.SERVICE, Kind.ENDPOINT_SLICE, Kind.NAMESPACE, BACKEND_TLS_POLICY,
                         CONFIG_MAP, *LISTENER_SET_KINDS, *EXTENSION_READS})
ROUTE_CODES = (codes.ROUTE_NOT_ACCEPTED, codes.ROUTE_PARENT_NOT_FOUND,
               codes.ROUTE_BACKEND_REF_NOT_PERMITTED, codes.ROUTE_BACKEND_INVALID_KIND,
               codes.ROUTE_BACKEND_NOT_FOUND, codes.ROUTE_BACKEND_NO_READY_ENDPOINTS,
               codes.ROUTE_RULES_DROPPED, codes.GATEWAY_CLASS_UNAVAILABLE,
               codes.ROUTE_MESH_PARENT_NOT_FOUND,
               codes.CONTROLLER_STATUS_DISAGREES, *BACKEND_TLS_CODES)

# A Gateway's status. attachedRoutes reads every route's parentRefs and namespace labels, so
# this reads what routes read, but not their backends: attachment is parentRefs and
# allowedRoutes alone. (ConfigMaps: a Gateway's spec.infrastructure.parametersRef.)
GATEWAY_READS = ROUTE_READS - {BACKEND_TLS_POLICY, Kind.SERVICE, Kind.ENDPOINT_SLICE,
                               *EXTENSION_READS}
GATEWAY_CODES = (codes.GATEWAY_CLASS_UNAVAILABLE, codes.LISTENER_INVALID_ROUTE_KINDS,
                 codes.LISTENER_CERTIFICATE_REF_INVALID, codes.LISTENER_CONFLICTED,
                 codes.LISTENER_NOT_ACCEPTED, codes.CONTROLLER_STATUS_DISAGREES,
                 codes.GATEWAY_NOT_ACCEPTED, codes.GATEWAY_BACKEND_CLIENT_CERTIFICATE_INVALID,
                 codes.LISTENER_SET_NOT_ACCEPTED)

# One Gateway with its routes and the policies attached to it. Policy kinds are read through
# the Gateway's target_ref edges; those netsight knows are declared, one of another kind is
# shown all the same.
ATTACHED_READS = ROUTE_READS | {kind for _, kind in KNOWN_KINDS}
ATTACHED_CODES = (*POLICY_CODES, *GATEWAY_CODES)

# One HTTP request routed through Gateway API, Ingress or Istio.
REQUEST_CODES = (codes.REQUEST_NOT_ROUTED, codes.REQUEST_GETS_ERROR,
                 codes.REQUEST_MISSES_EXPECTED_BACKEND)
