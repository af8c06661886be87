"""ListenerSets (GEP-1713): listeners that other objects add to a Gateway, and their status.

A ListenerSet (``gateway.networking.k8s.io/v1``, Gateway API v1.5; ``XListenerSet`` of
``gateway.networking.x-k8s.io/v1alpha1`` before) names one parent Gateway in
``spec.parentRef``. The Gateway takes it only when ``spec.allowedListeners.namespaces.from``
admits its namespace: ``None`` (the default: no ListenerSets), ``Same``, ``All`` or
``Selector`` (the labels of the ListenerSet's Namespace). The Gateway's own listeners and
those of the ListenerSets it takes are validated as one list, in precedence order: the
Gateway's first, then ListenerSets oldest first, then by "namespace/name". A listener that
conflicts (port, protocol, hostname) with one earlier in that order is Conflicted and not
Accepted, with the conflict as its reason; the earlier one keeps its port. The listeners of
one ListenerSet left after that conflict among themselves mutually, as within a Gateway.

A ListenerSet is Accepted when its Gateway takes it and at least one of its listeners is
valid (NotAllowed, ParentNotAccepted, ListenersNotValid otherwise), and Programmed when one
of them can be programmed. ``status.attachedListenerSets`` of the Gateway counts the
Accepted ones.

Creation time decides between ListenerSets; one without ``creationTimestamp`` (in manifests:
not created yet) counts as newest, as routes do (listener_admission.seniority), and the tie falls to
"namespace/name".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_GROUP,
    LISTENER_SET_KINDS,
    as_map,
    is_gateway_api,
    opt_str,
    read_listeners,
    spec_of,
)
from netsight.analyzers.routing.gateways import (
    GatewayState,
    ListenerSetState,
    ListenerState,
    listener_conflicts,
    listener_state,
    programmed,
)
from netsight.analyzers.routing.references import Grants
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import parse_label_selector
from netsight.graph.store.live import GraphView
from netsight.graph.store.scoped import unrestricted

# Condition reasons of ListenerSetStatus (apis/v1 ListenerSetConditionReason).
NOT_ALLOWED = "NotAllowed"
PARENT_NOT_ACCEPTED = "ParentNotAccepted"
PARENT_NOT_PROGRAMMED = "ParentNotProgrammed"

# namespace -> (labels, why they are incomplete or None); see Resolver.namespace_labels.
Labels = Callable[[str], tuple[dict[str, str], str | None]]


def parent_ref(record: Record) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name) of a ListenerSet's spec.parentRef, defaults applied
    (ParentGatewayReference: group gateway.networking.k8s.io, kind Gateway, the
    ListenerSet's namespace)."""
    raw = as_map(spec_of(record).get("parentRef"))
    group = raw.get("group")
    return (GATEWAY_GROUP if group is None else str(group), opt_str(raw.get("kind")) or GATEWAY,
            opt_str(raw.get("namespace")) or record.namespace, str(raw.get("name") or ""))


def attach(view: GraphView, grants: Grants, gateway: GatewayState, labels: Labels) -> None:
    """Evaluate the ListenerSets naming ``gateway`` and merge their listeners with its own;
    sets ``gateway.listener_sets`` and its attachedListenerSets. ``view`` is the caller's
    (what it hides is decided on the whole graph and not shown, whether or not the Gateway
    is hidden too); ``grants`` are the whole graph's, as for ``gateways.evaluate``."""
    key = (gateway.record.namespace, gateway.record.name)
    # ListenerSets in namespaces the caller may not read take ports all the same: decided
    # on the whole graph, and not shown (ListenerSetState.hidden).
    full, shows = unrestricted(view)
    # The common case, no ListenerSet anywhere, costs two counts instead of a pass over
    # every route attached to the Gateway.
    records = [r for r in full.neighbors(gateway.record.key, Rel.ATTACHES_TO, incoming=True)
               if r.kind in LISTENER_SET_KINDS and is_gateway_api(r)
               and parent_ref(r) == (GATEWAY_GROUP, GATEWAY, *key)] \
        if any(full.count(kind) for kind in LISTENER_SET_KINDS) else []
    allowed_listeners = spec_of(gateway.record).get("allowedListeners")
    if not records and allowed_listeners is None:
        return
    records.sort(key=_precedence)
    gateway.attached_listener_sets = gateway.attached_listener_sets_undecided = 0
    # Listeners that hold their port and hostname, and those that may (their ListenerSet's
    # attachment is undecided): the Gateway's own come first, conflicted or not.
    claimed: list[ListenerState] = list(gateway.listeners)
    maybe: list[ListenerState] = []
    for record in records:
        notes: list[str] = []
        hidden = not shows(record.key)
        # References are resolved on the whole graph, as a Gateway's are (``grants`` are
        # the whole graph's): a certificate Secret in a namespace the caller may not read
        # resolves as it does for the controller; what it holds is not shown.
        listeners = [listener_state(full, grants, record, ln, notes, gateway.unsupported,
                                    shows)
                     for ln in read_listeners(record)]
        if not hidden:
            gateway.notes.extend(f"{record.kind} {record.namespace}/{record.name}: {n}"
                                 for n in notes)
        state = ListenerSetState(record, listeners, {}, hidden=hidden)
        gateway.listener_sets.append(state)
        if not gateway.managed:
            pending = gateway.conditions[c.ACCEPTED]
            state.conditions = {c.ACCEPTED: pending, c.PROGRAMMED: pending}
            for ls in listeners:
                ls.conditions[c.PROGRAMMED] = pending
            continue
        allowed = _allowed(gateway, record, labels)
        if allowed.status == c.FALSE:
            state.conditions = {c.ACCEPTED: allowed,
                                c.PROGRAMMED: c.false(NOT_ALLOWED, allowed.message)}
            for ls in listeners:
                ls.conditions[c.PROGRAMMED] = c.false(
                    c.INVALID, f"the {record.kind} is not attached: {allowed.message}")
            continue
        valid = {id(ls): ls.conditions[c.ACCEPTED] for ls in listeners}
        # Listeners that take what an earlier one holds lose it first; those left conflict
        # among themselves mutually, as within a Gateway (conformance
        # ListenerSetProtocolConflict: a ListenerSet's TCP listener on the Gateway's HTTP
        # port loses, its HTTP listeners on that port stay).
        lost = {id(ls): _conflict(ls, claimed) for ls in listeners}
        listener_conflicts([ls for ls in listeners if lost[id(ls)] is None])
        for ls in listeners:
            ls.conditions[c.ACCEPTED] = valid[id(ls)]  # a conflict's reason is set below
            conflict = lost[id(ls)]
            if conflict is None and maybe and _conflict(ls, maybe) is not None:
                ls.conditions[c.ACCEPTED] = c.unknown(
                    "whether it conflicts is undecided: an earlier ListenerSet's attachment "
                    "is undecided")
            if conflict is not None:
                ls.conditions[c.CONFLICTED] = conflict
            conflicted = ls.conditions[c.CONFLICTED]
            if conflicted.ok and ls.conditions[c.ACCEPTED].status != c.FALSE:
                # The conflict's reason on Accepted and Programmed too (conformance
                # ListenerSetHostnameConflict, ListenerSetProtocolConflict).
                ls.conditions[c.ACCEPTED] = c.false(conflicted.reason, conflicted.message)
            ls.conditions[c.PROGRAMMED] = c.false(conflicted.reason, conflicted.message) \
                if conflicted.ok else programmed(ls.conditions)
        state.conditions = _conditions(gateway, listeners, allowed)
        accepted = state.conditions[c.ACCEPTED].status
        held = [ls for ls in listeners if not ls.conditions[c.CONFLICTED].ok
                and ls.conditions[c.ACCEPTED].status != c.FALSE]
        if accepted == c.TRUE:
            gateway.attached_listener_sets += 1
            claimed.extend(held)
        elif accepted == c.UNKNOWN:
            gateway.attached_listener_sets_undecided += 1
            maybe.extend(held)
    if gateway.attached_listener_sets_undecided:
        gateway.notes.append(f"gateway {gateway.ref}: attachedListenerSets leaves out "
                             f"{gateway.attached_listener_sets_undecided} ListenerSet(s) "
                             "whose acceptance is undecided")


def _precedence(record: Record) -> tuple[str, str, str]:
    # Oldest first (an unknown creation time counts as newest), then namespace/name.
    return record.created or "9999", record.namespace, record.name


def _allowed(gateway: GatewayState, record: Record, labels: Labels) -> c.Cond:
    """Whether spec.allowedListeners of the Gateway admits the ListenerSet: Accepted True,
    False/NotAllowed, or Unknown (labels of its namespace not known)."""
    namespaces = as_map(as_map(spec_of(gateway.record).get("allowedListeners"))
                        .get("namespaces"))
    source = namespaces.get("from") or "None"
    where = f"Gateway {gateway.ref} spec.allowedListeners.namespaces"
    if source == "All" or (source == "Same" and record.namespace == gateway.record.namespace):
        return c.true(c.ACCEPTED, f"allowed by {where}.from {source}")
    if source in ("None", "Same"):
        why = "takes no ListenerSets (from None, the default)" if source == "None" else \
            f"takes ListenerSets from namespace {gateway.record.namespace} only (from Same)"
        return c.false(NOT_ALLOWED, f"{where} {why}")
    if source != "Selector":
        return c.unknown(f"{where}.from {source!r} is not None, Same, All or Selector")
    try:
        selector = parse_label_selector(namespaces.get("selector"), f"{where}.selector")
    except MalformedObject as exc:
        return c.unknown(f"{exc.message}; whether the Gateway takes it is not evaluated")
    found, missing = labels(record.namespace)
    keys = {k for k, _ in selector.match_labels} | {r.key for r in selector.requirements}
    if missing is not None and not keys <= {"kubernetes.io/metadata.name"}:
        return c.unknown(f"{where}.selector reads labels of namespace {record.namespace}, "
                         f"which are not known ({missing})")
    if selector.matches(found):
        return c.true(c.ACCEPTED, f"namespace {record.namespace} matches {where}.selector")
    return c.false(NOT_ALLOWED, f"namespace {record.namespace} does not match "
                   f"{where}.selector")


def _family(protocol: str) -> str:
    # HTTPS and TLS listeners share a port by SNI; TCP and UDP are different transports.
    return "tls" if protocol in ("HTTPS", "TLS") else protocol


def _conflict(state: ListenerState, claimed: list[ListenerState]) -> c.Cond | None:
    """Conflicted=True against the listeners that hold their port before this one, else
    None (the rules of gateways.listener_conflicts, one listener against earlier ones)."""
    mine = state.listener
    if mine.port is None:
        return None
    for other in claimed:
        theirs = other.listener
        if theirs.port != mine.port or other is state:
            continue
        families = {_family(mine.protocol), _family(theirs.protocol)}
        if len(families) > 1 and families != {"TCP", "UDP"}:
            return c.true(c.PROTOCOL_CONFLICT, f"port {mine.port} is already used with "
                          f"protocol {theirs.protocol} by an earlier listener")
    for other in claimed:
        theirs = other.listener
        if theirs.port != mine.port or other is state \
                or _family(theirs.protocol) != _family(mine.protocol):
            continue
        # Terminating and passing through TLS on one port conflict wherever their hostnames
        # meet, "any" included (conformance ListenerSetProtocolAndRouteKindConflicts: the
        # Gateway's HTTPS listener without a hostname holds the port against a ListenerSet's
        # TLS passthrough listener for abc.example.com).
        if _family(mine.protocol) == "tls" \
                and (theirs.tls_mode == "Passthrough") != (mine.tls_mode == "Passthrough") \
                and _meet(other.hostname, state.hostname):
            return c.true(c.PROTOCOL_CONFLICT, f"port {mine.port} already terminates or "
                          f"passes through TLS for hostname {other.hostname or '(any)'} "
                          f"(an earlier listener), which meets {state.hostname or '(any)'}")
        if other.hostname == state.hostname:
            return c.true(c.HOSTNAME_CONFLICT, f"port {mine.port} and hostname "
                          f"{state.hostname or '(any)'} are already used by an earlier "
                          "listener")
    return None


def _meet(a: str | None, b: str | None) -> bool:
    return a is None or b is None or hostnames.intersect(a, b) is not None


def _conditions(gateway: GatewayState, listeners: list[ListenerState],
                allowed: c.Cond) -> dict[str, c.Cond]:
    parent = gateway.conditions[c.ACCEPTED]
    if parent.status == c.FALSE:
        why = f"Gateway {gateway.ref} is not accepted ({parent.reason})"
        return {c.ACCEPTED: c.false(PARENT_NOT_ACCEPTED, why),
                c.PROGRAMMED: c.false(PARENT_NOT_PROGRAMMED, why)}
    undecided = [why for cond in (allowed, parent) if cond.status == c.UNKNOWN
                 for why in (cond.message,)]
    statuses = [_valid(ls) for ls in listeners]
    bad = [ls.listener.name for ls, s in zip(listeners, statuses, strict=True) if s == c.FALSE]
    if undecided:
        pending = c.unknown("; ".join(undecided))
        return {c.ACCEPTED: pending, c.PROGRAMMED: pending}
    if not listeners or len(bad) == len(listeners):
        invalid = c.false(c.LISTENERS_NOT_VALID, "no valid listener" +
                          (f" ({', '.join(bad)})" if bad else ""))
        return {c.ACCEPTED: invalid, c.PROGRAMMED: invalid}
    if c.TRUE not in statuses:
        why = "; ".join(f"{ls.listener.name}: {_why_undecided(ls)}"
                        for ls, s in zip(listeners, statuses, strict=True) if s == c.UNKNOWN)
        pending = c.unknown(f"whether any listener is valid is not evaluated ({why})")
        return {c.ACCEPTED: pending, c.PROGRAMMED: pending}
    accepted = c.true(c.LISTENERS_NOT_VALID, f"invalid listeners: {', '.join(bad)}") if bad \
        else c.true(c.ACCEPTED, f"attached to Gateway {gateway.ref}")
    if any(ls.conditions[c.PROGRAMMED].ok for ls in listeners):
        done = c.true(c.PROGRAMMED, "ListenerSet would be programmed")
    elif any(ls.conditions[c.PROGRAMMED].status == c.UNKNOWN for ls in listeners):
        done = c.unknown("whether any listener can be programmed is not evaluated")
    else:
        done = c.false(c.LISTENERS_NOT_VALID, "no listener can be programmed")
    return {c.ACCEPTED: accepted, c.PROGRAMMED: done}


def _why_undecided(state: ListenerState) -> str:
    accepted = state.conditions[c.ACCEPTED]
    return accepted.message if accepted.status == c.UNKNOWN \
        else state.conditions[c.RESOLVED_REFS].message


def _valid(state: ListenerState) -> str:
    """Whether a listener counts as valid for its ListenerSet's Accepted: accepted, and its
    references resolved (a listener without its certificate is not valid: conformance
    ListenerSetReferenceGrant); route kinds it cannot carry only narrow it."""
    accepted, resolved = state.conditions[c.ACCEPTED], state.conditions[c.RESOLVED_REFS]
    if accepted.status == c.FALSE or (resolved.status == c.FALSE
                                      and resolved.reason != c.INVALID_ROUTE_KINDS):
        return c.FALSE
    if accepted.status == c.UNKNOWN or resolved.status == c.UNKNOWN:
        return c.UNKNOWN
    return c.TRUE


def find(gateway: GatewayState, record_key: str) -> ListenerSetState | None:
    return next((s for s in gateway.listener_sets if s.record.key == record_key), None)


def describe(conditions: Mapping[str, c.Cond]) -> str:
    accepted = conditions[c.ACCEPTED]
    return f"{accepted.status}/{accepted.reason}: {accepted.message}"
