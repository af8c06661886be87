"""Chaos on the watch path: faults drawn at random from a seed, bounded in number and in time,
injected into a running simulator one after another while writes keep coming.

A :class:`ChaosPlan` lists the faults: a 410 on every open watch, bursts of 5xx or 429
answers, stalled streams, slow bodies, reset connections, and API server restarts on
storage restored to an older resourceVersion. :func:`run_chaos` plays a plan against a
:class:`SimServer` while :class:`Writes` creates, relabels and deletes Pods and Services, and
records when each fault was on, for a test to judge what the informers reported meanwhile.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from enum import StrEnum

from netsight.sim.apiserver import SimServer
from netsight.sim.state import ApiError, Checkpoint, Obj, SimState


class Fault(StrEnum):
    GONE = "gone"  # every open watch gets ERROR 410 and the event log is compacted
    ERRORS = "errors"  # the next requests, lists and watches alike, fail with 500/503/429
    STALL = "stall"  # watch streams send nothing, not even their end
    SLOW = "slow"  # bodies and watch writes come a piece at a time
    RESET = "reset"  # every open connection is aborted
    RESTART = "restart"  # the server goes down and comes back on an older storage


@dataclass(frozen=True)
class Step:
    """One fault: when it begins (seconds into the plan), how long it lasts, its details."""

    fault: Fault
    at: float
    lasts: float
    status: int = 0  # ERRORS: the status answered
    count: int = 0  # ERRORS: how many requests get it
    slow: float = 0.0  # SLOW: seconds between pieces


@dataclass(frozen=True)
class ChaosPlan:
    steps: tuple[Step, ...]

    @classmethod
    def draw(cls, seed: int, *, faults: int, slot: float, longest: float) -> ChaosPlan:
        """``faults`` faults, one per ``slot`` seconds at a random moment of it, each lasting
        up to ``longest`` seconds (stalls and restarts at least three quarters of that: long
        enough to be noticed); every kind of fault comes once before any comes twice."""
        rng = random.Random(seed)
        kinds: list[Fault] = []
        while len(kinds) < faults:
            kinds += rng.sample(list(Fault), len(Fault))
        steps = []
        for n, kind in enumerate(kinds[:faults]):
            shortest = {Fault.GONE: 0.0, Fault.RESET: 0.0, Fault.STALL: 0.75,
                        Fault.RESTART: 0.75}.get(kind, 0.5) * longest
            lasts = rng.uniform(shortest, longest) if shortest else 0.0
            at = n * slot + rng.uniform(0, slot - lasts)
            status = rng.choice((500, 503, 429)) if kind is Fault.ERRORS else 0
            steps.append(Step(kind, round(at, 3), round(lasts, 3), status,
                              rng.randint(1, 4) if kind is Fault.ERRORS else 0,
                              rng.choice((0.02, 0.05)) if kind is Fault.SLOW else 0.0))
        return cls(tuple(steps))


@dataclass
class Writes:
    """Pods and Services created, relabelled and deleted at random, at a steady rate, in
    namespace ``x``; tolerant of a storage that went back underneath (a restore)."""

    state: SimState
    seed: int = 0
    paused: bool = False  # a server that is down takes no writes
    written: int = 0
    _rng: random.Random = field(init=False)
    _names: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def step(self) -> None:
        rng, state = self._rng, self.state
        kind = "Service" if rng.random() < 0.2 else "Pod"
        rtype = state.registry.for_kind("v1", kind)
        assert rtype is not None
        names = sorted(key.partition("/")[2] for key in state.objects.get(("", kind), {})
                       if key.startswith("x/"))
        action = rng.random()
        try:
            if names and (action < 0.3 or len(names) > 40):
                state.delete(rtype, "x", rng.choice(names))
            elif names and action < 0.6:
                state.apply([_object(kind, rng.choice(names), rng)])
            else:
                self._names += 1
                state.apply([_object(kind, f"{kind.lower()}-{self.seed}-{self._names}", rng)])
        except ApiError:  # raced with a restore: the next write picks again
            return
        self.written += 1

    async def run(self, rate: float, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if not self.paused:
                self.step()
            await asyncio.sleep(1 / rate)


def _object(kind: str, name: str, rng: random.Random) -> Obj:
    app = rng.choice(("web", "db", "cache"))
    if kind == "Service":
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "x"},
                "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "x",
                         "labels": {"app": app, "track": rng.choice(("stable", "canary"))}},
            "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 8080}]}]},
            "status": {"podIP": f"10.2.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                       "phase": "Running"}}


@dataclass(frozen=True)
class Window:
    """When a fault was on, in the loop's time."""

    step: Step
    began: float
    ended: float


async def run_chaos(server: SimServer, plan: ChaosPlan, writes: Writes, *,
                    restore_lead: float = 2.0, quiet: float = 1.0) -> list[Window]:
    """Play ``plan`` against ``server``; each fault is undone when it ends, and the next
    begins ``quiet`` seconds later at the earliest (a restart may outlast its slot). A
    restart goes back to the storage as it was ``restore_lead`` seconds before it (at least):
    the informers have seen versions past it that the restarted server does not have."""
    loop = asyncio.get_running_loop()
    start = ended = loop.time()
    state = server.state
    # (when, checkpoint), oldest first: the newest at least restore_lead old, and younger.
    backups: list[tuple[float, Checkpoint]] = [(start, state.checkpoint())]
    windows = []
    for step in plan.steps:
        while (delay := max(start + step.at, ended + quiet) - loop.time()) > 0:
            await asyncio.sleep(min(delay, 0.5))
            now = loop.time()
            backups.append((now, state.checkpoint()))
            while len(backups) > 1 and backups[1][0] <= now - restore_lead:
                del backups[0]
        began = loop.time()
        await _inject(server, step, writes, backups[0][1])
        ended = loop.time()
        windows.append(Window(step, began, ended))
    return windows


async def _inject(server: SimServer, step: Step, writes: Writes, backup: Checkpoint) -> None:
    state, faults = server.state, server.state.faults
    match step.fault:
        case Fault.GONE:
            state.expire_all_watches()
        case Fault.RESET:
            server.reset_connections()
        case Fault.ERRORS:
            faults.fail(step.status, step.count)
            await asyncio.sleep(step.lasts)
            faults.failures.clear()
        case Fault.STALL:
            faults.stalled = True
            await asyncio.sleep(step.lasts)
            faults.stalled = False
        case Fault.SLOW:
            faults.slow_body = step.slow
            await asyncio.sleep(step.lasts)
            faults.slow_body = 0.0
        case Fault.RESTART:
            writes.paused = True
            try:
                await server.restart(backup, downtime=step.lasts)
            finally:
                writes.paused = False
