"""Chaos on the watch path: the informers run against the simulator while writes keep coming
and faults drawn from a seed hit it one after another (netsight/sim/chaos.py): 410s, 5xx and
429 bursts, stalls, slow bodies, reset connections, restarts on an older storage.

What must hold:

- within a bounded time after the last fault, the live graph equals a graph built from the
  server's objects (a fresh list), with nothing reported stale and ``/readyz`` 200;
- throughout, ``stale`` and ``/readyz`` tell the truth. A kind reported current never
  differs from the server for longer than the stall bound and some slack (events in
  flight are not a lie; a ghost held for seconds is); a kind is stale only while a fault
  is on or shortly after; every kind is stale through a stall or an outage longer than the
  bound; ``/readyz`` is 503 exactly while some kind is stale.

Time the process could not run counts against no one: a gap between samples longer than
``HELD``, and the time the loop thread sat runnable waiting for a core (Linux schedstat),
which on a loaded machine otherwise adds up to a lag the informers never caused.

The default run is short; ``pytest -m long`` runs a longer one with more faults.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.model.records import Record
from netsight.graph.store.live import EventType, GraphStore, Source
from netsight.server.app import readiness
from netsight.server.cluster import LiveGraph
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.chaos import ChaosPlan, Fault, Window, Writes, run_chaos
from tests.server.loop_latency import runqueue_wait
from tests.watching.conftest import FAST, eventually, namespace

pytestmark = pytest.mark.anyio

BOOKMARKS = 0.3  # the simulator's bookmark interval
# A watch that has sent a line owes a bookmark every 0.5 s (the simulator sends one every
# 0.3 s); one that has not may stay silent 1 s: the promised bounds are 0.75 s and 1 s.
SETTINGS = dataclasses.replace(
    FAST, watch_timeout=(3, 5), inactivity_timeout=1.0, bookmark_interval=0.5,
    backoff_base=0.05, backoff_cap=0.3)
STALL = max(1.5 * SETTINGS.bookmark_interval, SETTINGS.inactivity_timeout)
# The slack: a watch may begin just after a stall did, and a timer that fires late (the loop
# was busy) listens a while longer; and events take a moment on a loaded machine.
SLACK = 1.5
LAG = STALL + SLACK  # how long a kind reported current may differ from the server
RECOVERY = 3.0  # how long after a fault a kind may still be stale
SAMPLE = 0.1
# A gap this long between samples means the process was held (by itself, or by a loaded
# machine): nobody could act meanwhile, and time held counts against no one.
HELD = 0.5
LOOP_THREAD = threading.main_thread().native_id or os.getpid()


@dataclass
class Truth:
    """What the informers reported, sample by sample, against what the server held."""

    kinds: list[str]
    lies: list[str] = field(default_factory=list)
    # (kind, key) -> since when the graph has differed from the server there while the kind
    # was reported current.
    differing: dict[tuple[str, str], float] = field(default_factory=dict)
    stale: list[tuple[float, set[str]]] = field(default_factory=list)  # (when, stale kinds)
    holds: list[tuple[float, float]] = field(default_factory=list)  # (from, to)
    waited: float | None = None  # this process's loop thread's wait for a core, so far

    def held_since_last(self) -> float:
        """How long the loop thread sat runnable with no core since the last sample: on a
        loaded machine the informers (same loop) were held that long, as by a gap."""
        waited = runqueue_wait(os.getpid(), LOOP_THREAD)
        lost = 0.0 if self.waited is None else waited - self.waited
        self.waited = waited
        return lost

    def lie(self, at: float, text: str) -> None:
        if len(self.lies) < 20:
            self.lies.append(f"{at:.2f}: {text}")

    def observe(self, at: float, sim: SimServer, live: LiveGraph) -> None:
        lost = self.held_since_last()
        if self.stale and (gap := at - self.stale[-1][0]) > HELD:
            self.holds.append((self.stale[-1][0], at))
            self.differing = {k: since + gap for k, since in self.differing.items()}
        elif lost > 0:
            self.differing = {k: since + lost for k, since in self.differing.items()}
        stale = set(live.store.view().staleness())
        self.stale.append((at, stale))
        ready = readiness(live).status_code == 200
        if ready == bool(stale):
            self.lie(at, f"/readyz {'200' if ready else '503'} with stale kinds {sorted(stale)}")
        have = records_by_kind(live.store, self.kinds)
        want = records_by_kind(fresh_store(sim), self.kinds)
        for kind in self.kinds:
            for key in have[kind].keys() | want[kind].keys():
                if have[kind].get(key) == want[kind].get(key):
                    self.differing.pop((kind, key), None)
                    continue
                if kind in stale:  # said so: the clock starts when it claims to be current
                    self.differing[kind, key] = at
                    continue
                since = self.differing.setdefault((kind, key), at)
                if at - since > LAG:
                    self.lie(at, f"{kind} reported current while {key} has differed "
                                 f"for {at - since:.1f}s")

    def judge(self, windows: list[Window]) -> None:
        """Stale only while a fault is on, or shortly after; every kind stale through a
        stall or an outage longer than the stall bound. Not judged: the moments just after
        the process was held, when nobody could have caught up yet."""
        for at, stale in self.stale:
            if any(began < at <= ended + STALL + SLACK for began, ended in self.holds):
                continue
            on = [w for w in windows if w.began <= at <= w.ended + RECOVERY]
            if stale and not on:
                self.lie(at, f"{sorted(map(str, stale))} stale, no fault for {RECOVERY}s")
            for window in windows:
                down = window.step.fault in (Fault.STALL, Fault.RESTART)
                current = set(self.kinds) - stale
                if down and current and window.began + STALL + SLACK <= at <= window.ended:
                    self.lie(at, f"{sorted(map(str, current))} current during a "
                                 f"{window.step.fault}")


def records_by_kind(store: GraphStore, kinds: list[str]) -> dict[str, dict[str, Record]]:
    state = store.state
    return {kind: {key: state.record(key) for key in state.keys_of(kind)} for kind in kinds}


def fresh_store(sim: SimServer) -> GraphStore:
    fresh = GraphStore(source=Source.CLUSTER)
    for objects in sim.state.objects.values():
        for obj in objects.values():
            fresh.apply(EventType.ADDED, obj)
    return fresh


def graph_of(store: GraphStore) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    graph = store.state.graph
    return ({k: d["record"] for k, d in graph.nodes(data=True)},
            {(u, v): rels for u, v, rels in store.state.edges()})


async def play(tmp_path: Path, *, seed: int, faults: int, slot: float, longest: float
               ) -> tuple[Truth, list[Window]]:
    plan = ChaosPlan.draw(seed, faults=faults, slot=slot, longest=longest)
    async with SimServer(config=SimConfig(bookmark_interval=BOOKMARKS)) as sim:
        state = sim.state
        writes = Writes(state, seed=seed)
        state.apply([namespace("x")])
        for _ in range(30):
            writes.step()
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        store = GraphStore(source=Source.CLUSTER)
        watcher = ClusterWatcher(transport, store, SETTINGS)
        live = LiveGraph(store, watcher=watcher, started=True)
        stop = asyncio.Event()
        try:
            await watcher.start()
            assert await watcher.wait_synced(10)
            await asyncio.sleep(2 * BOOKMARKS)  # every watch has had a line
            truth = Truth(sorted(store.sync))
            loop = asyncio.get_running_loop()

            async def judge() -> None:
                while not stop.is_set():
                    truth.observe(loop.time(), sim, live)
                    await asyncio.sleep(SAMPLE)

            writing = asyncio.create_task(writes.run(40, stop))
            judging = asyncio.create_task(judge())
            windows = await run_chaos(sim, plan, writes)
            await asyncio.sleep(1.0)  # writes go on a while after the last fault
            stop.set()
            await asyncio.gather(writing, judging)
            # Converged: the graph a fresh list gives, nothing stale, ready.
            try:
                await eventually(lambda: graph_of(store) == graph_of(fresh_store(sim))
                                 and not store.view().staleness()
                                 and readiness(live).status_code == 200, timeout=10)
            except AssertionError:
                raise AssertionError(unconverged(store, fresh_store(sim), windows)) from None
            truth.judge(windows)
            return truth, windows
        finally:
            stop.set()
            await watcher.stop()
            await transport.close()


def unconverged(store: GraphStore, fresh: GraphStore, windows: list[Window]) -> str:
    have, want = graph_of(store), graph_of(fresh)
    nodes = sorted(k for k in have[0].keys() | want[0].keys()
                   if have[0].get(k) != want[0].get(k))
    edges = sorted(k for k in have[1].keys() | want[1].keys()
                   if have[1].get(k) != want[1].get(k))
    states = {kind: (s.state.value, s.last_error) for kind, s in store.sync.items()
              if s.state.value != "synced" or s.down_since is not None}
    faults = "; ".join(f"{w.step.fault} {w.began:.2f}-{w.ended:.2f}" for w in windows)
    return (f"not converged 10 s after the last fault ({faults}): nodes differing "
            f"{nodes[:10]}, edges {edges[:10]}, kinds not current {states}")


def report(truth: Truth, windows: list[Window]) -> str:
    faults = "; ".join(f"{w.step.fault} {w.began:.2f}-{w.ended:.2f}" for w in windows)
    holds = "; ".join(f"{began:.2f}-{ended:.2f}" for began, ended in truth.holds)
    return f"faults: {faults}\nheld: {holds}\nlies:\n" + "\n".join(truth.lies)


@pytest.mark.parametrize("seed", [1])
async def test_the_informers_stay_truthful_through_chaos(tmp_path: Path, seed: int) -> None:
    truth, windows = await play(tmp_path, seed=seed, faults=6, slot=4.2, longest=3.5)
    assert {w.step.fault for w in windows} == set(Fault)
    assert len(truth.stale) > 100
    assert not truth.lies, report(truth, windows)


@pytest.mark.long
@pytest.mark.parametrize("seed", range(3, 6))
async def test_the_informers_stay_truthful_through_long_chaos(tmp_path: Path, seed: int
                                                               ) -> None:
    truth, windows = await play(tmp_path, seed=seed, faults=30, slot=5.0, longest=4.0)
    assert not truth.lies, report(truth, windows)
