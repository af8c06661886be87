"""One Service's inspection as it is built: what the Service selects, its endpoint counts,
findings and what could not be evaluated; and the small helpers each part shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from netsight.analyzers.core.contracts import Finding, Severity
from netsight.graph.model.kept_events import KeptEvent
from netsight.graph.model.records import PodRecord, Record, ServiceRecord, WorkloadRecord

# Pods in these phases (e.g. Evicted) get no endpoints (ShouldPodBeInEndpoints).
TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class EndpointCounts:
    """Endpoint health; ``source`` says where the figures come from."""

    source: str  # "EndpointSlice", "Endpoints", "pods" (derived, manifests only) or "none"
    ready: int = 0  # ready, terminating or not (publishNotReadyAddresses marks all ready)
    not_ready: int = 0  # not ready and not terminating
    terminating: int = 0  # on their way out (rolling updates), ready or not
    serving_terminating: int = 0  # terminating, not ready, still serving: kube-proxy's fallback
    unknown: int = 0  # pods whose readiness the input does not state
    total: int = 0


@dataclass
class ServiceReport:
    service: ServiceRecord
    pods: list[PodRecord] = field(default_factory=list)
    templates: list[WorkloadRecord] = field(default_factory=list)
    endpoints: EndpointCounts = field(default_factory=lambda: EndpointCounts("none"))
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)
    slices: list[Record] = field(default_factory=list)  # EndpointSlices, or legacy Endpoints
    warnings: list[KeptEvent] = field(default_factory=list)  # recent, most recent first

    @property
    def worst(self) -> Severity:
        return min((f.severity for f in self.findings), key=lambda s: s.rank, default=Severity.OK)


def some_names(records: Sequence[PodRecord | WorkloadRecord]) -> str:
    shown = ", ".join(f"{r.kind} {r.name}" for r in records[:3])
    more = f" and {len(records) - 3} more" if len(records) > 3 else ""
    return shown + more

