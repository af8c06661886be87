"""recent_events: the Kubernetes Events netsight holds about networking objects, newest first.

Reads the event ring (graph/store/event_ring.py): Warnings about Services, slices, pods,
routes, policies and mesh objects (and the workloads behind pods), Normal events about all
but Pods; a recurring Event is one entry whose count grows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import ErrorCode, Page, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.core.quoting import quoted
from netsight.analyzers.policy.results import DetailAware
from netsight.analyzers.services.service_events import now_of
from netsight.graph.model.kept_events import KeptEvent
from netsight.graph.store.live import GraphView

NAME = "recent_events"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Kubernetes Events about networking objects (Services, pods, routes, "
    "policies), newest first. Use it to see what controllers reported.",
    reads=frozenset(),
    codes=(),
    events=True,
)


class Args(PagedArgs):
    object: ObjectName | None = Field(
        default=None, description="'Kind/namespace/name' or 'namespace/name': its events")
    namespace: Namespace | None = Field(default=None, description="Only this namespace")
    kind: str | None = Field(default=None, max_length=63,
                             description="Only objects of this kind, e.g. Pod")
    type: Literal["Warning", "Normal"] | None = Field(default=None,
                                                      description="Only this type")
    # From manifests (a snapshot), counted back from the newest event they hold.
    minutes: float = Field(default=60, gt=0, le=10080, description="How far back (≤ 7 days)")


class EventEntry(DetailAware):
    _detail_only = ("reporter",)

    at: datetime = Field(description="Last seen")
    type: str
    reason: str
    object: str = Field(description="Kind/namespace/name")
    count: int
    note: str
    reporter: str | None = Field(default=None, description="Detail mode only")


class Result(ToolResult):
    events: list[EventEntry]
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")
    page: Page


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    namespace, kind, name = args.namespace, args.kind, None
    if args.object is not None:
        target = args.object
        if target.address is not None or target.dns:
            raise ToolFailure(ErrorCode.INVALID_INPUT,
                              f"object: give 'Kind/namespace/name' or 'namespace/name', not "
                              f"{quoted(str(target))}", tool=NAME)
        if namespace is not None and target.namespace not in (None, namespace):
            raise ToolFailure(ErrorCode.INVALID_INPUT,
                              f"namespace: {namespace!r} differs from the namespace of object "
                              f"{quoted(str(target))}; give one of them", tool=NAME)
        if kind is not None and target.kind not in (None, kind):
            raise ToolFailure(ErrorCode.INVALID_INPUT,
                              f"kind: {kind!r} differs from the kind of object "
                              f"{quoted(str(target))}; give one of them", tool=NAME)
        namespace = target.namespace if target.namespace is not None else (
            "" if target.kind is not None else namespace)
        kind, name = target.kind or kind, target.name
    since = now_of(view) - args.minutes * 60
    selected = [e for e in _held(view, namespace, kind, name)
                if e.last >= since and (args.type is None or e.type == args.type)]
    selected.sort(key=lambda e: e.last, reverse=True)
    fingerprint = query_fingerprint(NAME, args.object, args.namespace, args.kind, args.type,
                                    args.minutes)
    chunk, page = paginate(selected, limit=args.limit, cursor=args.cursor,
                           fingerprint=fingerprint, tool=NAME)
    why = view.events_unknown()
    return Result(
        metadata=metadata(view, args.namespace),
        events=[_entry(e) for e in chunk],
        not_evaluated=[why] if why else [],
        page=page,
    )


def _held(view: GraphView, namespace: str | None, kind: str | None, name: str | None
          ) -> list[KeptEvent]:
    # Kind ids carry a group for kinds of two groups (Gateway.networking.istio.io): "Gateway"
    # names either.
    return [e for e in view.events(namespace, None, name)
            if kind is None or e.kind == kind or e.kind.partition(".")[0] == kind]


def _entry(event: KeptEvent) -> EventEntry:
    return EventEntry(at=datetime.fromtimestamp(event.last, UTC), type=event.type,
                      reason=event.reason, object=event.object_ref, count=event.count,
                      note=event.note, reporter=event.reporter or None)


# Off by default: the default tool list is at its budget; --toolsets events offers it.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.EVENTS)
