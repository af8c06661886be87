"""The references Gateway API objects make by name, as graph edges.

A route names its parents (``spec.parentRefs``: Gateways, ListenerSets, or Services for mesh
routing) and its backends (``spec.rules[*].backendRefs``); a Gateway names its GatewayClass; a
ListenerSet (GEP-1713) names the Gateway it adds listeners to (``spec.parentRef``). As edges they
let an analyzer go from a Gateway to its routes, or from a Service to the routes that send
to it, without scanning every route. Whether a reference is *valid* (listener match,
ReferenceGrant, kind support) is the routing analyzers' question, not the graph's: an edge
says only "names". Malformed specs yield no edge, never an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from netsight.graph.model.kinds import Rel, kind_id, make_key
from netsight.graph.model.records import GenericRecord

GROUP = "gateway.networking.k8s.io"
ROUTE_KINDS = frozenset({"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"})
# ListenerSet in gateway.networking.k8s.io (v1, Gateway API v1.5) and its experimental
# predecessor XListenerSet in gateway.networking.x-k8s.io (v1alpha1, v1.3 and v1.4).
LISTENER_SET_KINDS = frozenset({"ListenerSet", "XListenerSet"})

Edge = tuple[str, str, Rel]


def references(record: GenericRecord) -> Iterator[Edge]:
    if record.api_version.rpartition("/")[0] not in (GROUP, "gateway.networking.x-k8s.io"):
        return
    spec = record.spec if isinstance(record.spec, Mapping) else {}
    short_kind = record.kind.partition(".")[0]
    if short_kind == "Gateway":
        name = spec.get("gatewayClassName")
        if isinstance(name, str) and name:
            yield record.key, make_key("GatewayClass", "", name), Rel.USES_CLASS
    elif short_kind in LISTENER_SET_KINDS:
        # ParentGatewayReference: group gateway.networking.k8s.io and kind Gateway by
        # default, the ListenerSet's namespace unless given.
        target = _target(spec.get("parentRef"), record.namespace, GROUP, "Gateway")
        if target is not None:
            yield record.key, target, Rel.ATTACHES_TO
    elif short_kind in ROUTE_KINDS:
        for ref in _list(spec.get("parentRefs")):
            # Defaults from the API: group gateway.networking.k8s.io, kind Gateway, the
            # route's namespace.
            target = _target(ref, record.namespace, GROUP, "Gateway")
            if target is not None:
                yield record.key, target, Rel.ATTACHES_TO
        for rule in _list(spec.get("rules")):
            if isinstance(rule, Mapping):
                for ref in _list(rule.get("backendRefs")):
                    # Defaults: the core group, kind Service.
                    target = _target(ref, record.namespace, "", "Service")
                    if target is not None:
                        yield record.key, target, Rel.ROUTES_TO


def _list(raw: object) -> list[Any]:
    return raw if isinstance(raw, list) else []


def _target(ref: object, namespace: str, group: str, kind: str) -> str | None:
    if not isinstance(ref, Mapping):
        return None
    name = ref.get("name")
    group = ref.get("group", group)  # "" is the core group, not the default
    kind = ref.get("kind") or kind
    namespace = ref.get("namespace") or namespace
    if not all(isinstance(v, str) for v in (name, group, kind, namespace)) or not name \
            or not kind or not namespace:
        return None
    if "/" in name or "/" in namespace or "/" in kind:  # no such object; not a key either
        return None
    kid = kind_id(f"{group}/v1" if group else "v1", kind)
    return make_key(kid, namespace, name)
