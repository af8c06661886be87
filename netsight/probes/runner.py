"""Running probes: create the pod, wait for its answer, delete it — whatever happens.

A probe pod is created with netsight's own credentials (the caller's right to create one
there is checked before, by the server), its answer read from the pod's status as the
label-selected watch reports it, and the pod deleted on success, failure, timeout and
cancellation: the deletion runs shielded from the caller's task, so a client that goes away
mid-call (its tool call cancelled) still gets its pod removed. What a crash leaves behind
is removed by the sweep, at start and every ``sweep_interval``.

Where netsight watches only some namespaces (``namespaces``, NAMESPACE mode), its Roles
allow no cluster-wide list of pods: it then watches and sweeps the probe pods of each of
those namespaces and of the probe namespace apart, and runs probes only there.

Limits: at most ``max_concurrent`` probe pods exist at once (a pod counts until its
deletion is done); each caller may start ``rate_per_minute`` probes a minute (a token
bucket holding ``burst``); each probe has ``timeout`` seconds to answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

import orjson

from netsight.graph.ingest.api_responses import RETRYABLE, Response, Transport
from netsight.graph.ingest.discovery import PROBE_ID_LABEL
from netsight.probes import pod_answers, pods
from netsight.probes.message import DnsProbe, HttpProbe, ProbeResult, TcpProbe
from netsight.probes.pod_answers import Stuck
from netsight.probes.pod_watch import PodWatch
from netsight.probes.pods import Identity

log = logging.getLogger(__name__)

ProbeSpec = TcpProbe | HttpProbe | DnsProbe
SELECTOR = f"{pods.MANAGED_BY}={pods.MANAGER},{PROBE_ID_LABEL}"
SWEEP_INTERVAL = 60.0
SWEEP_GRACE = 60  # seconds past its activeDeadlineSeconds before a pod counts as orphaned
NAMESPACE_TTL = 600.0  # seconds a Namespace's uid is kept
ALL = ""  # the key of the one cluster-wide watch of probe pods


class Mode(StrEnum):
    POD = "pod"  # a pod of its own, carrying the source's identity
    EPHEMERAL = "ephemeral"  # an ephemeral container in the source pod


class Api(Transport, Protocol):
    """``KubeTransport``: GETs, and requests with a JSON body."""

    async def request(self, method: str, path: str, body: Any = None,
                      params: list[tuple[str, str]] | None = None, *,
                      content_type: str = "application/json") -> Response: ...


class ProbeError(Exception):
    """A probe that produced no answer; the server turns each kind into its error code."""


class LimitReached(ProbeError):
    """MAX_CONCURRENT_PROBES pods exist, or the caller's rate is spent."""


class TimedOut(ProbeError):
    """No answer within the probe's deadline."""


class NotRun(ProbeError):
    """The pod could not be created, or will not run the probe (image, admission)."""


class SourceGone(ProbeError):
    """The source pod named does not exist (any more)."""


@dataclass(frozen=True, slots=True)
class RunnerSettings:
    image: str
    namespace: str  # where probes without a source pod run
    max_concurrent: int = 5
    timeout: float = 30.0  # seconds a probe has, from its creation to its answer
    mode: Mode = Mode.POD
    rate_per_minute: float = 30.0
    burst: int = 10
    sweep_interval: float = SWEEP_INTERVAL
    # Only these namespaces' probe pods are watched (with the probe namespace); None: the
    # cluster's, in one watch.
    namespaces: tuple[str, ...] | None = None


@dataclass
class Observation:
    """What one probe found, and how."""

    result: ProbeResult
    pod: str  # "namespace/name" of the probe pod (or of the source, for ephemeral)
    container: str
    identity: str | None  # the pod whose identity it carried
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0  # creation to answer


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class _Waiter:
    probe_type: str
    container: str
    ephemeral: bool
    answer: asyncio.Future[ProbeResult | Stuck]
    phase: str = "Pending"


class ProbeRunner:
    def __init__(self, api: Api, settings: RunnerSettings) -> None:
        self.api, self.settings = api, settings
        # One watch of the probe pods, or, in NAMESPACE mode, one per namespace probes run in.
        self.watches = {namespace: PodWatch(api, path, [("labelSelector", SELECTOR)],
                                            self._seen)
                        for namespace, path in _watched_paths(settings)}
        self.active: set[str] = set()  # "namespace/name" of pods created and not yet deleted
        # Probes admitted and not yet done (their pod deleted): what MAX_CONCURRENT_PROBES
        # counts, taken before the first await so concurrent calls cannot all pass the check.
        self.slots: set[str] = set()
        self.created = self.deleted = self.sweeps = 0
        self._waiters: dict[str, _Waiter] = {}  # by pod key
        self._buckets: dict[str, _Bucket] = {}
        self._namespace_uids: dict[str, tuple[float, str]] = {}
        self._cleanups: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    # --- lifetime ------------------------------------------------------------------------

    @property
    def watch(self) -> PodWatch:
        """The one watch of every probe pod (not in NAMESPACE mode)."""
        return self.watches[ALL]

    async def start(self) -> None:
        for watch in self.watches.values():
            watch.start()
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="probes:sweep")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await asyncio.gather(*self._cleanups, return_exceptions=True)
        for watch in self.watches.values():
            await watch.stop()

    async def _sweep_forever(self) -> None:
        while True:
            try:
                swept = await self.sweep()
                self.sweeps += 1
                if swept:
                    log.info("swept %d orphaned probe pod(s)", swept)
            except RETRYABLE as exc:
                log.warning("probe sweep failed (%s); next in %gs", exc,
                            self.settings.sweep_interval)
            await asyncio.sleep(self.settings.sweep_interval)

    async def sweep(self, now: float | None = None) -> int:
        """Delete probe pods no probe of this process waits on and whose deadline is long
        past: left by a crash, or by a replica that went away. Younger ones may be another
        replica's, still running."""
        pods: list[dict[str, Any]] = []
        for _, path in _watched_paths(self.settings):
            response = await self.api.get(path, [("labelSelector", SELECTOR)])
            try:
                body = await response.read()
            finally:
                response.release()
            if response.status != 200:
                raise OSError(f"listing probe pods at {path}: HTTP {response.status}")
            pods.extend(orjson.loads(body).get("items") or ())
        now = time.time() if now is None else now
        count = 0
        for pod in pods:
            meta = pod.get("metadata") or {}
            key = f"{meta.get('namespace')}/{meta.get('name')}"
            if key in self.active or not _expired(pod, now):
                continue
            await self._delete(str(meta.get("namespace")), str(meta.get("name")))
            count += 1
        return count

    # --- one probe -----------------------------------------------------------------------

    def admit(self, caller: str, probe_id: str) -> None:
        """Take a slot for ``probe_id``, or raise LimitReached if ``caller`` may not start a
        probe now."""
        settings = self.settings
        if len(self.slots) >= settings.max_concurrent:
            raise LimitReached(f"{len(self.slots)} probes are running, the most "
                               f"MAX_CONCURRENT_PROBES ({settings.max_concurrent}) allows; "
                               "retry when one ends")
        now = time.monotonic()
        bucket = self._buckets.get(caller) or _Bucket(float(settings.burst), now)
        bucket.tokens = min(float(settings.burst),
                            bucket.tokens + (now - bucket.at) * settings.rate_per_minute / 60)
        bucket.at = now
        if bucket.tokens < 1:
            wait = (1 - bucket.tokens) * 60 / settings.rate_per_minute
            raise LimitReached(f"{caller or 'this caller'} started {settings.burst} probes "
                               f"recently, the most allowed at "
                               f"{settings.rate_per_minute:g} a minute; retry in "
                               f"{wait:.0f}s")
        bucket.tokens -= 1
        self._buckets[caller] = bucket
        if len(self._buckets) > 10_000:  # callers come and go: drop the oldest
            del self._buckets[next(iter(self._buckets))]
        self.slots.add(probe_id)

    async def run(self, spec: ProbeSpec, *, source: tuple[str, str] | None = None,
                  caller: str = "") -> Observation:
        """Run ``spec`` as ``source`` (namespace, pod) or, without one, from the probe
        namespace; its answer, or a ProbeError."""
        probe_id = secrets.token_hex(5)
        self.admit(caller, probe_id)
        if self.settings.mode is Mode.EPHEMERAL and source is not None:
            try:
                return await self._run_ephemeral(spec, source, probe_id)
            finally:
                self.slots.discard(probe_id)
        started = time.monotonic()
        notes: list[str] = []
        try:
            if source is None:
                identity = pods.anonymous(self.settings.namespace)
            else:
                pod = await self._source(*source)
                identity, notes = pods.identity_of(pod), pods.identity_notes(pod)
            watch = self._watch_of(identity.namespace)
            owner = await self._namespace_uid(identity.namespace)
        except BaseException:
            self.slots.discard(probe_id)  # no pod was asked for: nothing to delete
            raise
        body = pods.probe_pod(probe_id, identity, spec.model_dump(mode="json", by_alias=True),
                              image=self.settings.image, timeout=spec.timeout_seconds,
                              owner_uid=owner)
        name = body["metadata"]["name"]
        key = f"{identity.namespace}/{name}"
        waiter = _Waiter(spec.type, pods.CONTAINER, False,
                         asyncio.get_running_loop().create_future())
        self.active.add(key)
        self._waiters[key] = waiter
        created = False
        try:
            async with asyncio.timeout(self.settings.timeout):
                await watch.synced.wait()  # the watch sees the pod from its creation on
                created = await self._create(identity, body)
                answer = await waiter.answer
        except TimeoutError:
            if not watch.synced.is_set():
                why = watch.error or "no list yet"
                raise TimedOut(f"probe pods cannot be watched ({why}); no probe was run"
                               ) from None
            raise TimedOut(f"probe pod {key} gave no answer within {self.settings.timeout:g}s "
                           f"(last seen {waiter.phase}); the cluster may be slow to start "
                           "pods or pull the probe image") from None
        finally:
            self._waiters.pop(key, None)
            self._cleanup(identity.namespace, name, key, probe_id, created_hint=created)
        if isinstance(answer, Stuck):
            raise NotRun(f"probe pod {key} did not answer: {answer.reason}"
                         f"{': ' + answer.message if answer.message else ''}")
        return Observation(answer, key, pods.CONTAINER, identity.source, notes,
                           round(time.monotonic() - started, 3))

    def _watch_of(self, namespace: str) -> PodWatch:
        watch = self.watches.get(ALL) or self.watches.get(namespace)
        if watch is None:
            raise NotRun(f"namespace {namespace} is not watched: netsight watches only "
                         f"{', '.join(sorted(self.watches))} (NAMESPACE), so it could not "
                         "read a probe pod's answer there")
        return watch

    async def _create(self, identity: Identity, body: dict[str, Any]) -> bool:
        path = f"/api/v1/namespaces/{identity.namespace}/pods"
        response = await self.api.request("POST", path, body)
        try:
            raw = await response.read()
        finally:
            response.release()
        if response.status not in (200, 201):
            raise NotRun(f"the API server refused the probe pod in {identity.namespace}: "
                         f"HTTP {response.status} {_message(raw)}")
        self.created += 1
        return True

    def _cleanup(self, namespace: str, name: str, key: str, probe_id: str, *,
                 created_hint: bool) -> None:
        """Delete the pod in a task of its own, so a cancelled caller cannot stop it; the
        slot is free once it is done. Without ``created_hint`` the create may still have
        reached the server (cancelled mid-request): deleting by name covers that too."""
        async def delete() -> None:
            try:
                await self._delete(namespace, name)
            except Exception as exc:  # the sweep removes it later
                log.warning("could not delete probe pod %s (%s); the sweep will", key, exc)
            finally:
                self.active.discard(key)
                self.slots.discard(probe_id)

        task = asyncio.create_task(delete(), name=f"probes:delete:{key}")
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    async def settled(self) -> None:
        """Wait for the deletions under way (tests, shutdown)."""
        while self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)

    async def _delete(self, namespace: str, name: str) -> None:
        response = await self.api.request(
            "DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}",
            {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 1,
             "propagationPolicy": "Background"})
        try:
            raw = await response.read()
        finally:
            response.release()
        if response.status not in (200, 202, 404):  # 404: gone already
            raise OSError(f"HTTP {response.status} {_message(raw)}")
        self.deleted += response.status != 404

    def _seen(self, event: str, pod: Mapping[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        waiter = self._waiters.get(f"{meta.get('namespace')}/{meta.get('name')}")
        if waiter is None or waiter.answer.done():
            return
        waiter.phase = pod_answers.phase(pod)
        if event == "DELETED":
            waiter.answer.set_result(Stuck("Deleted", "the pod was deleted before it answered"))
            return
        answer = pod_answers.answer(pod, waiter.container, waiter.probe_type,
                                    ephemeral=waiter.ephemeral)
        if answer is not None:
            waiter.answer.set_result(answer)

    async def _source(self, namespace: str, name: str) -> dict[str, Any]:
        response = await self.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}", [])
        try:
            raw = await response.read()
        finally:
            response.release()
        if response.status == 404:
            raise SourceGone(f"pod {namespace}/{name} does not exist")
        if response.status != 200:
            raise NotRun(f"reading the source pod {namespace}/{name}: HTTP {response.status} "
                         f"{_message(raw)}")
        pod: dict[str, Any] = orjson.loads(raw)
        return pod

    async def _namespace_uid(self, namespace: str) -> str | None:
        kept = self._namespace_uids.get(namespace)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        response = await self.api.get(f"/api/v1/namespaces/{namespace}", [])
        try:
            raw = await response.read()
        finally:
            response.release()
        if response.status != 200:
            return None  # no controller reference then; the probe still runs
        uid = str((orjson.loads(raw).get("metadata") or {}).get("uid") or "") or None
        if uid is not None:
            self._namespace_uids[namespace] = (time.monotonic() + NAMESPACE_TTL, uid)
        return uid

    # --- ephemeral mode ------------------------------------------------------------------

    async def _run_ephemeral(self, spec: ProbeSpec, source: tuple[str, str], probe_id: str
                             ) -> Observation:
        """The probe as an ephemeral container of the source pod: exact identity (its
        network namespace, its mesh proxy), at the price of a container that stays in the
        pod's spec until the pod goes (ephemeral containers cannot be removed)."""
        namespace, name = source
        started = time.monotonic()
        container = pods.ephemeral_container(probe_id, spec.model_dump(mode="json",
                                                                        by_alias=True),
                                             image=self.settings.image)
        key = f"{namespace}/{name}"
        waiter = _Waiter(spec.type, container["name"], True,
                         asyncio.get_running_loop().create_future())
        watch = PodWatch(self.api, f"/api/v1/namespaces/{namespace}/pods",
                         [("fieldSelector", f"metadata.name={name}")],
                         lambda event, pod: self._seen_ephemeral(waiter, event, pod))
        watch.start()
        try:
            await self._source(namespace, name)
            await watch.synced.wait()
            response = await self.api.request(
                "PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers",
                {"spec": {"ephemeralContainers": [container]}},
                # strategic merge: the list is merged by name, other probes' containers kept
                content_type="application/strategic-merge-patch+json")
            try:
                raw = await response.read()
            finally:
                response.release()
            if response.status != 200:
                raise NotRun(f"the API server refused the ephemeral container in {key}: "
                             f"HTTP {response.status} {_message(raw)}")
            self.created += 1
            async with asyncio.timeout(self.settings.timeout):
                answer = await waiter.answer
        except TimeoutError:
            raise TimedOut(f"the ephemeral probe in {key} gave no answer within "
                           f"{self.settings.timeout:g}s") from None
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(watch.stop())
        if isinstance(answer, Stuck):
            raise NotRun(f"the ephemeral probe in {key} did not answer: {answer.reason}")
        return Observation(answer, key, container["name"], key,
                           seconds=round(time.monotonic() - started, 3))

    def _seen_ephemeral(self, waiter: _Waiter, event: str, pod: Mapping[str, Any]) -> None:
        if waiter.answer.done():
            return
        if event == "DELETED":
            waiter.answer.set_result(Stuck("Deleted", "the source pod was deleted"))
            return
        answer = pod_answers.answer(pod, waiter.container, waiter.probe_type, ephemeral=True)
        if answer is not None:
            waiter.answer.set_result(answer)


def _watched_paths(settings: RunnerSettings) -> list[tuple[str, str]]:
    """(namespace, pods path) of each watch of probe pods: the cluster's (ALL), or each
    namespace's in NAMESPACE mode."""
    if settings.namespaces is None:
        return [(ALL, "/api/v1/pods")]
    return [(namespace, f"/api/v1/namespaces/{namespace}/pods")
            for namespace in sorted({*settings.namespaces, settings.namespace})]


def _expired(pod: Mapping[str, Any], now: float) -> bool:
    meta = pod.get("metadata") or {}
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    try:
        created = datetime.strptime(str(meta.get("creationTimestamp")),
                                    "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return False
    limit = (deadline if isinstance(deadline, int) else pods.START_ALLOWANCE) + SWEEP_GRACE
    return now - created > limit


def _message(raw: bytes) -> str:
    try:
        status = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ""
    return str(status.get("message") or "")[:300] if isinstance(status, dict) else ""
