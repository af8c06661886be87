"""HTTP and gRPC routes by the hostnames they name: the routes that can take a request for
one host, without reading every route of every Gateway.

diff_routes entering at every Gateway that serves a host would otherwise read each
Gateway's routes (5k routes over 50 Gateways). The index maps each precise hostname and
each wildcard (``*.example.com``) to the routes naming it, plus the routes naming none
(they take any host their listener takes). It is built once per change of the route kinds
(``GraphView.derived``); under an :class:`~netsight.graph.overlay.OverlayView` the base's
index is adjusted by the overlay's delta, so a what-if answer costs what its delta costs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.objects import (
    GRPC_ROUTE,
    HTTP_ROUTE,
    is_gateway_api,
    raw_hostnames,
)
from netsight.graph.overlay import OverlayView
from netsight.graph.records import Record
from netsight.graph.store import GraphView

KINDS = (HTTP_ROUTE, GRPC_ROUTE)
_NAME = "routing.routes-by-hostname"


@dataclass
class HostIndex:
    named: dict[str, list[Record]] = field(default_factory=dict)  # hostname -> routes
    anyhost: list[Record] = field(default_factory=list)  # routes naming no hostname

    def add(self, record: Record) -> None:
        named = raw_hostnames(record)
        if not named:
            self.anyhost.append(record)
        for hostname in dict.fromkeys(named):
            self.named.setdefault(hostname, []).append(record)

    def lookup(self, host: str) -> Iterator[Record]:
        """Routes with a hostname covering ``host`` (a precise request host), or none."""
        yield from self.anyhost
        yield from self.named.get(host, ())
        # Gateway API wildcards cover one or more labels: *.b.c, *.c for a.b.c.
        rest = host
        while "." in rest:
            rest = rest.partition(".")[2]
            yield from self.named.get(f"*.{rest}", ())


def _build(view: GraphView) -> HostIndex:
    index = HostIndex()
    for kind in KINDS:
        for record in view.for_each(kind):
            if is_gateway_api(record):
                index.add(record)
    return index


def covers(record: Record, host: str) -> bool:
    named = raw_hostnames(record)
    return not named or any(hostnames.matches(h, host) for h in named)


def routes_for_host(view: GraphView, host: str) -> list[Record]:
    """HTTPRoutes and GRPCRoutes of ``view`` whose hostnames cover ``host`` or that name
    none, each once."""
    base, delta = (view.base, view.delta) if isinstance(view, OverlayView) else (view, {})
    index = base.derived(_NAME, KINDS, _build)
    found: dict[str, Record] = {}
    for record in index.lookup(host):  # each covers the host, as lookup() finds them
        if record.key not in delta:
            found.setdefault(record.key, record)
    for proposed in delta.values():
        if proposed is not None and proposed.kind in KINDS and is_gateway_api(proposed) \
                and covers(proposed, host):
            found[proposed.key] = proposed
    return list(found.values())
