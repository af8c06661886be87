"""A stand-in for the simulator's kubelet and data plane, for the probe runner's tests.

It plays the node's part over the simulated API server's HTTP API, as a kubelet does: it
watches the probe pods (by label), and writes each one's status through the ``status``
subresource — Running and never Ready, then the probe container terminated with a
termination message (a ProbeResult's JSON) and its exit code. What each probe answers is
the test's to decide (``answers``); ``None`` leaves the pod running unanswered.

The probe tests run on the simulator's own kubelet and data plane; this stands in only
where an answer is wanted that no data plane gives: a crashed probe whose log tail takes
the answer's place (``probing(..., stand_in=True)``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from netsight.probes.message import ANNOTATION, ProbeResult
from netsight.sim.access import SERVICE_ACCOUNT_TOKEN
from netsight.sim.apiserver import SimServer

Answer = Callable[[dict[str, Any], dict[str, Any]], ProbeResult | None]  # (spec, pod)
SELECTOR = "netsight.io/probe-id"


def connected(spec: dict[str, Any], pod: dict[str, Any]) -> ProbeResult:
    return ProbeResult(type=spec["type"], outcome="connected", latency_ms=1.5,
                       peer=f"{spec.get('host')}:{spec.get('port')}")


@dataclass
class StandInKubelet:
    sim: SimServer
    answers: Answer = connected
    # Also run ephemeral containers added to any pod (--probe-mode ephemeral): this watches
    # every pod then, not only the probe pods.
    ephemeral: bool = False
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)  # pods as first created
    statuses: list[tuple[str, str]] = field(default_factory=list)  # (pod, phase) written
    ran: set[tuple[str, str]] = field(default_factory=set)  # (pod, ephemeral container)
    _task: asyncio.Task[None] | None = None
    _running: set[asyncio.Task[None]] = field(default_factory=set)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[StandInKubelet]:
        headers = {"Authorization": f"Bearer {SERVICE_ACCOUNT_TOKEN}"}
        async with aiohttp.ClientSession(self.sim.url, headers=headers) as http:
            tasks = [asyncio.create_task(self._watch(http))]
            if self.ephemeral:
                tasks.append(asyncio.create_task(self._watch_ephemeral(http)))
            try:
                yield self
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _watch(self, http: aiohttp.ClientSession) -> None:
        params = {"watch": "1", "labelSelector": SELECTOR}
        async with http.get("/api/v1/pods", params=params,
                            timeout=aiohttp.ClientTimeout(total=None)) as response:
            async for line in response.content:
                event = orjson.loads(line)
                if event.get("type") == "ADDED":
                    pod = event["object"]
                    self.seen[pod["metadata"]["name"]] = pod
                    task = asyncio.create_task(self._run(http, pod))
                    self._running.add(task)
                    task.add_done_callback(self._running.discard)

    async def _watch_ephemeral(self, http: aiohttp.ClientSession) -> None:
        async with http.get("/api/v1/pods", params={"watch": "1"},
                            timeout=aiohttp.ClientTimeout(total=None)) as response:
            async for line in response.content:
                event = orjson.loads(line)
                pod = event.get("object") or {}
                meta = pod.get("metadata") or {}
                for container in (pod.get("spec") or {}).get("ephemeralContainers") or ():
                    key = (meta["name"], container["name"])
                    if event.get("type") != "DELETED" and key not in self.ran:
                        self.ran.add(key)
                        task = asyncio.create_task(self._run_ephemeral(http, pod, container))
                        self._running.add(task)
                        task.add_done_callback(self._running.discard)

    async def _run_ephemeral(self, http: aiohttp.ClientSession, pod: dict[str, Any],
                             container: dict[str, Any]) -> None:
        meta = pod["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status"
        spec = next(orjson.loads(e["value"]) for e in container["env"]
                    if e["name"] == "NETSIGHT_PROBE")
        result = self.answers(spec, pod)
        if result is None:
            return
        terminated = {"exitCode": result.exit_code(), "reason": "Completed",
                      "message": result.model_dump_json(by_alias=True, exclude_none=True)}
        statuses = [{"name": container["name"], "state": {"terminated": terminated}}]
        await self._patch(http, path, {"phase": "Running",
                                       "ephemeralContainerStatuses": statuses}, meta["name"])

    async def _run(self, http: aiohttp.ClientSession, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status"
        container = pod["spec"]["containers"][0]["name"]
        not_ready = [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]
        running = {"phase": "Running", "podIP": "10.244.9.9", "conditions": not_ready,
                   "containerStatuses": [{"name": container, "ready": False,
                                          "state": {"running": {}}}]}
        if not await self._patch(http, path, running, meta["name"]):
            return
        annotation = (meta.get("annotations") or {}).get(ANNOTATION)
        if annotation is None:
            return  # no probe to run: the container runs on (an orphan, say)
        result = self.answers(orjson.loads(annotation), pod)
        if result is None:
            return  # the probe never answers: the runner's deadline decides
        terminated = {"exitCode": result.exit_code(), "reason": "Completed",
                      "message": result.model_dump_json(by_alias=True, exclude_none=True)}
        done = {"phase": "Succeeded" if result.exit_code() == 0 else "Failed",
                "conditions": not_ready,
                "containerStatuses": [{"name": container, "ready": False,
                                       "state": {"terminated": terminated}}]}
        await self._patch(http, path, done, meta["name"])

    async def _patch(self, http: aiohttp.ClientSession, path: str, status: dict[str, Any],
                     name: str) -> bool:
        async with http.patch(path, data=orjson.dumps({"status": status}),
                              headers={"Content-Type": "application/merge-patch+json"}
                              ) as response:
            if response.status == 404:
                return False  # deleted meanwhile
            response.raise_for_status()
        self.statuses.append((name, status["phase"]))
        return True
