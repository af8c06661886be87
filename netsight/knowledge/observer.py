"""Watching findings come and go: analyze_config's checks over the whole graph, in the
background, and the occurrences, sightings and resolutions that follows from comparing two
runs.

Informers pay nothing per event: the observer adds no listener to the store. It runs on the
event loop (the graph is only consistent there), between events, when the generation has
moved, at most once per ``interval`` and never more than ``budget`` of the loop's time: after
a run that took *t* seconds it waits at least *t / budget*. A run is bounded by
``time_limit`` (the analyzers' deadline); one that overran is thrown away whole — half a run
would look like every finding it did not reach disappearing.

An occurrence is one finding (signature) on one object (the finding's resource), from the run
that first saw it to the first run that no longer did; the records of its evidence objects
are held (records are immutable: a reference each) so that the fix can say what changed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from netsight.analyzers.checks import CHECKS
from netsight.analyzers.core import deadline
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.signatures import signature_of
from netsight.graph.model.kinds import make_key, parse_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphStore, GraphView
from netsight.knowledge.fix_changes import (
    bare,
    evidence_keys,
    evidence_namespaces,
    resolve,
)
from netsight.knowledge.write_queue import Appeared, Resolved, StillSeen, WriteQueue

log = logging.getLogger(__name__)

INTERVAL = 10.0  # seconds between runs at least
BUDGET = 0.05  # share of the loop's time the runs may take
TIME_LIMIT = 2.0  # seconds one run may take

# code -> the kinds its analyzer reads
READS: dict[str, frozenset[str]] = {
    code.code: check.metadata.reads for check in CHECKS for code in check.metadata.codes}


@dataclass
class Active:
    occurrence: str
    signature: str
    subject: str  # the bare key of the finding's resource
    namespace: str
    code: str
    evidence: frozenset[str]
    namespaces: frozenset[str]
    held: dict[str, Record | None] = field(default_factory=dict)
    generation: int = 0  # the last generation it was seen at


@dataclass
class Observer:
    store: GraphStore
    writes: WriteQueue
    interval: float = INTERVAL
    budget: float = BUDGET
    time_limit: float = TIME_LIMIT
    active: dict[tuple[str, str], Active] = field(default_factory=dict)
    # Open occurrences a previous process left (signature, object) -> id: adopted by the
    # first run where they still hold, closed as unobserved where they do not.
    inherited: dict[tuple[str, str], str] | None = None
    # Whether the graph is whole (every informer listed): a run over a half-listed graph
    # would open occurrences that the rest of the list closes.
    ready: Callable[[], bool] = lambda: True
    generation: int = -1  # the generation of the last run
    runs: int = 0
    overruns: int = 0
    last_duration: float = 0.0

    @property
    def cluster(self) -> str:
        return self.store.cluster_name

    async def run(self) -> None:
        """Forever: a run whenever the graph moved, paced by ``interval`` and ``budget``."""
        while True:
            if self.store.generation != self.generation and self.ready():
                self.observe()
            await asyncio.sleep(max(self.interval, self.last_duration / self.budget))

    def observe(self) -> bool:
        """One run, now; False when it overran ``time_limit`` and was dropped."""
        started = time.monotonic()
        generation = self.store.generation
        view = self.store.view()
        try:
            with deadline.within(self.time_limit):
                found = list(self._findings(view))
        except deadline.DeadlineExceeded:
            self.overruns += 1
            self.last_duration = time.monotonic() - started
            log.warning("knowledge base: a findings run passed %gs and was dropped",
                        self.time_limit)
            return False
        now = time.time()
        seen: dict[tuple[str, str], Finding] = {}
        for finding in found:
            if finding.resource is None or finding.signature is None:
                continue
            subject = make_key(finding.resource.kind, finding.resource.namespace or "",
                               finding.resource.name)
            seen.setdefault((finding.signature, subject), finding)
        for key, finding in seen.items():
            active = self.active.get(key)
            if active is None:
                active = self._appeared(key, finding, generation, now)
            active.generation = generation
            active.held = {k: view.get(k) for k in active.evidence}
        for key in [k for k in self.active if k not in seen]:
            self._resolved(self.active.pop(key), generation, now)
        if self.inherited:
            for (signature, obj), oid in self.inherited.items():
                self.writes.put(Resolved(uuid.uuid4().hex, oid, signature, self.cluster,
                                         parse_key(obj).namespace,
                                         "unobserved", "ended while netsight was not watching",
                                         "[]", now))
        self.inherited = None
        self.writes.put(StillSeen(self.cluster, tuple(sorted({s for s, _ in seen})), now))
        self.generation = generation
        self.runs += 1
        self.last_duration = time.monotonic() - started
        return True

    @staticmethod
    def _findings(view: GraphView) -> Iterator[Finding]:
        for check in deadline.checked(CHECKS):
            yield from check.run(view, None)

    def _appeared(self, key: tuple[str, str], finding: Finding, generation: int,
                  now: float) -> Active:
        signature, subject = key
        evidence = finding.evidence or []
        namespace = (finding.resource.namespace or "") if finding.resource else ""
        adopted = self.inherited.pop(key, None) if self.inherited else None
        active = self.active[key] = Active(
            occurrence=adopted or uuid.uuid4().hex, signature=signature, subject=subject,
            namespace=namespace, code=finding.code,
            evidence=evidence_keys(finding.resource, evidence),
            namespaces=evidence_namespaces(finding.resource, evidence))
        if adopted is None:
            self.writes.put(Appeared(
                active.occurrence, signature, finding.code, signature_of(finding).pattern,
                self.cluster, namespace, _stored_name(subject), now, generation))
        return active

    def _resolved(self, active: Active, generation: int, now: float) -> None:
        ring = self.store.changes
        complete = not ring or ring[0].generation <= active.generation + 1
        window = [c for c in ring if active.generation < c.generation <= generation]
        ending = resolve(active.subject, active.evidence, active.namespaces,
                         READS.get(active.code, frozenset()), active.held, window,
                         self.store.view(), complete=complete)
        self.writes.put(Resolved(uuid.uuid4().hex, active.occurrence, active.signature,
                                 self.cluster, active.namespace, ending.kind, ending.fix,
                                 json.dumps(list(ending.changes)), now))


def _stored_name(key: str) -> str:
    """What the store keeps of an object's name: a Secret's is left out."""
    return f"Secret/{key.split('/')[1]}/<secret>" if bare(key).startswith("Secret/") else key
