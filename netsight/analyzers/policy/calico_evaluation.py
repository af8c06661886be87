"""Calico's answer for one direction at one endpoint: its tiers walked in order.

Per the Calico policy reference (see :mod:`calico` for the model): a tier processes a
packet when one of its policies applies to the endpoint; within it, the first rule that
matches decides Allow, Deny or Pass (to the next tier); a tier that applies but takes no
action drops the packet unless its ``defaultAction`` is Pass. The Kubernetes
NetworkPolicies sit in the default tier, the admin tiers around it; after the last tier,
the Kubernetes profiles allow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy import netpol
from netsight.analyzers.policy.calico import (
    ADMIN_TIERS,
    BASELINE_TIERS,
    DEFAULT_TIER,
    K8S_POLICY_ORDER,
    CalicoPolicy,
    Tier,
)
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import Namespaces
from netsight.analyzers.policy.verdict import Action, Direction, Layer, Step, tri_all


@dataclass(frozen=True, slots=True)
class Decision:
    steps: tuple[Step, ...]
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Member:
    """A policy in a tier: a Calico policy, or a Kubernetes NetworkPolicy as Calico has it."""

    order: float
    name: str
    calico: CalicoPolicy | None = None
    k8s: netpol.NetPol | None = None


AdminStep = Callable[[], Any]  # -> anp.Decision | None, computed only when reached


def evaluate(*, direction: Direction, subject: Endpoint, other: Endpoint,
             destination: Endpoint, port: int, proto: str, ns: Namespaces,
             policies: Sequence[CalicoPolicy], k8s: Sequence[netpol.NetPol],
             # k8s: the Kubernetes NetworkPolicies selecting the subject
             known_tiers: Mapping[str, Tier], admin: AdminStep, baseline: AdminStep,
             non_pods: bool) -> Decision:
    """Calico's answer at ``subject`` for ``direction``, tier by tier."""
    flow = f"{other.name} on {port}/{proto}"
    source, dest = (other, subject) if direction is Direction.INGRESS else (subject, other)
    steps: list[Step] = []
    members: dict[str, list[Member]] = {}
    for policy in policies:
        if policy.tier in ADMIN_TIERS or policy.tier in BASELINE_TIERS:
            why = (f"{policy.label}: a Calico policy in tier {policy.tier} is ordered among "
                   "the AdminNetworkPolicies; not evaluated by netsight")
            return _unknown(steps, why)
        members.setdefault(policy.tier, []).append(
            Member(policy.order, policy.record.name, calico=policy))
    for model in k8s:
        members.setdefault(DEFAULT_TIER, []).append(
            Member(K8S_POLICY_ORDER, f"knp.default.{model.record.name}", k8s=model))
    order: list[tuple[float, str]] = []
    for name in members:
        tier = known_tiers.get(name)
        if tier is None:
            return _unknown(steps, f"tier {name!r} (of {_names(members[name])}) does not "
                            "exist; Calico rejects policies naming it")
        if tier.problem is not None:
            return _unknown(steps, tier.problem)
        order.append((tier.order, name))
    order += [(ADMIN_TIERS["adminnetworkpolicy"], "adminnetworkpolicy"),
              (BASELINE_TIERS["baselineadminnetworkpolicy"], "baselineadminnetworkpolicy")]
    for _, name in sorted(order):
        if name in ADMIN_TIERS or name in BASELINE_TIERS:
            decision = (admin if name in ADMIN_TIERS else baseline)()
            if decision is None:
                continue
            steps.append(decision.step)
            if decision.step.action in (Action.ALLOW, Action.DENY, Action.UNKNOWN):
                return Decision(tuple(steps), decision.blocking, decision.not_evaluated)
            continue  # Pass: on to the next tier
        found = _tier(known_tiers[name], members[name], direction=direction, subject=subject,
                      other=other, source=source, destination=dest, port=port, proto=proto,
                      ns=ns, non_pods=non_pods, flow=flow)
        if found is None:
            continue
        step, blocking, unknown = found
        steps.append(step)
        if step.action is not Action.PASS:
            return Decision(tuple(steps), blocking, unknown)
    steps.append(Step(Layer.CALICO, Action.ALLOW,
                      f"no Calico tier decides {direction.value} at {subject.name}: the "
                      "Kubernetes namespace profile allows"))
    return Decision(tuple(steps))


def _names(members: list[Member]) -> str:
    return ", ".join(m.name for m in members)


def _unknown(steps: list[Step], why: str) -> Decision:
    steps.append(Step(Layer.CALICO, Action.UNKNOWN, why))
    return Decision(tuple(steps), not_evaluated=(why,))


def _tier(tier: Tier, members: list[Member], *, direction: Direction, subject: Endpoint,
          other: Endpoint, source: Endpoint, destination: Endpoint, port: int, proto: str,
          ns: Namespaces, non_pods: bool, flow: str
          ) -> tuple[Step, tuple[ResourceRef, ...], tuple[str, ...]] | None:
    """The tier's step, or None when no policy of it applies to ``subject``."""
    applying: list[Member] = []
    for member in sorted(members, key=lambda m: (m.order, m.name)):
        if member.k8s is not None:
            if direction in member.k8s.types:  # (given: those selecting the subject)
                applying.append(member)
            continue
        policy = member.calico
        assert policy is not None
        if policy.problem is None and direction not in policy.types:
            continue
        applies = policy.applies_to(subject, ns)
        if applies is None:
            why = f"{policy.label}: " + (f"{policy.problem} (not evaluated)" if policy.problem
                                         else f"whether it selects {subject.name} depends on "
                                         "labels the input does not give")
            return Step(Layer.CALICO, Action.UNKNOWN, why, ref(policy.record)), (), (why,)
        if applies:
            applying.append(member)
    if not applying:
        return None
    where = f"tier {tier.name}"
    for member in applying:
        if member.k8s is not None:
            found = _k8s_policy(member.k8s, direction, other, destination, port, proto, ns)
            if found is None:
                continue
            if isinstance(found, str):
                return Step(Layer.CALICO, Action.UNKNOWN, found), (), (found,)
            rule_index, raw = found
            record = member.k8s.record
            path = f"spec.{direction.value}[{rule_index}]"
            return Step(Layer.CALICO, Action.ALLOW,
                        f"{where}, NetworkPolicy {record.ref} (order 1000) {path} allows "
                        f"{flow}", ref(record), rule_index,
                        (evidence(record, path, raw),)), (), ()
        policy = member.calico
        assert policy is not None
        for rule in policy.rules(direction):
            matched = rule.matches(source, destination, port=port, proto=proto,
                                   policy_namespace=policy.namespace, ns=ns,
                                   non_pods=non_pods)
            if matched is False:
                continue
            path = f"spec.{direction.value}[{rule.index}]"
            if matched is None:
                why = f"{policy.label} {path}: " + (
                    f"{rule.problem} (not evaluated)" if rule.problem is not None else
                    f"whether it matches {other.name} depends on what the input does not "
                    "give (namespace or service-account labels, an IP, network sets or "
                    "host endpoints)")
                return Step(Layer.CALICO, Action.UNKNOWN, why, ref(policy.record),
                            rule.index), (), (why,)
            if rule.action is None:
                continue  # Log: evaluation goes on
            raw_rules = (policy.record.spec or {}).get(direction.value) or []
            order = "no order" if policy.order == math.inf else f"order {policy.order:g}"
            step = Step(Layer.CALICO, rule.action,
                        f"{where}, {policy.label} ({order}) {path} matches {flow}",
                        ref(policy.record), rule.index,
                        (evidence(policy.record, path, raw_rules[rule.index]
                                  if rule.index < len(raw_rules) else None),))
            blocking = (ref(policy.record),) if rule.action is Action.DENY else ()
            return step, blocking, ()
    names = _names(applying)
    if tier.pass_at_end:
        return Step(Layer.CALICO, Action.PASS,
                    f"{where}: {names} select {subject.name} and none matches {flow}; the "
                    "tier's defaultAction is Pass"), (), ()
    refs = tuple(_member_ref(m) for m in applying)
    return Step(Layer.CALICO, Action.DENY,
                f"end of {where}: {names} select {subject.name} for {direction.value} and "
                f"no rule matches {flow} (the tier's default action is Deny)",
                refs[0] if refs else None), refs, ()


def _member_ref(member: Member) -> ResourceRef:
    if member.calico is not None:
        return ref(member.calico.record)
    assert member.k8s is not None
    return ref(member.k8s.record)


def _k8s_policy(model: netpol.NetPol, direction: Direction, other: Endpoint,
                destination: Endpoint, port: int, proto: str, ns: Namespaces
                ) -> tuple[int, Any] | str | None:
    """The first rule of a Kubernetes NetworkPolicy admitting the flow (its index and raw
    form), a reason when that cannot be told, or None."""
    record = model.record
    raw_rules = record.ingress if direction is Direction.INGRESS else record.egress
    for rule in model.rules(direction):
        if rule.problem is not None:
            return f"NetworkPolicy {record.ref}: {rule.problem} (not evaluated)"
        peers, ports = rule.matches(other, destination, port, proto, record.namespace, ns)
        found = tri_all((peers, ports))
        if found:
            return rule.index, raw_rules[rule.index]
        if found is None:
            return (f"NetworkPolicy {record.ref} spec.{direction.value}[{rule.index}]: "
                    f"whether it admits {other.name} depends on what the input does not give")
    return None
