"""Route parents: which listeners of each parent Gateway accept a route, and why not.

A parentRef may name a ListenerSet (GEP-1713) instead: its own listeners are the candidates
then, and the Gateway's are not (nor are a ListenerSet's for a Gateway parentRef). A
ListenerSet its Gateway does not accept has no listener on it: the route is not accepted
there (NoMatchingParent); one whose acceptance is undecided leaves the route undecided.

Which listeners of a parent admit a route is routing/listener_admission.py. ResolvedRefs is
the route's own: every backendRef must resolve. A listener's ``attachedRoutes`` counts the
routes attached to it by parentRefs and allowedRoutes (with the hostname intersection, as
the conformance test GatewayWithAttachedRoutes counts), whatever their other conditions:
ListenerStatus "MUST count successfully attached Routes that may themselves have Accepted:
false".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import gamma, gateways, kgateway_policies, listenersets, rules
from netsight.analyzers.routing.backend_kinds import (
    ACCEPTED_KINDS,
    EXTENSION_BACKEND_KINDS,
    KGATEWAY_CONTROLLER,
)
from netsight.analyzers.routing.backend_tls import (
    BACKEND_TLS_POLICY,
    CONFIG_MAP,
    BackendTLSPolicies,
)
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_CLASS,
    GATEWAY_GROUP,
    GRPC_ROUTE,
    HTTP_ROUTE,
    LISTENER_SET_KINDS,
    REFERENCE_GRANT,
    ROUTE_KINDS,
    SECRET,
    TCP_ROUTE,
    TLS_ROUTE,
    UDP_ROUTE,
    ParentRef,
    Route,
    is_gateway_api,
    read_route,
)
from netsight.analyzers.routing.kgateway_policies import KGATEWAY_POLICY_KINDS
from netsight.analyzers.routing.listener_admission import (
    NAMESPACE_NAME_LABEL,
    accept,
    hostnames_meet,
    seniority,
)
from netsight.analyzers.routing.references import (
    BackendResolution,
    Grants,
    resolve_backend,
    resolved_refs,
)
from netsight.analyzers.routing.rules import partially_invalid, refused_rules
from netsight.graph.model.kinds import Kind, Rel, make_key, parse_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView
from netsight.graph.store.overlay import OverlayView
from netsight.graph.store.scoped import unrestricted


@dataclass
class ParentResult:
    ref: ParentRef
    gateway: gateways.GatewayState | None
    conditions: dict[str, c.Cond]
    listeners: list[gateways.ListenerState] = field(default_factory=list)
    # Listeners the route is attached to by parentRefs and allowedRoutes alone (what
    # attachedRoutes counts), Accepted or not.
    attached: list[gateways.ListenerState] = field(default_factory=list)
    # Listeners whose allowedRoutes selector cannot be decided (namespace labels unknown).
    undecided: list[gateways.ListenerState] = field(default_factory=list)
    # The Gateway is in a namespace the caller may not read: decided all the same, and its
    # listeners are not shown.
    hidden: bool = False
    # A parentRef to a ListenerSet: the object that is not found ("ListenerSet ns/name", or
    # the Gateway the ListenerSet names), None when both are there.
    missing: str | None = None

    @property
    def accepted(self) -> bool:
        return self.conditions[c.ACCEPTED].ok


@dataclass
class RouteResult:
    route: Route
    parents: list[ParentResult]
    backends: list[BackendResolution]
    notes: list[str]
    dropped: dict[int, tuple[str, str]] = field(default_factory=dict)  # invalid rules
    # kgateway TrafficPolicies reaching the route (routing/kgateway_policies.py)
    policies: list[kgateway_policies.Applied] = field(default_factory=list)


# What each tier of a shared resolution reads (GraphView.derived drops a tier when one of
# its kinds changes): Gateway states (gateways.evaluate), parsed routes, route results.
GATEWAY_READS = (GATEWAY, GATEWAY_CLASS, SECRET, REFERENCE_GRANT, GRPC_ROUTE,
                 CONFIG_MAP,  # spec.infrastructure.parametersRef
                 # ListenerSets, and the labels of their namespaces (allowedListeners)
                 *LISTENER_SET_KINDS, Kind.NAMESPACE)
READY_READS = (Kind.SERVICE, Kind.ENDPOINT_SLICE)
RESOLUTION_READS = (*ROUTE_KINDS, GATEWAY, GATEWAY_CLASS, REFERENCE_GRANT, SECRET,
                    *LISTENER_SET_KINDS,
                    Kind.SERVICE, Kind.ENDPOINT_SLICE, Kind.NAMESPACE,
                    # backend TLS shown on route backends (routing/backend_tls.py)
                    BACKEND_TLS_POLICY, CONFIG_MAP,
                    # implementation-specific backends and kgateway's route policies
                    *EXTENSION_BACKEND_KINDS, *KGATEWAY_POLICY_KINDS)


def _fresh(view: GraphView) -> dict[str, Any]:
    return {}


class Resolver:
    """Resolution over one view for one answer: gateways, grants and labels read once.

    ``shared``: keep Gateway states, parsed routes and route results with the graph across
    answers until what they read changes (for diff_routes, which answers one request at a
    time). Shared results must not be mutated: ``count_attached`` needs its own resolver.
    """

    def __init__(self, view: GraphView, *, shared: bool = False) -> None:
        self.view = view
        # Which route holds a listener, a route's namespace labels, and what a reference
        # into another namespace resolves to (a listener's certificate, a route's backend,
        # the ReferenceGrant that permits it) are decided on the whole graph even for a
        # restricted caller (see diff_routes): a Gateway's or a route's status is the
        # cluster's. Hidden objects are never named, nor what they hold described.
        self.full, self.shows = unrestricted(view)
        self.grants = Grants(self.full)
        self.backend_tls = BackendTLSPolicies(view)
        self.shared = shared
        self._labels: dict[str, tuple[dict[str, str], str | None]] = {}
        self._gateways: dict[str, gateways.GatewayState | None] = {}
        self._hidden_gateways: dict[str, gateways.GatewayState | None] = {}
        self._routes: dict[str, Route] = {}
        self._proposed: dict[str, Route] = {}  # routes of an overlay's delta: kept apart
        self._proposed_keys: frozenset[str] = frozenset()
        self._ready: dict[str, int | None] = {}
        self._results: dict[str, RouteResult] = {}
        self._proposed_results: dict[str, RouteResult] = {}
        if shared:
            # Sync states are not changes of a kind: a tier built while Namespaces were
            # not listed yet is not the tier once they are.
            syncing = tuple(view.untracked(kind) for kind in RESOLUTION_READS)
            # Under an overlay (a what-if), the live graph's tiers serve what the delta
            # leaves alone: parsed routes always (each is checked against its record),
            # Gateway states unless the delta holds a kind they read.
            base = view.base if isinstance(view, OverlayView) else view
            touched = {parse_key(key).kind for key in view.delta} \
                if isinstance(view, OverlayView) else set()
            self._proposed_keys = frozenset(view.delta) if isinstance(view, OverlayView) \
                else frozenset()
            self._gateways = (view if touched & set(GATEWAY_READS) else base).derived(
                ("routing.gateways", syncing), GATEWAY_READS, _fresh)
            # Parsed routes are checked against their record on each use: kept across route
            # changes (dropped when deleted routes make up half of them).
            self._routes = base.derived("routing.routes", (), _fresh)
            # (A shared resolver answers HTTP requests: it parses HTTPRoutes and GRPCRoutes.)
            held = base.count(HTTP_ROUTE) + base.count(GRPC_ROUTE)
            if len(self._routes) > 2 * max(1000, held):
                self._routes.clear()
            # Route results too when the delta holds only routes (and no GRPCRoute exists to
            # contest a listener): a route's result does not depend on other routes then.
            contested = bool(self.full.count(GRPC_ROUTE))
            routes_only = bool(touched) and touched <= set(ROUTE_KINDS) - {GRPC_ROUTE} \
                and not contested
            results = base if routes_only else view
            # Results are checked against their parsed route on each use; without GRPCRoutes
            # another route's change leaves them valid.
            reads = RESOLUTION_READS if contested else tuple(
                k for k in RESOLUTION_READS if k not in (HTTP_ROUTE, TLS_ROUTE, TCP_ROUTE,
                                                         UDP_ROUTE))
            self._ready = results.derived(("routing.ready", syncing), READY_READS, _fresh)
            self._results = results.derived(("routing.results", syncing, contested), reads,
                                            _fresh)

    # --- lookups ---------------------------------------------------------------------------

    def gateway(self, namespace: str, name: str) -> gateways.GatewayState | None:
        key = make_key(GATEWAY, namespace, name)
        if key not in self._gateways:
            record = self.view.get(key)
            if record is None or not is_gateway_api(record):
                # Not kept: the name is a caller's (an argument, a proposed parentRef), and
                # a shared resolver keeps its Gateways across answers.
                return None
            state = gateways.evaluate(self.full, self.grants, record, self.shows)
            listenersets.attach(self.view, self.grants, state, self.namespace_labels)
            self._gateways[key] = state
        return self._gateways[key]

    def _parent_gateway(self, namespace: str,
                        name: str) -> tuple[gateways.GatewayState | None, bool]:
        """The Gateway a parentRef names, and whether the caller may see it. One in a
        namespace they may not read accepts or refuses their route all the same (what its
        controller writes in the route's status, which they can read): it is evaluated on
        the whole graph."""
        state = self.gateway(namespace, name)
        if state is not None or self.full is self.view:
            return state, True
        key = make_key(GATEWAY, namespace, name)
        if key not in self._hidden_gateways:
            record = self.full.get(key)
            if record is not None and is_gateway_api(record):
                state = gateways.evaluate(self.full, self.grants, record, self.shows)
                listenersets.attach(self.view, self.grants, state, self.namespace_labels)
                self._hidden_gateways[key] = state
            else:
                self._hidden_gateways[key] = None
        return self._hidden_gateways[key], False

    def listener_set(self, record: Record) -> gateways.ListenerSetState | None:
        """The state of a ListenerSet record, as the Gateway it names evaluates it (one in a
        namespace the caller may not read included: the ListenerSet is theirs); None when
        that Gateway does not exist or the parentRef is not to a Gateway."""
        group, kind, namespace, name = listenersets.parent_ref(record)
        if (group, kind) != (GATEWAY_GROUP, GATEWAY):
            return None
        gateway, _ = self._parent_gateway(namespace, name)
        return listenersets.find(gateway, record.key) if gateway is not None else None

    def namespace_labels(self, namespace: str) -> tuple[dict[str, str], str | None]:
        """The namespace's labels, and why they are incomplete (None: they are complete).

        Without the Namespace object only the name label is known, never "no labels"."""
        found = self._labels.get(namespace)
        if found is None:
            record = self.full.get(make_key(Kind.NAMESPACE, "", namespace))
            labels = dict(record.labels) if record is not None else {}
            # The API server labels every namespace with its own name (since 1.21).
            labels.setdefault(NAMESPACE_NAME_LABEL, namespace)
            missing = None
            if record is None:
                untracked = self.full.untracked(Kind.NAMESPACE)
                missing = f"Namespace {namespace} is not in the input" if untracked is None \
                    else untracked
            found = self._labels[namespace] = (labels, missing)
        return found

    def route(self, record: Record) -> Route:
        held = self._proposed if record.key in self._proposed_keys else self._routes
        route = held.get(record.key)
        if route is None or route.record is not record:
            route = held[record.key] = read_route(record)
        return route

    def routes(self, namespace: str | None = None) -> list[Route]:
        found = [self.route(r) for kind in ROUTE_KINDS
                 for r in self.view.for_each(kind, namespace) if is_gateway_api(r)]
        found.sort(key=lambda r: (r.kind, r.record.namespace, r.record.name))
        return found

    def routes_of(self, gateway: gateways.GatewayState) -> list[Route]:
        """Routes with a parentRef naming the Gateway."""
        return [self.route(r) for r in self.route_records_of(gateway)]

    def route_records_of(self, gateway: gateways.GatewayState) -> list[Record]:
        """Route records whose parentRefs name the Gateway: the graph's attaches_to edges
        into it (graph/store/gateway_edges.py), not a scan of every route."""
        return [r for r in self.view.neighbors(gateway.record.key, Rel.ATTACHES_TO,
                                                incoming=True)
                if r.kind in ROUTE_KINDS and is_gateway_api(r)]

    # --- resolution ------------------------------------------------------------------------

    def resolve(self, route: Route) -> RouteResult:
        held = self._proposed_results if route.record.key in self._proposed_keys \
            else self._results
        done = held.get(route.record.key)
        if done is not None and done.route is route:
            return done
        parent_controllers = self._controllers(route)
        backends = [resolve_backend(self.full, self.grants, route, ref, self._ready,
                                    self.backend_tls, self.shows, parent_controllers)
                    for ref in route.backend_refs]
        resolved = resolved_refs(backends)
        dropped = rules.invalid_rules(route)
        notes: list[str] = []
        refused = refused_rules(backends)
        parents = [self._parent(route, ref, resolved, dropped, notes)
                   for ref in route.parent_refs]
        for parent in parents:
            partially_invalid(parent.conditions, route, dropped, refused)
        controllers = sorted({p.gateway.controller for p in parents
                              if p.gateway is not None and p.gateway.controller})
        for backend in backends:
            b = backend.ref
            if backend.reason == c.INVALID_KIND:
                # Core support is Service only; controllers may support other kinds as an
                # implementation-specific extension, which netsight cannot speak for.
                unknown = [c for c in controllers if c not in ACCEPTED_KINDS]
                if unknown or not controllers:
                    notes.append(f"{route.ref} {b.path}: {b.kind} ({b.group or 'core'}) is "
                                 "implementation-specific; netsight answers as a Core-only "
                                 f"controller would ({', '.join(unknown) or 'no controller'} "
                                 "may support it)")
                else:
                    # Every controller is one whose backend kinds netsight knows: not one.
                    notes.append(f"{route.ref} {b.path}: {b.kind} ({b.group or 'core'}) is "
                                 f"not a backend kind {', '.join(controllers)} documents")
            elif backend.not_evaluated is not None:
                notes.append(f"{route.ref} {b.path}: {b.kind} ({b.group}) {b.ref}: "
                             f"{backend.not_evaluated}")
            elif backend.external_name:
                notes.append(f"{route.ref} {b.path}: Service {b.ref} is of type ExternalName, "
                             "which implementations SHOULD NOT support; whether this one "
                             "forwards to it is implementation-specific")
        # kgateway's TrafficPolicies, on the route and on the kgateway Gateways it is on
        # (one in a namespace the caller may not read is not named).
        kgateways = list({p.gateway.ref: p.gateway for p in parents if p.gateway is not None
                          and not p.hidden and p.gateway.controller
                          == KGATEWAY_CONTROLLER}.values())
        policies: list[kgateway_policies.Applied] = []
        if kgateways:
            policies = kgateway_policies.attached(self.full, route, kgateways)
            notes.extend(kgateway_policies.not_evaluated(route, policies))
            for gateway in kgateways:
                notes.extend(kgateway_policies.gateway_notes(self.full, gateway))
        result = held[route.record.key] = RouteResult(route, parents, backends, notes,
                                                      dropped, policies)
        return result

    def _controllers(self, route: Route) -> list[str | None]:
        """The controllers of the route's Gateway parents (through a ListenerSet too), which
        decide its implementation-specific backendRefs; a mesh parent has none."""
        found: list[str | None] = []
        for ref in route.parent_refs:
            if ref.is_gateway:
                gateway, _ = self._parent_gateway(ref.namespace, ref.name)
            elif ref.is_listener_set:
                record = self.full.get(make_key(ref.kind, ref.namespace, ref.name))
                if record is None or not is_gateway_api(record):
                    continue
                group, kind, namespace, name = listenersets.parent_ref(record)
                if (group, kind) != (GATEWAY_GROUP, GATEWAY):
                    continue
                gateway, _ = self._parent_gateway(namespace, name)
            else:
                continue
            if gateway is not None:
                found.append(gateway.controller)
        return found

    def count_attached(self, gateway: gateways.GatewayState) -> None:
        """Set attachedRoutes (and how many routes may attach undecided) on each listener of
        ``gateway``.

        Attachment is the routes' parentRefs and the listeners' allowedRoutes alone
        (ListenerStatus.attachedRoutes), so backends are not resolved. It is counted on the
        whole graph: routes in namespaces the caller may not read attach all the same (the
        count is the one the controller writes in the Gateway's status), and only their
        number is shown."""
        assert not self.shared, "count_attached writes the states a shared resolver keeps"
        for listener in gateway.listeners + [ls for s in gateway.listener_sets
                                             for ls in s.listeners]:
            listener.attached_routes = listener.attached_undecided = 0
        if not gateway.managed:
            return  # no controller attaches routes to it
        for listener_set in gateway.listener_sets:
            self._count_on(gateway, listener_set.record, listener_set.listeners)
        self._count_on(gateway, gateway.record, gateway.listeners)
        for listener in sorted(gateway.listeners, key=lambda ls: ls.listener.name):
            if listener.attached_undecided:
                note = (f"gateway {gateway.ref} listener {listener.listener.name}: "
                        f"attachedRoutes leaves out {listener.attached_undecided} route(s) "
                        "from namespaces whose labels are unknown")
                if note not in gateway.notes:
                    gateway.notes.append(note)

    def _count_on(self, gateway: gateways.GatewayState, parent: Record,
                  listeners: list[gateways.ListenerState]) -> None:
        """Count the routes whose parentRefs name ``parent`` (the Gateway, or one of its
        ListenerSets) on ``listeners``, the parent's own."""
        where = (parent.kind, parent.namespace, parent.name)
        for record in self.full.neighbors(parent.key, Rel.ATTACHES_TO, incoming=True):
            if record.kind not in ROUTE_KINDS or not is_gateway_api(record):
                continue
            route = self.route(record)
            attached: set[int] = set()
            unsure: set[int] = set()
            for ref in route.parent_refs:
                if (ref.is_gateway or ref.is_listener_set) \
                        and (ref.kind, ref.namespace, ref.name) == where:
                    _, accepting, undecided = accept(route, ref, listeners,
                                                     f"{parent.kind} {ref.parent}",
                                                     self.namespace_labels)
                    attached.update(id(ls) for ls in accepting)
                    unsure.update(id(ls) for ls in undecided)
            for listener in listeners:
                if id(listener) in attached:
                    listener.attached_routes += 1
                elif id(listener) in unsure:
                    listener.attached_undecided += 1

    def _parent(self, route: Route, ref: ParentRef, resolved: c.Cond,
                dropped: dict[int, tuple[str, str]], notes: list[str]) -> ParentResult:
        if ref.is_service:
            accepted, _ = gamma.accept(self.full, route, ref, self.shows)
            if accepted.ok and dropped and len(dropped) == len(route.rules):
                reason, message = next(iter(dropped.values()))
                accepted = c.false(reason, f"no valid rule: {message}")
            return ParentResult(ref, None, {c.ACCEPTED: accepted, c.RESOLVED_REFS: resolved})
        if ref.is_listener_set:
            key = make_key(ref.kind, ref.namespace, ref.name)
            if self.full is self.view or self.shows(key) or self.full.get(key) is None:
                return self._listener_set_parent(route, ref, resolved, dropped, notes)
            # A ListenerSet in a namespace the caller may not read accepts or refuses the
            # route all the same, as a hidden Gateway does: the outcome only.
            return _out_of_sight(self._listener_set_parent(route, ref, resolved, dropped, [],
                                                           view=self.full), ref)
        if not ref.is_gateway:
            what = f"parent kind {ref.kind} of group {ref.group or 'core'}"
            notes.append(f"{route.ref} parentRefs[{ref.index}]: {what} is "
                         "implementation-specific and not evaluated")
            pending = c.unknown(f"{what}: not evaluated by netsight")
            return ParentResult(ref, None, {c.ACCEPTED: pending, c.RESOLVED_REFS: resolved})
        gateway, visible = self._parent_gateway(ref.namespace, ref.name)
        if gateway is None:
            missing = c.unknown(f"Gateway {ref.parent} not found: no controller sets status "
                                "for this parent")
            return ParentResult(ref, None, {c.ACCEPTED: missing, c.RESOLVED_REFS: resolved})
        if visible:
            return self._gateway_parent(route, ref, gateway, resolved, dropped, notes)
        # Notes and messages would name the hidden Gateway's listeners: the outcome only.
        return _out_of_sight(self._gateway_parent(route, ref, gateway, resolved, dropped, []),
                             ref)

    def _listener_set_parent(self, route: Route, ref: ParentRef, resolved: c.Cond,
                             dropped: dict[int, tuple[str, str]],
                             notes: list[str], *, view: GraphView | None = None,
                             ) -> ParentResult:
        """A parentRef naming a ListenerSet: its listeners, if its Gateway takes it (read
        from ``view``, the caller's by default)."""
        what = f"{ref.kind} {ref.parent}"
        record = (view or self.view).get(make_key(ref.kind, ref.namespace, ref.name))
        if record is None or not is_gateway_api(record):
            missing = c.unknown(f"{what} not found: no controller sets status for this parent")
            return ParentResult(ref, None, {c.ACCEPTED: missing, c.RESOLVED_REFS: resolved},
                                missing=what)
        group, kind, namespace, name = listenersets.parent_ref(record)
        if (group, kind) != (GATEWAY_GROUP, GATEWAY):
            pending = c.unknown(f"{what} names a parent of kind {kind} ({group}), which is "
                                "implementation-specific and not evaluated")
            return ParentResult(ref, None, {c.ACCEPTED: pending, c.RESOLVED_REFS: resolved})
        # The ListenerSet is the caller's to read, its listeners included, even where its
        # Gateway is in a namespace they may not read (which its spec names all the same).
        gateway, _ = self._parent_gateway(namespace, name)
        if gateway is None:
            missing = c.unknown(f"{what}: its Gateway {namespace}/{name} is not found; no "
                                "controller sets status for this parent")
            return ParentResult(ref, None, {c.ACCEPTED: missing, c.RESOLVED_REFS: resolved},
                                missing=f"Gateway {namespace}/{name} (of {what})")
        state = listenersets.find(gateway, record.key)
        if not gateway.managed or state is None:
            return ParentResult(ref, gateway, {c.ACCEPTED: gateway.conditions[c.ACCEPTED],
                                               c.RESOLVED_REFS: resolved})
        taken = state.conditions[c.ACCEPTED]
        if not taken.ok:
            accepted = c.unknown(f"{what}: whether Gateway {namespace}/{name} takes it is "
                                 f"undecided ({taken.message})") if taken.status == c.UNKNOWN \
                else c.false(c.NO_MATCHING_PARENT, f"{what} is not accepted by Gateway "
                             f"{namespace}/{name} ({taken.reason}): it has no listeners there")
            return ParentResult(ref, gateway, {c.ACCEPTED: accepted, c.RESOLVED_REFS: resolved})
        if route.kind == GRPC_ROUTE or self.full.count(GRPC_ROUTE):
            notes.append(f"{route.ref} parentRefs[{ref.index}]: whether an HTTPRoute and a "
                         f"GRPCRoute contest the listeners of {what} is not evaluated")
        return self._listeners_parent(route, ref, gateway, state.listeners, what, resolved,
                                      dropped, notes)

    def _gateway_parent(self, route: Route, ref: ParentRef, gateway: gateways.GatewayState,
                        resolved: c.Cond, dropped: dict[int, tuple[str, str]],
                        notes: list[str]) -> ParentResult:
        if not gateway.managed:
            return ParentResult(ref, gateway, {c.ACCEPTED: gateway.conditions[c.ACCEPTED],
                                               c.RESOLVED_REFS: resolved})
        return self._listeners_parent(route, ref, gateway, gateway.listeners,
                                      f"Gateway {ref.parent}", resolved, dropped, notes)

    def _listeners_parent(self, route: Route, ref: ParentRef, gateway: gateways.GatewayState,
                          candidates: list[gateways.ListenerState], what: str,
                          resolved: c.Cond, dropped: dict[int, tuple[str, str]],
                          notes: list[str], *, hidden: bool = False) -> ParentResult:
        accepted, listeners, undecided = accept(route, ref, candidates, what,
                                                self.namespace_labels)
        attached = listeners
        if undecided:
            unknown = ", ".join(ls.listener.name for ls in undecided)
            why = self.namespace_labels(route.record.namespace)[1]
            if accepted.ok:
                notes.append(f"{route.ref} parentRefs[{ref.index}]: whether listener(s) "
                             f"{unknown} of {ref.parent} also admit it is undecided: {why}")
            elif accepted.reason == c.NOT_ALLOWED_BY_LISTENERS:
                accepted = c.unknown(f"whether listener(s) {unknown} of {ref.parent} admit "
                                     f"routes from namespace {route.record.namespace} is "
                                     f"undecided: {why}, and their allowedRoutes selector "
                                     "reads its labels")
        if accepted.ok and route.kind in (HTTP_ROUTE, GRPC_ROUTE) and ref.is_gateway:
            accepted, listeners = self._cross_kind(route, gateway, accepted, listeners)
        result = ParentResult(ref, gateway, {c.ACCEPTED: accepted, c.RESOLVED_REFS: resolved},
                              listeners, attached, undecided, hidden=hidden)
        if accepted.ok and dropped:
            if len(dropped) == len(route.rules):
                reason, message = next(iter(dropped.values()))
                result.conditions[c.ACCEPTED] = c.false(reason, f"no valid rule: {message}")
                result.listeners = []
            else:
                result.conditions[c.PARTIALLY_INVALID] = c.true(
                    c.UNSUPPORTED_VALUE, "Dropped Rule(s) " + "; ".join(
                        f"{i}: {message}" for i, (_, message) in sorted(dropped.items())))
        return result

    def _cross_kind(self, route: Route, gateway: gateways.GatewayState, accepted: c.Cond,
                    listeners: list[gateways.ListenerState],
                    ) -> tuple[c.Cond, list[gateways.ListenerState]]:
        """GRPCRoute.spec.hostnames: an HTTPRoute and a GRPCRoute on one listener with
        intersecting hostnames cannot both be accepted; the older route (then the first by
        namespace/name) keeps the listener, the other is not accepted there."""
        if not self.full.count(GRPC_ROUTE):
            return accepted, listeners  # the common case: no GRPCRoute anywhere
        other = GRPC_ROUTE if route.kind == HTTP_ROUTE else HTTP_ROUTE
        mine = seniority(route)
        # Rivals in namespaces the caller may not read hold listeners all the same.
        rivals = []
        for record in self.full.neighbors(gateway.record.key, Rel.ATTACHES_TO, incoming=True,
                                          kind=other):
            if is_gateway_api(record):
                rival = self.route(record)
                if seniority(rival) < mine:
                    rivals.append(rival)
        kept, lost = [], []
        for listener in listeners:
            winner = next((rival for rival in rivals
                           if self._attaches(rival, gateway, listener)
                           and hostnames_meet(listener, route, rival)), None)
            if winner is None:
                kept.append(listener)
            else:
                lost.append(f"{listener.listener.name} (taken by {winner.kind} {winner.ref})"
                            if self.shows(winner.record.key) else
                            f"{listener.listener.name} (taken by a {winner.kind} in a "
                            "namespace you may not read)")
        if not lost:
            return accepted, listeners
        if not kept:
            return c.false(c.NOT_ALLOWED_BY_LISTENERS,
                           "an older route of the other kind holds the same hostnames on "
                           f"listener(s) {', '.join(lost)}"), []
        names = ", ".join(ls.listener.name for ls in kept)
        return c.true(c.ACCEPTED, f"accepted by listener(s) {names}; not by "
                      f"{', '.join(lost)}"), kept

    def _attaches(self, route: Route, gateway: gateways.GatewayState,
                  listener: gateways.ListenerState) -> bool:
        for ref in route.parent_refs:
            if ref.is_gateway and (ref.namespace, ref.name) == (gateway.record.namespace,
                                                                gateway.record.name):
                accepted, listeners, _ = accept(route, ref, gateway.listeners,
                                                f"Gateway {ref.parent}", self.namespace_labels)
                if accepted.ok and listener in listeners:
                    return True
        return False


def _out_of_sight(result: ParentResult, ref: ParentRef) -> ParentResult:
    """``result`` for a parent in a namespace the caller may not read: its Accepted keeps
    status and reason, and says no more than the parentRef itself does."""
    accepted = result.conditions[c.ACCEPTED]
    result.conditions[c.ACCEPTED] = c.Cond(
        accepted.status, accepted.reason,
        f"{accepted.reason}, as decided on {ref.kind} {ref.parent}, which is in a namespace "
        "you may not read (its listeners are not shown)")
    result.hidden = True
    return result
