"""Churn for the simulated cluster: the steady stream of writes a busy cluster's controllers make.

:func:`churn` applies mutations to a :class:`SimState` at a target rate, counted in writes
per second (every write is one watch event), for a duration or a number of writes:

- **pod restart**: the pod is deleted and its replacement created under a new name, with a
  new IP on a node with room; the EndpointSlice that listed the pod swaps the endpoint
  (3 writes);
- **scale** to a size within 3 replicas of the one churn began with (so the cluster keeps
  its size): pods created or deleted, the ReplicaSet's and the Deployment's replicas
  updated, the Service's slices updated (a slice added when every slice is full, an
  emptied slice deleted unless it is the Service's last);
- **label change**: a pod gains or loses ``quarantined=true`` (which the synthetic
  clusters' database and cache policies exclude), or switches ``track`` between
  ``canary`` and ``stable`` (1 write). A pod thus carries one of at most six label sets
  of its ReplicaSet, and its replacement (restart, scale-up) the template's: the number
  of distinct label sets among the live pods is bounded and settles where relabels and
  restarts balance (no counter, random value or rollout adds new ones);
- **NetworkPolicy edit**: a port toggled on the first rule, or the pod selector gains or
  loses ``quarantined DoesNotExist`` (1 write).

It works on any state whose pods are owned by ReplicaSets and carry ``spec.nodeName`` and
``status.podIP``, as :func:`netsight.sim.synthetic.generate` makes them. Over the same state
the same seed gives the same writes, timestamps apart. A :class:`ChurnLog` can record each
write's resourceVersion and wall time (``time.time()`` just before the write), to measure
how long an event takes to reach a watcher: the watcher sees the same resourceVersion.

:class:`netsight.sim.remote_churn.ChurnController` serves churn over HTTP on the simulated
API server, so a benchmark can churn the simulator's process from outside.
"""

from __future__ import annotations

import asyncio
import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from random import Random
from typing import Any

import orjson

from netsight.sim.inventory import App, Inventory
from netsight.sim.resources import ResourceType
from netsight.sim.state import ApiError, Obj, SimState, object_key

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # as the API server's generateName suffixes
_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
_NOT_QUARANTINED = {"key": "quarantined", "operator": "DoesNotExist"}
_TOGGLED_PORT = {"port": 8443, "protocol": "TCP"}


@dataclass(frozen=True)
class ChurnMix:
    """Relative weights of the mutations (not of the writes they make)."""

    restart: float = 0.45
    scale: float = 0.15
    label: float = 0.3
    policy: float = 0.1

    def __post_init__(self) -> None:
        weights = (self.restart, self.scale, self.label, self.policy)
        if any(w < 0 for w in weights) or not sum(weights):
            raise ValueError("mix weights must be non-negative and not all zero")

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ChurnMix:
        unknown = set(raw) - {"restart", "scale", "label", "policy"}
        if unknown:
            raise ValueError(f"unknown mutations in mix: {sorted(unknown)}")
        # Over HTTP a mix names the mutations it wants; the others are left out.
        weights = {"restart": 0.0, "scale": 0.0, "label": 0.0, "policy": 0.0}
        weights.update({k: float(v) for k, v in raw.items()})
        return cls(**weights)


@dataclass
class ChurnLog:
    """The resourceVersion and wall time (``time.time()``, just before it) of every write."""

    rvs: array[int] = field(default_factory=lambda: array("q"))
    times: array[float] = field(default_factory=lambda: array("d"))

    def add(self, rv: int, at: float) -> None:
        self.rvs.append(rv)
        self.times.append(at)

    def __len__(self) -> int:
        return len(self.rvs)


@dataclass
class ChurnStats:
    writes: int = 0
    mutations: Counter[str] = field(default_factory=Counter)
    writes_by_kind: Counter[str] = field(default_factory=Counter)
    target_rate: float = 0.0
    started: float = 0.0  # time.time()
    elapsed: float = 0.0  # seconds of churn so far
    max_behind: float = 0.0  # the most seconds the writes lagged their schedule
    running: bool = False
    error: str | None = None

    @property
    def rate(self) -> float:
        return self.writes / self.elapsed if self.elapsed > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "running": self.running, "writes": self.writes, "elapsed": round(self.elapsed, 3),
            "rate": round(self.rate, 1), "targetRate": self.target_rate,
            "maxBehind": round(self.max_behind, 4), "started": self.started,
            "mutations": dict(self.mutations), "writesByKind": dict(self.writes_by_kind),
            "error": self.error,
        }


def _copy(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value))


def _timestamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Timestamps:
    """RFC 3339 timestamps to the second; writes come in bursts within one second."""

    def __init__(self) -> None:
        self.second, self.text = -1, ""

    def __call__(self, at: float) -> str:
        second = int(at)
        if second != self.second:
            self.second, self.text = second, _timestamp(second)
        return self.text


class ChurnDriver:
    """Picks and applies mutations, one at a time; :func:`churn` paces them."""

    def __init__(self, state: SimState, *, seed: int = 0, mix: ChurnMix | None = None,
                 log: ChurnLog | None = None, max_endpoints_per_slice: int = 100,
                 scale_workloads: bool = True, clock: Callable[[], float] = time.time) -> None:
        self.state, self.rng, self.log, self.clock = state, Random(seed), log, clock
        self.mix = mix or ChurnMix()
        self.slice_size = max_endpoints_per_slice
        self.scale_workloads = scale_workloads
        self.stats = ChurnStats()
        self._timestamp = _Timestamps()
        self.pod_type = state.registry.require("v1", "Pod")
        self.slice_type = state.registry.require("discovery.k8s.io/v1", "EndpointSlice")
        self.policy_type = state.registry.require("networking.k8s.io/v1", "NetworkPolicy")
        self.rs_type = state.registry.require("apps/v1", "ReplicaSet")
        self.deployment_type = state.registry.require("apps/v1", "Deployment")
        self.inventory = inventory = Inventory.of(
            pods=self._store(self.pod_type), slices=self._store(self.slice_type),
            replica_sets=self._store(self.rs_type), policies=self._store(self.policy_type))
        self._mutations: list[tuple[str, Callable[[], None]]] = [
            ("restart", self.restart), ("scale", self.scale), ("label", self.relabel),
            ("policy", self.edit_policy),
        ]
        weights = (self.mix.restart, self.mix.scale, self.mix.label, self.mix.policy)
        if not inventory.apps:
            weights = (0.0, 0.0, 0.0, self.mix.policy)
        if not inventory.policies:
            weights = (*weights[:3], 0.0)
        if not inventory.scalable:
            weights = (weights[0], 0.0, *weights[2:])
        if not sum(weights):
            raise ValueError("nothing to churn: the state holds no ReplicaSet-owned pods "
                             "with a node and an IP, and no NetworkPolicies")
        self._weights = weights

    def _store(self, rtype: ResourceType) -> dict[str, Obj]:
        return self.state.objects.get((rtype.group, rtype.kind), {})

    # --- writes ----------------------------------------------------------------------------

    # Every object written is built here, its top level and metadata fresh dicts and its
    # other parts shared with stored objects (never changed in place): handed over to the
    # state (``owned``) without a copy.

    def _wrote(self, kind: str, at: float) -> None:
        stats = self.stats
        stats.writes += 1
        stats.writes_by_kind[kind] += 1
        if self.log is not None:
            self.log.add(self.state.rv, at)  # the write's resourceVersion

    def _create(self, rtype: ResourceType, obj: Obj, ns: str) -> Obj:
        at = self.clock()
        created = self.state.create(rtype, obj, ns, owned=True)
        self._wrote(rtype.kind, at)
        return created

    def _replace(self, rtype: ResourceType, obj: Obj, ns: str, name: str) -> Obj:
        at = self.clock()
        replaced = self.state.replace(rtype, obj, ns, name, owned=True)
        self._wrote(rtype.kind, at)
        return replaced

    def _delete(self, rtype: ResourceType, ns: str, name: str) -> Obj:
        at = self.clock()
        gone = self.state.delete(rtype, ns, name)
        self._wrote(rtype.kind, at)
        return gone

    def step(self) -> str:
        """Apply one mutation, chosen by the mix; returns its name."""
        name, mutate = self.rng.choices(self._mutations, weights=self._weights)[0]
        mutate()
        self.stats.mutations[name] += 1
        return name

    # --- pods --------------------------------------------------------------------------------

    def _pick_pod(self) -> tuple[App, str]:
        app = self.rng.choice(self.inventory.apps)
        return app, self.rng.choice(app.pods)

    def _uid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def _new_pod(self, app: App) -> tuple[Obj, Obj]:
        """A new pod of ``app`` (modelled on a live one) and its slice endpoint."""
        rng, ns = self.rng, app.namespace
        like = self.state.get(self.pod_type, ns, app.pods[0])
        meta = like["metadata"]
        prefix = meta.get("generateName") or f"{app.replica_set}-"
        name = prefix + "".join(rng.choices(_ALPHABET, k=5))
        while object_key(ns, name) in self.inventory.pod_node:
            name = prefix + "".join(rng.choices(_ALPHABET, k=5))
        node = self.inventory.node_with_room(rng)
        ip = node.allocate(rng)
        ready = rng.random() >= 0.03
        uid, now = self._uid(), self._timestamp(self.clock())
        state = "True" if ready else "False"
        status = like.get("status") or {}
        pod: Obj = {
            **like,
            "metadata": {
                **{k: v for k, v in meta.items() if k not in (
                    "resourceVersion", "deletionTimestamp")},
                "name": name, "uid": uid, "creationTimestamp": now, "labels": dict(app.labels),
            },
            "spec": {**(like.get("spec") or {}), "nodeName": node.name},
            "status": {
                **status,
                "conditions": [{**c, "status": state} if c.get("type") in (
                    "Ready", "ContainersReady") else c for c in status.get("conditions") or ()],
                "containerStatuses": [{**c, "ready": ready, "started": ready}
                                      for c in status.get("containerStatuses") or ()],
                "hostIP": node.host_ip, "hostIPs": [{"ip": node.host_ip}],
                "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
            },
        }
        key = object_key(ns, name)
        self.inventory.add_pod(app, key, node)
        endpoint = {
            "addresses": [ip],
            "conditions": {"ready": ready, "serving": ready, "terminating": False},
            "targetRef": {"kind": "Pod", "namespace": ns, "name": name, "uid": uid},
            "nodeName": node.name,
            **({"zone": node.zone} if node.zone else {}),
        }
        return pod, endpoint

    def _forget_pod(self, app: App, name: str) -> str | None:
        """Drop a deleted pod from the inventory; returns the slice that listed it."""
        pod = self.state.get(self.pod_type, app.namespace, name)
        return self.inventory.forget_pod(app, name, pod["status"]["podIP"])

    def _update_slice(self, ns: str, name: str, endpoints: list[Obj]) -> None:
        current = self.state.get(self.slice_type, ns, name)
        meta = current["metadata"]
        annotations = {**(meta.get("annotations") or {}),
                       _TRIGGER_TIME: self._timestamp(self.clock())}
        updated = {**current, "metadata": {**meta, "annotations": annotations},
                   "endpoints": endpoints}
        self._replace(self.slice_type, updated, ns, name)

    def restart(self) -> None:
        """Delete a pod; its replacement comes up under a new name and IP; the slice follows."""
        app, old = self._pick_pod()
        ns = app.namespace
        new_pod, endpoint = self._new_pod(app)
        slice_name = self._forget_pod(app, old)
        self._delete(self.pod_type, ns, old)
        self._create(self.pod_type, new_pod, ns)
        app.pods.append(new_pod["metadata"]["name"])
        if slice_name is not None:
            current = self.state.get(self.slice_type, ns, slice_name)
            endpoints = [endpoint if (e.get("targetRef") or {}).get("name") == old else e
                         for e in current.get("endpoints") or ()]
            self._update_slice(ns, slice_name, endpoints)
            self.inventory.pod_slice[object_key(ns, new_pod["metadata"]["name"])] = slice_name

    def scale(self) -> None:
        """Scale a Deployment up or down, with its ReplicaSet and slices.

        The new size is drawn evenly from up to 3 replicas either side of the size churn
        began with, so the cluster keeps its size over millions of writes.
        """
        rng = self.rng
        app = rng.choice(self.inventory.scalable)
        size = len(app.pods)
        low = max(1, app.initial - 3)
        high = max(2 * app.initial - low, low + 1)
        target = rng.choice([n for n in range(low, high + 1) if n != size])
        if target < size:
            self._scale_down(app, size - target)
        else:
            self._scale_up(app, target - size)
        if self.scale_workloads:
            self._set_replicas(self.rs_type, app.namespace, app.replica_set, len(app.pods))
            if app.deployment is not None:
                self._set_replicas(self.deployment_type, app.namespace, app.deployment,
                                   len(app.pods))

    def _scale_up(self, app: App, count: int) -> None:
        ns = app.namespace
        added: list[tuple[str, Obj]] = []
        for _ in range(count):
            pod, endpoint = self._new_pod(app)
            self._create(self.pod_type, pod, ns)
            app.pods.append(pod["metadata"]["name"])
            added.append((pod["metadata"]["name"], endpoint))
        if app.service is None or not app.slices:
            return
        # The endpointslice controller fills the slices with room first, then adds one.
        sizes = {name: len(self.state.get(self.slice_type, ns, name).get("endpoints") or ())
                 for name in app.slices}
        added_to: dict[str, list[Obj]] = {}
        new: list[str] = []
        for name, endpoint in added:
            target = next((s for s, size in sizes.items() if size < self.slice_size), None)
            if target is None:
                target = self._slice_name(app)
                new.append(target)
                sizes[target] = 0
            sizes[target] += 1
            added_to.setdefault(target, []).append(endpoint)
            self.inventory.pod_slice[object_key(ns, name)] = target
        for slice_name, endpoints in added_to.items():
            if slice_name in new:
                self._create_slice(app, slice_name, endpoints)
            else:
                current = self.state.get(self.slice_type, ns, slice_name)
                self._update_slice(ns, slice_name,
                                   [*(current.get("endpoints") or ()), *endpoints])

    def _slice_name(self, app: App) -> str:
        name = ""
        while not name or name in app.slices:
            name = f"{app.service}-{''.join(self.rng.choices(_ALPHABET, k=5))}"
        app.slices.append(name)
        return name

    def _create_slice(self, app: App, name: str, endpoints: list[Obj]) -> None:
        """A new slice for the app's Service, like its first one."""
        like = self.state.get(self.slice_type, app.namespace, app.slices[0])
        meta = {k: v for k, v in like["metadata"].items() if k != "resourceVersion"}
        now = self._timestamp(self.clock())
        meta.update(name=name, uid=self._uid(), creationTimestamp=now,
                    annotations={**(meta.get("annotations") or {}), _TRIGGER_TIME: now})
        self._create(self.slice_type, {**like, "metadata": meta, "endpoints": endpoints},
                     app.namespace)

    def _scale_down(self, app: App, count: int) -> None:
        ns = app.namespace
        removed: dict[str, set[str]] = {}
        for name in self.rng.sample(app.pods, count):
            slice_name = self._forget_pod(app, name)
            self._delete(self.pod_type, ns, name)
            if slice_name is not None:
                removed.setdefault(slice_name, set()).add(name)
        for slice_name, names in removed.items():
            current = self.state.get(self.slice_type, ns, slice_name)
            endpoints = [e for e in current.get("endpoints") or ()
                         if (e.get("targetRef") or {}).get("name") not in names]
            if not endpoints and len(app.slices) > 1:
                self._delete(self.slice_type, ns, slice_name)
                app.slices.remove(slice_name)
            else:
                self._update_slice(ns, slice_name, endpoints)

    def _set_replicas(self, rtype: ResourceType, ns: str, name: str, replicas: int) -> None:
        try:
            current = self.state.get(rtype, ns, name)
        except ApiError:
            return
        spec = {**(current.get("spec") or {}), "replicas": replicas}
        status = {**(current.get("status") or {})}
        for field_name in ("replicas", "readyReplicas", "availableReplicas",
                           "updatedReplicas", "fullyLabeledReplicas"):
            if field_name in status:
                status[field_name] = replicas
        meta = current["metadata"]
        updated = {**current, "spec": spec, "status": status,
                   "metadata": {**meta, "generation": int(meta.get("generation") or 1) + 1}}
        self._replace(rtype, updated, ns, name)

    # --- labels and policies -------------------------------------------------------------------

    def relabel(self) -> None:
        """Toggle ``quarantined=true``, or switch ``track`` between canary and stable."""
        app, name = self._pick_pod()
        current = self.state.get(self.pod_type, app.namespace, name)
        labels = dict(current["metadata"].get("labels") or {})
        if self.rng.random() < 0.5:
            if labels.pop("quarantined", None) is None:
                labels["quarantined"] = "true"
        else:
            labels["track"] = "stable" if labels.get("track") == "canary" else "canary"
        updated = {**current, "metadata": {**current["metadata"], "labels": labels}}
        self._replace(self.pod_type, updated, app.namespace, name)

    def edit_policy(self) -> None:
        """Toggle a port on the first rule, or ``quarantined DoesNotExist`` on the selector."""
        ns, name = self.rng.choice(self.inventory.policies)
        current = self.state.get(self.policy_type, ns, name)
        spec: Obj = _copy(current.get("spec") or {})
        rules = spec.get("ingress") or spec.get("egress")
        if rules and self.rng.random() < 0.5:
            ports = rules[0].setdefault("ports", [])
            if _TOGGLED_PORT in ports:
                ports.remove(_TOGGLED_PORT)
            else:
                ports.append(dict(_TOGGLED_PORT))
            if not ports:
                del rules[0]["ports"]
        else:
            selector = spec.setdefault("podSelector", {})
            expressions = selector.setdefault("matchExpressions", [])
            if _NOT_QUARANTINED in expressions:
                expressions.remove(_NOT_QUARANTINED)
            else:
                expressions.append(dict(_NOT_QUARANTINED))
            if not expressions:
                del selector["matchExpressions"]
        meta = current["metadata"]
        updated = {**current, "spec": spec,
                   "metadata": {**meta, "generation": int(meta.get("generation") or 1) + 1}}
        self._replace(self.policy_type, updated, ns, name)


async def churn(state: SimState, *, rate: float, duration: float | None = None,
                count: int | None = None, seed: int = 0, mix: ChurnMix | None = None,
                log: ChurnLog | None = None, stop: asyncio.Event | None = None,
                tick: float = 0.005, gap: float = 0.002,
                scale_workloads: bool = True) -> ChurnStats:
    """Mutate ``state`` at ``rate`` writes per second until ``duration`` seconds have passed,
    ``count`` writes are made (the last mutation may overshoot by a few), or ``stop`` is set.

    Writes go out in small bursts, at most ``tick`` seconds long, and the loop yields between
    bursts so watch streams can send. On schedule, the driver sleeps at least ``gap``
    seconds between bursts: the writes that fall due meanwhile go out together, and each
    watch stream sends them in one write (every write still logs its own time, just before
    it happens). If the event loop cannot keep up, the driver catches up as fast as it can;
    ``max_behind`` says by how much it fell behind its schedule.
    """
    driver = ChurnDriver(state, seed=seed, mix=mix, log=log, scale_workloads=scale_workloads)
    return await pace(driver, rate=rate, duration=duration, count=count, stop=stop, tick=tick,
                      gap=gap)


async def pace(driver: ChurnDriver, *, rate: float, duration: float | None = None,
               count: int | None = None, stop: asyncio.Event | None = None,
               tick: float = 0.005, gap: float = 0.002) -> ChurnStats:
    """Run ``driver`` at ``rate`` writes per second; see :func:`churn`."""
    if rate <= 0:
        raise ValueError("rate must be positive")
    if duration is None and count is None and stop is None:
        raise ValueError("give a duration, a count or a stop event")
    stats = driver.stats
    stats.target_rate, stats.running, stats.started = rate, True, time.time()
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        while not (stop is not None and stop.is_set()):
            now = loop.time()
            elapsed = now - start
            if (duration is not None and elapsed >= duration) or (
                    count is not None and stats.writes >= count):
                break
            due = rate * elapsed
            if count is not None:
                due = min(due, count)
            while stats.writes < due and loop.time() - now < tick:
                driver.step()
            stats.max_behind = max(stats.max_behind, (due - stats.writes) / rate)
            stats.elapsed = loop.time() - start
            if stats.writes < due:
                await asyncio.sleep(0)  # behind schedule: only let the streams send
            else:
                await asyncio.sleep(max(gap, min(tick, (stats.writes + 1) / rate
                                                 - (loop.time() - start))))
    finally:
        stats.elapsed = loop.time() - start
        stats.running = False
    return stats
