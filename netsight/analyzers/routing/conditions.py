"""Status conditions as netsight computes them, and their reasons (Gateway API v1)."""

from __future__ import annotations

from dataclasses import dataclass

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"

# Condition types.
ACCEPTED = "Accepted"
RESOLVED_REFS = "ResolvedRefs"
PROGRAMMED = "Programmed"
CONFLICTED = "Conflicted"
PARTIALLY_INVALID = "PartiallyInvalid"
OVERLAPPING_TLS_CONFIG = "OverlappingTLSConfig"

# Reasons (RouteConditionReason, ListenerConditionReason, GatewayConditionReason).
PENDING = "Pending"
NOT_ALLOWED_BY_LISTENERS = "NotAllowedByListeners"
NO_MATCHING_LISTENER_HOSTNAME = "NoMatchingListenerHostname"
NO_MATCHING_PARENT = "NoMatchingParent"
UNSUPPORTED_VALUE = "UnsupportedValue"
INCOMPATIBLE_FILTERS = "IncompatibleFilters"
REF_NOT_PERMITTED = "RefNotPermitted"
INVALID_KIND = "InvalidKind"
BACKEND_NOT_FOUND = "BackendNotFound"
INVALID_ROUTE_KINDS = "InvalidRouteKinds"
INVALID_CERTIFICATE_REF = "InvalidCertificateRef"
UNSUPPORTED_PROTOCOL = "UnsupportedProtocol"
HOSTNAME_CONFLICT = "HostnameConflict"
PROTOCOL_CONFLICT = "ProtocolConflict"
NO_CONFLICTS = "NoConflicts"
OVERLAPPING_HOSTNAMES = "OverlappingHostnames"
INVALID = "Invalid"
LISTENERS_NOT_VALID = "ListenersNotValid"
LISTENERS_NOT_RESOLVED = "ListenersNotResolved"
INVALID_PARAMETERS = "InvalidParameters"
INVALID_CLIENT_CERTIFICATE_REF = "InvalidClientCertificateRef"


@dataclass(frozen=True, slots=True)
class Cond:
    status: str
    reason: str
    message: str

    @property
    def ok(self) -> bool:
        return self.status == TRUE


def true(reason: str, message: str) -> Cond:
    return Cond(TRUE, reason, message)


def false(reason: str, message: str) -> Cond:
    return Cond(FALSE, reason, message)


def unknown(message: str) -> Cond:
    return Cond(UNKNOWN, PENDING, message)
