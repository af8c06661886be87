"""Wire shapes of resolution answers: conditions, route parents, backends, listeners.

Shared by ``check_route_resolution``, ``check_gateway_status`` and ``diff_routes``; computed
conditions sit beside what the cluster's controller wrote (``observed``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from netsight.analyzers.core.contracts import DETAIL, Model, OmitNone
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import observed
from netsight.analyzers.routing.attachment import ParentResult, RouteResult
from netsight.analyzers.routing.backend_tls import BackendTLSState
from netsight.analyzers.routing.gateway_objects import spec_of
from netsight.analyzers.routing.gateways import GatewayState, ListenerSetState, ListenerState
from netsight.analyzers.routing.kgateway_policies import EVALUATED, Applied
from netsight.analyzers.routing.references import BackendResolution


class Condition(Model):
    status: str = Field(description='"True", "False" or "Unknown"')
    reason: str | None = None
    message: str | None = Field(default=None, description="Left out of compact answers "
                                "when the status is True")

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # type: ignore[no-untyped-def]
        data = handler(self)
        if not (info.context or {}).get(DETAIL) and self.status == c.TRUE:
            data.pop("message", None)
        return {k: v for k, v in data.items() if v is not None}


def computed(conditions: Mapping[str, c.Cond]) -> dict[str, Condition]:
    return {kind: Condition(status=cond.status, reason=cond.reason, message=cond.message)
            for kind, cond in conditions.items()}


def as_observed(conditions: observed.Observed | None) -> dict[str, Condition] | None:
    if not conditions:
        return None
    return {kind: Condition(status=str(raw.get("status")),
                            reason=raw.get("reason") if isinstance(raw.get("reason"), str)
                            else None,
                            message=raw.get("message") if isinstance(raw.get("message"), str)
                            else None)
            for kind, raw in sorted(conditions.items())}


class RouteGroupKind(Model):
    group: str
    kind: str


# --- routes --------------------------------------------------------------------------------


class Parent(OmitNone):
    parent: str = Field(description='"namespace/gateway"')
    kind: str | None = Field(default=None, description="The parent's kind when it is not a "
                             "Gateway: ListenerSet or XListenerSet")
    section_name: str | None = None
    port: int | None = None
    conditions: dict[str, Condition] = Field(description="What a conformant controller sets")
    listeners: list[str] | None = Field(default=None,
                                        description="Listeners the route attaches to")
    observed: dict[str, Condition] | None = Field(
        default=None, description="What the cluster's controller wrote, where it did")
    disagrees: list[str] | None = Field(
        default=None, description="Condition types whose status the controller set otherwise")


# --- backend TLS (BackendTLSPolicy) ----------------------------------------------------------


class BackendTLSOut(OmitNone):
    policy: str = Field(description='The BackendTLSPolicy that applies ("namespace/name")')
    hostname: str | None = Field(default=None, description="SNI the Gateway sends and the "
                                 "name the backend's certificate must match")
    subject_alt_names: list[str] | None = None
    ca_certificates: list[str] | None = Field(
        default=None, description='caCertificateRefs as "Kind/name", or "System" '
        "(wellKnownCACertificates)")
    accepted: Condition
    resolved_refs: Condition


def backend_tls_out(state: BackendTLSState | None) -> BackendTLSOut | None:
    if state is None:
        return None
    cas = [f"{r.kind or '?'}/{r.name}" for r in state.ca_refs]
    if state.well_known:
        cas.append(state.well_known)
    return BackendTLSOut(
        policy=state.ref,
        hostname=state.hostname,
        subject_alt_names=list(state.subject_alt_names) or None,
        ca_certificates=cas or None,
        accepted=computed(state.conditions)[c.ACCEPTED],
        resolved_refs=computed(state.conditions)[c.RESOLVED_REFS],
    )


# -----------------------------------------------------------------------------------------------


class Backend(OmitNone):
    backend: str = Field(description='"namespace/name"')
    kind: str | None = Field(default=None, description="Left out for Services")
    port: int | None = None
    weight: int
    rule: int
    mirror: bool | None = None
    external_auth: bool | None = Field(default=None, description="The service an "
                                       "ExternalAuth filter calls (no request goes to it)")
    resolved: bool
    reason: str | None = None
    ready_endpoints: int | None = Field(default=None,
                                        description="Ready endpoints; absent: not known")
    tls: BackendTLSOut | None = Field(default=None, description="The BackendTLSPolicy for "
                                      "this Service port; absent: plain-text")
    targets: list[str] | None = Field(default=None, description="What an implementation-"
                                      "specific backend (kgateway Backend, ...) points at")


class RouteOut(OmitNone):
    route: str = Field(description='"namespace/name"')
    kind: str
    hostnames: list[str] | None = None
    parents: list[Parent]
    backends: list[Backend]
    policies: list[str] | None = Field(default=None, description="kgateway TrafficPolicies "
                                       "reaching the route, with the settings evaluated")
    events: list[str] | None = Field(default=None, description="Recent Warning Events")


def route_out(result: RouteResult) -> RouteOut:
    route = result.route
    return RouteOut(
        route=route.ref,
        kind=route.kind,
        hostnames=list(route.hostnames) or None,
        parents=[_parent(route_result=result, parent=p) for p in result.parents],
        backends=[_backend(b) for b in result.backends],
        policies=[_policy(a) for a in result.policies] or None,
    )


def _policy(applied: Applied) -> str:
    fields = [f for f in EVALUATED if f in spec_of(applied.policy)]
    return f"{applied.ref} {applied.where}: {', '.join(fields) or 'nothing routing reads'}"


def _parent(*, route_result: RouteResult, parent: ParentResult) -> Parent:
    seen = observed_parent(route_result, parent)
    diff = observed.disagreements(parent.conditions, seen)
    return Parent(
        parent=parent.ref.parent,
        kind=parent.ref.kind if parent.ref.is_listener_set else None,
        section_name=parent.ref.section_name,
        port=parent.ref.port,
        conditions=computed(parent.conditions),
        listeners=None if parent.hidden else
        [ls.listener.name for ls in parent.listeners] or None,
        observed=as_observed(seen),
        disagrees=diff or None,
    )


def observed_parent(result: RouteResult, parent: ParentResult) -> observed.Observed | None:
    controller = parent.gateway.controller if parent.gateway is not None else None
    return observed.route_parent(result.route, parent.ref, controller)


def _backend(resolution: BackendResolution) -> Backend:
    b = resolution.ref
    return Backend(
        backend=b.ref,
        kind=None if (b.group, b.kind) == ("", "Service") else
        (f"{b.kind}.{b.group}" if b.group else b.kind),
        port=b.port,
        weight=b.weight,
        rule=b.rule,
        mirror=True if b.mirror else None,
        external_auth=True if b.external_auth else None,
        resolved=resolution.ok,
        reason=resolution.reason,
        ready_endpoints=resolution.ready_endpoints,
        tls=backend_tls_out(resolution.tls),
        targets=list(resolution.targets) if resolution.targets else None,
    )


# --- gateways ------------------------------------------------------------------------------


class ListenerObservedOut(OmitNone):
    conditions: dict[str, Condition] | None = None
    attached_routes: int | None = None
    supported_kinds: list[str] | None = None


class ListenerOut(OmitNone):
    name: str
    port: int | None = None
    protocol: str
    hostname: str | None = None
    attached_routes: int
    attached_routes_undecided: int | None = Field(
        default=None, description="Routes that may also attach, undecided: the listener's "
        "allowedRoutes selector reads labels of their namespace, which is not in the "
        "input. attachedRoutes leaves them out")
    supported_kinds: list[RouteGroupKind]
    conditions: dict[str, Condition]
    observed: ListenerObservedOut | None = None
    disagrees: list[str] | None = None


class ListenerSetOut(OmitNone):
    listener_set: str = Field(description='"namespace/name"')
    kind: str = Field(description="ListenerSet, or XListenerSet (v1alpha1)")
    conditions: dict[str, Condition]
    listeners: list[ListenerOut]
    observed: dict[str, Condition] | None = None
    disagrees: list[str] | None = None


class GatewayOut(OmitNone):
    gateway: str = Field(description='"namespace/name"')
    gateway_class: str | None = None
    controller: str | None = None
    conditions: dict[str, Condition]
    events: list[str] | None = Field(default=None, description="Recent Warning Events")
    listeners: list[ListenerOut]
    attached_listener_sets: int | None = Field(
        default=None, description="ListenerSets attached (Accepted); shown when the Gateway "
        "allows ListenerSets or one names it")
    attached_listener_sets_undecided: int | None = Field(
        default=None, description="ListenerSets whose acceptance is undecided, left out of "
        "attachedListenerSets")
    listener_sets: list[ListenerSetOut] | None = Field(
        default=None, description="ListenerSets naming this Gateway, in listener precedence "
        "order, with their listeners' status")
    observed: dict[str, Condition] | None = None
    disagrees: list[str] | None = None


def listener_diff(state: ListenerState, seen: observed.ListenerObserved | None) -> list[str]:
    if seen is None:
        return []
    diff = observed.disagreements(state.conditions, seen.conditions)
    # With routes undecided, any count from attachedRoutes up to all of them may be right.
    if seen.attached_routes is not None and not (
            state.attached_routes <= seen.attached_routes
            <= state.attached_routes + state.attached_undecided):
        diff.append("attachedRoutes")
    return diff


def _listeners_out(states: list[ListenerState],
                   seen_listeners: Mapping[str, observed.ListenerObserved]) -> list[ListenerOut]:
    listeners = []
    for ls in states:
        lseen = seen_listeners.get(ls.listener.name)
        diff = listener_diff(ls, lseen)
        listeners.append(ListenerOut(
            name=ls.listener.name,
            port=ls.listener.port,
            protocol=ls.listener.protocol,
            hostname=ls.listener.hostname,
            attached_routes=ls.attached_routes,
            attached_routes_undecided=ls.attached_undecided or None,
            supported_kinds=[RouteGroupKind(group="gateway.networking.k8s.io", kind=k)
                             for k in ls.supported_kinds],
            conditions=computed(ls.conditions),
            observed=None if lseen is None else ListenerObservedOut(
                conditions=as_observed(lseen.conditions),
                attached_routes=lseen.attached_routes,
                supported_kinds=list(lseen.supported_kinds)
                if lseen.supported_kinds is not None else None),
            disagrees=diff or None,
        ))
    return listeners


def listener_set_out(state: ListenerSetState) -> ListenerSetOut:
    # ListenerSetStatus has the shape of GatewayStatus: conditions, and listeners by name.
    seen, seen_listeners = observed.gateway(state.record)
    diff = observed.disagreements(state.conditions, seen)
    return ListenerSetOut(
        listener_set=state.ref,
        kind=state.kind,
        conditions=computed(state.conditions),
        listeners=_listeners_out(state.listeners, seen_listeners),
        observed=as_observed(seen),
        disagrees=diff or None,
    )


def gateway_out(state: GatewayState) -> GatewayOut:
    seen, seen_listeners = observed.gateway(state.record)
    diff = observed.disagreements(state.conditions, seen)
    return GatewayOut(
        gateway=state.ref,
        gateway_class=state.class_name,
        controller=state.controller,
        conditions=computed(state.conditions),
        listeners=_listeners_out(state.listeners, seen_listeners),
        attached_listener_sets=state.attached_listener_sets,
        attached_listener_sets_undecided=state.attached_listener_sets_undecided or None,
        listener_sets=[listener_set_out(s) for s in state.listener_sets if not s.hidden]
        or None,
        observed=as_observed(seen),
        disagrees=diff or None,
    )
