"""Linkerd's policy objects as the policy controller reads them (linkerd2
``policy-controller/k8s/index/src``): Servers, ServerAuthorizations, AuthorizationPolicies,
MeshTLSAuthentications and NetworkAuthentications, each reduced to what decides a client.

A client authorization is a set of networks and an authentication: none required, any TLS
from a meshed proxy, or a TLS identity matching one of a list (``*`` and ``*.suffix``
forms: ``IdentityMatch``). A Server's authorizations are its ServerAuthorizations, the
AuthorizationPolicies targeting it or its namespace, and its ``accessPolicy`` default; an
AuthorizationPolicy whose authentication references cannot be resolved is ignored, as the
controller ignores it ("Illegal AuthorizationPolicy; ignoring").
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.verdict import Tri, tri_all, tri_any
from netsight.graph.model.records import GenericRecord
from netsight.graph.model.selectors import LabelSelector

GROUP = "policy.linkerd.io"
SERVER = "Server"
SERVER_AUTHZ = "ServerAuthorization"
AUTHZ = "AuthorizationPolicy.policy.linkerd.io"  # the bare kind name is Istio's
MESH_TLS = "MeshTLSAuthentication"
NETWORK = "NetworkAuthentication"
HTTP_ROUTE = "HTTPRoute.policy.linkerd.io"
KINDS = (SERVER, SERVER_AUTHZ, AUTHZ, MESH_TLS, NETWORK, HTTP_ROUTE)
ALL_NETWORKS = (IPBlock(ipaddress.ip_network("0.0.0.0/0")),
                IPBlock(ipaddress.ip_network("::/0")))
# Linkerd's chart default ``clusterNetworks``.
CLUSTER_NETWORKS = tuple(IPBlock(ipaddress.ip_network(n)) for n in (
    "10.0.0.0/8", "100.64.0.0/10", "172.16.0.0/12", "192.168.0.0/16", "fd00::/8"))


class Auth(StrEnum):
    UNAUTHENTICATED = "unauthenticated"
    TLS_UNAUTHENTICATED = "TLS from any meshed client"
    TLS_AUTHENTICATED = "TLS identity"


@dataclass(frozen=True, slots=True)
class ClientAuthz:
    """Who one authorization admits: ``identities`` for TLS_AUTHENTICATED, each exact or
    a ``*``/``*.suffix`` pattern; ``cluster`` when the networks are the cluster's own."""

    auth: Auth
    networks: tuple[IPBlock, ...] = ALL_NETWORKS
    identities: tuple[str, ...] = ()
    cluster: bool = False

    def describe(self) -> str:
        who = "any client" if self.auth is Auth.UNAUTHENTICATED else \
            "meshed clients" if self.auth is Auth.TLS_UNAUTHENTICATED else \
            f"identities {', '.join(self.identities[:3])}" + \
            (" ..." if len(self.identities) > 3 else "")
        if self.cluster:
            return f"{who} from the cluster networks"
        if self.networks != ALL_NETWORKS:
            nets = ", ".join(str(n.cidr) for n in self.networks[:3])
            return f"{who} from {nets}" + (" ..." if len(self.networks) > 3 else "")
        return who


class DefaultPolicy(StrEnum):
    """``config.linkerd.io/default-inbound-policy`` values (``DefaultPolicy::from_str``)."""

    ALL_UNAUTHENTICATED = "all-unauthenticated"
    ALL_AUTHENTICATED = "all-authenticated"
    CLUSTER_UNAUTHENTICATED = "cluster-unauthenticated"
    CLUSTER_AUTHENTICATED = "cluster-authenticated"
    DENY = "deny"
    AUDIT = "audit"

    def authorization(self, cluster_networks: tuple[IPBlock, ...],
                      require_identity: bool = False) -> ClientAuthz | None:
        """What the policy admits (``default_authzs``); None for deny."""
        if self is DefaultPolicy.DENY:
            return None
        if self is DefaultPolicy.AUDIT:
            return ClientAuthz(Auth.UNAUTHENTICATED)
        authenticated = require_identity or self in (DefaultPolicy.ALL_AUTHENTICATED,
                                                     DefaultPolicy.CLUSTER_AUTHENTICATED)
        cluster = self in (DefaultPolicy.CLUSTER_AUTHENTICATED,
                           DefaultPolicy.CLUSTER_UNAUTHENTICATED)
        return ClientAuthz(Auth.TLS_AUTHENTICATED if authenticated else Auth.UNAUTHENTICATED,
                           cluster_networks if cluster else ALL_NETWORKS,
                           ("*",) if authenticated else (), cluster)


def parse_default(value: str | None) -> DefaultPolicy | None:
    try:
        return DefaultPolicy(value) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Server:
    record: GenericRecord
    selector: LabelSelector | None  # None: an externalWorkloadSelector (not pods)
    port: int | str
    access_policy: DefaultPolicy | None = None
    problem: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return _ref(self.record, "Server")

    @property
    def name(self) -> str:
        return self.record.name


@dataclass(frozen=True, slots=True)
class Authorization:
    """A ServerAuthorization or an AuthorizationPolicy: what it targets and whom it admits
    (``client`` None: its authentications are resolved later, or it is unreadable)."""

    record: GenericRecord
    kind: str  # "ServerAuthorization" or "AuthorizationPolicy"
    # ServerAuthorization: a Server name or a selector of Server labels.
    server_name: str | None = None
    server_selector: LabelSelector | None = None
    # AuthorizationPolicy: its target (kind, name) and its authentication references
    # (kind, namespace, name).
    target: tuple[str, str] | None = None
    authentications: tuple[tuple[str, str, str], ...] = ()
    client: ClientAuthz | None = None
    problem: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return _ref(self.record, self.kind)

    @property
    def name(self) -> str:
        return self.record.name

    def selects(self, server: Server) -> bool:
        if self.kind == SERVER_AUTHZ:
            if self.server_name is not None:
                return self.server_name == server.name
            return self.server_selector is not None and \
                self.server_selector.matches(server.record.labels)
        return self.target is not None and (
            self.target == ("Server", server.name) or self.target[0] == "Namespace")


@dataclass(frozen=True, slots=True)
class Route:
    """An HTTPRoute and the Servers it attaches to (parentRefs of kind Server)."""

    record: GenericRecord
    kind: str
    servers: frozenset[str] = field(default_factory=frozenset)


def _ref(record: GenericRecord, kind: str) -> ResourceRef:
    return ResourceRef(kind=kind, namespace=record.namespace or None, name=record.name,
                       api_version=record.api_version)


def is_linkerd(record: object) -> bool:
    return isinstance(record, GenericRecord) and record.api_version.startswith(GROUP + "/")


def build_server(record: GenericRecord) -> Server:
    spec: Mapping[str, Any] = record.spec or {}
    try:
        raw_port = spec.get("port")
        if isinstance(raw_port, bool) or not isinstance(raw_port, int | str) or raw_port == "":
            raise read.Unsupported("spec.port", "is not a port number or name")
        port: int | str = raw_port
        if isinstance(raw_port, str) and (digits := read.digits(raw_port)) is not None:
            port = digits
        selector = read.selector(spec["podSelector"], "spec.podSelector") \
            if "podSelector" in spec else None
        if selector is None and "externalWorkloadSelector" not in spec:
            raise read.Unsupported("spec", "has neither podSelector nor "
                                   "externalWorkloadSelector")
        access = spec.get("accessPolicy")
        policy = parse_default(access) if access is not None else None
        if access is not None and policy is None:
            raise read.Unsupported("spec.accessPolicy", f"{access!r} is not a Linkerd "
                                   "default policy")
        return Server(record, selector, port, policy)
    except read.Unsupported as error:
        return Server(record, None, 0, problem=str(error))


def _networks(raw: Any, path: str) -> tuple[IPBlock, ...]:
    return tuple(IPBlock.parse(n.get("cidr") if isinstance(n, dict) else n,
                               n.get("except") if isinstance(n, dict) else None,
                               f"{path}[{i}]")
                 for i, n in enumerate(read.items(raw, path)))


def _strings(raw: Any, path: str) -> tuple[str, ...]:
    found = read.items(raw, path)
    if not all(isinstance(s, str) for s in found):
        raise read.Unsupported(path, "holds a value that is not a string")
    return tuple(found)


def build_server_authz(record: GenericRecord, trust_domain: str) -> Authorization:
    spec: Mapping[str, Any] = record.spec or {}
    base = Authorization(record, SERVER_AUTHZ)
    try:
        server = spec.get("server")
        if not isinstance(server, dict):
            raise read.Unsupported("spec.server", "is missing")
        name = server.get("name")
        selector = read.selector(server["selector"], "spec.server.selector") \
            if "selector" in server else None
        client = spec.get("client")
        if not isinstance(client, dict):
            raise read.Unsupported("spec.client", "is missing")
        networks = _networks(client["networks"], "spec.client.networks") \
            if client.get("networks") is not None else ALL_NETWORKS
        if client.get("unauthenticated") is True:
            authz = ClientAuthz(Auth.UNAUTHENTICATED, networks)
        elif isinstance(mtls := client.get("meshTLS"), dict):
            if mtls.get("unauthenticatedTLS") is True:
                authz = ClientAuthz(Auth.TLS_UNAUTHENTICATED, networks)
            else:
                ids = list(_strings(mtls.get("identities"), "spec.client.meshTLS.identities"))
                for i, sa in enumerate(read.items(mtls.get("serviceAccounts"),
                                                  "spec.client.meshTLS.serviceAccounts")):
                    if not isinstance(sa, dict) or not isinstance(sa.get("name"), str):
                        raise read.Unsupported(
                            f"spec.client.meshTLS.serviceAccounts[{i}]", "has no name")
                    ids.append(identity(sa["name"], sa.get("namespace") or record.namespace,
                                        trust_domain))
                if not ids:
                    raise read.Unsupported("spec.client.meshTLS", "authorizes no clients")
                authz = ClientAuthz(Auth.TLS_AUTHENTICATED, networks, tuple(ids))
        else:
            raise read.Unsupported("spec.client", "no client authentication configured")
        return Authorization(record, SERVER_AUTHZ, name if isinstance(name, str) else None,
                             selector, client=authz)
    except read.Unsupported as error:
        return Authorization(base.record, SERVER_AUTHZ, problem=str(error))


def build_authz_policy(record: GenericRecord) -> Authorization:
    spec: Mapping[str, Any] = record.spec or {}
    try:
        target = spec.get("targetRef")
        if not isinstance(target, dict) or not isinstance(target.get("kind"), str) or \
                not isinstance(target.get("name"), str):
            raise read.Unsupported("spec.targetRef", "has no kind and name")
        kind = target["kind"]
        if kind not in ("Server", "Namespace", "HTTPRoute", "GRPCRoute"):
            raise read.Unsupported("spec.targetRef.kind", f"{kind!r} is not a target "
                                   "Linkerd authorizes")
        refs = []
        for i, ref in enumerate(read.items(spec.get("requiredAuthenticationRefs"),
                                           "spec.requiredAuthenticationRefs")):
            if not isinstance(ref, dict) or not isinstance(ref.get("kind"), str) or \
                    not isinstance(ref.get("name"), str):
                raise read.Unsupported(f"spec.requiredAuthenticationRefs[{i}]",
                                       "has no kind and name")
            refs.append((ref["kind"], ref.get("namespace") or record.namespace, ref["name"]))
        return Authorization(record, "AuthorizationPolicy", target=(kind, target["name"]),
                             authentications=tuple(refs))
    except read.Unsupported as error:
        return Authorization(record, "AuthorizationPolicy", problem=str(error))


def identity(service_account: str, namespace: str, trust_domain: str) -> str:
    """``ClusterInfo::service_account_identity``."""
    return f"{service_account}.{namespace}.serviceaccount.identity.linkerd.{trust_domain}"


def mesh_tls_identities(record: GenericRecord, trust_domain: str) -> tuple[str, ...]:
    """A MeshTLSAuthentication's identity matches (identities and identityRefs)."""
    spec: Mapping[str, Any] = record.spec or {}
    found = list(_strings(spec.get("identities"), "spec.identities"))
    for i, ref in enumerate(read.items(spec.get("identityRefs"), "spec.identityRefs")):
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            raise read.Unsupported(f"spec.identityRefs[{i}]", "has no name")
        if ref.get("kind") == "ServiceAccount":
            found.append(identity(ref["name"], ref.get("namespace") or record.namespace,
                                  trust_domain))
        elif ref.get("kind") == "Namespace":
            found.append(f"*.{ref['name']}.serviceaccount.identity.linkerd.{trust_domain}")
        else:
            raise read.Unsupported(f"spec.identityRefs[{i}].kind",
                                   f"{ref.get('kind')!r} is not ServiceAccount or Namespace")
    if not found:
        raise read.Unsupported("spec", "No identities configured")
    return tuple(found)


def network_blocks(record: GenericRecord) -> tuple[IPBlock, ...]:
    spec: Mapping[str, Any] = record.spec or {}
    return _networks(spec.get("networks"), "spec.networks")


def route_servers(record: GenericRecord) -> frozenset[str]:
    """The Servers of the route's namespace among its parentRefs."""
    spec: Mapping[str, Any] = record.spec or {}
    found = set()
    for ref in spec.get("parentRefs") or ():
        if isinstance(ref, dict) and ref.get("kind") == "Server" and \
                ref.get("group", GROUP) == GROUP and \
                ref.get("namespace", record.namespace) == record.namespace and \
                isinstance(ref.get("name"), str):
            found.add(ref["name"])
    return frozenset(found)


def identity_matches(pattern: str, name: str) -> bool:
    """``IdentityMatch``: exact, ``*`` (any), or ``*.a.b`` (a suffix of whole labels)."""
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        suffix = pattern[2:].split(".")
        labels = name.split(".")
        return len(labels) > len(suffix) and labels[-len(suffix):] == suffix
    return pattern == name


def port_set(text: str | None) -> frozenset[int]:
    """A Linkerd ports annotation (``80,8000-8100``); unreadable parts are skipped, as
    Linkerd skips an invalid list."""
    found: set[int] = set()
    for part in (text or "").split(","):
        low, _, high = part.strip().partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            found.update(range(int(low), int(high or low) + 1))
    return frozenset(found)


def route_matches(record: GenericRecord, method: str | None, path: str | None) -> Tri:
    """Whether a request with ``method`` and ``path`` (None: not known) matches one of the
    route's rules (Gateway API semantics: no matches is a ``/`` prefix)."""
    spec: Mapping[str, Any] = record.spec or {}
    found: Tri = False
    rules: list[Any] = list(spec.get("rules") or ({},))
    for rule in rules:
        matches: list[Any] = list((rule.get("matches") if isinstance(rule, dict) else None)
                                  or ({},))
        for match in matches:
            found = tri_any((found, _match(match if isinstance(match, dict) else {},
                                           method, path)))
            if found is True:
                return True
    return found


def _match(match: Mapping[str, Any], method: str | None, path: str | None) -> Tri:
    checks: list[Tri] = []
    rule_path = match.get("path") or {"type": "PathPrefix", "value": "/"}
    kind, value = rule_path.get("type", "PathPrefix"), str(rule_path.get("value", "/"))
    if path is None:
        checks.append(None if (kind, value) != ("PathPrefix", "/") else True)
    elif kind == "Exact":
        checks.append(path == value)
    elif kind == "PathPrefix":
        prefix = value.rstrip("/")
        checks.append(path == prefix or path.startswith(prefix + "/") or not prefix)
    else:
        checks.append(None)
    if match.get("method") is not None:
        checks.append(None if method is None else method == match["method"])
    if match.get("headers") or match.get("queryParams"):
        checks.append(None)
    return tri_all(checks)
