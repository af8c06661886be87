"""Gateways and their listeners: supported kinds, validity, conflicts, conditions.

Follows Gateway API v1 ``Listener``/``ListenerStatus``/``GatewayStatus``: kinds a listener
supports follow from its protocol unless ``allowedRoutes.kinds`` narrows them (kinds that do
not fit are dropped and make ResolvedRefs False/InvalidRouteKinds); certificateRefs, and the
CA certificates of client certificate validation (routing/frontend_tls.py), must resolve for
TLS termination; listeners sharing a port must be compatible; a Gateway is
Accepted when its listeners are, and needs a GatewayClass whose controller reconciles it.
ListenerSets add listeners to a Gateway (routing/listenersets.py); their states hang off the
Gateway's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from netsight.analyzers.routing import addresses, frontend_tls, hostnames
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.backend_tls import CONFIG_MAP
from netsight.analyzers.routing.gateway_objects import (
    CORE_PROTOCOLS,
    GATEWAY_CLASS,
    GATEWAY_GROUP,
    GRPC_ROUTE,
    HTTP_ROUTE,
    SECRET,
    TCP_ROUTE,
    TLS_ROUTE,
    UDP_ROUTE,
    CertificateRef,
    Listener,
    as_map,
    conditions_of,
    opt_str,
    read_listeners,
    spec_of,
    status_of,
)
from netsight.analyzers.routing.references import Grants, Shows, resolve_certificate, shows_all
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import make_key
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector, parse_label_selector
from netsight.graph.store.live import GraphView, Source
from netsight.graph.store.scoped import unrestricted

# Route kinds each core protocol carries (Gateway API "Listener protocol and Route kind").
PROTOCOL_KINDS: Mapping[str, tuple[str, ...]] = {
    "HTTP": (HTTP_ROUTE, GRPC_ROUTE),
    "HTTPS": (HTTP_ROUTE, GRPC_ROUTE),
    "TLS": (TLS_ROUTE,),
    "TCP": (TCP_ROUTE,),
    "UDP": (UDP_ROUTE,),
}
# Protocols whose listener hostname is matched (SNI or Host); ignored for TCP and UDP.
HOSTNAME_PROTOCOLS = frozenset({"HTTP", "HTTPS", "TLS"})
_FROM_VALUES = ("Same", "All", "Selector")


@dataclass(eq=False)  # compared by identity: one state per listener per answer
class ListenerState:
    listener: Listener
    supported_kinds: tuple[str, ...]  # route kinds of gateway.networking.k8s.io
    selector: LabelSelector | None
    conditions: dict[str, c.Cond]
    attached_routes: int = 0
    # ResolvedRefs as client certificate validation alone sets it (routing/frontend_tls.py)
    client_validation: c.Cond | None = None
    # Routes whose attachment is undecided (allowedRoutes reads labels of a namespace not
    # in the input): not in attached_routes, which may be short by as many.
    attached_undecided: int = 0
    # The object that declares the listener (the Gateway, or a ListenerSet): its namespace
    # is the one allowedRoutes "Same" means.
    owner: Record | None = None

    @property
    def hostname(self) -> str | None:
        """The hostname routes are matched against; None: any (or not applicable)."""
        listener = self.listener
        return listener.hostname if listener.protocol in HOSTNAME_PROTOCOLS else None


@dataclass(eq=False)
class GatewayState:
    record: Record
    class_name: str | None
    controller: str | None  # the GatewayClass's controllerName
    managed: bool  # a controller reconciles it: its GatewayClass exists and is not rejected
    listeners: list[ListenerState]
    conditions: dict[str, c.Cond] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Route kinds the class's implementation does not offer (see _unsupported_kinds).
    unsupported: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    # ListenerSets naming this Gateway as their parent, in listener precedence order
    # (routing/listenersets.py), and how many are attached (status.attachedListenerSets;
    # None: the Gateway takes no ListenerSets and none names it).
    listener_sets: list[ListenerSetState] = field(default_factory=list)
    attached_listener_sets: int | None = None
    attached_listener_sets_undecided: int = 0

    @property
    def ref(self) -> str:
        return f"{self.record.namespace}/{self.record.name}"


@dataclass(eq=False)
class ListenerSetState:
    """A ListenerSet (or XListenerSet) and the status a conformant controller gives it."""

    record: Record
    listeners: list[ListenerState]
    conditions: dict[str, c.Cond]
    hidden: bool = False  # in a namespace the caller may not read: counted, not shown

    @property
    def ref(self) -> str:
        return f"{self.record.namespace}/{self.record.name}"

    @property
    def kind(self) -> str:
        return self.record.kind


def evaluate(view: GraphView, grants: Grants, record: Record,
             shows: Shows = shows_all) -> GatewayState:
    """The Gateway's conditions as its controller would set them, reading ``view``; what
    objects ``shows`` hides hold (a malformed certificate's data) is left out of messages."""
    class_name = opt_str(spec_of(record).get("gatewayClassName"))
    gateway_class = view.get(make_key(GATEWAY_CLASS, "", class_name)) if class_name else None
    controller = opt_str(spec_of(gateway_class).get("controllerName")) if gateway_class else None
    notes: list[str] = []
    unsupported = _unsupported_kinds(view, gateway_class)
    state = GatewayState(record, class_name, controller, managed=gateway_class is not None,
                         listeners=[_listener(view, grants, record, ln, notes, unsupported,
                                              shows) for ln in read_listeners(record)],
                         notes=notes, unsupported=unsupported)
    _conflicts(state.listeners)
    for listener in state.listeners:
        listener.conditions[c.PROGRAMMED] = _programmed(listener.conditions)
    if gateway_class is None:
        why = f"GatewayClass {class_name!r} not found" if class_name else \
            "spec.gatewayClassName is empty"
        state.notes.append(f"gateway {state.ref}: {why}; no controller reconciles it, so "
                           "no status is written for it or its routes")
        pending = c.unknown(f"{why}: no controller reconciles this Gateway")
        state.conditions = {c.ACCEPTED: pending, c.PROGRAMMED: pending}
        return state
    rejected = conditions_of(status_of(gateway_class).get("conditions")).get(c.ACCEPTED)
    if rejected is not None and rejected.get("status") == c.FALSE:
        state.managed = False
        why = (f"GatewayClass {class_name} was not accepted by its controller {controller} "
               f"({rejected.get('reason')})")
        state.notes.append(f"gateway {state.ref}: {why}")
        pending = c.unknown(why)
        state.conditions = {c.ACCEPTED: pending, c.PROGRAMMED: pending}
        return state
    state.conditions = _gateway_conditions(state.listeners)
    unresolved = _backend_client_certificate(view, grants, record, state.notes, shows)
    # An undecided client certificate never hides listeners known unresolved.
    if unresolved is not None and (state.conditions[c.RESOLVED_REFS].ok
                                   or unresolved.status == c.FALSE):
        state.conditions[c.RESOLVED_REFS] = unresolved
    invalid = _invalid_parameters(view, record, state.notes)
    if invalid is not None:
        state.conditions[c.ACCEPTED] = invalid
        state.conditions[c.PROGRAMMED] = c.false(c.INVALID, f"not accepted: {invalid.message}") \
            if invalid.status == c.FALSE else c.unknown(invalid.message)
    _weaken(state.conditions, addresses.judge(record, _features(gateway_class)))
    insecure = frontend_tls.insecure_fallback(record)
    if insecure is not None:
        state.conditions[frontend_tls.INSECURE_FRONTEND_VALIDATION_MODE] = insecure
    return state


def _weaken(conditions: dict[str, c.Cond], verdict: addresses.Verdict) -> None:
    """Apply what the requested addresses decide: a known failure wins over anything, an
    undecided one only over a success."""
    for kind, cond in ((c.ACCEPTED, verdict.accepted), (c.PROGRAMMED, verdict.programmed)):
        current = conditions[kind]
        if cond is not None and (current.ok or (cond.status == c.FALSE
                                                and current.status == c.UNKNOWN)):
            conditions[kind] = cond


def _features(gateway_class: Record | None) -> frozenset[str] | None:
    """GatewayClassStatus.supportedFeatures by name; None when the controller publishes none."""
    raw = status_of(gateway_class).get("supportedFeatures") if gateway_class else None
    if not isinstance(raw, list) or not raw:
        return None
    return frozenset(str(as_map(f).get("name") if isinstance(f, dict) else f) for f in raw)


def _backend_client_certificate(view: GraphView, grants: Grants, record: Record,
                                notes: list[str], shows: Shows) -> c.Cond | None:
    """ResolvedRefs=False for spec.tls.backend.clientCertificateRef, the certificate the
    Gateway presents to backends, when it does not resolve (GatewayTLSConfig: a Secret of
    the core group; another namespace needs a ReferenceGrant), else None. Conformance
    GatewayInvalidTLSBackendConfiguration: InvalidClientCertificateRef or RefNotPermitted,
    the Gateway staying Accepted."""
    raw = as_map(as_map(as_map(spec_of(record).get("tls")).get("backend"))
                 .get("clientCertificateRef"))
    if not raw:
        return None
    ref = CertificateRef(path="spec.tls.backend.clientCertificateRef",
                         group=str(raw.get("group") or ""),
                         kind=opt_str(raw.get("kind")) or SECRET,
                         namespace=opt_str(raw.get("namespace")) or record.namespace,
                         name=str(raw.get("name") or ""))
    reason, message, evaluated = resolve_certificate(view, grants, record, ref, shows)
    if not evaluated:
        notes.append(f"gateway {record.namespace}/{record.name} {message}")
    if reason is None:
        return None
    if reason == c.PENDING:
        return c.unknown(message)
    return c.false(c.REF_NOT_PERMITTED if reason == c.REF_NOT_PERMITTED
                   else c.INVALID_CLIENT_CERTIFICATE_REF, message)


def _invalid_parameters(view: GraphView, record: Record, notes: list[str]) -> c.Cond | None:
    """Accepted=False/InvalidParameters for a spec.infrastructure.parametersRef that cannot
    be found (GatewayInfrastructure: "If the referent cannot be found, refers to an
    unsupported kind, or when the data within that resource is malformed, the Gateway SHOULD
    be rejected"), else None. A core ConfigMap is looked up; other kinds are implementation-
    specific, and whether this controller supports one is not evaluated."""
    ref = as_map(as_map(spec_of(record).get("infrastructure")).get("parametersRef"))
    if not ref:
        return None
    group, kind, name = str(ref.get("group") or ""), opt_str(ref.get("kind")), \
        opt_str(ref.get("name"))
    where = f"spec.infrastructure.parametersRef ({kind or '?'} {record.namespace}/{name or '?'})"
    if kind is None or name is None:
        return c.false(c.INVALID_PARAMETERS, f"{where}: kind and name are required")
    gateway = f"gateway {record.namespace}/{record.name}"
    if (group, kind) != ("", CONFIG_MAP):
        notes.append(f"{gateway} {where}: a {kind} of group {group or 'core'} is "
                     "implementation-specific; whether it exists and its controller supports "
                     "it is not evaluated")
        return None
    unknown = view.untracked(CONFIG_MAP)
    if unknown is not None:
        notes.append(f"{gateway} {where}: ConfigMap existence not evaluated ({unknown})")
        return None
    # Unlike a certificate or CA bundle (objects.not_in_input), a Gateway's parameters are
    # written with it: one the input does not hold is missing.
    if not view.exists(make_key(CONFIG_MAP, record.namespace, name)):
        missing = "not in the input" if view.source is Source.MANIFESTS else "not found"
        return c.false(c.INVALID_PARAMETERS, f"{where}: ConfigMap {missing}")
    return None


def _unsupported_kinds(view: GraphView, gateway_class: Record | None,
                       ) -> tuple[frozenset[str], frozenset[str]]:
    """Route kinds of Extended support the class's implementation does not offer: (when
    listed in allowedRoutes.kinds, when left to the protocol's defaults).

    GatewayClassStatus.supportedFeatures names them when the controller publishes it. When
    it does not, GRPCRoute (Extended) is listed as supported only while GRPCRoutes exist:
    implementations differ, and a listener's default supportedKinds should not claim it.
    """
    features = _features(gateway_class)
    if features is not None:
        declared = frozenset(k for k in (GRPC_ROUTE, TLS_ROUTE, TCP_ROUTE, UDP_ROUTE)
                             if k not in features)
        return declared, declared
    # GRPCRoutes anywhere, those of namespaces the caller may not read too: whether the
    # implementation serves them is the cluster's, and decides which route holds a listener.
    grpc = unrestricted(view)[0].count(GRPC_ROUTE)
    return frozenset(), frozenset() if grpc else frozenset({GRPC_ROUTE})


def listener_state(view: GraphView, grants: Grants, owner: Record, listener: Listener,
                   notes: list[str], unsupported: tuple[frozenset[str], frozenset[str]],
                   shows: Shows = shows_all) -> ListenerState:
    """A listener of ``owner`` (a Gateway or a ListenerSet): validity, supported kinds and
    references; conflicts and Programmed are the caller's. What objects ``shows`` hides
    hold is left out of messages, as for a Gateway's own listeners."""
    return _listener(view, grants, owner, listener, notes, unsupported, shows)


def _listener(view: GraphView, grants: Grants, gateway: Record, listener: Listener,
              notes: list[str], unsupported: tuple[frozenset[str], frozenset[str]],
              shows: Shows) -> ListenerState:
    protocol = listener.protocol
    conditions: dict[str, c.Cond] = {}
    selector: LabelSelector | None = None
    problem = _invalid(listener)
    if listener.from_namespaces == "Selector" and problem is None:
        try:
            selector = parse_label_selector(listener.selector,
                                            f"{listener.path}.allowedRoutes.namespaces.selector")
        except MalformedObject as exc:
            problem = c.false(c.UNSUPPORTED_VALUE, exc.message)
    conditions[c.ACCEPTED] = problem or c.true(c.ACCEPTED, "listener is valid")
    listed, by_default = unsupported
    compatible = tuple(k for k in PROTOCOL_KINDS.get(protocol, ()) if k not in listed)
    if listener.kinds is None:
        supported = tuple(k for k in compatible if k not in by_default)
        invalid_kinds: list[str] = []
    else:
        supported = tuple(dict.fromkeys(
            kind for group, kind in listener.kinds
            if group == GATEWAY_GROUP and kind in compatible))
        invalid_kinds = [f"{group}/{kind}" if group else kind for group, kind in listener.kinds
                         if group != GATEWAY_GROUP or kind not in compatible]
    conditions[c.RESOLVED_REFS] = _resolved_refs(view, grants, gateway, listener,
                                                 invalid_kinds, notes, shows)
    unresolved, invalid = frontend_tls.check(view, grants, gateway, listener, notes, shows)
    if unresolved is not None and (conditions[c.RESOLVED_REFS].ok or (
            conditions[c.RESOLVED_REFS].status == c.UNKNOWN and unresolved.status == c.FALSE)):
        conditions[c.RESOLVED_REFS] = unresolved
    if invalid is not None and conditions[c.ACCEPTED].ok:
        conditions[c.ACCEPTED] = invalid
    return ListenerState(listener, supported, selector, conditions,
                         client_validation=unresolved, owner=gateway)


def _invalid(listener: Listener) -> c.Cond | None:
    """Accepted=False for a listener no conformant controller can configure, else None."""
    protocol = listener.protocol
    if protocol not in CORE_PROTOCOLS:
        if "/" in protocol:
            # Domain-prefixed protocols are implementation-specific: only that controller
            # knows whether it supports them.
            return c.unknown(f"protocol {protocol} is implementation-specific")
        return c.false(c.UNSUPPORTED_PROTOCOL, f"protocol {protocol!r} is not supported")
    if listener.port is None:
        return c.false(c.UNSUPPORTED_VALUE, "port is missing or not a number")
    if protocol in ("HTTPS", "TLS") and listener.tls is None:
        return c.false(c.UNSUPPORTED_VALUE, f"protocol {protocol} requires tls")
    if protocol in ("HTTP", "TCP", "UDP") and listener.tls is not None:
        return c.false(c.UNSUPPORTED_VALUE, f"tls must not be set for protocol {protocol}")
    if listener.tls is not None and listener.tls_mode not in ("Terminate", "Passthrough"):
        return c.false(c.UNSUPPORTED_VALUE, f"tls.mode {listener.tls_mode!r} is not supported")
    if protocol == "HTTPS" and listener.tls_mode == "Passthrough":
        return c.false(c.UNSUPPORTED_VALUE,
                       "tls.mode Passthrough needs protocol TLS (TLSRoute), not HTTPS")
    if listener.from_namespaces not in _FROM_VALUES:
        return c.false(c.UNSUPPORTED_VALUE, "allowedRoutes.namespaces.from "
                       f"{listener.from_namespaces!r} is not Same, All or Selector")
    if listener.from_namespaces == "Selector" and not isinstance(listener.selector, Mapping):
        return c.false(c.UNSUPPORTED_VALUE,
                       "allowedRoutes.namespaces.from is Selector but no selector is given")
    return None


def _resolved_refs(view: GraphView, grants: Grants, gateway: Record, listener: Listener,
                   invalid_kinds: list[str], notes: list[str], shows: Shows) -> c.Cond:
    # certificateRefs matter only where the Gateway terminates TLS (Passthrough ignores them).
    if listener.protocol in ("HTTPS", "TLS") and listener.tls is not None \
            and listener.tls_mode == "Terminate":
        if not listener.certificate_refs and not as_map(listener.tls.get("options")):
            return c.false(c.INVALID_CERTIFICATE_REF,
                           "tls.mode Terminate needs at least one certificateRef")
        undecided: list[str] = []
        for ref in listener.certificate_refs:
            reason, message, evaluated = resolve_certificate(view, grants, gateway, ref,
                                                             shows)
            if not evaluated:
                notes.append(f"gateway {gateway.namespace}/{gateway.name} {message}")
            if reason == c.PENDING:
                undecided.append(message)
            elif reason is not None:
                return c.false(reason, message)
        if undecided:
            return c.unknown("; ".join(undecided))
    if invalid_kinds:
        return c.false(c.INVALID_ROUTE_KINDS,
                       f"route kinds not supported on protocol {listener.protocol}: "
                       f"{', '.join(invalid_kinds)}")
    return c.true(c.RESOLVED_REFS, "all references resolved")


def _family(protocol: str) -> str:
    # HTTPS and TLS listeners share a port by SNI; TCP and UDP are different transports.
    return "tls" if protocol in ("HTTPS", "TLS") else protocol


def _conflicts(listeners: list[ListenerState]) -> None:
    by_port: dict[int | None, list[ListenerState]] = defaultdict(list)
    for state in listeners:
        by_port[state.listener.port].append(state)
    for port, group in by_port.items():
        for state in group:
            state.conditions[c.CONFLICTED] = c.Cond(c.FALSE, c.NO_CONFLICTS, "no conflicts")
        if len(group) < 2 or port is None:
            continue
        families = {_family(s.listener.protocol) for s in group}
        if len(families - {"TCP", "UDP"}) > 1 or (families & {"TCP", "UDP"}
                                                  and families - {"TCP", "UDP"}):
            for state in group:
                state.conditions[c.CONFLICTED] = c.true(
                    c.PROTOCOL_CONFLICT,
                    f"port {port} is used with incompatible protocols "
                    f"{', '.join(sorted({s.listener.protocol for s in group}))}")
            continue
        seen: dict[tuple[str, str | None], list[ListenerState]] = defaultdict(list)
        for state in group:
            seen[(state.listener.protocol if state.listener.protocol in ("TCP", "UDP")
                  else _family(state.listener.protocol), state.hostname)].append(state)
        for (_, hostname), same in seen.items():
            if len(same) < 2:
                continue
            names = ", ".join(s.listener.name for s in same)
            # One SNI name cannot be both terminated and passed through (conformance
            # GatewayListenerProtocolAndRouteKindConflicts); overlapping names that differ
            # are told apart by the most specific match.
            if len({s.listener.tls_mode == "Passthrough" for s in same}) > 1:
                conflict = c.true(c.PROTOCOL_CONFLICT,
                                  f"listeners {names} share port {port} and hostname "
                                  f"{hostname or '(any)'}, some terminating TLS and some "
                                  "passing it through")
            else:
                conflict = c.true(c.HOSTNAME_CONFLICT, f"listeners {names} share port "
                                  f"{port} and hostname {hostname or '(any)'}")
            for state in same:
                state.conditions[c.CONFLICTED] = conflict
        _overlapping_tls(port, group)
    for state in listeners:
        conflicted, accepted = state.conditions[c.CONFLICTED], state.conditions[c.ACCEPTED]
        if conflicted.ok and accepted.ok:
            # Its port is not configured, so it makes no data plane configuration: the
            # spec's test for Accepted (ListenerConditionAccepted), with the reason
            # conformance asserts for a conflicted listener.
            state.conditions[c.ACCEPTED] = c.false(c.INVALID,
                                                   f"conflicted: {conflicted.message}")


def listener_conflicts(listeners: list[ListenerState]) -> None:
    """Conflicted (and Accepted False when conflicted) among one object's listeners."""
    _conflicts(listeners)


def programmed(conditions: Mapping[str, c.Cond]) -> c.Cond:
    """A listener's Programmed, from its Accepted, ResolvedRefs and Conflicted."""
    return _programmed(conditions)


def _overlapping_tls(port: int, group: list[ListenerState]) -> None:
    """OverlappingTLSConfig: TLS listeners on one port whose distinct hostnames overlap.

    ListenerConditionOverlappingTLSConfig: controllers MUST detect overlapping hostnames
    (``foo.example.com`` and ``*.example.com``); negative polarity, set only when True.
    """
    tls = [s for s in group if _family(s.listener.protocol) == "tls"]
    for state in tls:
        mine = state.listener.hostname
        others = [o.listener.name for o in tls if o is not state
                  and o.listener.hostname != mine
                  and (mine is None or o.listener.hostname is None
                       or hostnames.intersect(mine, o.listener.hostname) is not None)]
        if others:
            state.conditions[c.OVERLAPPING_TLS_CONFIG] = c.true(
                c.OVERLAPPING_HOSTNAMES,
                f"hostname {mine or '(any)'} overlaps listener(s) {', '.join(others)} "
                f"on port {port}")


def _programmed(conditions: Mapping[str, c.Cond]) -> c.Cond:
    accepted, resolved = conditions[c.ACCEPTED], conditions[c.RESOLVED_REFS]
    # Without its certificates a listener cannot terminate TLS; an unsupported route kind
    # alone leaves the listener serving the kinds it does support. A reference known bad
    # decides it even where acceptance is undecided (a client CA bundle not in the input).
    unusable = resolved.status == c.FALSE and resolved.reason != c.INVALID_ROUTE_KINDS
    if accepted.status == c.UNKNOWN:
        return c.false(c.INVALID, f"unresolved references: {resolved.message}") \
            if unusable else c.unknown(accepted.message)
    if not accepted.ok:
        return c.false(c.INVALID, f"listener not accepted: {accepted.message}")
    if conditions[c.CONFLICTED].ok:
        return c.false(c.INVALID, f"listener conflicted: {conditions[c.CONFLICTED].message}")
    if resolved.status == c.UNKNOWN:
        return c.unknown(f"references not evaluated: {resolved.message}")
    if unusable:
        return c.false(c.INVALID, f"unresolved references: {resolved.message}")
    return c.true(c.PROGRAMMED, "listener would be programmed")


def _gateway_conditions(listeners: list[ListenerState]) -> dict[str, c.Cond]:
    if not listeners:
        invalid = c.false(c.INVALID, "the Gateway has no listeners")
        return {c.ACCEPTED: invalid, c.PROGRAMMED: invalid}
    bad = [s.listener.name for s in listeners if s.conditions[c.ACCEPTED].status == c.FALSE]
    pending = [s.listener.name for s in listeners
               if s.conditions[c.ACCEPTED].status == c.UNKNOWN]
    if len(bad) == len(listeners):
        accepted = c.false(c.LISTENERS_NOT_VALID, f"no valid listener ({', '.join(bad)})")
    elif len(bad) + len(pending) == len(listeners):
        # Valid only if one of the undecided listeners is: not known.
        accepted = c.unknown(f"whether listener(s) {', '.join(pending)} are valid is not "
                             "evaluated" + (f"; invalid: {', '.join(bad)}" if bad else ""))
    elif bad:
        accepted = c.true(c.LISTENERS_NOT_VALID, f"invalid listeners: {', '.join(bad)}")
    else:
        accepted = c.true(c.ACCEPTED, "Gateway is valid")
    undecided = [s.listener.name for s in listeners
                 if s.conditions[c.PROGRAMMED].status == c.UNKNOWN]
    if accepted.ok and any(s.conditions[c.PROGRAMMED].ok for s in listeners):
        programmed = c.true(c.PROGRAMMED, "Gateway would be programmed")
    elif accepted.status != c.FALSE and undecided:
        programmed = c.unknown(f"whether listener(s) {', '.join(undecided)} can be "
                               "programmed is not evaluated")
    else:
        programmed = c.false(c.INVALID, "no listener can be programmed")
    states = [(s.listener.name, s.conditions[c.RESOLVED_REFS].status) for s in listeners]
    unresolved = [name for name, status in states if status == c.FALSE]
    unknown = [name for name, status in states if status == c.UNKNOWN]
    if unresolved:
        resolved = c.false(c.LISTENERS_NOT_RESOLVED, "listeners with unresolved references: "
                           f"{', '.join(unresolved)}")
    elif unknown:
        resolved = c.unknown(f"references of listener(s) {', '.join(unknown)} not evaluated")
    else:
        resolved = c.true(c.RESOLVED_REFS, "all listener references resolved")
    return {c.ACCEPTED: accepted, c.PROGRAMMED: programmed, c.RESOLVED_REFS: resolved}
