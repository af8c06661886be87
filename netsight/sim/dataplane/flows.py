"""A flow between two endpoints, and the verdict a policy layer gives it, explained."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from netsight.sim.dataplane.snapshot import Endpoint


class Direction(StrEnum):
    INGRESS = "Ingress"  # decided at the destination
    EGRESS = "Egress"  # decided at the source


@dataclass(frozen=True)
class Flow:
    """``src`` opens a connection to ``dst`` on ``port`` (the destination pod's port, after
    a Service's DNAT: policies see the translated address, as every CNI does)."""

    src: Endpoint
    dst: Endpoint
    port: int
    protocol: str = "TCP"

    def subject(self, direction: Direction) -> Endpoint:
        return self.dst if direction is Direction.INGRESS else self.src

    def peer(self, direction: Direction) -> Endpoint:
        return self.src if direction is Direction.INGRESS else self.dst


@dataclass
class Verdict:
    """Allowed or not, and the steps that decided it (``[ANP] Pass -> [NetworkPolicy] ...``)."""

    allowed: bool = True
    steps: list[str] = field(default_factory=list)

    def explain(self) -> str:
        return " -> ".join(self.steps) if self.steps else "no policy applies"
