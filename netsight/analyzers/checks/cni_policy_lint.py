"""Policy lint and one-line summaries for the CNI policy kinds netsight evaluates (Cilium,
Calico).

Kept apart from network_policies.py so each CNI's checks sit together: rule blocks whose
endpointSelector selects no pod, CIDR peers that cover pod addresses (Cilium never matches
its own endpoints by CIDR), L7 rules answered at L4 only, and shapes netsight does not
evaluate (NS0405, as for the other kinds); for Calico, selectors that do not parse, tiers
that do not exist, and policies that select no pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.policy import calico, cilium
from netsight.analyzers.policy.endpoints import from_pod, live
from netsight.analyzers.policy.peers import Namespaces
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import GenericRecord, PodRecord, Record
from netsight.graph.store.live import GraphView

READS = frozenset({*cilium.KINDS, *calico.POLICY_KINDS, calico.TIER_KIND, Kind.POD,
                   Kind.NAMESPACE})
CODES = (codes.CILIUM_POLICY_SELECTS_NO_PODS, codes.CILIUM_CIDR_RULE_COVERS_PODS,
         codes.CILIUM_L7_RULES_NOT_EVALUATED, codes.CALICO_SELECTOR_INVALID,
         codes.CALICO_TIER_NOT_FOUND, codes.CALICO_POLICY_SELECTS_NO_PODS)


def cilium_policies(view: GraphView, namespace: str | None) -> Iterator[cilium.CiliumPolicy]:
    """CNPs (of ``namespace``, or all) and, when no namespace is given, CCNPs; by key."""
    kinds = ((cilium.CNP_KIND, namespace),) + (((cilium.CCNP_KIND, None),)
                                                if namespace is None else ())
    for kind, scope in kinds:
        for record in sorted(view.for_each(kind, scope), key=lambda r: r.key):
            if isinstance(record, GenericRecord) and \
                    record.api_version.startswith(cilium.GROUP + "/"):
                yield cilium.build(record)


def calico_policies(view: GraphView, namespace: str | None
                    ) -> Iterator[calico.CalicoPolicy]:
    """Calico NetworkPolicies (of ``namespace``, or all) and, with no namespace, the
    GlobalNetworkPolicies; by key."""
    for kind in calico.POLICY_KINDS:
        if kind == calico.GNP_KIND and namespace is not None:
            continue
        for record in sorted(view.for_each(kind, namespace), key=lambda r: r.key):
            if isinstance(record, GenericRecord) and calico.is_calico(record):
                yield calico.build(record)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    yield from _cilium(view, namespace)
    yield from _calico(view, namespace)


def _calico(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    policies = list(calico_policies(view, namespace))
    if not policies:
        return
    tiers = calico.tiers(r for r in view.for_each(calico.TIER_KIND)
                         if isinstance(r, GenericRecord) and calico.is_calico(r))
    pods = sorted((p for p in view.for_each(Kind.POD) if isinstance(p, PodRecord) and live(p)),
                  key=lambda p: p.key)
    pods_known = view.unreadable(Kind.POD) is None
    ns = Namespaces(view)
    for policy in policies:
        record = policy.record
        problems = [policy.problem] if policy.problem is not None else \
            [r.problem for r in (*policy.ingress, *policy.egress) if r.problem is not None]
        for problem in problems[:1]:
            if "selector " in problem.message and " at character " in problem.message:
                yield codes.CALICO_SELECTOR_INVALID.finding(
                    ref(record), f"{policy.label}: {problem.field_path} does not parse",
                    detail=f"{problem.message}. Calico rejects the policy; netsight answers "
                    "flows it could decide with allowed: null.",
                    suggestion="Write the selector in Calico's syntax, e.g. app == 'web' "
                    "&& has(tier).",
                    evidence=[evidence(record, problem.field_path, None)])
            else:
                yield _not_evaluated(record, problem)
        if policy.tier not in tiers:
            yield codes.CALICO_TIER_NOT_FOUND.finding(
                ref(record), f"{policy.label} names tier {policy.tier!r}, which does not exist",
                detail="Calico accepts a policy only in an existing tier; netsight answers "
                "flows it could decide with allowed: null.",
                suggestion=f"Create Tier {policy.tier} or move the policy to an existing tier.",
                evidence=[evidence(record, "spec.tier", policy.tier)])
        if policy.problem is None and pods_known and not any(
                policy.applies_to(from_pod(p), ns) is not False for p in pods):
            where = f"in namespace {policy.namespace}" if policy.namespace else "in the cluster"
            assert policy.selector is not None
            yield codes.CALICO_POLICY_SELECTS_NO_PODS.finding(
                ref(record), f"{policy.label} selects no pods",
                detail=f"spec.selector {policy.selector.text!r} matches no pod {where}; the "
                "policy has no effect on pods.",
                suggestion="Make spec.selector match the labels of the pods to protect.",
                evidence=[evidence(record, "spec.selector", policy.selector.text)])


def calico_summary(policy: calico.CalicoPolicy) -> tuple[str, str]:
    """(whom it selects, its rules in one line)."""
    if policy.problem is not None:
        return "not evaluated", "not evaluated"
    assert policy.selector is not None
    order = "no order" if policy.order == float("inf") else f"order {policy.order:g}"
    where = f" in {policy.namespace}" if policy.namespace else ""
    selects = f"{policy.selector.text}{where} (tier {policy.tier}, {order})"
    parts = []
    for direction in sorted(policy.types):
        rules = policy.rules(direction)
        shown = ["not evaluated" if r.problem else (r.action.value if r.action else "Log")
                 for r in rules]
        parts.append(f"{direction.value}: " + (", ".join(shown) or "no rules"))
    return selects, " | ".join(parts)


def _cilium(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    pods_known = view.unreadable(Kind.POD) is None
    pods: list[PodRecord] = []
    for policy in cilium_policies(view, namespace):
        record = policy.record
        if policy.problem is not None:
            yield _not_evaluated(record, policy.problem)
            continue
        if not pods:
            pods = sorted((p for p in view.for_each(Kind.POD)
                           if isinstance(p, PodRecord) and live(p)), key=lambda p: p.key)
        for spec in policy.specs:
            if spec.problem is not None:
                yield _not_evaluated(record, spec.problem)
                continue
            problems = [r.problem for r in (*spec.ingress, *spec.egress, *spec.ingress_deny,
                                            *spec.egress_deny) if r.problem is not None]
            if problems:
                yield _not_evaluated(record, problems[0])
            if pods_known and not spec.host_policy:
                yield from _selects_no_pods(view, policy, spec, pods)
            yield from _cidrs_cover_pods(policy, spec, pods)
            yield from _l7(policy, spec)


def _not_evaluated(record: Record, problem: Exception) -> Finding:
    field_path = getattr(problem, "field_path", "spec")
    return codes.POLICY_NOT_EVALUATED.finding(
        ref(record), f"{record.kind} {record.ref} cannot be fully evaluated: {problem}",
        detail="netsight does not evaluate this shape (or Cilium rejects it); flows this "
        "policy could decide are answered with allowed: null.",
        suggestion="Fix the field to the shape the Cilium policy reference gives, or accept "
        "undecided answers for the flows it governs.",
        evidence=[evidence(record, field_path, None)])


def _selects_no_pods(view: GraphView, policy: cilium.CiliumPolicy, spec: cilium.Spec,
                     pods: list[PodRecord]) -> Iterator[Finding]:
    ns = Namespaces(view)
    answers = {policy.applies_to(spec, from_pod(p), ns) for p in pods}
    if True in answers or None in answers:
        return
    record = policy.record
    assert spec.subject is not None
    where = f"in namespace {record.namespace}" if policy.namespace else "in the cluster"
    yield codes.CILIUM_POLICY_SELECTS_NO_PODS.finding(
        ref(record), f"{record.kind} {record.ref} {spec.path} selects no pods",
        detail=f"{spec.path}.endpointSelector {spec.subject.describe()} matches no pod "
        f"{where} (host-network pods are no Cilium endpoints), so its rules have no effect.",
        suggestion="Make endpointSelector match the labels of the pods to protect.",
        evidence=[evidence(record, f"{spec.path}.endpointSelector",
                           spec.subject.describe())])


def _cidrs_cover_pods(policy: cilium.CiliumPolicy, spec: cilium.Spec,
                      pods: list[PodRecord]) -> Iterator[Finding]:
    record = policy.record
    for rules, name in ((spec.ingress, "ingress"), (spec.egress, "egress"),
                        (spec.ingress_deny, "ingressDeny"), (spec.egress_deny, "egressDeny")):
        for rule in rules:
            for peer in rule.peers or ():
                if peer.block is None:
                    continue
                covered = [p for p in pods if not p.host_network
                           and any(peer.block.contains(ip) for ip in p.ips)]
                if not covered:
                    continue
                path = f"{spec.path}.{name}[{rule.index}]"
                shown = ", ".join(f"{p.namespace}/{p.name}" for p in covered[:3])
                yield codes.CILIUM_CIDR_RULE_COVERS_PODS.finding(
                    ref(record), f"{record.kind} {record.ref} {path}: CIDR {peer.block} "
                    f"covers {len(covered)} pod(s) ({shown}) it never matches",
                    detail="Cilium: \"CIDR rules do not apply to traffic where both sides of "
                    "the connection are either managed by Cilium or use an IP belonging to a "
                    "node in the cluster (including host networking pods).\"",
                    suggestion="Select those pods with fromEndpoints/toEndpoints (or the "
                    "cluster entity) instead of their addresses.",
                    evidence=[evidence(record, path, str(peer.block))])


def _l7(policy: cilium.CiliumPolicy, spec: cilium.Spec) -> Iterator[Finding]:
    record = policy.record
    for rules, name in ((spec.ingress, "ingress"), (spec.egress, "egress")):
        for rule in rules:
            if rule.l7 is None:
                continue
            path = f"{spec.path}.{name}[{rule.index}]"
            yield codes.CILIUM_L7_RULES_NOT_EVALUATED.finding(
                ref(record), f"{record.kind} {record.ref} {path} has L7 rules: {rule.l7}",
                detail="netsight decides whether the connection is allowed at L4; which "
                "requests the proxy then admits is not evaluated.",
                evidence=[evidence(record, path, rule.l7)])


def summary_rules(policy: cilium.CiliumPolicy) -> str:
    """Rules in one line: per rule block, per direction, what each rule admits or denies."""
    if policy.problem is not None:
        return "not evaluated"
    parts = []
    for spec in policy.specs:
        if spec.problem is not None:
            parts.append(f"{spec.path}: not evaluated")
            continue
        for name, rules in (("ingress", spec.ingress), ("ingressDeny", spec.ingress_deny),
                            ("egress", spec.egress), ("egressDeny", spec.egress_deny)):
            if not rules:
                continue
            shown = []
            for rule in rules:
                if rule.problem is not None:
                    shown.append("not evaluated")
                    continue
                peers = "all" if rule.peers is None else \
                    (" or ".join(p.describe() for p in rule.peers) or "nothing")
                ports = "" if rule.ports is None else \
                    " on " + ", ".join(p.describe() for p in rule.ports)
                shown.append(peers + ports + (" (+L7)" if rule.l7 else ""))
            parts.append(f"{spec.path}.{name}: " + "; ".join(shown))
    return " | ".join(parts) or "no rules"


def summary_selects(policy: cilium.CiliumPolicy) -> str:
    found = []
    for spec in policy.specs:
        if spec.host_policy:
            found.append("nodes (host policy, not evaluated)")
        elif spec.subject is not None:
            where = f" in {policy.namespace}" if policy.namespace else ""
            found.append(f"endpoints {spec.subject.describe()}{where}")
    return "; ".join(found) or "not evaluated"
