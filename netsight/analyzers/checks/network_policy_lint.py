"""Policy lint: NetworkPolicies, ANPs and the BANP that do not do what they seem to.

Policies that select no pods, rules that admit everything, named ports that resolve on
none of the pods they protect, rules that policyTypes silently disables, shapes the
engine cannot evaluate, and ANPs whose equal priorities leave their order undefined.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from netsight.analyzers.checks import cni_policy_lint
from netsight.analyzers.core import codes, deadline
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.policy import anp, cnp, netpol
from netsight.analyzers.policy.verdict import Direction
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel
from netsight.graph.model.records import (
    GenericRecord,
    NetworkPolicyRecord,
    PodRecord,
    WorkloadRecord,
)
from netsight.graph.store.live import GraphView, Source

METADATA = AnalyzerMetadata(
    name="network_policies",
    description="NetworkPolicies that select no pods, rules that admit all traffic, named "
    "ports that resolve on none of the selected pods, rules disabled by policyTypes, "
    "policies netsight cannot evaluate, and AdminNetworkPolicies (or ClusterNetworkPolicies "
    "of one tier) sharing a priority.",
    reads=frozenset({Kind.NETWORK_POLICY, anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND,
                     *POD_LIKE_KINDS, *cni_policy_lint.READS}),
    codes=(
        codes.NETWORK_POLICY_SELECTS_NO_PODS,
        codes.POLICY_RULE_ALLOWS_ALL,
        codes.POLICY_NAMED_PORT_NOT_FOUND,
        codes.POLICY_RULES_IGNORED_BY_POLICY_TYPES,
        codes.POLICY_NOT_EVALUATED,
        codes.ADMIN_POLICY_PRIORITY_SHARED,
        *cni_policy_lint.CODES,
    ),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    records = sorted(view.for_each(Kind.NETWORK_POLICY, namespace), key=lambda r: r.key)
    for record in deadline.checked(records, every=64):  # most policies have no finding
        assert isinstance(record, NetworkPolicyRecord)
        yield from _network_policy(view, record)
    if namespace is None:  # ANPs and the BANP are cluster-scoped
        yield from _admin_policies(view)
    yield from cni_policy_lint.check(view, namespace)


def _network_policy(view: GraphView, record: NetworkPolicyRecord) -> Iterator[Finding]:
    model = netpol.build(record)
    selected = [r for r in view.neighbors(record.key, Rel.APPLIES_TO)
                if isinstance(r, PodRecord | WorkloadRecord)]
    if not selected and view.unreadable(Kind.POD) is None:
        what = "pods" if view.source is not Source.MANIFESTS else "pods or workload templates"
        yield codes.NETWORK_POLICY_SELECTS_NO_PODS.finding(
            ref(record), f"NetworkPolicy {record.ref} selects no {what}",
            detail=f"spec.podSelector {record.pod_selector.describe()} matches nothing in "
            f"namespace {record.namespace}, so the policy isolates nothing and its rules "
            "admit nothing.",
            suggestion="Make spec.podSelector match the labels of the pods to protect.",
            evidence=[evidence(record, "spec.podSelector", record.pod_selector.describe())],
        )
    for direction, rules in ((Direction.INGRESS, record.ingress),
                             (Direction.EGRESS, record.egress)):
        if rules and direction not in model.types:
            yield codes.POLICY_RULES_IGNORED_BY_POLICY_TYPES.finding(
                ref(record),
                f"{direction.value} rules of NetworkPolicy {record.ref} are ignored: "
                f"spec.policyTypes lacks {direction.policy_type}",
                detail=f"spec.policyTypes lists {', '.join(record.policy_types)}; the "
                f"{len(rules)} {direction.value} rule(s) have no effect.",
                suggestion=f"Add {direction.policy_type} to spec.policyTypes, or delete "
                f"spec.{direction.value}.",
                evidence=[evidence(record, "spec.policyTypes", list(record.policy_types))],
            )
    if model.problem is not None:
        yield _not_evaluated(record, model.problem)
        return
    for direction in model.types:
        for rule in model.rules(direction):
            path = f"spec.{direction.value}[{rule.index}]"
            if rule.peers is None and rule.ports is None:
                yield codes.POLICY_RULE_ALLOWS_ALL.finding(
                    ref(record),
                    f"{path} of NetworkPolicy {record.ref} admits all {direction.value} "
                    "traffic",
                    detail=f"The rule has no {direction.peers_field} and no ports: every "
                    f"peer on every port is admitted for the selected pods, whatever the "
                    "policy's other rules say.",
                    suggestion=f"Restrict the rule with {direction.peers_field} or ports, or "
                    "delete it if opening everything is not intended.",
                    evidence=[evidence(record, path, {})],
                )
    yield from _named_ports(record, model, selected)


def _named_ports(record: NetworkPolicyRecord, model: netpol.NetPol,
                 selected: list[PodRecord | WorkloadRecord]) -> Iterator[Finding]:
    """Ingress named ports resolve on the selected pods; one that resolves nowhere is dead."""
    if not selected or Direction.INGRESS not in model.types:
        return
    for rule in model.ingress:
        for i, port in enumerate(rule.ports or ()):
            if port.name is None:
                continue
            if any(p.name == port.name and p.protocol == port.protocol
                   for target in selected for p in target.ports):
                continue
            path = f"spec.ingress[{rule.index}].ports[{i}].port"
            yield codes.POLICY_NAMED_PORT_NOT_FOUND.finding(
                ref(record),
                f"named port {port.name!r}/{port.protocol} of NetworkPolicy {record.ref} "
                "resolves on none of the pods it selects",
                detail=f"None of the {len(selected)} selected pod(s) or template(s) has a "
                f"container port named {port.name} with protocol {port.protocol}, so this "
                "entry admits nothing.",
                suggestion="Use the container port's name (and protocol) or its number.",
                evidence=[evidence(record, path, port.name)],
            )


def _not_evaluated(record: NetworkPolicyRecord | GenericRecord,
                   problem: Exception) -> Finding:
    field_path = getattr(problem, "field_path", "spec")
    return codes.POLICY_NOT_EVALUATED.finding(
        ref(record), f"{record.kind} {record.ref} cannot be evaluated: {problem}",
        detail="netsight does not evaluate this shape (or the API server would reject it); "
        "flows this policy could decide are answered with allowed: null.",
        suggestion="Fix the field to the shape the API reference gives.",
        evidence=[evidence(record, field_path, None)],
    )


def _admin_policies(view: GraphView) -> Iterator[Finding]:
    by_priority: dict[tuple[bool, int], list[GenericRecord]] = defaultdict(list)
    for kind in (anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND):
        for record in sorted(view.for_each(kind), key=lambda r: r.name):
            if not isinstance(record, GenericRecord):
                continue
            if kind == anp.CNP_KIND:
                if not cnp.evaluated(record):
                    continue
                model = cnp.build(record)
            elif record.api_version.startswith(anp.GROUP + "/"):
                model = anp.build(record)
            else:
                continue
            for problem in (model.subject_problem, model.ingress_problem,
                            model.egress_problem):
                if problem is not None:
                    yield _not_evaluated(record, problem)
            if model.subject_problem is None and kind != anp.BANP_KIND:
                by_priority[(model.baseline, model.priority)].append(record)
    for (_, priority), records in sorted(by_priority.items()):
        if len(records) < 2:
            continue
        names = ", ".join(r.name for r in records)
        yield codes.ADMIN_POLICY_PRIORITY_SHARED.finding(
            ref(records[0]),
            f"{records[0].kind}s {names} share priority {priority}",
            detail="The spec leaves the order of policies with equal priority in one tier "
            "undefined: where their rules disagree, implementations may differ (netsight "
            "answers null).",
            suggestion="Give each policy of the tier its own priority.",
            evidence=[evidence(r, "spec.priority", priority) for r in records],
        )


CHECK = Check(METADATA, check)
