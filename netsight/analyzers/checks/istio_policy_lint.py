"""Istio policy lint: AuthorizationPolicies that cannot do what they seem to.

A policy whose scope holds no workload in the mesh is enforced nowhere (istioctl's
IST0127 counts in-mesh pods the same way); a ``namespaces`` entry matching no namespace
admits or refuses nobody (IST0101); a spec Istio's validation rejects leaves the flows
it could govern undecided in find_blocking_policies (IST0106).
"""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.istio_mesh import (
    ROOT_NAMESPACE,
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
    "rules naming namespaces that do not exist, and AuthorizationPolicies or "
    "PeerAuthentications whose spec Istio rejects (flows they govern stay undecided).",
    reads=frozenset({AUTHZ_KIND, PEER_AUTHN_KIND, Kind.NAMESPACE, *POD_LIKE_KINDS}),
    codes=(
        codes.ISTIO_POLICY_SELECTS_NO_MESH_WORKLOAD,
        codes.ISTIO_POLICY_NAMESPACE_NOT_FOUND,
        codes.ISTIO_POLICY_NOT_EVALUATED,
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
