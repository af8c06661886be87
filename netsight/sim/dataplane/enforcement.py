"""Which policies the simulated CNI enforces, and the verdict they give a flow.

Each direction is decided on its own side — egress at the source, ingress at the
destination — and a flow passes when both allow it. Per direction: the admin tier, then
NetworkPolicy (if one isolates the pod), then the baseline tier, then allowed. A CNI
enforces only the kinds of its profile: a Flannel-like one none at all.
"""

from __future__ import annotations

from enum import StrEnum

from netsight.sim.dataplane import admin, network_policies
from netsight.sim.dataplane.admin import Action, Tier
from netsight.sim.dataplane.flows import Direction, Flow, Verdict
from netsight.sim.dataplane.snapshot import Cluster


class Profile(StrEnum):
    NONE = "none"  # Flannel-like: routes packets, enforces no policy
    NETPOL = "netpol"  # NetworkPolicy only (kube-router-like)
    CILIUM_LIKE = "cilium-like"  # NetworkPolicy, AdminNetworkPolicy, BaselineAdminNetworkPolicy

    @property
    def admin_policies(self) -> bool:
        return self is Profile.CILIUM_LIKE

    @property
    def network_policies(self) -> bool:
        return self is not Profile.NONE


def evaluate(cluster: Cluster, flow: Flow, profile: Profile) -> Verdict:
    verdict = Verdict()
    if profile is Profile.NONE:
        verdict.steps.append("the CNI enforces no policy")
        return verdict
    for direction in (Direction.EGRESS, Direction.INGRESS):
        allowed, steps = _direction(cluster, flow, direction, profile)
        verdict.steps.append(f"{direction.value}: " + " -> ".join(steps))
        if not allowed:
            verdict.allowed = False
            return verdict
    return verdict


def _direction(cluster: Cluster, flow: Flow, direction: Direction, profile: Profile
               ) -> tuple[bool, list[str]]:
    steps: list[str] = []
    if profile.admin_policies:
        match = admin.decide(cluster, flow, direction, Tier.ADMIN)
        if match is not None:
            steps.append(f"[Admin] {match.action.value} ({match.policy} rule {match.rule})")
            if match.action is not Action.PASS:
                return match.action is Action.ALLOW, steps
    decided = network_policies.decide(cluster, flow, direction)
    if decided is not None:
        allowed, names = decided
        steps.append(f"[NetworkPolicy] {'Allow' if allowed else 'Deny'} ({', '.join(names)})")
        return allowed, steps
    if profile.admin_policies:
        match = admin.decide(cluster, flow, direction, Tier.BASELINE)
        if match is not None and match.action is not Action.PASS:
            steps.append(f"[Baseline] {match.action.value} ({match.policy} rule {match.rule})")
            return match.action is Action.ALLOW, steps
    steps.append("allowed: no policy selects " + flow.subject(direction).describe())
    return True, steps
