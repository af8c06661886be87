"""Istio policy lint: AuthorizationPolicies that cannot do what they seem to.

A policy whose scope holds no workload in the mesh is enforced nowhere (istioctl's
IST0127 counts in-mesh pods the same way); a ``namespaces`` entry matching no namespace
admits or refuses nobody (IST0101); a spec Istio's validation rejects leaves the flows
it could govern undecided in find_blocking_policies (IST0106).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.mesh.hosts import HostRegistry
from netsight.analyzers.mesh.istio_objects import SERVICE_ENTRY, VIRTUAL_SERVICE
from netsight.analyzers.mesh.sidecar_references import fqdn_of, in_registry
from netsight.analyzers.mesh.visibility import build_hosts
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.istio_mesh import (
    ROOT_NAMESPACE,
    TRUST_DOMAIN,
    Dataplane,
    membership,
)
from netsight.analyzers.policy.istio_model import (
    AUTHZ_KIND,
    GROUP,
    PEER_AUTHN_KIND,
    Attribute,
    AuthzPolicy,
    build_authz,
    build_peer_authn,
    string_matches,
)
from netsight.analyzers.policy.peer_groups import cluster_endpoints
from netsight.analyzers.policy.peers import Namespaces
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind
from netsight.graph.model.records import GenericRecord
from netsight.graph.store.live import GraphView, Source

METADATA = AnalyzerMetadata(
    name="istio_policies",
    description="Istio AuthorizationPolicies whose scope holds no workload in the mesh, "
    "rules naming namespaces, methods, hosts or principals that do not exist, and "
    "AuthorizationPolicies or "
    "PeerAuthentications whose spec Istio rejects (flows they govern stay undecided).",
    reads=frozenset({AUTHZ_KIND, PEER_AUTHN_KIND, Kind.NAMESPACE, *POD_LIKE_KINDS,
                     Kind.SERVICE, SERVICE_ENTRY, VIRTUAL_SERVICE}),
    codes=(
        codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD,
        codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND,
        codes.ISTIO_POLICY_NOT_EVALUATED,
        codes.AUTHORIZATION_POLICY_INVALID_METHOD,
        codes.AUTHORIZATION_POLICY_HOST_NOT_FOUND,
        codes.AUTHORIZATION_POLICY_PRINCIPAL_NOT_FOUND,
    ),
)


def _istio(view: GraphView, kind: str, namespace: str | None) -> list[GenericRecord]:
    return sorted((r for r in view.for_each(kind, namespace) if isinstance(r, GenericRecord)
                   and r.api_version.startswith(GROUP + "/")), key=lambda r: r.key)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    policies = _istio(view, AUTHZ_KIND, namespace)
    workloads: list[Endpoint] | None = None
    spaces = Namespaces(view)
    live = view.source is not Source.MANIFESTS
    registry: _Registry | None = None
    accounts: frozenset[str] | None = None  # None: not read yet; empty: pods unknown
    for record in policies:
        policy = build_authz(record)
        if policy.problem is not None:
            yield _not_evaluated(record, policy.problem)
            continue
        if not policy.target_refs:
            if workloads is None:
                workloads = list(cluster_endpoints(view))
            if not any(_governs(policy, w) and membership(w, spaces, live=live).dataplane
                       is not Dataplane.NONE for w in workloads):
                yield _no_mesh_workload(record, policy)
        yield from _namespaces_not_found(view, record, policy)
        yield from _methods_invalid(record, policy)
        # Pods and the host registry are read only for a policy that names principals or
        # hosts: most name neither.
        if _names(policy, Attribute.PRINCIPAL):
            if accounts is None:
                accounts = _service_accounts(view)
            yield from _principals_not_found(record, policy, accounts)
        if _names(policy, Attribute.HOST):
            registry = registry or _registry(view)
            yield from _hosts_not_found(view, record, policy, registry)
    for record in _istio(view, PEER_AUTHN_KIND, namespace):
        peer_authn = build_peer_authn(record)
        if peer_authn.problem is not None:
            yield _not_evaluated(record, peer_authn.problem)


def _governs(policy: AuthzPolicy, workload: Endpoint) -> bool:
    home = policy.record.namespace
    if home != ROOT_NAMESPACE and workload.namespace != home:
        return False
    return policy.selector is None or all(workload.labels.get(k) == v
                                          for k, v in policy.selector.items())


def _no_mesh_workload(record: GenericRecord, policy: AuthzPolicy) -> Finding:
    where = "the mesh" if record.namespace == ROOT_NAMESPACE else \
        f"namespace {record.namespace}"
    scope = "every workload" if policy.selector is None else \
        "workloads labelled " + ",".join(f"{k}={v}" for k, v in policy.selector.items())
    return codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD.finding(
        ref(record), f"AuthorizationPolicy {record.ref} applies to no workload in the mesh",
        detail=f"Its scope ({scope} in {where}) holds no pod with an Istio sidecar or in "
        "ambient mode; only those enforce AuthorizationPolicy, so it has no effect.",
        suggestion="Fix spec.selector to the labels of the workloads to protect, or bring "
        "them into the mesh (sidecar injection or ambient mode).",
        evidence=[evidence(record, "spec.selector" if policy.selector is not None
                           else "metadata.namespace", policy.selector or record.namespace)],
    )


def _namespaces_not_found(view: GraphView, record: GenericRecord,
                          policy: AuthzPolicy) -> Iterator[Finding]:
    known = view.namespaces()
    for rule in policy.rules:
        for source in rule.sources or ():
            for clause in source:
                if clause.attribute is not Attribute.NAMESPACE:
                    continue
                for i, value in enumerate(clause.values):
                    if any(string_matches(value, n) for n in known):
                        continue
                    path = f"{clause.path}[{i}]"
                    yield codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND.finding(
                        ref(record), f"{path} of AuthorizationPolicy {record.ref} names "
                        f"namespace {value!r}, which does not exist",
                        detail="No namespace matches it, so this entry matches no source "
                        f"({'it excludes nobody' if clause.negative else 'it admits nobody'}"
                        ").",
                        suggestion="Correct the namespace name (prefix* and *suffix "
                        "wildcards are allowed).",
                        evidence=[evidence(record, path, value)],
                    )


# Kiali's list (util/httputil HttpMethods): a gRPC request's method is always POST.
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS",
                "TRACE")


def valid_method(value: str) -> bool:
    """Kiali's validMethod: an HTTP method, ``*``, or a prefix* / *suffix of one (Istio's
    string match forms), compared in upper case."""
    method = value.strip()
    if method == "*":
        return True
    if not method:
        return False
    prefix = method.endswith("*") and not method.startswith("*")
    suffix = method.startswith("*") and not method.endswith("*")
    pattern = method.strip("*").upper() if prefix or suffix else method.upper()
    if prefix:
        return bool(pattern) and any(m.startswith(pattern) for m in HTTP_METHODS)
    if suffix:
        return bool(pattern) and any(m.endswith(pattern) for m in HTTP_METHODS)
    return pattern in HTTP_METHODS


def _methods_invalid(record: GenericRecord, policy: AuthzPolicy) -> Iterator[Finding]:
    for rule in policy.rules:
        for operation in rule.operations or ():
            for clause in operation:
                if clause.attribute is not Attribute.METHOD or clause.negative:
                    continue
                for i, value in enumerate(clause.values):
                    if valid_method(value):
                        continue
                    path = f"{clause.path}[{i}]"
                    yield codes.AUTHORIZATION_POLICY_INVALID_METHOD.finding(
                        ref(record), f"{path} of AuthorizationPolicy {record.ref} is "
                        f"{value!r}, not an HTTP method",
                        detail="Istio compares methods with the request's HTTP method; a "
                        "gRPC request's is POST (its service and method are the path), so "
                        "this entry matches no request.",
                        suggestion="Use an HTTP method (GET, POST, ...); match a gRPC "
                        "method by its path (/package.Service/Method).",
                        evidence=[evidence(record, path, value)],
                    )


def _names(policy: AuthzPolicy, attribute: Attribute) -> bool:
    return any(clause.attribute is attribute and not clause.negative
               for rule in policy.rules for group in (*(rule.sources or ()),
                                                      *(rule.operations or ()))
               for clause in group)


def _service_accounts(view: GraphView) -> frozenset[str]:
    """The identities workloads of the cluster run as (Kiali's getServiceAccounts, in the
    default trust domain), or none at all when pods may be missing from the graph."""
    if view.untracked(Kind.POD) is not None:
        return frozenset()
    return frozenset(f"{TRUST_DOMAIN}/ns/{e.namespace}/sa/{e.service_account or 'default'}"
                     for e in cluster_endpoints(view))


def principal_matches(principal: str, account: str) -> bool:
    if principal.startswith("*") or principal.endswith("*"):
        pattern = "^" + ".*".join(re.escape(p) for p in principal.split("*")) + "$"
        return re.match(pattern, account) is not None
    return principal == account


def _principals_not_found(record: GenericRecord, policy: AuthzPolicy,
                          accounts: frozenset[str]) -> Iterator[Finding]:
    if not accounts:
        return  # pods not known: whether an account is used cannot be told
    for rule in policy.rules:
        for source in rule.sources or ():
            for clause in source:
                if clause.attribute is not Attribute.PRINCIPAL or clause.negative:
                    continue
                for i, value in enumerate(clause.values):
                    domain = value.split("/ns/", 1)[0] if "/ns/" in value else None
                    if value == "*" or any(principal_matches(value, a) for a in accounts) \
                            or ("*" not in value and domain and domain != TRUST_DOMAIN):
                        continue  # a foreign trust domain cannot be checked (Kiali KIA0108)
                    path = f"{clause.path}[{i}]"
                    yield codes.AUTHORIZATION_POLICY_PRINCIPAL_NOT_FOUND.finding(
                        ref(record), f"{path} of AuthorizationPolicy {record.ref} names "
                        f"principal {value!r}, which no workload runs as",
                        detail=f"No pod of the cluster runs under a service account whose "
                        f"identity ({TRUST_DOMAIN}/ns/<namespace>/sa/<account>) it matches: "
                        "this entry matches no source.",
                        suggestion="Fix the principal to cluster.local/ns/<namespace>/sa/"
                        "<serviceAccountName> of the client workload.",
                        evidence=[evidence(record, path, value)],
                    )


@dataclass(frozen=True, slots=True)
class _Registry:
    hosts: HostRegistry
    virtual_service_hosts: frozenset[str]  # FQDNs, as Kiali reads them
    namespaces: list[str]


def _registry(view: GraphView) -> _Registry:
    namespaces = sorted(view.namespaces())
    hosts: set[str] = set()
    for record in view.for_each(VIRTUAL_SERVICE):
        spec = record.spec if isinstance(record, GenericRecord) and \
            isinstance(record.spec, dict) else {}
        named = spec.get("hosts")
        hosts.update(fqdn_of(str(h), record.namespace, namespaces)
                     for h in (named if isinstance(named, list) else []))
    return _Registry(build_hosts(view), frozenset(hosts), namespaces)


def host_header_matcher(host: str, namespace: str, namespaces: list[str]) -> bool:
    """Kiali's isHTTPHostHeaderMatcher: entries matched against the Host header and never
    looked up in the registry (wildcards, names of two dots or more, and name.suffix where
    the suffix is not a namespace)."""
    h = host.strip()
    if not h:
        return False
    if h.startswith("*") or h.endswith("*") or h.count(".") >= 2:
        return True
    if h.count(".") == 1:
        suffix = h.split(".", 1)[1]
        return suffix != namespace and suffix not in namespaces
    return False


def _hosts_not_found(view: GraphView, record: GenericRecord, policy: AuthzPolicy,
                     registry: _Registry) -> Iterator[Finding]:
    namespace = record.namespace
    for rule in policy.rules:
        for operation in rule.operations or ():
            for clause in operation:
                if clause.attribute is not Attribute.HOST or clause.negative:
                    continue
                for i, host in enumerate(clause.values):
                    if host_header_matcher(host, namespace, registry.namespaces):
                        continue
                    fqdn = fqdn_of(host, namespace, registry.namespaces)
                    if fqdn in registry.virtual_service_hosts or \
                            in_registry(registry.hosts, fqdn, namespace):
                        continue
                    unknown = view.untracked(Kind.SERVICE) or view.untracked(SERVICE_ENTRY)
                    if unknown is not None:
                        return  # a Service not listed may provide it
                    path = f"{clause.path}[{i}]"
                    yield codes.AUTHORIZATION_POLICY_HOST_NOT_FOUND.finding(
                        ref(record), f"{path} of AuthorizationPolicy {record.ref} names "
                        f"host {host!r}, which no Service provides",
                        detail=f"{host} ({fqdn}) is not a host of any Service, ServiceEntry "
                        "or VirtualService: requests naming it reach no workload this "
                        "policy protects.",
                        suggestion="Fix the host (a Service name, or name.namespace).",
                        evidence=[evidence(record, path, host)],
                    )


def _not_evaluated(record: GenericRecord, problem: str) -> Finding:
    field_path, _, message = problem.partition(": ")
    return codes.ISTIO_POLICY_NOT_EVALUATED.finding(
        ref(record), f"{record.kind} {record.ref} cannot be evaluated: {problem}",
        detail="Istio's validation rejects this spec (or netsight cannot read it); flows "
        "this policy could govern are answered with allowed: null.",
        suggestion="Fix the field to the shape the Istio API reference gives.",
        evidence=[evidence(record, field_path, message)],
    )


CHECK = Check(METADATA, check)
