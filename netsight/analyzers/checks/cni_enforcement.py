"""Network policies the CNI does not enforce: NetworkPolicies (or admin policies) exist, and
the detected CNI enforces none of them, or whether it does cannot be told."""

from __future__ import annotations

from collections.abc import Iterator

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.policy import anp
from netsight.analyzers.policy import cni_detection as cni
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphView
from netsight.graph.store.sync_status import Source

POLICY_KINDS = (Kind.NETWORK_POLICY, anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND)

METADATA = AnalyzerMetadata(
    name="cni_enforcement",
    description="Network policies that the detected CNI does not enforce.",
    reads=frozenset({*POLICY_KINDS, *cni.READS}),
    codes=(codes.CNI_ENFORCES_NO_POLICY, codes.CNI_ENFORCEMENT_UNKNOWN),
)


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    counts = {kind: view.count(kind, None if kind != Kind.NETWORK_POLICY else namespace)
              for kind in POLICY_KINDS}
    total = sum(counts.values())
    if not total:
        return
    found = cni.detect(view)
    if found.enforced is True or (not found.found and view.source is Source.MANIFESTS):
        return
    if not found.found and view.untracked(Kind.DAEMON_SET) is not None:
        # netsight was not set to look (PROVIDER_STATUS off, or DaemonSets not readable):
        # that is about netsight, not the cluster; verdicts' metadata.enforcement says it.
        return
    shown = ", ".join(f"{n} {kind.split('.')[0]}" for kind, n in counts.items() if n)
    agent = next((d for d in found.found if d.resource is not None), None)
    evidence = [e for d in found.found for e in d.evidence]
    if found.enforced is False:
        names = " and ".join(found.names)
        yield codes.CNI_ENFORCES_NO_POLICY.finding(
            agent.resource if agent else None,
            f"{shown} exist, but {names} enforces no network policy",
            detail=f"{found.reason}. Every flow these policies deny still passes; policy "
            "verdicts say so (metadata.enforcement: enforced false).",
            suggestion="Run a CNI that enforces NetworkPolicy (Calico, Cilium, Antrea, ...; "
            "with Flannel, Canal adds Calico's policy agent), or do not rely on these "
            "policies.",
            evidence=evidence)
    else:
        yield codes.CNI_ENFORCEMENT_UNKNOWN.finding(
            agent.resource if agent else None,
            f"{shown} exist; whether the CNI enforces them is unknown",
            detail=f"{found.reason}. Policy verdicts say so (metadata.enforcement: enforced "
            "null).",
            evidence=evidence)


CHECK = Check(METADATA, check)
