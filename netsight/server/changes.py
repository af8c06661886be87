"""``GET /api/graph/changes``: the graph's change ring as Server-Sent Events, for live views.

Each event is one change, ``id`` its graph generation, so a reconnecting ``EventSource``
resumes where it stopped (``Last-Event-ID``); ``?since=<generation>`` does the same for a
client that just fetched ``/api/graph`` at that generation. Without either, the stream starts
with the next change. Data: the change (``type`` ADDED/MODIFIED/DELETED, ``key``, ``kind``,
``namespace``, ``name``, changed ``fields``) and, unless deleted, the node's current links,
enough for a view to update in place.

When the ring no longer holds every change after the client's position (it fell more than
the ring's size behind), a ``reset`` event says so: refetch ``/api/graph``, then continue.
When the caller's access can no longer be checked (the API server cannot review), an
``error`` event (a ToolError) ends the stream rather than filtering what it may not decide.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from itertools import takewhile
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.graph.model.kinds import Rel, parse_key
from netsight.graph.store.live import Change, EventType, GraphStore, GraphView
from netsight.graph.store.scoped import ScopedView
from netsight.server.auth import view_for
from netsight.server.graph_api import BadFilter, error_response
from netsight.server.request_limits import MAX_DIGITS, whole_number

ENDPOINT = "/api/graph/changes"
KEEPALIVE = 15.0  # seconds: proxies drop connections that stay silent longer
COALESCE = 0.05  # seconds: batch a burst of changes into one write


class ChangeFeed:
    """Wakes every open stream when the store takes in a change; ends them on shutdown."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.closed = False
        self._event = asyncio.Event()
        store.listeners.append(self._on_change)

    def _on_change(self, _: Change) -> None:
        self._event.set()

    def next_wake(self) -> asyncio.Event:
        if self._event.is_set():
            self._event = asyncio.Event()
        return self._event

    def close(self) -> None:
        self.closed = True
        self._event.set()
        if self._on_change in self.store.listeners:
            self.store.listeners.remove(self._on_change)


def start_position(request: Request, store: GraphStore) -> int:
    text = request.headers.get("last-event-id") or request.query_params.get("since")
    if text is None:
        return store.generation
    generation = whole_number(text)
    if generation is None:
        raise BadFilter(ErrorCode.INVALID_INPUT, "since/Last-Event-ID: a graph generation "
                        f"(a whole number of at most {MAX_DIGITS} digits); got {text[:20]!r}")
    return generation


def changes_after(store: GraphStore, generation: int) -> list[Change]:
    """Like ``GraphView.changes_since``, but walks the ring from its newest end: a stream
    that keeps up reads a few entries per wake instead of the whole ring."""
    newer = list(takewhile(lambda c: c.generation > generation, reversed(store.changes)))
    newer.reverse()
    return newer


def lost_changes(store: GraphStore, generation: int) -> bool:
    if generation > store.generation:
        # A position from before a restart (EventSource resends its last id): this process
        # never had it, and waiting for the generation to catch up would stall the stream.
        return True
    ring = store.changes
    return (ring.maxlen is not None and len(ring) == ring.maxlen
            and ring[0].generation > generation + 1)


def sse(event: str, data: Any, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\n".encode() + b"data: " + orjson.dumps(data) + b"\n\n"


def describe(view: GraphView, change: Change) -> dict[str, Any]:
    oid = parse_key(change.key)
    data: dict[str, Any] = {
        "generation": change.generation, "type": change.type.value, "key": change.key,
        "kind": oid.kind, "namespace": oid.namespace or None, "name": oid.name,
        "at": change.at,
    }
    if change.fields:
        data["fields"] = list(change.fields)
    if change.type is not EventType.DELETED and view.exists(change.key):
        links: list[dict[str, str]] = []
        for rel in Rel:
            links.extend({"source": change.key, "target": r.key, "type": rel.value}
                         for r in view.neighbors(change.key, rel))
            links.extend({"source": r.key, "target": change.key, "type": rel.value}
                         for r in view.neighbors(change.key, rel, incoming=True))
        data["links"] = links
    return data


async def stream(feed: ChangeFeed, position: int,
                 views: Callable[[], Awaitable[GraphView]] | None = None
                 ) -> AsyncIterator[bytes]:
    """``views``: the graph as the caller may see it, asked again at every wake so that
    access granted or revoked applies to an open stream too."""
    store = feed.store
    view = store.view()
    yield b"retry: 2000\n\n"
    last_write = time.monotonic()
    while not feed.closed:
        wake = feed.next_wake()  # taken before reading: a change after the read wakes us
        if views is not None:
            try:
                view = await views()
            except ToolFailure as exc:  # the caller's access could not be checked: no more
                yield sse("error", exc.to_error(ENDPOINT).model_dump(mode="json"))
                return
        if lost_changes(store, position):
            position = store.generation
            yield sse("reset", {"generation": position,
                                "message": "changes were dropped; refetch /api/graph"})
            continue
        changes = changes_after(store, position)
        if changes:
            shown = changes if not isinstance(view, ScopedView) else \
                [c for c in changes if view.shows(c.key)]
            yield b"".join(sse("change", describe(view, c), c.generation) for c in shown)
            position = changes[-1].generation
            last_write = time.monotonic()
        try:
            await asyncio.wait_for(wake.wait(), max(0.0, KEEPALIVE - (time.monotonic()
                                                                      - last_write)))
        except TimeoutError:
            yield b": keepalive\n\n"
            last_write = time.monotonic()
            continue
        await asyncio.sleep(COALESCE)


async def changes_endpoint(request: Request, feed: ChangeFeed) -> Response:
    try:
        position = start_position(request, feed.store)
    except BadFilter as exc:
        return error_response(exc, ENDPOINT)
    await view_for(request, feed.store)  # an access check that cannot be made: 503, no stream
    return StreamingResponse(stream(feed, position, lambda: view_for(request, feed.store)),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
