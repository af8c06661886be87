"""Which CNI runs the cluster's pod network, and whether it enforces NetworkPolicy.

Read from what a CNI's installation leaves in the API: its agent DaemonSet (name, labels,
images), the Node annotations its agent writes, and its CRDs. Policies are only as real as
the data plane that enforces them: Flannel routes packets and enforces none (its README
leaves policy to "other projects such as Calico"), Canal pairs it with Calico's policy
agent, kindnet enforces NetworkPolicy since kind v0.24.0 (kindnetd v20240813,
kubernetes-sigs/kind#3612; aojea/kindnet v1.3.0), and the AWS VPC CNI only with its network
policy agent enabled. Where the signals do not decide, ``enforced`` is None with the reason:
never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Enforcement, Evidence, ResourceRef
from netsight.analyzers.policy.verdict import Tri, tri_any
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import (
    CustomResourceDefinitionRecord,
    WorkloadRecord,
)
from netsight.graph.store.live import GraphView
from netsight.graph.store.sync_status import Source

NODE = "Node"
CRD = "CustomResourceDefinition"
READS = frozenset({Kind.DAEMON_SET, NODE, CRD})

Decide = Callable[[WorkloadRecord], tuple[Tri, str]]


def _always(enforced: Tri, why: str) -> Decide:
    return lambda _: (enforced, why)


def _tag(image: str) -> str:
    """An image reference's tag ("" if it has none, or only a digest)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last else ""


_KIND_DATE = re.compile(r"^v(\d{8})")
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


def _kindnet(agent: WorkloadRecord) -> tuple[Tri, str]:
    for image in agent.images:
        tag = _tag(image)
        if "kindest/kindnetd" in image and (m := _KIND_DATE.match(tag)):
            since = m.group(1) >= "20240813"
            return since, (f"kindnetd {tag} " + (
                "enforces NetworkPolicy (since kind v0.24.0, v20240813)" if since else
                "predates NetworkPolicy support (kind v0.24.0, v20240813)"))
        if "kindnetd" in image and (m := _SEMVER.match(tag)):
            since = tuple(map(int, m.groups())) >= (1, 3, 0)
            return since, (f"kindnet {tag} " + (
                "enforces NetworkPolicy (since v1.3.0)" if since else
                "predates NetworkPolicy support (v1.3.0)"))
    return None, ("kindnet enforces NetworkPolicy since kind v0.24.0 (kindnetd v20240813); "
                  "its image tag does not tell its version")


def _aws(agent: WorkloadRecord) -> tuple[Tri, str]:
    if any("aws-network-policy-agent" in image for image in agent.images):
        return None, ("the AWS VPC CNI enforces NetworkPolicy only with its network policy "
                      "agent enabled (enableNetworkPolicy), which netsight cannot read")
    return False, "this AWS VPC CNI runs no network policy agent (aws-network-policy-agent)"


def _weave(agent: WorkloadRecord) -> tuple[Tri, str]:
    if any("weave-npc" in image for image in agent.images):
        return True, "Weave Net's weave-npc container enforces NetworkPolicy"
    return False, "this Weave Net DaemonSet runs no weave-npc, which enforces NetworkPolicy"


@dataclass(frozen=True, slots=True)
class Signature:
    """How one CNI's agent DaemonSet shows itself, and what it enforces."""

    cni: str
    names: frozenset[str]
    labels: tuple[tuple[str, str], ...]
    images: tuple[str, ...]  # substrings of an image repository
    decide: Decide

    def matches(self, agent: WorkloadRecord) -> bool:
        return agent.name in self.names \
            or any(agent.labels.get(k) == v for k, v in self.labels) \
            or any(part in image for image in agent.images for part in self.images)


# First match wins: GKE's anetd carries Cilium's label, Canal's pods Calico's image.
SIGNATURES: tuple[Signature, ...] = (
    Signature("GKE Dataplane V2", frozenset({"anetd"}), (), (),
              _always(True, "GKE Dataplane V2 always enforces NetworkPolicy")),
    Signature("Canal", frozenset({"canal"}), (("k8s-app", "canal"),), (),
              _always(True, "Canal enforces NetworkPolicy with Calico's policy agent over "
                      "Flannel's network")),
    Signature("Cilium", frozenset({"cilium"}), (("k8s-app", "cilium"),), ("cilium/cilium",),
              _always(True, "Cilium enforces NetworkPolicy")),
    Signature("Calico", frozenset({"calico-node"}), (("k8s-app", "calico-node"),),
              ("calico/node",), _always(True, "Calico enforces NetworkPolicy")),
    Signature("Antrea", frozenset({"antrea-agent"}), (("component", "antrea-agent"),),
              ("antrea/antrea-agent", "antrea/antrea-ubuntu"),
              _always(True, "Antrea enforces NetworkPolicy")),
    Signature("OVN-Kubernetes", frozenset({"ovnkube-node"}), (("app", "ovnkube-node"),), (),
              _always(True, "OVN-Kubernetes enforces NetworkPolicy")),
    Signature("kube-router", frozenset({"kube-router"}), (("k8s-app", "kube-router"),),
              ("cloudnativelabs/kube-router",),
              _always(True, "kube-router enforces NetworkPolicy (its firewall, on unless "
                      "--run-firewall=false)")),
    Signature("Weave Net", frozenset({"weave-net"}), (("name", "weave-net"),),
              ("weaveworks/weave-kube",), _weave),
    Signature("Azure NPM", frozenset({"azure-npm"}), (("k8s-app", "azure-npm"),),
              ("azure-npm",), _always(True, "Azure Network Policy Manager enforces "
                                      "NetworkPolicy")),
    Signature("AWS VPC CNI", frozenset({"aws-node"}), (("k8s-app", "aws-node"),),
              ("amazon-k8s-cni",), _aws),
    Signature("Azure CNI", frozenset({"azure-cns"}), (("k8s-app", "azure-cns"),), (),
              _always(False, "Azure CNI leaves NetworkPolicy to Azure NPM, Calico or "
                      "Cilium")),
    Signature("kindnet", frozenset({"kindnet"}), (("app", "kindnet"),), ("kindnetd",),
              _kindnet),
    Signature("Flannel", frozenset({"kube-flannel-ds", "kube-flannel"}), (("app", "flannel"),),
              ("flannel/flannel", "flannel-io/flannel", "coreos/flannel"),
              _always(False, "Flannel enforces no NetworkPolicy")),
)

# Node annotation prefixes each agent writes on its Node (graph/model/field_values.py keeps
# them). Flannel's are written by Canal too: alone they cannot tell the two apart.
NODE_ANNOTATIONS: tuple[tuple[str, str, Tri], ...] = (
    ("network.cilium.io/", "Cilium", True),
    ("io.cilium.network.", "Cilium", True),
    ("projectcalico.org/", "Calico", True),
    ("kube-router.io/", "kube-router", True),
    ("flannel.alpha.coreos.com/", "Flannel", None),
)

# CRD groups installed with a CNI; a CRD can outlive its agent, so they alone decide nothing.
CRD_GROUPS: dict[str, str] = {"cilium.io": "Cilium", "crd.projectcalico.org": "Calico",
                              "crd.antrea.io": "Antrea"}


@dataclass(frozen=True, slots=True)
class Detected:
    cni: str
    enforced: Tri
    reason: str
    resource: ResourceRef | None
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True, slots=True)
class Detection:
    """The CNIs found, and whether NetworkPolicy is enforced (None: cannot be told)."""

    found: tuple[Detected, ...]
    enforced: Tri
    reason: str

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(d.cni for d in self.found))


def detect(view: GraphView) -> Detection:
    """Kept until a DaemonSet, Node or CRD changes (every verdict of an answer asks); the
    informers' state, which decides what an absence means, is part of the key."""
    return view.derived(("cni", view.untracked(Kind.DAEMON_SET)), READS, _detect)


def _detect(view: GraphView) -> Detection:
    agents: list[Detected] = []
    for record in sorted(view.for_each(Kind.DAEMON_SET), key=lambda r: r.key):
        if not isinstance(record, WorkloadRecord):
            continue
        signature = next((s for s in SIGNATURES if s.matches(record)), None)
        if signature is not None:
            enforced, why = signature.decide(record)
            agents.append(Detected(signature.cni, enforced, why, ref(record),
                                   (evidence(record, "metadata.name", record.name),)))
    daemonsets_unknown = view.untracked(Kind.DAEMON_SET)
    if agents:
        enforced = tri_any(a.enforced for a in agents)
        if enforced is False and daemonsets_unknown is not None:
            enforced = None
        return Detection(tuple(agents), enforced, _reason(agents, enforced,
                                                          daemonsets_unknown))
    others = [*_from_nodes(view), *_from_crds(view)]
    if others:
        known = [o for o in others if o.enforced is not None]
        reason = "; ".join(dict.fromkeys(o.reason for o in others))
        if known:
            return Detection(tuple(others), None, f"{reason}; its agent DaemonSet was not "
                             "seen, so whether it runs is not known")
        return Detection(tuple(others), None, reason)
    if view.source is Source.MANIFESTS:
        return Detection((), None, "no CNI in the manifests")
    why = daemonsets_unknown or "no known CNI agent DaemonSet in the namespaces read"
    return Detection((), None, f"no CNI detected ({why})")


def _reason(agents: list[Detected], enforced: Tri, unknown: str | None) -> str:
    text = "; ".join(dict.fromkeys(f"{a.cni}: {a.reason}" for a in agents))
    if enforced is None and unknown is not None and \
            all(a.enforced is False for a in agents):
        text += f"; another CNI may run where netsight cannot see ({unknown})"
    return text


def _from_nodes(view: GraphView) -> Iterable[Detected]:
    seen: set[str] = set()
    for node in view.for_each(NODE):
        for prefix, cni, enforced in NODE_ANNOTATIONS:
            if cni in seen or not any(k.startswith(prefix) for k in node.annotations):
                continue
            seen.add(cni)
            key = next(k for k in node.annotations if k.startswith(prefix))
            why = "Canal writes the same annotations; its DaemonSet was not seen" \
                if enforced is None else "from Node annotations"
            yield Detected(cni, enforced, f"{cni} ({key} on Node {node.name}): {why}",
                           ref(node), (evidence(node, f"metadata.annotations.{key}",
                                                node.annotations[key]),))


def _from_crds(view: GraphView) -> Iterable[Detected]:
    seen: set[str] = set()
    for record in view.for_each(CRD):
        if not isinstance(record, CustomResourceDefinitionRecord):
            continue
        cni = CRD_GROUPS.get(record.group)
        if cni is None or cni in seen:
            continue
        seen.add(cni)
        yield Detected(cni, None, f"{cni}'s CRDs are installed ({record.name}); a CRD can "
                       "outlive its agent", ref(record))



def enforcement(view: GraphView) -> Enforcement | None:
    """What a policy verdict says of enforcement: None where the CNI enforces
    NetworkPolicy, or where manifests name no CNI (the verdict is about the policies as
    written)."""
    found = detect(view)
    if found.enforced is True or (not found.found and view.source is Source.MANIFESTS):
        return None
    return Enforcement(enforced=found.enforced, cni=found.names, reason=found.reason)
