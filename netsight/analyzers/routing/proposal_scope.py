"""What a proposed object may name in namespaces the caller may not read.

A request is answered on the whole graph (a hidden route can take it on a shared Gateway),
so a proposed object that names a hidden object would be resolved against it: a route
whose parentRef names ``edge/public`` would attach to that Gateway if it exists and not
otherwise, and the answer would tell the caller which (and, with a port, on which port it
listens). A proposal may therefore name an object of such a namespace only where a live
object the caller may read already names it (their route on a shared Gateway of another
team), whose outcome they are shown anyway; any other such name is refused with the same
words whether or not the object exists.

Names are read as the engines follow them: the graph's references (a route's parentRefs
and backendRefs, a ListenerSet's Gateway, a policy's targetRefs), and an Istio
VirtualService's gateways, destination hosts and delegates, a DestinationRule's host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from netsight.analyzers.mesh.hosts import service_of, to_fqdn
from netsight.analyzers.mesh.istio_objects import (
    DESTINATION_RULE,
    ISTIO_GATEWAY,
    VIRTUAL_SERVICE,
    Unreadable,
    read_destination_rule,
    read_virtual_service,
)
from netsight.graph.model.kinds import Kind, Rel, make_key, parse_key
from netsight.graph.model.records import GenericRecord, Record
from netsight.graph.store.live import GraphView
from netsight.graph.store.record_edges import record_references

Shows = Callable[[str], bool]
_ISTIO_KINDS = (VIRTUAL_SERVICE, DESTINATION_RULE)


class ProposalScope:
    """What the proposals of one caller (who sees what ``shows`` allows) may name, over the
    live graph ``full``."""

    def __init__(self, full: GraphView, shows: Shows) -> None:
        self.full, self.shows = full, shows
        self._named: dict[str, bool] = {}  # hidden key -> named by a visible live object
        self._istio_named: set[str] | None = None

    def refused(self, record: Record) -> str | None:
        """Why ``record`` may not be proposed (an object of a hidden namespace it names that
        no visible live object names), or None."""
        for target in _names(record):
            if self.shows(target) or target == record.key or self._named_by_visible(target):
                continue
            kind, namespace, name = parse_key(target)
            return (f"names {kind.partition('.')[0]} {namespace}/{name}, in a namespace you "
                    "may not read; a proposal may name objects there only as your live "
                    "objects already do")
        return None

    def _named_by_visible(self, target: str) -> bool:
        """Whether a live object the caller may read names ``target``: the same answer
        whether ``target`` exists (the graph's edges into it) or not (its pending
        references)."""
        found = self._named.get(target)
        if found is None:
            full = self.full
            if full.exists(target):
                sources = (r.key for rel in Rel
                           for r in full.neighbors(target, rel, incoming=True))
            else:
                sources = (source for source, _ in full.pending_references(target))
            found = any(self.shows(source) for source in sources) \
                or target in self._istio_visible()
            self._named[target] = found
        return found

    def _istio_visible(self) -> set[str]:
        """What the Istio objects the caller may read name (read once, when first asked)."""
        if self._istio_named is None:
            self._istio_named = {
                target for kind in _ISTIO_KINDS for record in self.full.for_each(kind)
                if isinstance(record, GenericRecord) and self.shows(record.key)
                for target in _istio_names(record)}
        return self._istio_named


def _names(record: Record) -> Iterator[str]:
    """Keys of the objects ``record`` names."""
    for _, target, _ in record_references(record):
        yield target
    if isinstance(record, GenericRecord) and record.kind in _ISTIO_KINDS:
        yield from _istio_names(record)


def _istio_names(record: GenericRecord) -> Iterator[str]:
    namespace = record.namespace
    try:
        if record.kind == DESTINATION_RULE:
            yield _service_key(namespace, read_destination_rule(record).host)
            return
        service = read_virtual_service(record)
    except Unreadable:
        return  # left out of the routing (with a note), so it names nothing there
    for gateway in service.gateways:
        owner, sep, name = gateway.partition("/")
        if sep:
            yield make_key(ISTIO_GATEWAY, owner, name)
    for destination in (*service.destinations, *service.mirrors):
        yield _service_key(namespace, destination.host)
    spec = record.spec if isinstance(record.spec, dict) else {}
    for rule in spec.get("http") or ():  # a list: read_virtual_service read it
        delegate = rule.get("delegate") if isinstance(rule, dict) else None
        if isinstance(delegate, dict) and isinstance(delegate.get("name"), str):
            where = delegate.get("namespace")
            yield make_key(VIRTUAL_SERVICE, where if isinstance(where, str) and where
                           else namespace, delegate["name"])


def _service_key(namespace: str, host: str) -> str:
    owner, name = service_of(namespace, to_fqdn(namespace, host))
    return make_key(Kind.SERVICE, owner, name)
