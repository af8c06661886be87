"""Policies attached to a Gateway through targetRefs (Gateway API policy attachment, GEP-713).

A policy names its target in ``spec.targetRefs[]`` (or ``spec.targetRef``): group, kind,
name, and optionally a ``sectionName`` — for a Gateway, one listener. A policy on the
GatewayClass reaches every Gateway of the class. GEP-713 sorts policy kinds into *Direct*
(affects only the object it names: a listener's client connection settings) and
*Inherited* (affects the object and everything under it: a SecurityPolicy on a Gateway
applies to every route attached to it, unless the route has its own). Which kind is which is
each provider's definition, recorded in :data:`KNOWN_KINDS`; a kind not listed there is shown
as attached without a guess at its reach. How an implementation merges several policies of
one kind (overrides, defaults) is provider-specific and not evaluated.

Policies are found through the graph's ``target_ref`` edges into the Gateway, its
GatewayClass and its routes: no scan of every policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_CLASS,
    GATEWAY_GROUP,
    as_list,
    as_map,
    opt_str,
    spec_of,
    status_of,
)
from netsight.analyzers.routing.gateways import GatewayState
from netsight.graph.model.kinds import Rel, api_group, make_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

DIRECT, INHERITED = "Direct", "Inherited"


@dataclass(frozen=True, slots=True)
class PolicyKind:
    provider: str
    attachment: str  # DIRECT or INHERITED
    reach: str  # what the policy governs, for the answer


# (group, kind) -> how a policy of that kind applies when it targets a Gateway or listener.
KNOWN_KINDS: Mapping[tuple[str, str], PolicyKind] = {
    ("gateway.envoyproxy.io", "ClientTrafficPolicy"): PolicyKind(
        "envoy-gateway", DIRECT, "client connections to the listener(s)"),
    ("gateway.envoyproxy.io", "BackendTrafficPolicy"): PolicyKind(
        "envoy-gateway", INHERITED, "traffic to the backends of every route, unless a route "
        "has its own"),
    ("gateway.envoyproxy.io", "SecurityPolicy"): PolicyKind(
        "envoy-gateway", INHERITED, "authentication and authorization of every route, unless "
        "a route has its own"),
    ("gateway.envoyproxy.io", "EnvoyExtensionPolicy"): PolicyKind(
        "envoy-gateway", INHERITED, "extensions (Wasm, ext-proc) on every route, unless a "
        "route has its own"),
    ("gateway.kgateway.dev", "TrafficPolicy"): PolicyKind(
        "kgateway", INHERITED, "traffic settings of every route, unless a route has its own"),
    ("gateway.kgateway.dev", "ListenerPolicy"): PolicyKind(
        "kgateway", DIRECT, "listener settings"),
    ("gateway.kgateway.dev", "HTTPListenerPolicy"): PolicyKind(
        "kgateway", DIRECT, "HTTP listener settings"),
    # Istio applies a policy targeting a Gateway to the Gateway's proxy: every request
    # through it, whichever route takes it.
    ("security.istio.io", "AuthorizationPolicy"): PolicyKind(
        "istio", INHERITED, "authorization of every request through the Gateway's proxy"),
    ("security.istio.io", "RequestAuthentication"): PolicyKind(
        "istio", INHERITED, "JWT validation of every request through the Gateway's proxy"),
    ("telemetry.istio.io", "Telemetry"): PolicyKind(
        "istio", INHERITED, "telemetry of every request through the Gateway's proxy"),
    ("extensions.istio.io", "WasmPlugin"): PolicyKind(
        "istio", INHERITED, "Wasm plugins on every request through the Gateway's proxy"),
}


@dataclass(frozen=True, slots=True)
class Attachment:
    """One targetRef of ``policy`` that names the Gateway, a listener or the GatewayClass."""

    policy: Record
    path: str  # spec.targetRefs[i] or spec.targetRef
    scope: str  # "Gateway", "Listener" or "GatewayClass"
    section_name: str | None
    listeners: tuple[str, ...]  # listeners it reaches ((): none — a sectionName no listener has)
    kind: PolicyKind | None  # None: a kind netsight has no definition for

    @property
    def ref(self) -> str:
        return f"{self.policy.kind.partition('.')[0]} {self.policy.namespace}/{self.policy.name}"


def refs_naming(policy: Record, group: str, kind: str, namespace: str, name: str
                ) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """(field path, raw ref) of each targetRef of ``policy`` naming this object."""
    spec = spec_of(policy)
    raws = [(f"spec.targetRefs[{i}]", as_map(r))
            for i, r in enumerate(as_list(spec.get("targetRefs")))]
    if isinstance(spec.get("targetRef"), dict):
        raws.append(("spec.targetRef", as_map(spec.get("targetRef"))))
    for path, raw in raws:
        # A cluster-scoped target (namespace "") has no namespace to compare.
        if str(raw.get("group") or "") == group and raw.get("kind") == kind \
                and raw.get("name") == name \
                and (not namespace
                     or (opt_str(raw.get("namespace")) or policy.namespace) == namespace):
            yield path, raw


def gateway_attachments(view: GraphView, gateway: GatewayState) -> list[Attachment]:
    """Policies attached to the Gateway, one of its listeners, or its GatewayClass."""
    record = gateway.record
    names = tuple(ls.listener.name for ls in gateway.listeners)
    found: list[Attachment] = []
    for policy in view.neighbors(record.key, Rel.TARGET_REF, incoming=True):
        for path, raw in refs_naming(policy, GATEWAY_GROUP, GATEWAY, record.namespace,
                                     record.name):
            section = opt_str(raw.get("sectionName"))
            found.append(Attachment(
                policy, path, "Listener" if section else GATEWAY, section,
                tuple(n for n in names if n == section) if section else names,
                _kind_of(policy)))
    if gateway.class_name:
        class_key = make_key(GATEWAY_CLASS, "", gateway.class_name)
        for policy in view.neighbors(class_key, Rel.TARGET_REF, incoming=True):
            for path, _ in refs_naming(policy, GATEWAY_GROUP, GATEWAY_CLASS, "",
                                       gateway.class_name):
                found.append(Attachment(policy, path, GATEWAY_CLASS, None, names,
                                        _kind_of(policy)))
    found.sort(key=lambda a: (a.scope != GATEWAY_CLASS, a.scope != GATEWAY, a.ref, a.path))
    return found


def route_policies(view: GraphView, route: Record) -> list[str]:
    """Policies whose targetRefs name the route itself ("Kind namespace/name")."""
    return sorted({f"{p.kind.partition('.')[0]} {p.namespace}/{p.name}"
                   for p in view.neighbors(route.key, Rel.TARGET_REF, incoming=True)})


def _kind_of(policy: Record) -> PolicyKind | None:
    return KNOWN_KINDS.get((api_group(policy.api_version), policy.kind.partition(".")[0]))


def ancestor_conditions(policy: Record, gateway: Record) -> dict[str, Mapping[str, Any]] | None:
    """The conditions a controller wrote in the policy's status.ancestors for this Gateway
    (PolicyAncestorStatus); None when it wrote none."""
    for ancestor in as_list(status_of(policy).get("ancestors")):
        ref = as_map(as_map(ancestor).get("ancestorRef"))
        if ref.get("name") == gateway.name and ref.get("kind", GATEWAY) == GATEWAY \
                and (ref.get("namespace") or policy.namespace) == gateway.namespace:
            found = {str(as_map(x).get("type")): as_map(x)
                     for x in as_list(as_map(ancestor).get("conditions"))
                     if isinstance(as_map(x).get("type"), str)}
            return found or None
    return None
