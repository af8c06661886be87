"""Mesh (GAMMA) parents: a route whose parentRef is a Service.

ParentReference (v1): a Service parent is Core in the Mesh profile for ClusterIP Services;
``sectionName`` names a Service port and ``port`` its number (both must match when both are
set). A route in the Service's namespace is a "producer" route; one in another namespace is
a "consumer" route, applied only to its own namespace's outbound traffic (ReferenceGrant does
not govern either). Which mesh implements it, and whether it writes status, is the mesh's.
A consumer route's Service may be in a namespace its reader may not see: it is judged all the
same, and what the Service is (its type, its ports) is left out of the message.
"""

from __future__ import annotations

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.gateway_objects import ParentRef, Route
from netsight.analyzers.routing.references import HIDDEN, Shows, shows_all
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import Record, ServiceRecord
from netsight.graph.store.live import GraphView


def accept(view: GraphView, route: Route, ref: ParentRef,
           shows: Shows = shows_all) -> tuple[c.Cond, bool]:
    """(Accepted as a conformant mesh would set it, whether the Service exists)."""
    key = make_key(Kind.SERVICE, ref.namespace, ref.name)
    accepted, found = _accept(view.get(key), route, ref)
    if not found or shows(key):
        return accepted, found
    return c.Cond(accepted.status, accepted.reason,
                  f"{accepted.reason}, as decided on Service {ref.parent}, which is "
                  f"{HIDDEN}"), found


def _accept(service: Record | None, route: Route, ref: ParentRef) -> tuple[c.Cond, bool]:
    if not isinstance(service, ServiceRecord):
        return c.unknown(f"Service {ref.parent} not found: no mesh sets status for this "
                         "parent"), False
    if service.type == "ExternalName" or service.headless:
        kind = "ExternalName" if service.type == "ExternalName" else "headless"
        return c.false(c.UNSUPPORTED_VALUE, f"Service {ref.parent} is {kind}; mesh routes "
                       "attach to ClusterIP Services"), True
    ports = [p for p in service.ports
             if (ref.section_name is None or p.name == ref.section_name)
             and (ref.port is None or p.port == ref.port)]
    if not ports:
        wanted = " and ".join(x for x in (
            f"name {ref.section_name}" if ref.section_name else "",
            f"port {ref.port}" if ref.port is not None else "") if x)
        return c.false(c.NO_MATCHING_PARENT, f"Service {ref.parent} has no port with "
                       f"{wanted}"), True
    role = "producer" if route.record.namespace == ref.namespace else \
        f"consumer (applies to traffic from namespace {route.record.namespace} only)"
    return c.true(c.ACCEPTED, f"{role} route for Service {ref.parent}"), True
