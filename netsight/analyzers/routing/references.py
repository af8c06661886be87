"""References out of routes and listeners: backendRefs, certificateRefs, ReferenceGrant.

A reference into another namespace is valid only when a ReferenceGrant in the *target*
namespace lists the referrer's group, kind and namespace in ``from`` and the target's
group, kind (and name, when given) in ``to`` (ReferenceGrant v1beta1). A reference that is
not permitted is reported as such even if its target does not exist, so the answer never
reveals what another namespace holds.

A reference out of an object the caller may see into a namespace they may not read is
decided on the whole graph all the same (whether a Gateway's certificate or a route's
backend resolves is a fact of the cluster, not of the caller), with ``shows`` saying what
they may see: the outcome is given, and what the hidden object holds (its ports, endpoints,
data, TLS policy) is not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.routing import backend_kinds
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.backend_tls import BackendTLSPolicies, BackendTLSState
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY_GROUP,
    REFERENCE_GRANT,
    SECRET,
    SERVICE,
    BackendRef,
    CertificateRef,
    Route,
    as_list,
    as_map,
    is_gateway_api,
    not_in_input,
    spec_of,
)
from netsight.graph.model.kinds import Kind, Rel, api_group, make_key, parse_key
from netsight.graph.model.records import EndpointSliceRecord, Record, SecretRecord, ServiceRecord
from netsight.graph.store.live import GraphView, Source

Shows = Callable[[str], bool]  # whether the caller may see an object, by key
HIDDEN = "in a namespace you may not read"


def shows_all(key: str) -> bool:
    return True


class Grants:
    """ReferenceGrants of each namespace, read once per answer."""

    __slots__ = ("_by_namespace", "_view")

    def __init__(self, view: GraphView) -> None:
        self._view = view
        self._by_namespace: dict[str, list[Mapping[str, Any]]] = {}

    def _in(self, namespace: str) -> list[Mapping[str, Any]]:
        grants = self._by_namespace.get(namespace)
        if grants is None:
            grants = [spec_of(r) for r in self._view.for_each(REFERENCE_GRANT, namespace)
                      if is_gateway_api(r)]
            self._by_namespace[namespace] = grants
        return grants

    def permits(self, *, from_kind: str, from_namespace: str, to_group: str, to_kind: str,
                to_namespace: str, to_name: str, from_group: str = GATEWAY_GROUP) -> bool:
        for spec in self._in(to_namespace):
            allowed_from = any(
                as_map(f).get("group") == from_group and as_map(f).get("kind") == from_kind
                and as_map(f).get("namespace") == from_namespace
                for f in as_list(spec.get("from"))
            )
            if allowed_from and any(
                str(as_map(t).get("group") or "") == to_group
                and as_map(t).get("kind") == to_kind
                and as_map(t).get("name") in (None, "", to_name)
                for t in as_list(spec.get("to"))
            ):
                return True
        return False


@dataclass(frozen=True, slots=True)
class BackendResolution:
    ref: BackendRef
    reason: str | None  # None: resolved; else a ResolvedRefs reason
    message: str
    ready_endpoints: int | None = None  # None: not known from the input
    external_name: bool = False  # a Service of type ExternalName (implementation-specific)
    tls: BackendTLSState | None = None  # the BackendTLSPolicy for this Service port, if any
    # An implementation-specific backend its controllers accept: what it points at, and
    # what of it netsight does not evaluate.
    targets: tuple[str, ...] | None = None
    not_evaluated: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None


def resolve_backend(view: GraphView, grants: Grants, route: Route, ref: BackendRef,
                    ready: dict[str, int | None] | None = None,
                    tls: BackendTLSPolicies | None = None,
                    shows: Shows = shows_all,
                    controllers: list[str | None] | None = None) -> BackendResolution:
    """Resolve one backendRef; ``ready`` caches ready endpoint counts by Service key,
    ``tls`` BackendTLSPolicies evaluated for earlier backends. A Service ``shows`` hides is
    resolved all the same, but its ports, endpoints, type and TLS policy are not given.
    ``controllers``: those of the route's Gateway parents, which decide whether an
    implementation-specific kind is a backend (routing/backend_kinds.py)."""
    where = f"{ref.path} ({ref.kind} {ref.ref})"
    # BackendObjectReference: Service in the core group is Core support; anything else is
    # extended or implementation-specific: resolved only where every controller accepts it.
    if (ref.group, ref.kind) != ("", SERVICE) and \
            backend_kinds.accepted_by(controllers or [], ref.group, ref.kind):
        return _resolve_extension(view, grants, route, ref, where, ready, shows)
    if (ref.group, ref.kind) != ("", SERVICE):
        group = ref.group or "core"
        return BackendResolution(ref, c.INVALID_KIND,
                                 f"{where}: kind {ref.kind} of group {group} is not a "
                                 "supported backend (Service in the core group is)")
    if ref.namespace != route.record.namespace and not grants.permits(
            from_kind=route.kind, from_namespace=route.record.namespace, to_group="",
            to_kind=SERVICE, to_namespace=ref.namespace, to_name=ref.name):
        return BackendResolution(ref, c.REF_NOT_PERMITTED,
                                 f"{where}: no ReferenceGrant in namespace {ref.namespace} "
                                 f"allows {route.kind}s from {route.record.namespace}")
    key = make_key(Kind.SERVICE, ref.namespace, ref.name)
    service = view.get(key)
    if not isinstance(service, ServiceRecord):
        return BackendResolution(ref, c.BACKEND_NOT_FOUND, f"{where}: Service not found")
    if ref.port is None:
        return BackendResolution(ref, c.BACKEND_NOT_FOUND,
                                 f"{where}: no port given (required for a Service)")
    hidden = not shows(key)
    if service.type != "ExternalName" and all(p.port != ref.port for p in service.ports):
        if hidden:
            return BackendResolution(ref, c.BACKEND_NOT_FOUND,
                                     f"{where}: Service has no port {ref.port} (the Service "
                                     f"is {HIDDEN}: its ports are not shown)")
        have = ", ".join(str(p.port) for p in service.ports) or "none"
        return BackendResolution(ref, c.BACKEND_NOT_FOUND,
                                 f"{where}: Service has no port {ref.port} (ports: {have})")
    if hidden:
        # Resolved: that is the route's to know. How the Service is served is not.
        return BackendResolution(ref, None, f"{where}: resolved (the Service is {HIDDEN}: "
                                 "its endpoints and TLS are not shown)")
    external = service.type == "ExternalName"
    policy = (tls or BackendTLSPolicies(view)).for_backend(service, ref.port)
    if ready is None:
        return BackendResolution(ref, None, f"{where}: resolved",
                                 ready_endpoints(view, service), external, policy)
    if service.key not in ready:
        ready[service.key] = ready_endpoints(view, service)
    return BackendResolution(ref, None, f"{where}: resolved", ready[service.key], external,
                             policy)


def _resolve_extension(view: GraphView, grants: Grants, route: Route, ref: BackendRef,
                       where: str, ready: dict[str, int | None] | None,
                       shows: Shows) -> BackendResolution:
    if ref.namespace != route.record.namespace and not grants.permits(
            from_kind=route.kind, from_namespace=route.record.namespace, to_group=ref.group,
            to_kind=ref.kind, to_namespace=ref.namespace, to_name=ref.name):
        return BackendResolution(ref, c.REF_NOT_PERMITTED,
                                 f"{where}: no ReferenceGrant in namespace {ref.namespace} "
                                 f"allows {route.kind}s from {route.record.namespace}")
    target = backend_kinds.target_of(view, ref.group, ref.kind, ref.namespace, ref.name)
    if not target.found:
        key = backend_kinds.key_of(ref.group, ref.kind, ref.namespace, ref.name)
        unknown = view.untracked(parse_key(key).kind) if key else None
        if unknown is not None:
            # Not watched (or not listed yet): a missing one may exist.
            return BackendResolution(ref, None, f"{where}: existence not evaluated ({unknown})",
                                     targets=(), not_evaluated=unknown)
        return BackendResolution(ref, c.BACKEND_NOT_FOUND,
                                 f"{where}: {ref.kind} of group {ref.group} not found")
    key = backend_kinds.key_of(ref.group, ref.kind, ref.namespace, ref.name)
    if key is not None and not shows(key):
        # Resolved: that is the route's to know. What the backend points at is not.
        return BackendResolution(ref, None, f"{where}: resolved (the {ref.kind} is {HIDDEN}: "
                                 "what it points at is not shown)")
    count = None
    if target.service is not None:
        # A static host that is a cluster Service: its endpoints are the backend's.
        service = target.service
        if ready is None:
            count = ready_endpoints(view, service)
        else:
            if service.key not in ready:
                ready[service.key] = ready_endpoints(view, service)
            count = ready[service.key]
        targets: tuple[str, ...] = (f"Service {service.namespace}/{service.name}:"
                                    f"{target.port}",)
    else:
        targets = target.targets
    return BackendResolution(ref, None, f"{where}: resolved ({', '.join(targets) or ref.kind})",
                             count, targets=targets, not_evaluated=target.not_evaluated)


def ready_endpoints(view: GraphView, service: ServiceRecord) -> int | None:
    """Ready endpoints behind a Service from its EndpointSlices; None when unknown."""
    if service.type == "ExternalName":
        return None
    ready: set[str] = set()
    slices = 0
    for record in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                 kind=Kind.ENDPOINT_SLICE):
        if not isinstance(record, EndpointSliceRecord):
            continue
        slices += 1
        for endpoint in record.group.endpoints:
            # EndpointConditions: an unset ready counts as ready.
            if endpoint.is_ready and not endpoint.terminating:
                ready.add(endpoint.target_pod or ",".join(endpoint.addresses))
    if not slices and (view.source is Source.MANIFESTS
                       or view.untracked(Kind.ENDPOINT_SLICE) is not None):
        # Manifests rarely carry EndpointSlices, and a cluster whose slices are not watched
        # (forbidden, not listed yet) says nothing of them either: unknown, not zero.
        return None
    return len(ready)


def resolve_certificate(view: GraphView, grants: Grants, gateway: Record,
                        ref: CertificateRef, shows: Shows = shows_all,
                        ) -> tuple[str | None, str, bool]:
    """(reason or None, message, evaluated) for one certificateRef: the Secret's existence,
    and the form of its data where the input carried it (what is wrong with it left out when
    ``shows`` hides the Secret). The reason is ``Pending`` for a Secret absent from
    manifests (:func:`not_in_input`)."""
    where = f"{ref.path} ({ref.kind} {ref.namespace}/{ref.name})"
    if (ref.group, ref.kind) != ("", SECRET):
        return c.INVALID_CERTIFICATE_REF, f"{where}: only core Secrets are supported", True
    if not ref.name:
        # name is required (ObjectName, minLength 1): no object made elsewhere can match.
        return c.INVALID_CERTIFICATE_REF, f"{where}: the reference has no name", True
    # The Gateway's, or a ListenerSet's: a grant to one is not inherited by the other
    # (GEP-1713 ReferenceGrant semantics).
    kind = gateway.kind.partition(".")[0]
    if ref.namespace != gateway.namespace and not grants.permits(
            from_group=api_group(gateway.api_version), from_kind=kind,
            from_namespace=gateway.namespace, to_group="", to_kind=SECRET,
            to_namespace=ref.namespace, to_name=ref.name):
        return c.REF_NOT_PERMITTED, (f"{where}: no ReferenceGrant in namespace "
                                     f"{ref.namespace} allows {kind}s from "
                                     f"{gateway.namespace}"), True
    # The graph keeps a Secret's identity only, never its data (watched as metadata). If
    # Secrets are not watched, or may not be listed, a missing one may still exist.
    unknown = view.untracked(SECRET)
    if unknown is not None:
        return None, f"{where}: Secret existence not evaluated ({unknown})", False
    secret = view.get(make_key(SECRET, ref.namespace, ref.name))
    if secret is None:
        if view.source is Source.MANIFESTS:
            return c.PENDING, not_in_input(SECRET, where), False
        return c.INVALID_CERTIFICATE_REF, f"{where}: Secret not found", True
    # Its data is judged only where the input carried it (a manifest); a watched Secret is
    # metadata only, and resolves by existence.
    if isinstance(secret, SecretRecord) and secret.tls_problem is not None:
        problem = secret.tls_problem if shows(secret.key) else \
            f"the Secret is {HIDDEN}: what is wrong is not shown"
        return c.INVALID_CERTIFICATE_REF, f"{where}: Secret data is malformed ({problem})", \
            True
    return None, f"{where}: resolved", True


def resolved_refs(backends: list[BackendResolution]) -> c.Cond:
    """ResolvedRefs of a route: True when every backendRef resolves, else the first
    failure's reason."""
    failed = [b for b in backends if not b.ok]
    if not failed:
        return c.true(c.RESOLVED_REFS, f"all {len(backends)} backendRef(s) resolved")
    first = failed[0]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    assert first.reason is not None
    return c.false(first.reason, first.message + more)
