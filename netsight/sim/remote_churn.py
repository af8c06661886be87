"""Churn over HTTP: a benchmark churns a simulator running in another process.

``POST /sim/churn`` starts churn, ``GET`` reports, ``DELETE`` stops, ``GET /sim/churn/log``
returns the recorded log.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from netsight.sim.churn import ChurnDriver, ChurnLog, ChurnMix, ChurnStats, pace
from netsight.sim.state import ApiError, SimState


class ChurnController:
    """Churn over HTTP, for a simulator in another process than the benchmark.

    ``POST /sim/churn`` with ``{"rate": 5000, "duration": 60}`` (or ``"count"``; optional
    ``"seed"``, ``"mix": {"restart", "scale", "label", "policy"}``, ``"record": true`` to keep
    the log, ``"scaleWorkloads": false``) starts churn and answers 202; 409 while churn runs.
    ``GET /sim/churn`` reports progress; ``DELETE /sim/churn`` stops it and reports.
    ``GET /sim/churn/log`` returns ``{"rv": [...], "at": [...]}`` of the last recorded run.

    Serve it by adding :meth:`routes` to the simulator's app
    (``server.api.app.router.routes.extend(controller.routes())``).
    """

    def __init__(self, state: SimState) -> None:
        self.state = state
        self.stats: ChurnStats | None = None
        self.log: ChurnLog | None = None
        self.task: asyncio.Task[ChurnStats] | None = None  # the current or last run
        self._stop: asyncio.Event | None = None

    def routes(self) -> list[Route]:
        return [Route("/sim/churn", self._churn, methods=["GET", "POST", "DELETE"]),
                Route("/sim/churn/log", self._log, methods=["GET"])]

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def start(self, body: dict[str, Any]) -> ChurnStats:
        if self.running:
            raise ApiError(409, "Conflict", "churn is already running")
        try:
            rate = float(body["rate"])
            duration = None if body.get("duration") is None else float(body["duration"])
            count = None if body.get("count") is None else int(body["count"])
            mix = ChurnMix.from_dict(body["mix"]) if body.get("mix") else None
            seed = int(body.get("seed", 0))
            if rate <= 0:
                raise ValueError("rate must be positive")
            if duration is None and count is None:
                raise ValueError("give a duration or a count")
            log = ChurnLog() if body.get("record") else None
            driver = ChurnDriver(self.state, seed=seed, mix=mix, log=log,
                                 scale_workloads=bool(body.get("scaleWorkloads", True)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ApiError(400, "BadRequest", f"churn: {exc}") from None
        stats = driver.stats
        stats.running, stats.target_rate, stats.started = True, rate, time.time()
        self.stats, self.log, self._stop = stats, log, asyncio.Event()
        self.task = asyncio.create_task(pace(
            driver, rate=rate, duration=duration, count=count, stop=self._stop),
            name="sim:churn")
        self.task.add_done_callback(self._finished)
        return stats

    def _finished(self, task: asyncio.Task[ChurnStats]) -> None:
        if not task.cancelled() and task.exception() is not None and self.stats is not None:
            self.stats.error = repr(task.exception())

    async def stop(self) -> ChurnStats | None:
        if self._stop is not None:
            self._stop.set()
        if self.task is not None:
            with contextlib.suppress(Exception):
                await self.task
        return self.stats

    async def _churn(self, request: Request) -> Response:
        try:
            if request.method == "POST":
                raw = await request.body()
                try:
                    body = orjson.loads(raw or b"{}")
                except orjson.JSONDecodeError as exc:
                    raise ApiError(400, "BadRequest", f"churn: {exc}") from None
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "churn: the body must be an object")
                return _json(self.start(body).to_dict(), 202)
            if request.method == "DELETE":
                await self.stop()
            return _json(self.stats.to_dict() if self.stats else {"running": False})
        except ApiError as exc:
            return _json(exc.status(), exc.code)

    async def _log(self, request: Request) -> Response:
        log = self.log or ChurnLog()
        return _json({"rv": log.rvs.tolist(), "at": log.times.tolist()})


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")
