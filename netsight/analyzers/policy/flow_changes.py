"""The flows a proposal gains and loses (diff_reachability), as np-guard's ``diff`` reports
connectivity differences between two sets of manifests (github.com/np-guard/netpol-analyzer,
``pkg/netpol/diff``): per source and destination, what was allowed and what would be.

Both sides are answered by the same engine, once over the live view and once over the
overlay with the proposal applied. Pods are grouped as who_can_reach groups its peers
(namespace, labels and every per-pod fact a verdict can depend on: ``peer_groups``), with
the CIDRs of both sides' policies, so one evaluation per pair of groups stands for every pod
pair of them. The pairs asked about are those with an end in the scope's namespaces; they
are numbered, and a page evaluates a bounded run of them from its cursor.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from netsight.analyzers.core import deadline
from netsight.analyzers.core.proposals import Proposal
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.peer_groups import Group, cluster_endpoints, group
from netsight.analyzers.policy.proposed_kinds import deciders
from netsight.analyzers.policy.reach import policy_blocks
from netsight.analyzers.policy.verdict import Verdict

ADDED, REMOVED, CHANGED = "added", "removed", "changed"  # np-guard's diff-type words


@dataclass(frozen=True, slots=True)
class FlowChange:
    source: Group
    destination: Group
    port: int
    protocol: str
    before: Verdict
    after: Verdict
    by: list[str]  # the proposed objects that decided it

    @property
    def kind(self) -> str:
        if self.after.allowed is True:
            return ADDED
        return REMOVED if self.before.allowed is True else CHANGED

    def described(self) -> str:
        return (f"{self.source.rep.name} -> {self.destination.rep.name} "
                f"{self.port}/{self.protocol}: {self.kind}")

    @property
    def pairs(self) -> int:
        """Pod pairs this flow stands for (a group to itself: each pod to the others)."""
        n, m = len(self.source.members), len(self.destination.members)
        return n * (n - 1) if self.source is self.destination else n * m


@dataclass
class Scan:
    changes: list[FlowChange]
    total: int  # flows (group pairs x ports x protocols) in the scope
    scanned_to: int  # the index the next page starts at (== total: done)
    groups: int
    reasons: dict[str, None]


class FlowSpace:
    """The flows of a scope, numbered: sources in scope to every group, then groups out of
    scope to destinations in scope; per pair, every port then protocol."""

    def __init__(self, live: PolicyEngine, after: PolicyEngine,
                 namespaces: set[str] | None, ports: list[int], protocols: list[str]) -> None:
        blocks = tuple(dict.fromkeys((*policy_blocks(live), *policy_blocks(after),
                                      *live.calico_blocks(), *after.calico_blocks())))
        mesh = live.istio.anywhere() or after.istio.anywhere()
        self.groups = group(cluster_endpoints(live.view), blocks, True, mesh)
        self.inside = [g for g in self.groups if namespaces is None or g.namespace in namespaces]
        self.outside = [] if namespaces is None else \
            [g for g in self.groups if g.namespace not in namespaces]
        self.per_pair = [(port, protocol) for port in ports for protocol in protocols]
        self.first = len(self.inside) * len(self.groups)  # pairs with the source inside
        self.pairs = self.first + len(self.outside) * len(self.inside)
        self.total = self.pairs * len(self.per_pair)

    def pair(self, index: int) -> tuple[Group, Group]:
        if index < self.first:
            i, j = divmod(index, len(self.groups))
            return self.inside[i], self.groups[j]
        i, j = divmod(index - self.first, len(self.inside))
        return self.outside[i], self.inside[j]

    def flows(self, start: int) -> Iterator[tuple[int, Group, Group, int, str]]:
        per = len(self.per_pair)
        for index in range(start, self.total):
            pair, within = divmod(index, per)
            source, destination = self.pair(pair)
            port, protocol = self.per_pair[within]
            yield index, source, destination, port, protocol


def scan(live: PolicyEngine, after: PolicyEngine, proposal: Proposal, space: FlowSpace,
         start: int, limit: int, budget: int) -> Scan:
    """The changed flows from index ``start`` on: at most ``limit`` of them, after at most
    ``budget`` flows evaluated."""
    found: list[FlowChange] = []
    reasons: dict[str, None] = {}
    at = start  # the first flow not evaluated
    for index, source, destination, port, protocol in space.flows(start):
        if len(found) >= limit or index - start >= budget:
            break
        deadline.check(lambda: [change.described() for change in found])
        at = index + 1
        src = source.rep
        dst = destination.rep
        if source is destination:
            if len(source.members) < 2:
                continue  # a pod and itself: not a policy question
            dst = source.members[1]
        before = live.evaluate(src, dst, port, protocol)
        now = after.evaluate(src, dst, port, protocol)
        if before.allowed == now.allowed:
            continue
        for verdict in (before, now):
            if verdict.allowed is None:
                reasons.update(dict.fromkeys(verdict.reasons()))
        found.append(FlowChange(source, destination, port, protocol, before, now,
                                deciders(proposal, (before, now))))
    else:
        at = space.total
    return Scan(found, space.total, at, len(space.groups), reasons)
