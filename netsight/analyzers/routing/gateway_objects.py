"""Typed values read from Gateway API records (generic records that keep spec and status).

Reading is tolerant: a field of the wrong shape becomes ``None`` or is skipped, and the
callers report it as an unsupported value instead of failing the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netsight.graph.model.kinds import api_group
from netsight.graph.model.records import GenericRecord, Record

GATEWAY_GROUP = "gateway.networking.k8s.io"
EXPERIMENTAL_GROUP = "gateway.networking.x-k8s.io"
GATEWAY = "Gateway"
GATEWAY_CLASS = "GatewayClass"
REFERENCE_GRANT = "ReferenceGrant"
SECRET = "Secret"
SERVICE = "Service"
# ListenerSet (GEP-1713): gateway.networking.k8s.io/v1 ListenerSet since Gateway API v1.5,
# gateway.networking.x-k8s.io/v1alpha1 XListenerSet before; (group, kind) of each, and the
# kind ids of their graph keys.
LISTENER_SET, X_LISTENER_SET = "ListenerSet", "XListenerSet"
LISTENER_SET_GROUP_KINDS = frozenset({(GATEWAY_GROUP, LISTENER_SET),
                                      (EXPERIMENTAL_GROUP, X_LISTENER_SET)})
LISTENER_SET_KINDS: tuple[str, ...] = (LISTENER_SET, X_LISTENER_SET)

HTTP_ROUTE, GRPC_ROUTE, TLS_ROUTE, TCP_ROUTE, UDP_ROUTE = (
    "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute")
ROUTE_KINDS: tuple[str, ...] = (HTTP_ROUTE, GRPC_ROUTE, TLS_ROUTE, TCP_ROUTE, UDP_ROUTE)
# Route kinds with spec.hostnames (TCPRoute and UDPRoute have none).
HOSTNAME_KINDS = frozenset({HTTP_ROUTE, GRPC_ROUTE, TLS_ROUTE})


def is_gateway_api(record: Record) -> bool:
    return api_group(record.api_version) in (GATEWAY_GROUP, EXPERIMENTAL_GROUP)


_EMPTY: Mapping[str, Any] = {}

# Records hold JSON-shaped data (dicts and lists), so plain type checks suffice; they are
# much cheaper than isinstance against the Mapping ABC on the hot path.


def spec_of(record: Record) -> Mapping[str, Any]:
    spec = record.spec if isinstance(record, GenericRecord) else None
    return spec if isinstance(spec, dict) else _EMPTY


def status_of(record: Record) -> Mapping[str, Any]:
    status = record.status if isinstance(record, GenericRecord) else None
    return status if isinstance(status, dict) else _EMPTY


def as_list(raw: object) -> Sequence[Any]:
    return raw if isinstance(raw, list) else ()


def as_map(raw: object) -> Mapping[str, Any]:
    return raw if isinstance(raw, dict) else _EMPTY


def parent_gateways(record: Record) -> list[tuple[str, str]]:
    """(namespace, name) of the Gateways a route record's raw parentRefs name (cheap)."""
    found = []
    for raw in as_list(spec_of(record).get("parentRefs")):
        raw = as_map(raw)
        group, kind = raw.get("group"), raw.get("kind")
        if (group is None or group == GATEWAY_GROUP) and kind in (None, GATEWAY):
            found.append((raw.get("namespace") or record.namespace, str(raw.get("name"))))
    return found


def names_listener_set(record: Record) -> bool:
    """Whether a route record's raw parentRefs name a ListenerSet (whose Gateway only the
    ListenerSet says)."""
    return any(_group_kind(as_map(raw)) in LISTENER_SET_GROUP_KINDS
               for raw in as_list(spec_of(record).get("parentRefs")))


def _group_kind(ref: Mapping[str, Any]) -> tuple[str, str] | None:
    """A reference's (group, kind) as written (the group defaulting to Gateway API's), or
    None when either is not a string."""
    group, kind = ref.get("group", GATEWAY_GROUP), ref.get("kind")
    group = GATEWAY_GROUP if group is None else group
    return (group, kind) if isinstance(group, str) and isinstance(kind, str) else None


def raw_hostnames(record: Record) -> list[str]:
    return [h.lower() for h in as_list(spec_of(record).get("hostnames")) if isinstance(h, str)]


def opt_str(raw: object) -> str | None:
    return raw if isinstance(raw, str) and raw else None


def opt_port(raw: object) -> int | None:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else None


@dataclass(frozen=True, slots=True)
class ParentRef:
    """spec.parentRefs[index], with the API defaults applied."""

    index: int
    group: str  # default gateway.networking.k8s.io
    kind: str  # default Gateway
    namespace: str  # default: the route's namespace
    name: str
    section_name: str | None
    port: int | None

    @property
    def parent(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_gateway(self) -> bool:
        return self.group == GATEWAY_GROUP and self.kind == GATEWAY

    @property
    def is_listener_set(self) -> bool:
        # The kind first: on the hot path nearly every parentRef is a Gateway.
        return self.kind in LISTENER_SET_KINDS and (self.group, self.kind) in \
            LISTENER_SET_GROUP_KINDS

    @property
    def is_service(self) -> bool:
        """A mesh (GAMMA) parent: a Service in the core group."""
        return self.group == "" and self.kind == SERVICE


@dataclass(frozen=True, slots=True)
class BackendRef:
    """One backendRef of a rule (or of a RequestMirror or ExternalAuth filter), defaults
    applied."""

    path: str  # the field, e.g. spec.rules[0].backendRefs[1]
    rule: int
    group: str  # default "" (core)
    kind: str  # default Service
    namespace: str  # default: the route's namespace
    name: str
    port: int | None
    weight: int  # default 1
    mirror: bool = False
    external_auth: bool = False  # the authorization service an ExternalAuth filter calls

    @property
    def forwards(self) -> bool:
        """Whether requests are forwarded to it (not a mirror's copy, not an auth call)."""
        return not (self.mirror or self.external_auth)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Route:
    record: Record
    kind: str
    hostnames: tuple[str, ...]
    parent_refs: tuple[ParentRef, ...]
    backend_refs: tuple[BackendRef, ...]
    rules: tuple[Mapping[str, Any], ...]
    ref: str = field(init=False)  # "namespace/name", read on every precedence comparison

    def __post_init__(self) -> None:
        object.__setattr__(self, "ref", f"{self.record.namespace}/{self.record.name}")


def read_route(record: Record) -> Route:
    spec = spec_of(record)
    ns = record.namespace
    parents = []
    for i, raw in enumerate(as_list(spec.get("parentRefs"))):
        raw = as_map(raw)
        group = raw.get("group")
        parents.append(ParentRef(
            index=i,
            group=GATEWAY_GROUP if group is None else str(group),
            kind=opt_str(raw.get("kind")) or GATEWAY,
            namespace=opt_str(raw.get("namespace")) or ns,
            name=str(raw.get("name") or ""),
            section_name=opt_str(raw.get("sectionName")),
            port=opt_port(raw.get("port")),
        ))
    rules = tuple(as_map(r) for r in as_list(spec.get("rules")))
    backends: list[BackendRef] = []
    for i, rule in enumerate(rules):
        for j, raw in enumerate(as_list(rule.get("backendRefs"))):
            backends.append(_backend(as_map(raw), f"spec.rules[{i}].backendRefs[{j}]", i, ns))
        for j, flt in enumerate(as_list(rule.get("filters"))):
            mirror = as_map(as_map(flt).get("requestMirror")).get("backendRef")
            if mirror is not None:
                backends.append(_backend(as_map(mirror),
                                         f"spec.rules[{i}].filters[{j}].requestMirror.backendRef",
                                         i, ns, mirror=True))
            # HTTPExternalAuthFilter.backendRef: a reference like any other (ResolvedRefs
            # BackendNotFound when it does not resolve; conformance
            # HTTPRouteExternalAuthBackendRefNotFound), but no request is forwarded to it.
            auth = as_map(as_map(flt).get("externalAuth")).get("backendRef")
            if auth is not None:
                backends.append(_backend(as_map(auth),
                                         f"spec.rules[{i}].filters[{j}].externalAuth.backendRef",
                                         i, ns, external_auth=True))
    hostnames = tuple(h.lower() for h in as_list(spec.get("hostnames")) if isinstance(h, str))
    return Route(record, record.kind.partition(".")[0], hostnames, tuple(parents),
                 tuple(backends), rules)


def _backend(raw: Mapping[str, Any], path: str, rule: int, ns: str, *,
             mirror: bool = False, external_auth: bool = False) -> BackendRef:
    weight = raw.get("weight")
    return BackendRef(
        path=path,
        rule=rule,
        group=str(raw.get("group") or ""),
        kind=opt_str(raw.get("kind")) or SERVICE,
        namespace=opt_str(raw.get("namespace")) or ns,
        name=str(raw.get("name") or ""),
        port=opt_port(raw.get("port")),
        weight=weight if isinstance(weight, int) and not isinstance(weight, bool) else 1,
        mirror=mirror,
        external_auth=external_auth,
    )


@dataclass(frozen=True, slots=True)
class CertificateRef:
    path: str
    group: str  # default "" (core)
    kind: str  # default Secret
    namespace: str  # default: the Gateway's namespace
    name: str


@dataclass(frozen=True, slots=True)
class Listener:
    index: int
    name: str
    port: int | None
    protocol: str  # core protocols upper-cased: they are case-insensitive
    hostname: str | None
    tls: Mapping[str, Any] | None
    tls_mode: str  # default Terminate
    certificate_refs: tuple[CertificateRef, ...]
    from_namespaces: str  # default Same
    selector: object  # the raw allowedRoutes.namespaces.selector
    kinds: tuple[tuple[str, str], ...] | None  # (group, kind); None: not specified

    @property
    def path(self) -> str:
        return f"spec.listeners[{self.index}]"


CORE_PROTOCOLS = frozenset({"HTTP", "HTTPS", "TLS", "TCP", "UDP"})


def read_listeners(gateway: Record) -> tuple[Listener, ...]:
    listeners = []
    for i, raw in enumerate(as_list(spec_of(gateway).get("listeners"))):
        raw = as_map(raw)
        protocol = str(raw.get("protocol") or "")
        if protocol.upper() in CORE_PROTOCOLS:
            protocol = protocol.upper()
        tls = raw.get("tls")
        tls_map = as_map(tls) if tls is not None else None
        certs = tuple(
            CertificateRef(
                path=f"spec.listeners[{i}].tls.certificateRefs[{j}]",
                group=str(as_map(c).get("group") or ""),
                kind=opt_str(as_map(c).get("kind")) or SECRET,
                namespace=opt_str(as_map(c).get("namespace")) or gateway.namespace,
                name=str(as_map(c).get("name") or ""),
            )
            for j, c in enumerate(as_list((tls_map or {}).get("certificateRefs")))
        )
        allowed = as_map(raw.get("allowedRoutes"))
        namespaces = as_map(allowed.get("namespaces"))
        kinds: tuple[tuple[str, str], ...] | None = None
        if as_list(allowed.get("kinds")):
            kinds = tuple(
                (GATEWAY_GROUP if as_map(k).get("group") is None else str(as_map(k)["group"]),
                 str(as_map(k).get("kind") or ""))
                for k in as_list(allowed.get("kinds"))
            )
        hostname = opt_str(raw.get("hostname"))
        listeners.append(Listener(
            index=i,
            name=str(raw.get("name") or ""),
            port=opt_port(raw.get("port")),
            protocol=protocol,
            hostname=hostname.lower() if hostname else None,
            tls=tls_map,
            tls_mode=str((tls_map or {}).get("mode") or "Terminate"),
            certificate_refs=certs,
            from_namespaces=str(namespaces.get("from") or "Same"),
            selector=namespaces.get("selector"),
            kinds=kinds,
        ))
    return tuple(listeners)


def conditions_of(raw: object) -> dict[str, Mapping[str, Any]]:
    """A status.conditions list as {type: condition}."""
    found: dict[str, Mapping[str, Any]] = {}
    for condition in as_list(raw):
        condition = as_map(condition)
        kind = condition.get("type")
        if isinstance(kind, str):
            found[kind] = condition
    return found


def not_in_input(kind: str, where: str) -> str:
    """Why a Secret or ConfigMap a reference names, absent from manifests, is undecided.

    Certificates and CA bundles are routinely made outside the manifests that reference
    them (cert-manager, trust-manager, a test suite that creates them at run time, Secrets
    kept out of git): from manifests, such an object that is not in the input may exist, so
    the reference is neither resolved nor refused (Unknown). Other kinds (Services,
    Gateways) are taken as the input gives them."""
    return (f"{where}: {kind} not in the input; it may be made elsewhere (cert-manager, "
            "trust-manager, a test suite), so whether it resolves is not evaluated")
