"""Linkerd's and Kuma's authorization objects that reach nothing: what their policy
controllers silently skip, so that a verdict's denial has no visible cause.

Linkerd (linkerd2 policy-controller): a ServerAuthorization's ``server.name`` or an
AuthorizationPolicy's Server or HTTPRoute target names an object of its own namespace; an
AuthorizationPolicy whose required authentication is missing is "Illegal ...; ignoring";
a Server selects pods of its own namespace. Kuma: a MeshTrafficPermission in an
application namespace reaches that namespace's proxies only; one in the system namespace,
the mesh's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.policy import spec_reading as read
from netsight.analyzers.policy.kuma_authz import MTP, SYSTEM_NAMESPACES
from netsight.analyzers.policy.linkerd_model import (
    AUTHZ,
    HTTP_ROUTE,
    MESH_TLS,
    NETWORK,
    SERVER,
    SERVER_AUTHZ,
    is_linkerd,
)
from netsight.graph.model.kinds import POD_LIKE_KINDS, make_key
from netsight.graph.model.records import GenericRecord, PodRecord, WorkloadRecord
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView

METADATA = AnalyzerMetadata(
    name="mesh_authz",
    description="Linkerd and Kuma authorization objects that reach no Server, "
                "authentication or pod.",
    reads=frozenset({SERVER, SERVER_AUTHZ, AUTHZ, MESH_TLS, NETWORK, HTTP_ROUTE, "HTTPRoute",
                     MTP, *POD_LIKE_KINDS}),
    codes=(codes.LINKERD_AUTHORIZATION_TARGET_NOT_FOUND, codes.LINKERD_SERVER_SELECTS_NO_PODS,
           codes.LINKERD_AUTHENTICATION_NOT_FOUND, codes.KUMA_PERMISSION_TARGETS_NOTHING),
)
_AUTHENTICATIONS = {"MeshTLSAuthentication": MESH_TLS, "NetworkAuthentication": NETWORK}


def _pod_labels(view: GraphView, namespace: str | None) -> list[Mapping[str, str]]:
    found: list[Mapping[str, str]] = []
    for kind in POD_LIKE_KINDS:
        for record in view.for_each(kind, namespace):
            if isinstance(record, PodRecord):
                found.append(record.labels)
            elif isinstance(record, WorkloadRecord):
                found.append(record.pod_labels)
    return found


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    yield from _linkerd(view, namespace)
    yield from _kuma(view, namespace)


def _linkerd(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    for record in view.for_each(SERVER, namespace):
        if not isinstance(record, GenericRecord) or not is_linkerd(record):
            continue
        raw = (record.spec or {}).get("podSelector")
        try:
            selector: LabelSelector | None = read.selector(raw, "spec.podSelector") \
                if raw is not None else None
        except read.Unsupported:
            continue  # reported as an input problem
        if selector is None or any(selector.matches(labels)
                                   for labels in _pod_labels(view, record.namespace)):
            continue
        yield codes.LINKERD_SERVER_SELECTS_NO_PODS.finding(
            ref(record), f"Server {record.ref} selects no pod of namespace "
            f"{record.namespace}",
            detail=f"Its podSelector ({selector.describe()}) matches no pod or workload "
            "template there: its authorizations protect nothing.",
            suggestion="Fix the podSelector to the labels of the pods it should protect.",
            evidence=[evidence(record, "spec.podSelector", raw)])
    for record in view.for_each(SERVER_AUTHZ, namespace):
        if not isinstance(record, GenericRecord) or not is_linkerd(record):
            continue
        server = (record.spec or {}).get("server")
        name = server.get("name") if isinstance(server, Mapping) else None
        if isinstance(name, str) and view.get(make_key(SERVER, record.namespace, name)) is None:
            yield _missing_target(record, "Server", name, "spec.server.name")
    for record in view.for_each(AUTHZ, namespace):
        if not isinstance(record, GenericRecord) or not is_linkerd(record):
            continue
        spec: Mapping[str, Any] = record.spec or {}
        target = spec.get("targetRef")
        if isinstance(target, Mapping) and isinstance(target.get("name"), str):
            kind, name = target.get("kind"), target["name"]
            keys = {"Server": (SERVER,), "HTTPRoute": (HTTP_ROUTE, "HTTPRoute")}.get(
                str(kind), ())
            if keys and all(view.get(make_key(k, record.namespace, name)) is None
                            for k in keys):
                yield _missing_target(record, str(kind), name, "spec.targetRef.name")
        for i, auth in enumerate(spec.get("requiredAuthenticationRefs") or ()):
            if not isinstance(auth, Mapping) or auth.get("kind") not in _AUTHENTICATIONS or \
                    not isinstance(auth.get("name"), str):
                continue
            where = auth.get("namespace") or record.namespace
            if view.get(make_key(_AUTHENTICATIONS[auth["kind"]], where, auth["name"])) is None:
                yield codes.LINKERD_AUTHENTICATION_NOT_FOUND.finding(
                    ref(record), f"AuthorizationPolicy {record.ref} requires "
                    f"{auth['kind']} {where}/{auth['name']}, which does not exist",
                    detail="Linkerd's policy controller ignores an AuthorizationPolicy whose "
                    "authentications it cannot find: this policy admits no one, and a "
                    "Server it was meant to open keeps denying.",
                    suggestion=f"Create {auth['kind']} {where}/{auth['name']}, or fix the "
                    "reference.",
                    evidence=[evidence(record, f"spec.requiredAuthenticationRefs[{i}].name",
                                       auth["name"])])


def _missing_target(record: GenericRecord, kind: str, name: str, path: str) -> Finding:
    return codes.LINKERD_AUTHORIZATION_TARGET_NOT_FOUND.finding(
        ref(record), f"{record.kind.partition('.')[0]} {record.ref} targets {kind} {name}, "
        f"which namespace {record.namespace} does not have",
        detail=f"Linkerd applies it to the {kind} of that name in its own namespace only; "
        "with none, it authorizes nothing.",
        suggestion=f"Point it at an existing {kind}, or create {kind} "
        f"{record.namespace}/{name}.",
        evidence=[evidence(record, path, name)])


def _kuma(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    for record in view.for_each(MTP, namespace):
        if not isinstance(record, GenericRecord) or \
                not record.api_version.startswith("kuma.io/"):
            continue
        target = (record.spec or {}).get("targetRef") or {"kind": "Mesh"}
        if not isinstance(target, Mapping):
            continue
        kind = target.get("kind")
        if kind == "Dataplane":
            want = target.get("labels") or {}
        elif kind == "MeshSubset":
            want = target.get("tags") or {}
        else:
            continue  # Mesh selects every proxy; services are matched through Services
        if not isinstance(want, Mapping) or any(k.startswith(("kuma.io/", "k8s.kuma.io/"))
                                                for k in want):
            continue  # tags Kuma computes (service, zone) are not pod labels
        scope = None if record.namespace in SYSTEM_NAMESPACES else record.namespace
        if any(all(labels.get(k) == v for k, v in want.items())
               for labels in _pod_labels(view, scope)):
            continue
        where = "the cluster" if scope is None else f"namespace {scope}"
        yield codes.KUMA_PERMISSION_TARGETS_NOTHING.finding(
            ref(record), f"MeshTrafficPermission {record.ref} targets no pod in {where}",
            detail=f"Its targetRef ({kind} with "
            f"{', '.join(f'{k}={v}' for k, v in want.items())}) matches no pod's labels"
            + ("" if scope is None else " (a policy outside the system namespace reaches its "
                                         "own namespace only)") + ": it permits nothing.",
            suggestion="Fix the labels, or move the policy to the namespace of the pods it "
            "should apply to (or to the system namespace).",
            evidence=[evidence(record, "spec.targetRef", dict(target))])


CHECK = Check(METADATA, check)
