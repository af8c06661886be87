"""Policy lint and one-line summaries for the CNI policy kinds netsight evaluates (Cilium).

Kept apart from network_policies.py so each CNI's checks sit together: rule blocks whose
endpointSelector selects no pod, CIDR peers that cover pod addresses (Cilium never matches
its own endpoints by CIDR), L7 rules answered at L4 only, and shapes netsight does not
evaluate (NS0405, as for the other kinds).
"""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.contracts import Finding
from netsight.analyzers.policy import cilium
from netsight.analyzers.policy.endpoints import from_pod, live
from netsight.analyzers.policy.peers import Namespaces
from netsight.graph.model import Kind
from netsight.graph.records import GenericRecord, PodRecord, Record
from netsight.graph.store import GraphView

READS = frozenset({*cilium.KINDS, Kind.POD, Kind.NAMESPACE})
CODES = (codes.CILIUM_POLICY_SELECTS_NO_PODS, codes.CILIUM_CIDR_RULE_COVERS_PODS,
         codes.CILIUM_L7_RULES_NOT_EVALUATED)


def cilium_policies(view: GraphView, namespace: str | None) -> Iterator[cilium.CiliumPolicy]:
    """CNPs (of ``namespace``, or all) and, when no namespace is given, CCNPs; by key."""
    kinds = ((cilium.CNP_KIND, namespace),) + (((cilium.CCNP_KIND, None),)
                                                if namespace is None else ())
    for kind, scope in kinds:
        for record in sorted(view.for_each(kind, scope), key=lambda r: r.key):
            if isinstance(record, GenericRecord) and \
                    record.api_version.startswith(cilium.GROUP + "/"):
                yield cilium.build(record)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
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
