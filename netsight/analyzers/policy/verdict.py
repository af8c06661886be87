"""What an evaluation answers: per direction, the layers it went through and why.

``allowed`` is three-valued everywhere: True, False, or None when the input does not
decide it (a policy kind netsight does not evaluate, an unknown pod IP, ...). None is
never turned into a guess; the reason travels with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from netsight.analyzers.core.contracts import Evidence, ResourceRef

Tri = bool | None


class Direction(StrEnum):
    INGRESS = "ingress"
    EGRESS = "egress"

    @property
    def policy_type(self) -> str:
        """As NetworkPolicy's policyTypes spell it."""
        return "Ingress" if self is Direction.INGRESS else "Egress"

    @property
    def peers_field(self) -> str:
        """The rule field listing the other side: ``from`` for ingress, ``to`` for egress."""
        return "from" if self is Direction.INGRESS else "to"


class Layer(StrEnum):
    ANP = "ANP"
    CNP_ADMIN = "CNP Admin"  # ClusterNetworkPolicy (v1alpha2, v1beta1), tier Admin
    NETWORK_POLICY = "NetworkPolicy"
    CILIUM = "Cilium"  # Cilium's policy per endpoint: NetworkPolicies, CNPs and CCNPs together
    CALICO = "Calico"  # Calico tiers (Kubernetes NetworkPolicies among them, order 1000)
    BANP = "BANP"
    CNP_BASELINE = "CNP Baseline"
    ISTIO = "Istio"  # AuthorizationPolicy / PeerAuthentication, at the destination's proxy
    LINKERD = "Linkerd"  # Servers and their authorizations, at the destination's proxy
    KUMA = "Kuma"  # MeshTrafficPermission, at the destination's sidecar
    DEFAULT = "default"
    NOT_EVALUATED = "not-evaluated"


class Action(StrEnum):
    ALLOW = "Allow"
    DENY = "Deny"
    PASS = "Pass"
    UNKNOWN = "Unknown"


def tri_any(values: Iterable[Tri]) -> Tri:
    """Kleene OR: True if any is True, else None if any is None, else False."""
    unknown = False
    for value in values:
        if value is True:
            return True
        if value is None:
            unknown = True
    return None if unknown else False


def tri_all(values: Iterable[Tri]) -> Tri:
    """Kleene AND: False if any is False, else None if any is None, else True."""
    unknown = False
    for value in values:
        if value is False:
            return False
        if value is None:
            unknown = True
    return None if unknown else True


@dataclass(frozen=True, slots=True)
class Step:
    """One layer's say on the traffic, e.g. ``[ANP] Pass (ns-guard)``."""

    layer: Layer
    action: Action
    text: str  # why, in one line
    policy: ResourceRef | None = None
    rule: int | None = None  # index in the policy's ingress/egress list
    evidence: tuple[Evidence, ...] = ()

    def describe(self) -> str:
        return f"[{self.layer.value}] {self.action.value}: {self.text}"


@dataclass(frozen=True, slots=True)
class MeshDecision:
    """A mesh layer's say on one flow at the destination (it can only refuse more)."""

    allowed: Tri
    step: Step
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DirectionVerdict:
    """The decision for one direction, taken at ``endpoint`` (source for egress)."""

    direction: Direction
    endpoint: str
    allowed: Tri
    steps: tuple[Step, ...]
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()

    def path(self) -> str:
        return " -> ".join(step.describe() for step in self.steps)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Traffic flows when egress is allowed at the source AND ingress at the destination."""

    source: str
    destination: str
    port: int
    protocol: str
    egress: DirectionVerdict
    ingress: DirectionVerdict
    # Policy kinds present but not evaluated: ``undecided`` ones could allow or deny (Cilium,
    # Calico), ``may_restrict`` ones can only deny more (Istio authorization on top of L4).
    undecided: tuple[str, ...] = field(default=())
    may_restrict: tuple[str, ...] = field(default=())

    @property
    def allowed(self) -> Tri:
        base = tri_all((self.egress.allowed, self.ingress.allowed))
        if self.undecided or (base is True and self.may_restrict):
            return None
        return base

    @property
    def blocking(self) -> tuple[ResourceRef, ...]:
        found: dict[str, ResourceRef] = {}
        for part in (self.egress, self.ingress):
            if part.allowed is False:
                for ref in part.blocking:
                    found.setdefault(str(ref), ref)
        return tuple(found.values())

    def reasons(self) -> list[str]:
        """Why the verdict is None, if it is."""
        found = [*self.egress.not_evaluated, *self.ingress.not_evaluated, *self.undecided]
        base = tri_all((self.egress.allowed, self.ingress.allowed))
        if base is True:
            found.extend(self.may_restrict)
        return list(dict.fromkeys(found))
