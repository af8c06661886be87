"""The findings a route or Gateway resolution gives (NS05xx).

Shared by the tools and the ``gateway_api`` analyzer, so one problem reads the same wherever
it is reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import observed
from netsight.analyzers.routing.attachment import RouteResult
from netsight.analyzers.routing.gateway_objects import BackendRef
from netsight.analyzers.routing.gateways import GatewayState, ListenerSetState, ListenerState
from netsight.analyzers.routing.listenersets import NOT_ALLOWED, PARENT_NOT_ACCEPTED
from netsight.analyzers.routing.references import BackendResolution
from netsight.analyzers.routing.report import listener_diff, observed_parent
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView


def route_findings(view: GraphView, result: RouteResult) -> list[Finding]:
    route = result.route
    record = route.record
    name = f"{route.kind} {route.ref}"
    found: list[Finding] = []
    for parent in result.parents:
        pref = parent.ref
        path = f"spec.parentRefs[{pref.index}]"
        target = pref.parent + "".join(
            (f"/{pref.section_name}" if pref.section_name else "",
             f":{pref.port}" if pref.port is not None else ""))
        accepted = parent.conditions[c.ACCEPTED]
        if parent.gateway is None and pref.is_gateway:
            found.append(codes.ROUTE_PARENT_NOT_FOUND.finding(
                ref(record), f"{name}: parent Gateway {pref.parent} not found",
                detail=accepted.message,
                suggestion=f"Create Gateway {pref.parent}, or fix {path}.",
                evidence=[evidence(record, path, pref.parent)]))
        elif parent.missing is not None:
            found.append(codes.ROUTE_PARENT_NOT_FOUND.finding(
                ref(record), f"{name}: parent {parent.missing} not found",
                detail=accepted.message,
                suggestion=f"Create {parent.missing}, or fix {path}.",
                evidence=[evidence(record, path, pref.parent)]))
        elif pref.is_service and accepted.status == c.UNKNOWN:
            found.append(codes.ROUTE_MESH_PARENT_NOT_FOUND.finding(
                ref(record), f"{name}: parent Service {pref.parent} not found",
                detail=accepted.message,
                suggestion=f"Create Service {pref.parent}, or fix {path}.",
                evidence=[evidence(record, path, pref.parent)]))
        elif parent.gateway is not None and not parent.gateway.managed:
            found.append(_class_unavailable(parent.gateway))
        elif accepted.status == c.FALSE:
            found.append(codes.ROUTE_NOT_ACCEPTED.finding(
                ref(record), f"{name} not accepted by {target}: {accepted.reason}",
                detail=accepted.message,
                suggestion=_accept_hint(accepted.reason),
                evidence=[evidence(record, path, {"name": pref.name, "namespace":
                                                  pref.namespace, "sectionName":
                                                  pref.section_name, "port": pref.port})]))
        dropped = parent.conditions.get(c.PARTIALLY_INVALID)
        if dropped is not None:
            found.append(codes.ROUTE_RULES_DROPPED.finding(
                ref(record), f"{name}: invalid rules on {target}",
                detail=dropped.message,
                evidence=[evidence(record, "spec.rules", None)]))
        diff = observed.disagreements(parent.conditions, observed_parent(result, parent))
        if diff:
            found.append(_disagrees(record, f"{name} on {target}", diff,
                                    "status.parents"))
    serving = any(p.accepted for p in result.parents)
    for backend in result.backends:
        b = backend.ref
        code = {c.REF_NOT_PERMITTED: codes.ROUTE_BACKEND_REF_NOT_PERMITTED,
                c.INVALID_KIND: codes.ROUTE_BACKEND_INVALID_KIND,
                c.BACKEND_NOT_FOUND: codes.ROUTE_BACKEND_NOT_FOUND}.get(backend.reason or "")
        if code is not None:
            found.append(code.finding(
                ref(record), f"{name}: backendRef {b.ref} — {backend.reason}",
                detail=backend.message,
                suggestion=_backend_hint(backend),
                evidence=[evidence(record, b.path, {"group": b.group, "kind": b.kind,
                                                    "namespace": b.namespace, "name": b.name,
                                                    "port": b.port})]))
        elif serving and backend.ok and backend.ready_endpoints == 0 and b.weight > 0:
            found.append(codes.ROUTE_BACKEND_NO_READY_ENDPOINTS.finding(
                ref(record), f"{name}: backend {_backend_kind(b)} {b.ref} has no ready "
                "endpoints",
                detail=f"{b.path} resolves to {_backend_kind(b)} {b.ref}"
                + (f" ({', '.join(backend.targets)})" if backend.targets else "")
                + ", whose EndpointSlices list no ready endpoint: requests sent to it fail "
                "with 5xx.",
                suggestion=f"Run diagnose_service on {b.ref}.",
                evidence=[evidence(record, b.path, b.ref)]))
    return found


def _backend_kind(b: BackendRef) -> str:
    return b.kind if b.group == "" else f"{b.kind} ({b.group})"


def _accept_hint(reason: str) -> str:
    return {
        c.NO_MATCHING_PARENT: "Match parentRef sectionName/port to a listener of the Gateway.",
        c.NOT_ALLOWED_BY_LISTENERS: "Allow the route's kind and namespace in the listener's "
        "allowedRoutes (namespaces.from / selector / kinds), or move the route.",
        c.NO_MATCHING_LISTENER_HOSTNAME: "Give the route a hostname the listener's hostname "
        "covers, or widen the listener hostname.",
    }.get(reason, "Use only values the Gateway API defines in the route's rules.")


def _backend_hint(backend: BackendResolution) -> str:
    b = backend.ref
    if (b.group, b.kind) != ("", "Service") and backend.reason == c.BACKEND_NOT_FOUND:
        return f"Create {b.kind} {b.ref} ({b.group}), or fix the backendRef."
    return {
        c.REF_NOT_PERMITTED: f"Create a ReferenceGrant in namespace {b.namespace} from this "
        f"route's kind and namespace to Service {b.name}.",
        c.INVALID_KIND: "Point the backendRef at a Service (group \"\", kind Service), or at "
        "a kind the route's GatewayClass controller documents.",
    }.get(backend.reason or "", f"Create Service {b.ref} with port {b.port}, or fix the "
          "backendRef.")


def _disagrees(record: Any, what: str, kinds: list[str], field: str) -> Finding:
    return codes.CONTROLLER_STATUS_DISAGREES.finding(
        ref(record), f"{what}: controller status disagrees on {', '.join(kinds)}",
        detail="The cluster's controller wrote a status for these conditions other than "
        "what a conformant controller would set for the current spec: the status may be "
        "stale, or the controller decides otherwise.",
        suggestion="Compare 'observed' with 'conditions' in the answer; check the "
        "controller's logs and the condition's observedGeneration.",
        evidence=[evidence(record, field, kinds)])


def _class_unavailable(gateway: GatewayState) -> Finding:
    record = gateway.record
    return codes.GATEWAY_CLASS_UNAVAILABLE.finding(
        ref(record), f"Gateway {gateway.ref}: GatewayClass {gateway.class_name or '(none)'} "
        "is unavailable",
        detail=gateway.conditions[c.ACCEPTED].message,
        suggestion="Create the GatewayClass (or fix spec.gatewayClassName) and make sure its "
        "controller runs.",
        evidence=[evidence(record, "spec.gatewayClassName", gateway.class_name)])


def _gateway_refused(state: GatewayState) -> Iterator[Finding]:
    """What the Gateway's own conditions say beyond its listeners': not accepted (no
    listeners, parametersRef not found), and a backend client certificate that does not
    resolve. Listeners invalid or unresolved one by one are each reported as such."""
    record = state.record
    accepted = state.conditions.get(c.ACCEPTED)
    if accepted is not None and accepted.status == c.FALSE and \
            accepted.reason != c.LISTENERS_NOT_VALID:
        parameters = accepted.reason == c.INVALID_PARAMETERS
        yield codes.GATEWAY_NOT_ACCEPTED.finding(
            ref(record), f"Gateway {state.ref} not accepted: {accepted.reason}",
            detail=accepted.message,
            suggestion="Create the ConfigMap spec.infrastructure.parametersRef names, or fix "
            "the reference." if parameters else "Give the Gateway at least one listener.",
            evidence=[evidence(record, "spec.infrastructure.parametersRef"
                               if parameters else "spec.listeners", None)])
    resolved = state.conditions.get(c.RESOLVED_REFS)
    if resolved is not None and resolved.status == c.FALSE and \
            resolved.reason != c.LISTENERS_NOT_RESOLVED:
        yield codes.GATEWAY_BACKEND_CLIENT_CERTIFICATE_INVALID.finding(
            ref(record), f"Gateway {state.ref}: backend client certificate {resolved.reason}",
            detail=resolved.message,
            suggestion="Reference an existing Secret of type kubernetes.io/tls (with a "
            "ReferenceGrant if it lives in another namespace).",
            evidence=[evidence(record, "spec.tls.backend.clientCertificateRef", None)])


def gateway_findings(state: GatewayState) -> list[Finding]:
    record = state.record
    found: list[Finding] = []
    if not state.managed:
        found.append(_class_unavailable(state))
    else:
        found.extend(_gateway_refused(state))
    seen, seen_listeners = observed.gateway(record)
    for ls in state.listeners:
        found.extend(_listener_findings(record, f"Gateway {state.ref}", ls,
                                        seen_listeners))
    for listener_set in state.listener_sets:
        if not listener_set.hidden:
            found.extend(listener_set_findings(listener_set))
    diff = observed.disagreements(state.conditions, seen)
    if diff:
        found.append(_disagrees(record, f"Gateway {state.ref}", diff, "status.conditions"))
    return found

def _listener_findings(record: Record, owner: str, ls: ListenerState,
                       seen_listeners: Mapping[str, observed.ListenerObserved],
                       ) -> Iterator[Finding]:
    listener = ls.listener
    name = f"{owner} listener {listener.name}"
    accepted, resolved = ls.conditions[c.ACCEPTED], ls.conditions[c.RESOLVED_REFS]
    conflicted = ls.conditions[c.CONFLICTED]
    # A conflicted listener is not accepted for its conflict alone: NS0511 says it.
    if accepted.status == c.FALSE and not conflicted.ok:
        yield codes.LISTENER_NOT_ACCEPTED.finding(
            ref(record), f"{name} not accepted: {accepted.reason}",
            detail=accepted.message,
            suggestion="Fix the listener's protocol, port, tls or allowedRoutes.",
            evidence=[evidence(record, listener.path, listener.protocol)])
    if conflicted.ok:
        yield codes.LISTENER_CONFLICTED.finding(
            ref(record), f"{name} conflicted: {conflicted.reason}",
            detail=conflicted.message,
            suggestion="Give listeners on one port compatible protocols and distinct "
            "hostnames.",
            evidence=[evidence(record, f"{listener.path}.port", listener.port)])
    if resolved.reason == c.INVALID_ROUTE_KINDS:
        yield codes.LISTENER_INVALID_ROUTE_KINDS.finding(
            ref(record), f"{name}: invalid route kinds",
            detail=resolved.message,
            suggestion="List only route kinds the listener's protocol carries.",
            evidence=[evidence(record, f"{listener.path}.allowedRoutes.kinds",
                               [k for _, k in listener.kinds or ()])])
    elif resolved.status == c.FALSE and resolved is ls.client_validation:
        yield codes.LISTENER_CERTIFICATE_REF_INVALID.finding(
            ref(record), f"{name}: client certificate validation caCertificateRef "
            f"{resolved.reason}",
            detail=resolved.message,
            suggestion="Reference an existing ConfigMap holding the CA bundle in ca.crt "
            "(with a ReferenceGrant if it lives in another namespace).",
            evidence=[evidence(record, "spec.tls.frontend", None)])
    elif resolved.status == c.FALSE:  # Unknown: in notEvaluated, not a finding
        yield codes.LISTENER_CERTIFICATE_REF_INVALID.finding(
            ref(record), f"{name}: certificateRef {resolved.reason}",
            detail=resolved.message,
            suggestion="Reference an existing Secret of type kubernetes.io/tls (with a "
            "ReferenceGrant if it lives in another namespace).",
            evidence=[evidence(record, f"{listener.path}.tls.certificateRefs",
                               [f"{r.namespace}/{r.name}"
                                for r in listener.certificate_refs])])
    diff = listener_diff(ls, seen_listeners.get(listener.name))
    if diff:
        yield _disagrees(record, name, diff, "status.listeners")


def listener_set_findings(state: ListenerSetState) -> Iterator[Finding]:
    record = state.record
    name = f"{state.kind} {state.ref}"
    accepted = state.conditions[c.ACCEPTED]
    if accepted.status == c.FALSE:
        suggestion = {
            NOT_ALLOWED: "Let the Gateway take it (spec.allowedListeners.namespaces), or "
            "point spec.parentRef at a Gateway that does.",
            PARENT_NOT_ACCEPTED: "Fix the Gateway it names; its status says why it is not "
            "accepted.",
        }.get(accepted.reason, "Fix its listeners: give each a port, protocol and hostname "
                              "no listener before it in precedence uses.")
        yield codes.LISTENER_SET_NOT_ACCEPTED.finding(
            ref(record), f"{name} not accepted: {accepted.reason}", detail=accepted.message,
            suggestion=suggestion, evidence=[evidence(record, "spec.parentRef", None)])
    seen, seen_listeners = observed.gateway(record)
    if accepted.status != c.FALSE or accepted.reason == c.LISTENERS_NOT_VALID:
        for ls in state.listeners:
            yield from _listener_findings(record, name, ls, seen_listeners)
    diff = observed.disagreements(state.conditions, seen)
    if diff:
        yield _disagrees(record, name, diff, "status.conditions")
