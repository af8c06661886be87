"""recent_changes: what changed around an object (or in a namespace) in the last minutes.

Reads the graph's bounded change ring. "Around" an object means the object itself and its
direct neighbours in the graph, now or just before each change: for a Service, the pods it
selects (or selected until their labels changed) and its EndpointSlices. The policies on
those pods are one hop further and are not included.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from pydantic import Field

from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import ErrorCode, Model, Page, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import services_at
from netsight.analyzers.core.object_names import FORMS, ObjectName
from netsight.analyzers.core.paging import decode_cursor, encode_cursor, query_fingerprint
from netsight.analyzers.core.quoting import quoted, shortened
from netsight.graph.model.kinds import Kind, make_key, parse_key
from netsight.graph.model.records import PodRecord
from netsight.graph.store.live import GraphView

NAME = "recent_changes"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Objects added, modified (which fields) or deleted, around one object or in a "
    "namespace, newest first. Use it to see what changed before a break.",
    reads=frozenset(),
    codes=(),
)


class Args(PagedArgs):
    around: ObjectName | None = Field(
        default=None,
        description="'Kind/namespace/name' (or 'Kind/name'): its changes and its "
        "neighbours'",
    )
    namespace: Namespace | None = Field(default=None, description="Only this namespace")
    minutes: float = Field(default=15, gt=0, le=1440, description="How far back (≤ 1 day)")


class ChangeEntry(Model):
    at: datetime
    generation: int
    type: str = Field(description="ADDED, MODIFIED or DELETED")
    resource: str = Field(description="Kind/namespace/name")
    fields: list[str] = Field(description="Record fields that changed (MODIFIED only)")


class Result(ToolResult):
    changes: list[ChangeEntry]
    oldest_held: datetime | None = Field(
        description="The oldest change the ring still holds: nothing before it is known"
    )
    page: Page


def around_key(view: GraphView, name: ObjectName) -> str:
    """The graph key of the object ``name`` stands for: an address is a pod's or a Service's
    ClusterIP; 'namespace/name' is the one kind of the graph that has it."""
    def fail(code: ErrorCode, message: str) -> ToolFailure:
        return ToolFailure(code, f"around: {message}", tool=NAME)

    if name.address is not None:
        holders = [p.key for p in view.for_each(Kind.POD)
                   if isinstance(p, PodRecord) and name.address in p.ips]
        holders += [s.key for s in services_at(view, name.address)]
        if len(holders) != 1:
            raise fail(ErrorCode.NOT_FOUND if not holders else ErrorCode.INVALID_INPUT,
                       f"{name.address} is the address of "
                       f"{', '.join(holders) or 'no pod or Service'}; give {FORMS}")
        return holders[0]
    if name.kind is not None:
        return make_key(name.kind, name.namespace or "", name.name)
    assert name.namespace is not None  # a kindless name is namespace/name
    found = [key for key in (make_key(k, name.namespace, name.name) for k in view.kinds())
             if view.exists(key)]
    if not found:
        raise fail(ErrorCode.NOT_FOUND, f"{quoted(str(name))} is not in the graph; give {FORMS}")
    if len(found) > 1:
        raise fail(ErrorCode.INVALID_INPUT,
                   f"{quoted(str(name))} is {', '.join(found)}: name one of them")
    return found[0]


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    keys: set[str] | None = None
    around = None if args.around is None else around_key(view, args.around)
    if around is not None:
        keys = {around} | set(view.adjacent_keys(around))
        known_once = any(c.key == around for c in view.changes_since(0))
        if not view.exists(around) and not known_once:
            raise ToolFailure(
                ErrorCode.NOT_FOUND,
                f"around: {shortened(around)} is not in the graph and has no recorded "
                "changes; kinds are spelled as in the API (Service, Pod, NetworkPolicy)",
                tool=NAME,
            )
    since = time.time() - args.minutes * 60
    held = list(view.changes_since(0))
    selected = [
        c for c in reversed(held)
        if c.at >= since
        and (keys is None or c.key in keys or around in c.related)
        and (args.namespace is None or parse_key(c.key).namespace == args.namespace)
    ]
    # The cursor holds a generation, not an offset: new changes arrive at the head of this
    # newest-first list while a caller pages, and an offset would repeat items.
    fingerprint = query_fingerprint(NAME, args.around, args.namespace, args.minutes)
    if args.cursor is not None:
        before = decode_cursor(args.cursor, fingerprint, tool=NAME)
        selected = [c for c in selected if c.generation < before]
    chunk = selected[:args.limit]
    remaining = len(selected) - len(chunk)
    page = Page(total=len(selected), returned=len(chunk), remaining=remaining,
                next_cursor=encode_cursor(chunk[-1].generation, fingerprint)
                if remaining else None)
    return Result(
        metadata=metadata(view, args.namespace),
        changes=[ChangeEntry(at=datetime.fromtimestamp(c.at, UTC), generation=c.generation,
                             type=c.type.value, resource=c.key, fields=list(c.fields))
                 for c in chunk],
        oldest_held=datetime.fromtimestamp(held[0].at, UTC) if held else None,
        page=page,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.CORE)
