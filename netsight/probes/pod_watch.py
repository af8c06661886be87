"""One watch of the probe pods: list, then watch from the list's resourceVersion, re-list on
410 Gone, reconnect with backoff on anything else. Every version of every pod it sees is
handed to ``on_pod``; the runner matches them to the probes waiting for an answer.

One label-selected watch serves every probe at once, so a hundred concurrent probes cost
the API server one watch, not a hundred."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from netsight.graph.ingest.api_responses import (
    RETRYABLE,
    Forbidden,
    Gone,
    TooLargeResourceVersion,
    Transport,
    check_response,
    get_json,
    raise_on_error,
)
from netsight.graph.ingest.backoff import Backoff
from netsight.graph.ingest.watch_stream import stream_lines, watch_params

log = logging.getLogger(__name__)

OnPod = Callable[[str, Mapping[str, Any]], None]  # (event type, pod)
WATCH_SECONDS = (240, 360)  # timeoutSeconds the server ends a watch after, drawn per watch
INACTIVITY = 420.0  # seconds of silence before a watch without a line is taken for dead
STALL = 90.0  # ... and once it has sent a line, after which the server owes bookmarks
FORBIDDEN_RETRY = 30.0


class PodWatch:
    """Pods at ``path`` (``/api/v1/pods``, or one namespace's) matching ``params``
    (a label or field selector)."""

    def __init__(self, transport: Transport, path: str, params: list[tuple[str, str]],
                 on_pod: OnPod) -> None:
        self.transport, self.path, self.params, self.on_pod = transport, path, params, on_pod
        self.synced = asyncio.Event()  # set once a list has been handed over
        self.error: str | None = None  # the last failure, while retrying
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"probe-watch:{self.path}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def run(self) -> None:
        backoff = Backoff(base=0.2, cap=10.0)
        version: str | None = None
        while True:
            try:
                if version is None:
                    version = await self.list()
                    self.synced.set()
                version = await self.watch(version)
                backoff.reset()
            except (Gone, TooLargeResourceVersion):
                version = None  # 410 Gone: resourceVersion expired; re-list
            except Forbidden as exc:
                self.error = f"forbidden: {exc}"
                log.warning("probe pods cannot be watched (%s); retrying", exc)
                await asyncio.sleep(FORBIDDEN_RETRY)
            except RETRYABLE as exc:
                self.error = f"{type(exc).__name__}: {exc}"
                log.info("probe pod watch ended (%s); resuming", self.error)
                await asyncio.sleep(backoff.next_delay(getattr(exc, "retry_after", None)))

    async def list(self) -> str:
        data = await get_json(self.transport, self.path, self.params)
        for pod in data.get("items") or ():
            self.on_pod("ADDED", pod)
        self.error = None
        return str((data.get("metadata") or {}).get("resourceVersion") or "")

    async def watch(self, version: str) -> str:
        params = [*watch_params(version, WATCH_SECONDS), *self.params]
        response = await self.transport.get(self.path, params)
        try:
            if response.status != 200:
                check_response(response, await response.read())
            async for line in stream_lines(response, INACTIVITY, STALL):
                event = orjson.loads(line)
                raise_on_error(event)
                pod = event.get("object") or {}
                version = str((pod.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    self.on_pod(str(event["type"]), pod)
        finally:
            response.release()
        return version
