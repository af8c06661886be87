"""Watching ``events.k8s.io/v1`` Events into the event ring: list, watch from the list's
resourceVersion, re-list on 410 Gone; a forbidden or unserved source is said, and tried
again later (RBAC may be granted, the group enabled).

Field selectors take only ``=`` and ``!=`` joined by AND, so "these kinds" cannot be asked
for; what can be is asked for, and the rest is filtered at ingest (kept_events.relevant):
Warnings about anything, and Normal events about anything but Pods, whose Normal events
(Scheduled, Pulling, Pulled, Created, Started) are most of a cluster's.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson

from netsight.graph.ingest import api_responses
from netsight.graph.ingest.api_responses import Transport
from netsight.graph.ingest.backoff import Backoff
from netsight.graph.ingest.informer_settings import InformerSettings
from netsight.graph.ingest.watch_stream import stream_lines, watch_params
from netsight.graph.model.kept_events import KeptEvent, kept_event
from netsight.graph.store.event_ring import EventRing

log = logging.getLogger(__name__)

GROUP = "events.k8s.io"
GROUP_VERSION = f"/apis/{GROUP}/v1"
FIELD_SELECTORS = ("type=Warning", "type=Normal,regarding.kind!=Pod")


def events_path(namespace: str | None) -> str:
    return f"{GROUP_VERSION}/namespaces/{namespace}/events" if namespace else \
        f"{GROUP_VERSION}/events"


async def watch_events(transport: Transport, ring: EventRing, settings: InformerSettings,
                       namespace: str | None, field_selector: str) -> None:
    """Keep ``ring`` fed from one namespace's (or the cluster's) Events matching
    ``field_selector``, forever."""
    source = f"{namespace or ''}|{field_selector}"
    path = events_path(namespace)
    backoff = Backoff(settings.backoff_base, settings.backoff_cap)
    ring.unavailable[source] = "events: not listed yet"
    while True:
        try:
            version = await _list(transport, ring, path, field_selector, settings.page_size)
            ring.unavailable[source] = None
            while True:
                version = await _watch(transport, ring, path, field_selector, version,
                                       settings)
                backoff.reset()
        except (api_responses.Gone, api_responses.TooLargeResourceVersion):
            continue  # 410: the resourceVersion expired; re-list
        except api_responses.Forbidden as exc:
            log.warning("events %s: forbidden: %s", path, exc)
            ring.unavailable[source] = "events: listing events.k8s.io/v1 Events is forbidden"
            await asyncio.sleep(settings.forbidden_retry)
        except api_responses.NotServed:
            ring.unavailable[source] = "events: the API server does not serve events.k8s.io/v1"
            await asyncio.sleep(settings.forbidden_retry)
        except api_responses.RETRYABLE as exc:
            log.warning("events %s: %s", path, exc)
            ring.unavailable[source] = "events: their watch is down; recent ones may be missing"
            await asyncio.sleep(backoff.next_delay(getattr(exc, "retry_after", None)))


async def list_events_once(transport: Transport, ring: EventRing, settings: InformerSettings,
                           namespace: str | None) -> None:
    """The Events of one namespace (or the cluster) listed once into ``ring``, for a
    one-shot question (``netsight call``); what cannot be read is said, never raised."""
    for field_selector in FIELD_SELECTORS:
        source = f"{namespace or ''}|{field_selector}"
        try:
            await _list(transport, ring, events_path(namespace), field_selector,
                        settings.page_size)
            ring.unavailable[source] = None
        except api_responses.Forbidden:
            ring.unavailable[source] = "events: listing events.k8s.io/v1 Events is forbidden"
        except api_responses.NotServed:
            ring.unavailable[source] = "events: the API server does not serve events.k8s.io/v1"
        except (api_responses.Gone, api_responses.TooLargeResourceVersion,
                *api_responses.RETRYABLE) as exc:
            ring.unavailable[source] = f"events: they could not be listed ({exc})"


async def _list(transport: Transport, ring: EventRing, path: str, field_selector: str,
                page_size: int) -> str:
    """List every matching Event (page by page) into the ring, least recent first, so
    eviction keeps the most recent; returns the list's resourceVersion."""
    kept: list[KeptEvent] = []
    params = [("fieldSelector", field_selector), ("limit", str(page_size))]
    cont: str | None = None
    while True:
        page = await api_responses.get_json(
            transport, path, params + ([("continue", cont)] if cont else []))
        kept.extend(e for e in map(_kept_item, page.get("items") or ()) if e is not None)
        meta = page.get("metadata") or {}
        cont = meta.get("continue") or None
        if cont is None:
            break
    for event in sorted(kept, key=lambda e: e.last):
        ring.keep(event)
    return str(meta.get("resourceVersion") or "")


def _kept_item(item: Any) -> KeptEvent | None:
    return kept_event(item) if isinstance(item, dict) else None


async def _watch(transport: Transport, ring: EventRing, path: str, field_selector: str,
                 version: str, settings: InformerSettings) -> str:
    """Consume one watch stream; return the last resourceVersion when it ends."""
    params = [*watch_params(version, settings.watch_timeout),
              ("fieldSelector", field_selector)]
    async with asyncio.timeout(settings.stall_timeout):
        response = await transport.get(path, params)
    try:
        if response.status != 200:
            api_responses.check_response(response, await response.read())
        async for line in stream_lines(response, settings.inactivity_timeout,
                                       settings.stall_timeout):
            event = orjson.loads(line)
            api_responses.raise_on_error(event)
            obj = event.get("object") or {}
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            # DELETED: the API server's TTL ran out; the ring keeps its history.
            if event.get("type") in ("ADDED", "MODIFIED") and isinstance(obj, dict):
                ring.observe(obj)
    finally:
        response.release()
    return version
