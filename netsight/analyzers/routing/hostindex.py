"""HTTP and gRPC routes by the hostnames they name: the routes that can take a request for
one host, without reading every route of every Gateway.

diff_routes entering at every Gateway that serves a host would otherwise read each
Gateway's routes. The index maps each precise hostname and each wildcard
(``*.example.com``) to the routes naming it, plus the routes naming none (they take any
host their listener takes). It is built once, kept with the graph (``GraphView.derived``)
and moved forward by the route changes of the change ring; under an
:class:`~netsight.graph.store.overlay.OverlayView` the base's index is adjusted by the
overlay's delta, so a what-if answer costs what its delta costs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.gateway_objects import (
    GRPC_ROUTE,
    HTTP_ROUTE,
    is_gateway_api,
    raw_hostnames,
)
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView
from netsight.graph.store.overlay import OverlayView

KINDS = (HTTP_ROUTE, GRPC_ROUTE)
_NAME = "routing.routes-by-hostname"


@dataclass
class HostIndex:
    """Routes by hostname, kept current from the change ring (see :func:`current`)."""

    generation: int = -1  # the graph generation the index reflects
    named: dict[str, dict[str, Record]] = field(default_factory=dict)  # hostname -> routes
    anyhost: dict[str, Record] = field(default_factory=dict)  # routes naming no hostname
    hostnames_of: dict[str, list[str]] = field(default_factory=dict)  # route key -> names

    def add(self, record: Record) -> None:
        named = list(dict.fromkeys(raw_hostnames(record)))
        self.hostnames_of[record.key] = named
        if not named:
            self.anyhost[record.key] = record
        for hostname in named:
            self.named.setdefault(hostname, {})[record.key] = record

    def discard(self, key: str) -> None:
        named = self.hostnames_of.pop(key, None)
        if named is None:
            return
        self.anyhost.pop(key, None)
        for hostname in named:
            routes = self.named[hostname]
            del routes[key]
            if not routes:
                del self.named[hostname]

    def lookup(self, host: str) -> Iterator[Record]:
        """Routes with a hostname covering ``host`` (a precise request host), or none."""
        yield from self.anyhost.values()
        yield from self.named.get(host, {}).values()
        # Gateway API wildcards cover one or more labels: *.b.c, *.c for a.b.c.
        rest = host
        while "." in rest:
            rest = rest.partition(".")[2]
            yield from self.named.get(f"*.{rest}", {}).values()


def _empty(view: GraphView) -> HostIndex:
    return HostIndex()


def current(view: GraphView) -> HostIndex:
    """The index of ``view``, brought up to date: built once, then moved forward by the
    route changes the ring holds since (a route change costs one update, not a rebuild of
    every route); rebuilt only when the ring no longer reaches back to it."""
    # Kept by name alone (no kinds): the index follows the ring itself.
    index = view.derived(_NAME, (), _empty)
    if index.generation == view.generation:
        return index
    if index.generation < 0 or view.change_horizon().generation > index.generation:
        index.named.clear()
        index.anyhost.clear()
        index.hostnames_of.clear()
        for kind in KINDS:
            for record in view.for_each(kind):
                if is_gateway_api(record):
                    index.add(record)
    else:
        for change in view.changes_since(index.generation):
            if change.key.partition("/")[0] in KINDS:
                index.discard(change.key)
                now = view.get(change.key)
                if now is not None and is_gateway_api(now):
                    index.add(now)
    index.generation = view.generation
    return index


def covers(record: Record, host: str) -> bool:
    named = raw_hostnames(record)
    return not named or any(hostnames.matches(h, host) for h in named)


def routes_for_host(view: GraphView, host: str) -> list[Record]:
    """HTTPRoutes and GRPCRoutes of ``view`` whose hostnames cover ``host`` or that name
    none, each once, by key."""
    base, delta = (view.base, view.delta) if isinstance(view, OverlayView) else (view, {})
    index = current(base)
    found: dict[str, Record] = {}
    for record in index.lookup(host):  # each covers the host, as lookup() finds them
        if record.key not in delta:
            found.setdefault(record.key, record)
    for proposed in delta.values():
        if proposed is not None and proposed.kind in KINDS and is_gateway_api(proposed) \
                and covers(proposed, host):
            found[proposed.key] = proposed
    return [found[key] for key in sorted(found)]  # one order, whatever the index's
