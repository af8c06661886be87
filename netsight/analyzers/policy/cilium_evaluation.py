"""Cilium's answer for one direction at one endpoint: its policies and the NetworkPolicies
merged into one per-endpoint policy.

An endpoint a NetworkPolicy isolates is default-deny in that direction, and a flow is
allowed when an allow rule of any NetworkPolicy, CNP or CCNP allows it and no deny rule
denies it; ``ingressDeny``/``egressDeny`` take precedence over every allow. Cilium does not
implement AdminNetworkPolicy: the engine keeps its tiers around this layer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Evidence, ResourceRef
from netsight.analyzers.policy import netpol
from netsight.analyzers.policy.cilium import CiliumPolicy, Rule, Spec
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import Namespaces
from netsight.analyzers.policy.verdict import Action, Direction, Layer, Step, Tri, tri_any

# Cilium's answer takes the NetworkPolicy tier's place, in the same shape.
Decision = netpol.Decision


@dataclass(frozen=True, slots=True)
class NetPolSay:
    """What the NetworkPolicies isolating the subject say, as Cilium merges them."""

    isolating: bool
    allowed: Tri  # False when none isolates
    step: Step | None = None
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()


def netpol_say(decision: netpol.Decision | None) -> NetPolSay:
    """The NetworkPolicy tier's decision (netpol.Decision or None) as Cilium merges it."""
    if decision is None:
        return NetPolSay(False, False)
    action = decision.step.action
    if action is Action.ALLOW:
        return NetPolSay(True, True, decision.step)
    if action is Action.DENY:
        return NetPolSay(True, False, decision.step, decision.blocking)
    return NetPolSay(True, None, decision.step, (), decision.not_evaluated)


def evaluate(policies: Iterable[CiliumPolicy], netpols: NetPolSay, direction: Direction,
             subject: Endpoint, other: Endpoint, destination: Endpoint, port: int,
             proto: str, ns: Namespaces) -> Decision | None:
    """The merged per-endpoint policy's answer; None when no NetworkPolicy, CNP or CCNP
    has anything to say about ``subject`` in ``direction``."""
    flow = f"{other.name} on {port}/{proto}"
    unknown: list[str] = list(netpols.not_evaluated)
    denied: list[tuple[CiliumPolicy, Spec, Rule]] = []
    allowed: list[tuple[CiliumPolicy, Spec, Rule]] = []
    deny_unknown = allow_unknown = False
    active: list[Tri] = [True] if netpols.isolating else []
    enforced: list[Tri] = [True] if netpols.isolating else []
    selecting: list[CiliumPolicy] = []
    selecting_specs: list[tuple[CiliumPolicy, Spec]] = []
    for policy in policies:
        if policy.problem is not None:
            why = f"{policy.label}: {policy.problem} (not evaluated)"
            unknown.append(why)
            active.append(None)
            enforced.append(None)
            allow_unknown = deny_unknown = True
            continue
        for spec in policy.specs:
            if spec.problem is None and not spec.active(direction):
                continue
            applies = policy.applies_to(spec, subject, ns)
            if applies is False:
                continue
            if applies is None:
                allow_unknown = deny_unknown = True
                why = f"{policy.label} {spec.path}: " + (
                    f"{spec.problem} (not evaluated)" if spec.problem is not None else
                    f"a host policy (nodeSelector) governs host-network pod {subject.name}; "
                    "host policies are not evaluated by netsight" if spec.host_policy else
                    f"whether it selects {subject.name} depends on labels the input does "
                    "not give")
                unknown.append(why)
                active.append(None)
                enforced.append(None)
                continue
            if policy not in selecting:
                selecting.append(policy)
            selecting_specs.append((policy, spec))
            active.append(True)
            enforced.append(spec.default_deny.get(direction, True))
            for rule in spec.denies(direction):
                found = rule.matches(other, subject, destination, port, proto, ns)
                if found:
                    denied.append((policy, spec, rule))
                elif found is None:
                    deny_unknown = True
                    unknown.append(_unknown(policy, spec, rule, direction, other))
            for rule in spec.allows(direction):
                found = rule.matches(other, subject, destination, port, proto, ns)
                if found:
                    allowed.append((policy, spec, rule))
                elif found is None:
                    allow_unknown = True
                    unknown.append(_unknown(policy, spec, rule, direction, other))
    if not active:
        return None
    if denied:
        policy, spec, rule = denied[0]
        path = spec.rule_path(rule, direction)
        return Decision(Step(
            Layer.CILIUM, Action.DENY, f"{policy.record.ref} {path} matches {flow}",
            ref(policy.record), rule.index, (_evidence(policy, spec, rule, direction),)),
            blocking=tuple(dict.fromkeys(ref(p.record) for p, _, _ in denied)))
    allow: Tri = True if (allowed or netpols.allowed) else \
        (None if allow_unknown or netpols.allowed is None else False)
    is_enforced = tri_any(enforced)
    if allow is True or (allow is False and is_enforced is False):
        # Allowed by a rule, or not default-deny here (only enableDefaultDeny: false
        # rules select the endpoint): either way only a deny rule could still refuse it.
        if deny_unknown:
            return _unknown_decision(unknown)
        return _allow(allowed, netpols, selecting, direction, subject, flow)
    if allow is None or is_enforced is not True:
        return _unknown_decision(unknown)
    parts = [str(p.record.ref) for p in selecting]
    if netpols.isolating:
        parts.append("NetworkPolicy " + ", ".join(str(r) for r in netpols.blocking)
                     if netpols.blocking else "NetworkPolicies")
    verb = "selects" if len(parts) == 1 else "select"
    text = (f"{', '.join(parts)} {verb} {subject.name} for {direction.value} (default deny) "
            f"and no allow rule admits {flow}")
    proof: tuple[Evidence, ...] = tuple(
        evidence(p.record, f"{s.path}.{direction.value}",
                 f"{len(s.allows(direction))} allow rule(s), none admits {other.name}")
        for p, s in selecting_specs)
    blocking = tuple(dict.fromkeys((*(ref(p.record) for p in selecting), *netpols.blocking)))
    return Decision(Step(Layer.CILIUM, Action.DENY, text,
                         blocking[0] if blocking else None, None, proof), blocking=blocking)


def _allow(allowed: list[tuple[CiliumPolicy, Spec, Rule]], netpols: NetPolSay,
           selecting: list[CiliumPolicy], direction: Direction, subject: Endpoint,
           flow: str) -> Decision:
    if allowed:
        policy, spec, rule = allowed[0]
        path = spec.rule_path(rule, direction)
        text = f"{policy.record.ref} {path} allows {flow}"
        notes: tuple[str, ...] = ()
        if rule.l7 is not None:
            text += "; its L7 rules are not evaluated"
            notes = (f"{policy.label} {path}: L7 rules {rule.l7} further restrict what "
                     "passes on this port (not evaluated by netsight)",)
        return Decision(Step(Layer.CILIUM, Action.ALLOW, text, ref(policy.record),
                             rule.index, (_evidence(policy, spec, rule, direction),)),
                        not_evaluated=notes)
    if netpols.allowed and netpols.step is not None:
        return Decision(netpols.step)
    names = ", ".join(str(p.record.ref) for p in selecting)
    verb = "selects" if len(selecting) == 1 else "select"
    return Decision(Step(Layer.CILIUM, Action.ALLOW,
                         f"{names} {verb} {subject.name} for {direction.value} only with "
                         f"enableDefaultDeny false, and no deny rule matches {flow}"))


def _unknown(policy: CiliumPolicy, spec: Spec, rule: Rule, direction: Direction,
             other: Endpoint) -> str:
    path = spec.rule_path(rule, direction)
    if rule.problem is not None:
        return f"{policy.label}: {rule.problem} (not evaluated)"
    return (f"{policy.label} {path}: whether it matches {other.name} depends on what the "
            "input does not give (namespace labels, a template's service account, labels "
            "Cilium's label filter may drop, the cluster name, or what a host-network pod "
            "or outside address is to Cilium)")


def _unknown_decision(unknown: list[str]) -> Decision:
    reasons = tuple(dict.fromkeys(unknown)) or ("the Cilium policy layer is undecided",)
    return Decision(Step(Layer.CILIUM, Action.UNKNOWN, "; ".join(reasons)),
                    not_evaluated=reasons)


def _evidence(policy: CiliumPolicy, spec: Spec, rule: Rule, direction: Direction
              ) -> Evidence:
    record = policy.record
    raw_spec: Any = record.spec if spec.path == "spec" else \
        (record.specs or ())[int(spec.path[6:-1])]
    name = direction.value + ("Deny" if rule.deny else "")
    raw_rules = raw_spec.get(name) or [] if isinstance(raw_spec, dict) else []
    value = raw_rules[rule.index] if rule.index < len(raw_rules) else None
    return evidence(record, spec.rule_path(rule, direction), value)
