"""DestinationRules whose host is unknown or whose subsets select no pod
(istioctl's destinationrule.PodNotSelectedAnalyzer)."""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.quoting import labels_text
from netsight.analyzers.mesh.context import MeshContext, PodLabels
from netsight.analyzers.mesh.hosts import to_fqdn
from netsight.analyzers.mesh.istio_objects import NODE, labels_match
from netsight.graph.model.records import PodRecord

# Labels Istio adds to every endpoint from its node (pilot's AugmentLabels).
TOPOLOGY_LABELS = ("topology.kubernetes.io/region", "topology.kubernetes.io/zone",
                   "topology.istio.io/subzone")
HOSTNAME_LABEL = "kubernetes.io/hostname"


def subsets_select_pods(ctx: MeshContext) -> None:
    unknown = ctx.services_unknown() or ctx.pods_unknown()
    rules = [r for r in ctx.destination_rules if ctx.in_scope(r.record)]
    if not rules:
        return
    if unknown is not None:
        ctx.skip("DestinationRule hosts and subsets", unknown)
        return
    nodes_unknown = ctx.unknown(NODE)
    node_labels = {} if nodes_unknown else \
        {n.name: dict(n.labels) for n in ctx.view.for_each(NODE)}
    topology_pods: list[PodLabels] | None = None
    for rule in rules:
        record = rule.record
        entry = ctx.hosts.lookup(record.namespace, rule.export_to, rule.host)
        if entry is None:
            ctx.report(codes.DESTINATION_RULE_HOST_NOT_FOUND.finding(
                ref(record), f"DestinationRule {record.ref} is for host {rule.host!r}, "
                "which matches no Service or ServiceEntry",
                detail=f"spec.host resolves to {to_fqdn(record.namespace, rule.host)!r}; "
                "nothing visible from this namespace provides it, so the rule applies to "
                "nothing.",
                suggestion="Correct spec.host (name.namespace.svc.cluster.local for "
                "another namespace), or check the Service's exportTo.",
                evidence=[evidence(record, "spec.host", rule.host)],
            ))
            continue
        seen: set[str] = set()
        for subset in rule.subsets:
            if subset.name in seen:
                continue
            seen.add(subset.name)
            selector = {**(entry.workload_selector or {}), **subset.labels}
            if any(k in selector for k in (*TOPOLOGY_LABELS, HOSTNAME_LABEL)):
                # Labels Istio takes from the pod's node: a scan with them added.
                if topology_pods is None:
                    topology_pods = [_with_topology(p, node_labels) for p in ctx.pods()]
                if any(labels_match(selector, p.labels) for p in topology_pods):
                    continue
            elif next(ctx.pods_matching(selector), None) is not None:
                continue
            if nodes_unknown and any(k in selector for k in (*TOPOLOGY_LABELS,
                                                             HOSTNAME_LABEL)):
                ctx.skip(f"DestinationRule {record.ref} subset {subset.name}",
                         f"it selects on node topology labels; {nodes_unknown}")
                continue
            ctx.report(codes.DESTINATION_RULE_SUBSET_SELECTS_NO_PODS.finding(
                ref(record), f"Subset {subset.name!r} of DestinationRule {record.ref} "
                "selects no pod",
                detail=f"No pod carries the labels {labels_text(selector)}; traffic routed to this "
                "subset finds no endpoint (503).",
                suggestion="Correct the subset's labels to those of the pods of this "
                "version, or remove the subset.",
                evidence=[evidence(record, f"{subset.path}.labels", dict(subset.labels))],
            ))


def _with_topology(pod: PodLabels, nodes: dict[str, dict[str, str]]) -> PodLabels:
    record = pod.record
    if not isinstance(record, PodRecord) or not record.node_name:
        return pod
    node = nodes.get(record.node_name)
    if node is None:
        return pod
    labels = dict(pod.labels)
    for key in TOPOLOGY_LABELS:
        if node.get(key):  # an empty locality label is no locality
            labels[key] = node[key]
    labels[HOSTNAME_LABEL] = record.node_name
    return PodLabels(record, labels, pod.assumed)
