"""Linkerd's inbound authorization: the layer after L3/L4, at a meshed destination's proxy.

The policy controller (linkerd2 ``policy-controller/k8s/index``) gives each port of a meshed
pod one inbound server. A port some Server selects (the oldest, if several do) admits only
what that Server's authorizations admit: its ServerAuthorizations, the AuthorizationPolicies
targeting it or its namespace, and its ``accessPolicy``; none is a denial. A port no Server
selects takes the pod's default policy: the pod's ``config.linkerd.io/default-inbound-policy``
annotation (the injector copies the namespace's onto pods it injects), else the cluster's
(``proxy.defaultInboundPolicy`` of the install, ``all-unauthenticated`` unless set). A
Namespace-targeted AuthorizationPolicy applies to Servers only, never to default policies.

An authorization admits a client from one of its networks whose authentication fits: none
required, TLS from any meshed proxy, or a TLS identity
(``<serviceaccount>.<namespace>.serviceaccount.identity.linkerd.<trust domain>``). Only a
meshed client (its own Linkerd proxy) has TLS and an identity. AuthorizationPolicies
targeting an HTTPRoute authorize requests of that route only: a connection-level question
names no route, so where only they could admit the client the answer is undecided.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from netsight.analyzers.core.contracts import Evidence, ResourceRef
from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.istio_match import Request
from netsight.analyzers.policy.linkerd_model import (
    ALL_NETWORKS,
    AUTHZ,
    CLUSTER_NETWORKS,
    HTTP_ROUTE,
    KINDS,
    MESH_TLS,
    NETWORK,
    SERVER,
    SERVER_AUTHZ,
    Auth,
    Authorization,
    ClientAuthz,
    DefaultPolicy,
    Server,
    build_authz_policy,
    build_server,
    build_server_authz,
    identity,
    identity_matches,
    is_linkerd,
    mesh_tls_identities,
    network_blocks,
    parse_default,
    port_set,
    route_matches,
    route_servers,
)
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.verdict import Action, Layer, MeshDecision, Step, Tri
from netsight.graph.model.generic_records import LINKERD_CONFIG_MAP
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import ConfigMapRecord, GenericRecord
from netsight.graph.store.live import GraphView, Source

__all__ = ["INJECTED_LABEL", "KINDS", "PERMISSIVE_DEFAULTS", "POLICY_KINDS", "READS",
           "LinkerdLayer", "Settings", "annotated_namespaces", "cidrs", "membership",
           "mesh_facts", "settings"]
# The kinds whose objects decide who is admitted; routes and the install's ConfigMap are
# read besides.
POLICY_KINDS = (SERVER, SERVER_AUTHZ, AUTHZ, MESH_TLS, NETWORK)
READS = (*KINDS, "HTTPRoute", "GRPCRoute", "ConfigMap")

INJECT = "linkerd.io/inject"
DEFAULT_POLICY = "config.linkerd.io/default-inbound-policy"
REQUIRE_IDENTITY = "config.linkerd.io/proxy-require-identity-inbound-ports"
SKIP_INBOUND = "config.linkerd.io/skip-inbound-ports"
SKIP_OUTBOUND = "config.linkerd.io/skip-outbound-ports"
# What the proxy injector writes on the pods it injects.
INJECTED_ANNOTATION = "linkerd.io/proxy-version"
INJECTED_LABEL = "linkerd.io/control-plane-ns"
# Default policies that admit every client from anywhere.
PERMISSIVE_DEFAULTS = (DefaultPolicy.ALL_UNAUTHENTICATED, DefaultPolicy.AUDIT)
# Per-pod annotations a Linkerd verdict reads, as a source or a destination.
_POD_KEYS = (INJECT, DEFAULT_POLICY, REQUIRE_IDENTITY, SKIP_INBOUND, "config.linkerd.io/"
             "skip-outbound-ports", INJECTED_ANNOTATION)
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class Settings:
    """The install's values that decide inbound policy, and where they come from."""

    default: DefaultPolicy = DefaultPolicy.ALL_UNAUTHENTICATED
    networks: tuple[IPBlock, ...] = CLUSTER_NETWORKS
    trust_domain: str = "cluster.local"
    source: str = ("Linkerd's defaults (no linkerd-config ConfigMap with its values in the "
                   "input: cluster default policy all-unauthenticated assumed)")


def settings(view: GraphView) -> Settings:
    return view.derived(("linkerd", "settings"), ("ConfigMap",), _settings)


def _settings(view: GraphView) -> Settings:
    for record in view.for_each("ConfigMap"):
        if record.name != LINKERD_CONFIG_MAP or not isinstance(record, ConfigMapRecord) or \
                record.linkerd_values is None:
            continue
        where = f"ConfigMap {record.namespace}/{record.name}"
        try:
            values = yaml.load(record.linkerd_values, Loader=_Loader)
        except yaml.YAMLError:
            return Settings(source=f"Linkerd's defaults ({where}: values is not YAML)")
        if not isinstance(values, Mapping):
            return Settings(source=f"Linkerd's defaults ({where}: values is not a mapping)")
        proxy = values.get("proxy")
        raw = proxy.get("defaultInboundPolicy") if isinstance(proxy, Mapping) else None
        default = parse_default(raw) or DefaultPolicy.ALL_UNAUTHENTICATED
        networks = CLUSTER_NETWORKS
        if isinstance(values.get("clusterNetworks"), str):
            try:
                networks = tuple(IPBlock(read.network(n.strip(), "clusterNetworks"))
                                 for n in values["clusterNetworks"].split(",") if n.strip())
            except read.Unsupported:
                networks = CLUSTER_NETWORKS
        domain = values.get("identityTrustDomain")
        return Settings(default, networks, domain if isinstance(domain, str) and domain
                        else "cluster.local", where)
    return Settings()


def annotated_namespaces(view: GraphView) -> frozenset[str]:
    """Namespaces whose annotation injects Linkerd or sets a default policy."""
    return frozenset(r.name for r in view.for_each(Kind.NAMESPACE)
                     if INJECT in r.annotations or DEFAULT_POLICY in r.annotations)


def mesh_facts(endpoint: Endpoint) -> tuple[tuple[str, str], ...]:
    """What besides namespace and labels a Linkerd verdict reads of a pod."""
    annotations = endpoint.annotations
    return tuple((k, annotations[k]) for k in _POD_KEYS if k in annotations)


def cidrs(view: GraphView) -> Iterator[IPBlock]:
    """Every address block a Linkerd authorization compares source addresses with."""
    if not any(view.count(kind) for kind in (SERVER_AUTHZ, NETWORK)) and \
            not view.count(SERVER):
        return
    yield from settings(view).networks
    for record in view.for_each(NETWORK):
        if isinstance(record, GenericRecord) and is_linkerd(record):
            try:
                yield from network_blocks(record)
            except read.Unsupported:
                continue
    for record in view.for_each(SERVER_AUTHZ):
        if isinstance(record, GenericRecord) and is_linkerd(record):
            authz = build_server_authz(record, "cluster.local")
            if authz.client is not None and authz.client.networks != ALL_NETWORKS:
                yield from authz.client.networks


def _namespace_annotations(view: GraphView, namespace: str) -> Mapping[str, str] | None:
    record = view.get(make_key(Kind.NAMESPACE, "", namespace))
    return None if record is None else record.annotations


def membership(endpoint: Endpoint, ns_annotations: Mapping[str, str] | None,
               *, live: bool) -> tuple[Tri, str]:
    """Whether ``endpoint`` runs a Linkerd proxy (None: cannot tell), and why. Injected pods
    carry the injector's marks; a pod yet to be created (manifests, templates) is injected
    when its own ``linkerd.io/inject`` or, failing that, its namespace's says so."""
    if endpoint.external:
        return False, f"{endpoint.name} is outside the cluster"
    if INJECTED_ANNOTATION in endpoint.annotations or INJECTED_LABEL in endpoint.labels:
        return True, f"{endpoint.name} runs the Linkerd proxy"
    if endpoint.host_network:
        return False, f"{endpoint.name} uses the host network, which Linkerd does not inject"
    if live and not endpoint.template:
        return False, f"{endpoint.name} has no Linkerd proxy (no injector annotations)"
    own = endpoint.annotations.get(INJECT)
    if own is not None:
        return own in ("enabled", "ingress"), f"{endpoint.name}: {INJECT}={own}"
    if ns_annotations is None:
        return None, (f"namespace {endpoint.namespace} is not in the input, so whether "
                      f"{endpoint.name} gets a Linkerd proxy is unknown")
    ns = ns_annotations.get(INJECT)
    if ns is not None:
        return ns in ("enabled", "ingress"), \
            f"{endpoint.name}: its namespace has {INJECT}={ns}"
    return False, f"{endpoint.name} is not injected by Linkerd"


def _step(action: Action, text: str, policy: Authorization | Server | None = None,
          evidence: tuple[Evidence, ...] = ()) -> Step:
    return Step(Layer.LINKERD, action, text, None if policy is None else policy.ref, None,
                evidence)


@dataclass
class LinkerdLayer:
    """Linkerd's policy over one view, for one tool call."""

    view: GraphView
    request: Request = field(default_factory=Request)
    _ns_annotations: dict[str, Mapping[str, str] | None] = field(default_factory=dict)
    _servers: dict[str, list[Server]] = field(default_factory=dict)
    _authzs: dict[str, list[Authorization]] = field(default_factory=dict)
    _routes: dict[str, dict[str, list[GenericRecord]]] = field(default_factory=dict)
    _settings: Settings | None = None

    def __post_init__(self) -> None:
        self.live = self.view.source is not Source.MANIFESTS
        # Linkerd's policy objects anywhere: without them only default policies decide.
        self.objects = any(self.view.count(kind) for kind in (SERVER, SERVER_AUTHZ, AUTHZ))

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = settings(self.view)
        return self._settings

    def ns_annotations(self, namespace: str) -> Mapping[str, str] | None:
        if namespace not in self._ns_annotations:
            self._ns_annotations[namespace] = _namespace_annotations(self.view, namespace)
        return self._ns_annotations[namespace]

    def membership(self, endpoint: Endpoint) -> tuple[Tri, str]:
        annotations = None if endpoint.namespace is None else \
            self.ns_annotations(endpoint.namespace)
        return membership(endpoint, annotations, live=self.live)

    # --- objects --------------------------------------------------------------------------

    def servers(self, namespace: str) -> list[Server]:
        found = self._servers.get(namespace)
        if found is None:
            found = [build_server(r) for r in self.view.for_each(SERVER, namespace)
                     if isinstance(r, GenericRecord) and is_linkerd(r)]
            # Several Servers selecting one port: the oldest wins.
            found.sort(key=lambda s: (s.record.created or "", s.record.name))
            self._servers[namespace] = found
        return found

    def authorizations(self, namespace: str) -> list[Authorization]:
        found = self._authzs.get(namespace)
        if found is None:
            domain = self.settings.trust_domain
            found = [build_server_authz(r, domain)
                     for r in self.view.for_each(SERVER_AUTHZ, namespace)
                     if isinstance(r, GenericRecord) and is_linkerd(r)]
            found += [self._resolved(build_authz_policy(r))
                      for r in self.view.for_each(AUTHZ, namespace)
                      if isinstance(r, GenericRecord) and is_linkerd(r)]
            self._authzs[namespace] = found
        return found

    def _resolved(self, policy: Authorization) -> Authorization:
        """The policy with its authentication references resolved into one client
        authorization (``policy_client_authz``), or the reason it is ignored."""
        if policy.problem is not None:
            return policy
        identities: tuple[str, ...] | None = None
        networks: tuple[IPBlock, ...] | None = None
        domain = self.settings.trust_domain
        for kind, namespace, name in policy.authentications:
            if kind == "MeshTLSAuthentication":
                record = self.view.get(make_key(MESH_TLS, namespace, name))
                if not isinstance(record, GenericRecord):
                    return _ignored(policy, f"could not find MeshTLSAuthentication {name} in "
                                    f"namespace {namespace}")
                if identities is not None:
                    return _ignored(policy, "policy must not include multiple "
                                    "MeshTLSAuthentications")
                try:
                    identities = mesh_tls_identities(record, domain)
                except read.Unsupported as error:
                    return _ignored(policy, f"MeshTLSAuthentication {namespace}/{name}: "
                                    f"{error}")
            elif kind == "ServiceAccount":
                if identities is not None:
                    return _ignored(policy, "policy must not include multiple ServiceAccounts")
                identities = (identity(name, namespace, domain),)
            elif kind == "NetworkAuthentication":
                record = self.view.get(make_key(NETWORK, namespace, name))
                if not isinstance(record, GenericRecord):
                    return _ignored(policy, f"could not find NetworkAuthentication {name} in "
                                    f"namespace {namespace}")
                if networks is not None:
                    return _ignored(policy, "policy must not include multiple "
                                    "NetworkAuthentications")
                try:
                    networks = network_blocks(record)
                except read.Unsupported as error:
                    return _ignored(policy, f"NetworkAuthentication {namespace}/{name}: "
                                    f"{error}")
            else:
                return _ignored(policy, f"authentication kind {kind!r} is not supported")
        client = ClientAuthz(
            Auth.TLS_AUTHENTICATED if identities is not None else Auth.UNAUTHENTICATED,
            ALL_NETWORKS if networks is None else networks, identities or ())
        return Authorization(policy.record, policy.kind, target=policy.target,
                             authentications=policy.authentications, client=client)

    def routes(self, namespace: str) -> dict[str, list[GenericRecord]]:
        """Server name -> the HTTPRoutes (policy.linkerd.io or Gateway API) that attach to
        it."""
        found = self._routes.get(namespace)
        if found is None:
            found = {}
            for kind in (HTTP_ROUTE, "HTTPRoute", "GRPCRoute"):
                for record in self.view.for_each(kind, namespace):
                    if isinstance(record, GenericRecord):
                        for server in route_servers(record):
                            found.setdefault(server, []).append(record)
            self._routes[namespace] = found
        return found

    def server_for(self, destination: Endpoint, port: int) -> Server | None:
        assert destination.namespace is not None
        for server in self.servers(destination.namespace):
            if server.problem is not None or server.selector is None or \
                    not server.selector.matches(destination.labels):
                continue
            if server.port == port or any(p.name == server.port and p.port == port
                                          for p in destination.ports):
                return server
        return None

    # --- the decision ---------------------------------------------------------------------

    def evaluate(self, source: Endpoint, destination: Endpoint, port: int, protocol: str
                 ) -> MeshDecision | None:
        """None when Linkerd has no say (the destination runs no Linkerd proxy)."""
        if destination.external or destination.namespace is None:
            return None
        annotations = destination.annotations
        if not self.objects and DEFAULT_POLICY not in annotations and \
                REQUIRE_IDENTITY not in annotations and INJECT not in annotations and \
                INJECTED_ANNOTATION not in annotations and \
                INJECTED_LABEL not in destination.labels and \
                not (self.ns_annotations(destination.namespace) or {}).get(INJECT):
            return None  # no Linkerd in sight: nothing to read
        meshed, why = self.membership(destination)
        if meshed is False:
            return None
        if meshed is None:
            if not self.objects and self._default(destination)[0] is \
                    DefaultPolicy.ALL_UNAUTHENTICATED:
                return None  # whatever the answer, the proxy would admit everything
            return MeshDecision(None, _step(Action.UNKNOWN, why), not_evaluated=(why,))
        if protocol != "TCP":
            return MeshDecision(True, _step(Action.ALLOW, f"the Linkerd proxy handles TCP "
                                            f"only; {protocol} to {destination.name} "
                                            "bypasses it"))
        if port in port_set(annotations.get(SKIP_INBOUND)):
            return MeshDecision(True, _step(Action.ALLOW, f"port {port} is in {SKIP_INBOUND} "
                                            f"of {destination.name}: no Linkerd policy "
                                            "sees it"))
        server = self.server_for(destination, port)
        if server is None:
            return self._by_default(source, destination, port)
        return self._by_server(source, destination, port, server)

    def _default(self, destination: Endpoint) -> tuple[DefaultPolicy, str]:
        own = destination.annotations.get(DEFAULT_POLICY)
        policy = parse_default(own)
        if policy is not None:
            return policy, f"{DEFAULT_POLICY}={own} on {destination.name}"
        if not self.live or destination.template:
            assert destination.namespace is not None
            ns = (self.ns_annotations(destination.namespace) or {}).get(DEFAULT_POLICY)
            policy = parse_default(ns)
            if policy is not None:
                return policy, (f"{DEFAULT_POLICY}={ns} on namespace {destination.namespace} "
                                "(copied onto the pod at injection)")
        cluster = self.settings
        return cluster.default, f"the cluster default {cluster.default.value} " \
            f"(from {cluster.source})"

    def _by_default(self, source: Endpoint, destination: Endpoint, port: int
                    ) -> MeshDecision:
        policy, where = self._default(destination)
        required = port in port_set(destination.annotations.get(REQUIRE_IDENTITY))
        client = policy.authorization(self.settings.networks, required)
        head = f"no Server selects port {port} of {destination.name}: default policy " \
            f"{policy.value} ({where})" + (f", identity required on port {port} "
                                           f"({REQUIRE_IDENTITY})" if required else "")
        if client is None:
            return MeshDecision(False, _step(Action.DENY, f"{head} denies every client"))
        found, why = self._admits(client, source, port)
        note = "; audit: nothing is denied, refusals are only logged" \
            if policy is DefaultPolicy.AUDIT else ""
        if found is True:
            return MeshDecision(True, _step(Action.ALLOW, f"{head} admits {why}{note}"))
        if found is False:
            return MeshDecision(False, _step(Action.DENY, f"{head} refuses it: {why}"))
        return MeshDecision(None, _step(Action.UNKNOWN, f"{head}: {why}"),
                            not_evaluated=(f"{head}: {why}",))

    def _by_server(self, source: Endpoint, destination: Endpoint, port: int,
                   server: Server) -> MeshDecision:
        assert destination.namespace is not None
        head = f"Server {server.name} selects port {port} of {destination.name}"
        evidence = (Evidence(resource=server.ref, field_path="spec.port", value=server.port),)
        candidates: list[tuple[str, ClientAuthz, Authorization | None]] = []
        ignored: list[str] = []
        by_route: dict[str, list[Authorization]] = {}
        routes = self.routes(destination.namespace).get(server.name, [])
        for authz in self.authorizations(destination.namespace):
            if authz.kind == "AuthorizationPolicy" and authz.target is not None and \
                    authz.target[0] in ("HTTPRoute", "GRPCRoute"):
                if authz.client is not None:
                    by_route.setdefault(authz.target[1], []).append(authz)
                continue
            if authz.problem is not None:
                if authz.kind == SERVER_AUTHZ or authz.target is None or \
                        authz.target == ("Server", server.name) or \
                        authz.target[0] == "Namespace":
                    ignored.append(f"{authz.kind} {authz.name}: {authz.problem}")
                continue
            if authz.selects(server):
                assert authz.client is not None
                candidates.append((f"{authz.kind} {authz.name}", authz.client, authz))
        if server.access_policy is not None:
            client = server.access_policy.authorization(self.settings.networks)
            if client is not None:
                candidates.append((f"its accessPolicy {server.access_policy.value}", client,
                                   None))
        unknown: list[str] = []
        refused: list[str] = []
        admitted: tuple[str, Authorization | None, str] | None = None
        for name, client, by in candidates:
            found, why = self._admits(client, source, port)
            if found is True:
                admitted = (name, by, why)
                break
            (unknown if found is None else refused).append(f"{name}: {why}")
        request = self.request
        asked = " ".join(p for p in (request.method, request.path) if p)
        if routes:
            matching = [(record, route_matches(record, request.method, request.path))
                        for record in routes]
            if all(found is False for _, found in matching):
                text = (f"{head}; no HTTPRoute of it ({', '.join(r.name for r in routes)}) "
                        f"matches the request {asked}: Linkerd answers 404")
                return MeshDecision(False, _step(Action.DENY, text, server, evidence),
                                    tuple(_route_ref(r) for r in routes))
            if admitted is None:
                for record, found in matching:
                    for authz in by_route.get(record.name, ()):
                        assert authz.client is not None
                        allows, why = self._admits(authz.client, source, port)
                        if allows is True and found is True:
                            admitted = (f"AuthorizationPolicy {authz.name} (on "
                                        f"HTTPRoute {record.name}, which the request "
                                        "matches)", authz, why)
                            break
                        if allows is not False and found is not False:
                            unknown.append(
                                f"AuthorizationPolicy {authz.name} admits {why} to requests "
                                f"of HTTPRoute {record.name} only, and "
                                + ("the question names no request path" if request.path
                                   is None else f"whether {asked} matches it is unknown"))
                    if admitted is not None:
                        break
        if admitted is not None:
            name, by, why = admitted
            extra = ""
            if routes and request.path is None:
                extra = (f"; HTTPRoutes {', '.join(sorted(r.name for r in routes))} attach "
                         "to it: requests none of them matches get 404")
            if server.access_policy is DefaultPolicy.AUDIT and by is None:
                extra += "; audit: refusals are only logged"
            return MeshDecision(True, _step(Action.ALLOW, f"{head}; {name} admits {why}"
                                            + extra, by or server, evidence))
        if unknown:
            return MeshDecision(None, _step(Action.UNKNOWN, f"{head}; {unknown[0]}", server,
                                            evidence),
                                not_evaluated=tuple(f"{head}; {u}" for u in unknown))
        if not candidates and not by_route:
            text = f"{head} and no authorization targets it: Linkerd denies every client"
        elif not candidates:
            text = f"{head}; no authorization of it or of its matching routes admits " \
                f"{source.name}"
        else:
            text = f"{head} and none of its authorizations admits {source.name} (" + \
                "; ".join(refused[:3]) + ("; ..." if len(refused) > 3 else "") + ")"
        if ignored:
            text += f" (ignored as invalid: {'; '.join(ignored[:2])})"
        blocking = tuple(dict.fromkeys([server.ref, *(a.ref for _, _, a in candidates
                                                      if a is not None)]))
        return MeshDecision(False, _step(Action.DENY, text, server, evidence), blocking)

    def _admits(self, client: ClientAuthz, source: Endpoint, port: int) -> tuple[Tri, str]:
        """Whether ``client`` admits ``source``, and why (a phrase naming whom it admits)."""
        net, net_why = self._in_networks(client, source)
        if net is False:
            return False, f"{source.name} is outside its networks ({client.describe()})"
        if client.auth is Auth.UNAUTHENTICATED:
            return (True, f"{client.describe()}{net_why}") if net else (None, net_why)
        meshed, why = self.membership(source)
        if meshed and port in port_set(source.annotations.get(SKIP_OUTBOUND)):
            meshed, why = False, f"port {port} is in {SKIP_OUTBOUND} of {source.name}"
        if meshed is False:
            return False, f"it requires TLS from a meshed client and {why}"
        if meshed is None:
            return None, why
        assert source.namespace is not None
        if client.auth is Auth.TLS_AUTHENTICATED:
            name = identity(source.service_account or "default", source.namespace,
                            self.settings.trust_domain)
            matched = next((p for p in client.identities if identity_matches(p, name)), None)
            if matched is None:
                return False, f"{source.name}'s identity {name} matches none of " \
                    f"{', '.join(client.identities[:3])}"
            who = f"identity {name} (matches {matched!r})"
        else:
            who = f"meshed client {source.name}"
        return (True, f"{who}{net_why}") if net else (None, net_why)

    def _in_networks(self, client: ClientAuthz, source: Endpoint) -> tuple[Tri, str]:
        if not client.networks:
            return False, ""
        if client.networks == ALL_NETWORKS:
            return True, ""
        if source.ips:
            inside = any(block.contains(ip) for block in client.networks for ip in source.ips)
            return inside, "" if not inside else f" (address {source.ips[0]} in its networks)"
        if client.cluster and not source.external:
            return True, (f" ({source.name}'s address is unknown; a pod's address is taken "
                          "to be in the cluster networks)")
        return None, f"the address of {source.name} is unknown, and its networks are " \
            f"{', '.join(str(n.cidr) for n in client.networks[:3])}"


def _route_ref(record: GenericRecord) -> ResourceRef:
    return ResourceRef(kind="HTTPRoute", namespace=record.namespace, name=record.name,
                       api_version=record.api_version)


def _ignored(policy: Authorization, why: str) -> Authorization:
    return Authorization(policy.record, policy.kind, target=policy.target,
                         authentications=policy.authentications,
                         problem=f"ignored by Linkerd: {why}")
