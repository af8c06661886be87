"""Policy attachment (Gateway API GEP-713) as graph edges: policy --target_ref--> target.

A policy names what it applies to in ``spec.targetRefs[]`` (or the older singular
``spec.targetRef``): group, kind, name and an optional sectionName (a listener of a Gateway,
a port of a Service). BackendTLSPolicy, Envoy Gateway's ClientTrafficPolicy, kgateway's
TrafficPolicy and Istio's AuthorizationPolicy all use this shape, so one reader serves every
kind whose spec the graph keeps. As edges they let an analyzer go from a Gateway (or a
Service) to the policies attached to it without scanning every policy. The edge says only
"names": sectionName, precedence and whether the kind supports the target are the analyzers'
questions. Malformed refs yield no edge, never an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from netsight.graph.model.kinds import Rel, is_cluster_scoped, kind_id, make_key
from netsight.graph.model.records import GenericRecord

Edge = tuple[str, str, Rel]


def target_refs(spec: Any) -> list[Any]:
    """The raw targetRefs of a spec: ``targetRefs`` entries, then a singular ``targetRef``."""
    if not isinstance(spec, dict):
        return []
    refs = spec.get("targetRefs")
    found = list(refs) if isinstance(refs, list) else []
    single = spec.get("targetRef")
    if isinstance(single, dict):
        found.append(single)
    return found


def references(record: GenericRecord) -> Iterator[Edge]:
    for ref in target_refs(record.spec):
        target = target_key(ref, record.namespace)
        if target is not None:
            yield record.key, target, Rel.TARGET_REF


def target_key(ref: object, namespace: str) -> str | None:
    """The node key a targetRef names, or None when it is malformed.

    ``group`` "" (or absent) is the core group. A LocalPolicyTargetReference has no
    namespace: the target is in the policy's own; some kinds (Istio's) allow one.
    """
    if not isinstance(ref, dict):
        return None
    name, kind = ref.get("name"), ref.get("kind")
    group = ref.get("group") or ""
    ns = ref.get("namespace") or namespace
    if not isinstance(name, str) or not isinstance(kind, str) or not name or not kind \
            or not isinstance(group, str) or not isinstance(ns, str):
        return None
    if "/" in name or "/" in kind or "/" in ns:  # no such object; not a key either
        return None
    kid = kind_id(f"{group}/v1" if group else "v1", kind)
    if is_cluster_scoped(kid):
        return make_key(kid, "", name)
    return make_key(kid, ns, name) if ns else None
