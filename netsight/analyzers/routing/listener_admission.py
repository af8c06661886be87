"""Which listeners of a route's parent admit it (ParentReference, v1), and why not.

For each parentRef: the listeners named by ``sectionName`` and ``port`` (both must match
when both are set; NoMatchingParent when none is left), then those whose ``allowedRoutes``
admit the route's kind and namespace (NotAllowedByListeners), then those whose hostname
intersects the route's (NoMatchingListenerHostname). A parent accepts the route when at
least one listener is left.

``allowedRoutes.namespaces.from: Selector`` is matched against the labels of the route's
Namespace object. When that object is not in the input (or Namespaces cannot be listed),
only ``kubernetes.io/metadata.name``, which the API server sets on every namespace, is
known: a selector reading any other label leaves the listener's answer undecided.
"""

from __future__ import annotations

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.gateway_objects import HOSTNAME_KINDS, ParentRef, Route
from netsight.analyzers.routing.gateways import ListenerState
from netsight.analyzers.routing.listenersets import Labels
from netsight.graph.model.selectors import LabelSelector

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def accept(route: Route, ref: ParentRef, listeners: list[ListenerState], what: str,
           labels: Labels) -> tuple[c.Cond, list[ListenerState], list[ListenerState]]:
    """(Accepted, the listeners that accept the route, the listeners whose answer is
    undecided because the route's namespace labels are unknown), among ``listeners``,
    those of the parent the parentRef names (``what``: "Gateway ns/name")."""
    candidates = [ls for ls in listeners
                  if (ref.section_name is None or ls.listener.name == ref.section_name)
                  and (ref.port is None or ls.listener.port == ref.port)]
    if not candidates:
        wanted = " and ".join(x for x in (
            f"name {ref.section_name}" if ref.section_name else "",
            f"port {ref.port}" if ref.port is not None else "") if x)
        return c.false(c.NO_MATCHING_PARENT,
                       f"{what} has no listener with {wanted}"), [], []
    verdicts = [(ls, allows(ls, route, labels)) for ls in candidates]
    allowed = [ls for ls, ok in verdicts if ok]
    undecided = [ls for ls, ok in verdicts if ok is None]
    if route.kind in HOSTNAME_KINDS and route.hostnames:
        undecided = [ls for ls in undecided
                     if hostnames.effective(ls.hostname, route.hostnames) != []]
    if not allowed:
        return c.false(c.NOT_ALLOWED_BY_LISTENERS,
                       f"no listener of {what} allows {route.kind} from namespace "
                       f"{route.record.namespace}"), [], undecided
    if route.kind in HOSTNAME_KINDS and route.hostnames:
        allowed = [ls for ls in allowed
                   if hostnames.effective(ls.hostname, route.hostnames) != []]
        if not allowed:
            return c.false(c.NO_MATCHING_LISTENER_HOSTNAME,
                           f"no listener hostname of {what} intersects "
                           f"{', '.join(route.hostnames)}"), [], undecided
    names = ", ".join(ls.listener.name for ls in allowed)
    return c.true(c.ACCEPTED, f"accepted by listener(s) {names}"), allowed, undecided


def allows(listener: ListenerState, route: Route, labels: Labels) -> bool | None:
    """Whether the listener's allowedRoutes admit the route; None: undecided."""
    if route.kind not in listener.supported_kinds:
        return False
    source = listener.listener.from_namespaces
    if source == "All":
        return True
    if source == "Same":
        # The namespace of the object declaring the listener (a ListenerSet's own).
        assert listener.owner is not None
        return route.record.namespace == listener.owner.namespace
    if source == "Selector" and listener.selector is not None:
        found, missing = labels(route.record.namespace)
        if missing is None or _reads_only_name(listener.selector):
            return listener.selector.matches(found)
        return None
    return False


def _reads_only_name(selector: LabelSelector) -> bool:
    """Whether the selector reads no label but the one every namespace carries."""
    keys = {key for key, _ in selector.match_labels} | {r.key for r in selector.requirements}
    return keys <= {NAMESPACE_NAME_LABEL}


def seniority(route: Route) -> tuple[str, str]:
    # Oldest first (an unknown creation time counts as newest), then namespace/name.
    return route.record.created or "9999", route.ref


def hostnames_meet(listener: ListenerState, a: Route, b: Route) -> bool:
    mine = hostnames.effective(listener.hostname, a.hostnames)
    theirs = hostnames.effective(listener.hostname, b.hostnames)
    if mine is None or theirs is None:
        return True  # one of them serves every hostname
    return any(hostnames.intersect(x, y) is not None for x in mine for y in theirs)
