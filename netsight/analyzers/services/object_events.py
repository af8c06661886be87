"""Recent Warning Events about a set of objects, one line each, for tools that show them
beside what they computed (check_gateway_status, check_route_resolution)."""

from __future__ import annotations

from collections.abc import Iterable

from netsight.analyzers.services.service_events import recent_warnings, since
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

SHOWN = 20  # lines; the rest is counted


def warning_lines(view: GraphView, records: Iterable[Record], after: float | None = None
                  ) -> list[str]:
    """The recent Warnings about ``records`` (seen after ``after``: ``since(view)``, which
    a caller asking about many objects computes once), most recent first."""
    objects = {(r.namespace, r.kind, r.name) for r in records}
    if not objects:
        return []
    namespaces = sorted({namespace for namespace, _, _ in objects})
    events = sorted(recent_warnings(view, namespaces, objects,
                                    since(view) if after is None else after),
                    key=lambda e: e.last, reverse=True)
    lines = [f"{e.kind.partition('.')[0]} {e.object_ref.partition('/')[2]}: {e.reason} "
             f"({e.count}x): {e.note}" for e in events[:SHOWN]]
    if len(events) > SHOWN:
        lines.append(f"... and {len(events) - SHOWN} more")
    return lines
