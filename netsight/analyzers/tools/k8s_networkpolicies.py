"""k8s_networkpolicies: every policy in one line each — what it selects and what it admits."""

from __future__ import annotations

from pydantic import Field

from netsight.analyzers.checks import cni_policy_lint, network_policy_lint
from netsight.analyzers.core import deadline
from netsight.analyzers.core.arguments import Namespace, PagedArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import Finding, Model, Page, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.policy import anp, calico, cnp, netpol
from netsight.analyzers.policy.peers import PortMatch
from netsight.analyzers.policy.verdict import Direction
from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.records import GenericRecord, NetworkPolicyRecord, PodRecord
from netsight.graph.store.live import GraphView

NAME = "k8s_networkpolicies"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Every network policy (Kubernetes, admin, Cilium, Calico): what it selects, "
    "its rules in one line, its findings. Use it to audit policies.",
    reads=network_policy_lint.METADATA.reads,
    codes=network_policy_lint.METADATA.codes,
)


class Args(PagedArgs):
    namespace: Namespace | None = Field(
        default=None, description="Only this namespace's policies (no cluster-scoped "
        "ones)")


class PolicySummary(Model):
    policy: str = Field(description="Kind/namespace/name or Kind/name")
    selects: str = Field(description="Whom it applies to")
    pods: int | None = Field(description="Pods it applies to (NetworkPolicy only)")
    rules: str = Field(description="Its rules in one line")
    findings: list[Finding]


class Result(ToolResult):
    policies: list[PolicySummary]
    page: Page


def _ports(ports: tuple[PortMatch, ...] | None) -> str:
    return "" if ports is None else " on " + ", ".join(p.describe() for p in ports)


def _np_rules(model: netpol.NetPol) -> str:
    parts = []
    for direction in sorted(model.types):
        rules = model.rules(direction)
        if not rules:
            parts.append(f"{direction.value}: deny all")
            continue
        shown = []
        for rule in rules:
            peers = "all" if rule.peers is None else " or ".join(p.describe()
                                                                for p in rule.peers)
            shown.append(f"{direction.peers_field} {peers}{_ports(rule.ports)}")
        parts.append(f"{direction.value}: " + "; ".join(shown))
    return " | ".join(parts)


def _admin_rules(model: anp.AdminPolicy) -> str:
    parts = []
    for direction in Direction:
        rules = model.rules(direction)
        if rules:
            parts.append(f"{direction.value}: " + "; ".join(
                f"[{r.index}] {r.action.value} {len(r.peers)} peer(s){_ports(r.ports)}"
                for r in rules))
    if model.subject_problem or model.ingress_problem or model.egress_problem:
        parts.append("not evaluated")
    return " | ".join(parts) or "no rules"


def analyze(view: GraphView, args: Args) -> Result:
    require_namespace(view, args.namespace, tool=NAME)
    found: dict[str, list[Finding]] = {}
    for finding in network_policy_lint.check(view, args.namespace):
        if finding.resource is not None:
            found.setdefault(str(finding.resource), []).append(finding)
    items: list[PolicySummary] = []
    for record in deadline.checked(sorted(view.for_each(Kind.NETWORK_POLICY, args.namespace),
                                          key=lambda r: r.key), every=64):
        assert isinstance(record, NetworkPolicyRecord)
        model = netpol.build(record)
        pods = sum(1 for r in view.neighbors(record.key, Rel.APPLIES_TO)
                   if isinstance(r, PodRecord))
        ref = f"NetworkPolicy/{record.namespace}/{record.name}"
        items.append(PolicySummary(
            policy=ref, selects=f"pods {record.pod_selector.describe()} in {record.namespace}",
            pods=pods, rules="not evaluated" if model.problem else _np_rules(model),
            findings=[f for f in found.get(ref, []) if _group(f) not in calico.GROUPS]))
    for policy in cni_policy_lint.cilium_policies(view, args.namespace):
        record = policy.record
        ref = f"{record.kind}/{record.ref}"
        items.append(PolicySummary(
            policy=ref, selects=cni_policy_lint.summary_selects(policy), pods=None,
            rules=cni_policy_lint.summary_rules(policy), findings=found.get(ref, [])))
    for calico_policy in cni_policy_lint.calico_policies(view, args.namespace):
        record = calico_policy.record
        # The kind id (NetworkPolicy.projectcalico.org) tells it from a Kubernetes one.
        ref = f"{record.kind.partition('.')[0]}/{record.ref}"
        selects, rules = cni_policy_lint.calico_summary(calico_policy)
        items.append(PolicySummary(
            policy=f"{record.kind}/{record.ref}", selects=selects, pods=None, rules=rules,
            findings=[f for f in found.get(ref, []) if _group(f) in calico.GROUPS]))
    if args.namespace is None:
        for kind in (anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND):
            for record in sorted(view.for_each(kind), key=lambda r: r.name):
                summary = _admin_summary(record, found)
                if summary is not None:
                    items.append(summary)
    chunk, page = paginate(items, limit=args.limit, cursor=args.cursor,
                           fingerprint=query_fingerprint(NAME, args.namespace), tool=NAME)
    return Result(metadata=metadata(view, args.namespace), policies=chunk, page=page)


def _group(finding: Finding) -> str:
    version = finding.resource.api_version if finding.resource is not None else None
    return (version or "").partition("/")[0]


def _admin_summary(record: object, found: dict[str, list[Finding]]) -> PolicySummary | None:
    if not isinstance(record, GenericRecord):
        return None
    if record.kind == anp.CNP_KIND:
        if not cnp.evaluated(record):
            return None  # Antrea's, or another version: not modelled
        model = cnp.build(record)
    elif record.api_version.startswith(anp.GROUP + "/"):
        model = anp.build(record)
    else:
        return None
    if model.subject_problem or model.subject_namespaces is None:
        subject = "not evaluated"
    else:
        subject = f"namespaces {model.subject_namespaces.describe()}"
        if model.subject_pods is not None:
            subject += f", pods {model.subject_pods.describe()}"
    tier = model.layer.value if record.kind == anp.BANP_KIND else \
        f"{model.layer.value}, priority {model.priority}"
    ref = f"{record.kind}/{record.name}"
    return PolicySummary(policy=ref, selects=f"{subject} ({tier})", pods=None,
                         rules=_admin_rules(model), findings=found.get(ref, []))


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.POLICY)
