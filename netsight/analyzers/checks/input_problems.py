"""Inputs that could not be taken as they are, reported instead of crashing the load."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Category, Evidence, Finding, ResourceRef
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.graph.store.live import GraphView, IngestProblem, ProblemKind, Source

METADATA = AnalyzerMetadata(
    name="ingest",
    description="Manifest documents that do not parse or are not Kubernetes objects, "
    "malformed objects, and objects defined twice.",
    reads=frozenset(),
    codes=(codes.MANIFEST_UNPARSEABLE, codes.NOT_A_KUBERNETES_OBJECT, codes.MALFORMED_OBJECT,
           codes.DUPLICATE_OBJECT, codes.INVALID_FIELD_VALUE),
)

_CODE = {
    ProblemKind.UNPARSEABLE: codes.MANIFEST_UNPARSEABLE,
    ProblemKind.NOT_AN_OBJECT: codes.NOT_A_KUBERNETES_OBJECT,
    ProblemKind.MALFORMED: codes.MALFORMED_OBJECT,
    ProblemKind.DUPLICATE: codes.DUPLICATE_OBJECT,
    ProblemKind.INVALID_VALUE: codes.INVALID_FIELD_VALUE,
}

_POLICY_GROUPS = ("NetworkPolicy", "AdminNetworkPolicy", "BaselineAdminNetworkPolicy",
                  "ClusterNetworkPolicy", "CiliumNetworkPolicy",
                  "CiliumClusterwideNetworkPolicy", "GlobalNetworkPolicy",
                  "AuthorizationPolicy")
_ROUTING_KINDS = ("Ingress", "IngressClass", "Gateway", "GatewayClass", "HTTPRoute",
                  "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute", "ReferenceGrant",
                  "ListenerSet", "XListenerSet", "VirtualService")


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    for problem in sorted(view.problems(), key=lambda p: (p.location or "", p.key)):
        if namespace is not None and problem.namespace != namespace:
            continue
        yield _finding(view, problem)


def _category(kind: str | None) -> Category:
    bare = (kind or "").partition(".")[0]
    if bare in _POLICY_GROUPS:
        return Category.POLICY
    if bare in _ROUTING_KINDS:
        return Category.ROUTING
    return Category.CONNECTIVITY


def _finding(view: GraphView, problem: IngestProblem) -> Finding:
    code = _CODE[problem.kind]
    resource = None
    if problem.object_kind and problem.name:
        resource = ResourceRef(kind=problem.object_kind.partition(".")[0], name=problem.name,
                               namespace=problem.namespace or None,
                               api_version=problem.api_version)
    where = f" at {problem.location}" if problem.location else ""
    what = str(resource) if resource else "document"
    # An invalid value's message names its fields itself (there may be several).
    field = f"{problem.field_path}: " if problem.field_path and \
        problem.kind is not ProblemKind.INVALID_VALUE else ""
    consequence = {
        ProblemKind.UNPARSEABLE: "skipped",
        ProblemKind.NOT_AN_OBJECT: "skipped",
        ProblemKind.MALFORMED: "left out of the graph"
        if view.source is Source.MANIFESTS else "kept at its last valid version, if any",
        ProblemKind.DUPLICATE: "the later definition replaces the earlier one",
        ProblemKind.INVALID_VALUE: "kept as written; the API server would reject it",
    }[problem.kind]
    evidence = None
    if resource is not None and problem.field_path:
        evidence = [Evidence(resource=resource, field_path=problem.field_path)]
    return code.finding(
        resource,
        f"{what}{where}: {field}{problem.message}"[:300],
        category=_category(problem.object_kind),
        detail=f"{code.description} ({consequence}). {field}{problem.message}",
        suggestion="Fix the document and load it again; analysis of the other objects "
        "went ahead without it." if problem.kind is not ProblemKind.DUPLICATE else
        "Keep one definition of the object.",
        evidence=evidence or (),
    )


CHECK = Check(METADATA, check)
