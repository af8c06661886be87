"""Why a probe and the static verdict disagree: the causes the graph can show evidence for,
likeliest first.

Each cause is checked against what the graph holds, and named only with evidence for it:
the CNI that runs (from its agents' pods, or its CRDs) and whether it enforces
NetworkPolicies; container ports that do not declare the destination port, or a refusal
from a Ready pod that declares it; a Service
without a ready pod; a destination whose mesh requires mTLS from a client without a proxy;
objects of the flow that changed moments ago, or kinds whose watch is down. Where the graph
names no CNI, it says the CNI is unknown rather than guess one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import Field

from netsight.analyzers.core.contracts import Model, ResourceRef
from netsight.analyzers.policy.endpoints import Endpoint, Resolved
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.istio_model import Mode
from netsight.graph.model.kinds import Kind, kind_id, make_key
from netsight.graph.model.records import PodRecord
from netsight.graph.store.live import GraphView

# Seconds within which a change to an object of the flow may not have reached the data
# plane (or this graph): kube-proxy and CNI agents apply changes within a second or two.
RECENT = 30.0
# Changes looked at, newest first, for the last one touching the flow.
CHANGES_SCANNED = 5_000


class Likelihood(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


_RANK = {Likelihood.HIGH: 0, Likelihood.MEDIUM: 1, Likelihood.LOW: 2}


class Cause(StrEnum):
    CNI_ENFORCES_NO_POLICY = "cni-enforces-no-policy"
    CNI_UNKNOWN = "cni-unknown"
    NO_LISTENER = "no-listener"
    NO_READY_ENDPOINT = "no-ready-endpoint"
    MESH_REQUIRES_MTLS = "mesh-requires-mtls"
    DNS = "dns"
    GRAPH_STALE = "graph-stale"
    POLICY_NOT_IN_GRAPH = "policy-not-in-graph"


class Explanation(Model):
    cause: Cause
    likelihood: Likelihood
    summary: str
    evidence: list[str] = Field(description="What in the graph points to it")


@dataclass(frozen=True, slots=True)
class Flow:
    source: Endpoint
    destination: Resolved
    targets: list[tuple[Endpoint, int]]
    port: int
    blocking: list[ResourceRef]


# (name fragment of a CNI agent's pods or DaemonSet, CNI, whether it enforces NetworkPolicy;
# None: it depends on how it was installed).
CNI_AGENTS: tuple[tuple[str, str, bool | None], ...] = (
    ("canal", "Canal", True), ("calico-node", "Calico", True), ("cilium", "Cilium", True),
    ("weave-net", "Weave Net", True), ("antrea-agent", "Antrea", True),
    ("kube-router", "kube-router", True), ("ovnkube-node", "OVN-Kubernetes", True),
    ("kube-network-policies", "kube-network-policies", True),
    ("flannel", "Flannel", False), ("kindnet", "kindnet", None), ("aws-node", "AWS VPC CNI",
                                                                  None),
)
# Where CNI agents run: read these namespaces rather than every pod of the cluster.
CNI_NAMESPACES = ("kube-system", "kube-flannel", "calico-system", "cilium", "cilium-system",
                  "antrea-system", "openshift-ovn-kubernetes", "ovn-kubernetes")
# A provider whose CRDs the graph watches, and the CNI that brings them.
CNI_PROVIDERS = {"cilium": "Cilium", "calico": "Calico"}


@dataclass(frozen=True, slots=True)
class Cni:
    name: str | None  # None: nothing in the graph names it
    enforces: bool | None
    evidence: tuple[str, ...] = ()


def detect_cni(view: GraphView) -> Cni:
    """The CNI the graph shows running, from its agents' pods; its policy CRDs next."""
    visible = view.namespaces()
    found: dict[str, tuple[bool | None, str]] = {}
    for namespace in CNI_NAMESPACES:
        if namespace not in visible:
            continue
        for pod in view.for_each(Kind.POD, namespace):
            owner_kind, owner = pod.owner or ("", "")
            for fragment, name, enforces in CNI_AGENTS:
                if fragment in pod.name or fragment in owner:
                    of = f" of {owner_kind} {owner}" if owner else ""
                    found.setdefault(name, (enforces, f"pod {pod.ref}{of}"))
                    break
    if "Canal" in found:
        found.pop("Flannel", None)  # Canal runs flannel for routing, Calico for policy
    if not found:
        for record in _provider_policies(view):
            found.setdefault(record[0], (True, record[1]))
    if len(found) != 1:
        names = sorted(found)
        if names:
            return Cni(" or ".join(names), None, tuple(e for _, e in found.values()))
        return Cni(None, None)
    ((name, (enforces, evidence)),) = found.items()
    return Cni(name, enforces, (evidence,))


def _provider_policies(view: GraphView) -> Iterable[tuple[str, str]]:
    for kind in view.kinds():
        for provider, name in CNI_PROVIDERS.items():
            if provider in kind.lower() and view.count(kind):
                yield name, f"{view.count(kind)} {kind} object(s) in the graph"


def explain(view: GraphView, flow: Flow, *, allowed: bool, outcome: str) -> list[Explanation]:
    """The causes of a disagreement the graph shows evidence for, likeliest first:
    ``allowed`` is the static verdict, ``outcome`` what the probe saw."""
    found = _let_through(view, flow) if not allowed else _stopped(view, flow, outcome)
    found.extend(_stale(view, flow))
    return sorted(found, key=lambda e: _RANK[e.likelihood])


def _let_through(view: GraphView, flow: Flow) -> list[Explanation]:
    """Policies deny the flow, yet it connected."""
    cni = detect_cni(view)
    blocking = ", ".join(str(r) for r in flow.blocking) or "the policies"
    if cni.name is None:
        return [Explanation(
            cause=Cause.CNI_UNKNOWN, likelihood=Likelihood.MEDIUM,
            summary=f"{blocking} deny this flow, but the CNI is unknown: nothing in the "
            "graph names it; if it enforces no NetworkPolicy, none of them applies",
            evidence=[f"no pod of a known CNI agent in {', '.join(CNI_NAMESPACES)}"])]
    if cni.enforces is False:
        return [Explanation(
            cause=Cause.CNI_ENFORCES_NO_POLICY, likelihood=Likelihood.HIGH,
            summary=f"NetworkPolicies exist, but the CNI ({cni.name}) enforces none: "
            f"{blocking} have no effect", evidence=list(cni.evidence))]
    likelihood = Likelihood.MEDIUM if cni.enforces is None else Likelihood.LOW
    return [Explanation(
        cause=Cause.CNI_ENFORCES_NO_POLICY, likelihood=likelihood,
        summary=f"{blocking} deny this flow; the CNI ({cni.name}) "
        + ("enforces NetworkPolicy only when installed to" if cni.enforces is None
           else "enforces policy, so this is unlikely unless it has not applied them yet"),
        evidence=list(cni.evidence))]


def _stopped(view: GraphView, flow: Flow, outcome: str) -> list[Explanation]:
    """Nothing in the policies denies the flow, yet it did not connect."""
    found = []
    if outcome == "dns_failed":
        service = flow.destination.service
        found.append(Explanation(
            cause=Cause.DNS, likelihood=Likelihood.HIGH,
            summary="the destination's name did not resolve from the source: the cluster "
            "DNS is down or slow, or the name expands wrongly (check_dns_resolution)",
            evidence=[f"the graph holds Service {service.ref}" if service is not None
                      else "the destination is not a Service"]))
    ready = [e for e, _ in flow.targets if _pod_ready(view, e)]
    if flow.destination.service is not None and not ready:
        found.append(Explanation(
            cause=Cause.NO_READY_ENDPOINT,
            likelihood=Likelihood.HIGH if outcome in ("refused", "timeout", "unreachable")
            else Likelihood.MEDIUM,
            summary=f"Service {flow.destination.service.ref} has no ready pod behind port "
            f"{flow.port}: kube-proxy has nowhere to send the connection",
            evidence=[f"{len(flow.targets)} pod(s) selected, none Ready"]))
    undeclared = [f"{e.name} declares no containerPort {p}" for e, p in flow.targets
                  if not e.host_network and e.ports and all(c.port != p for c in e.ports)]
    if undeclared and outcome in ("refused", "reset", "timeout"):
        found.append(Explanation(
            cause=Cause.NO_LISTENER,
            likelihood=Likelihood.HIGH if outcome == "refused" else Likelihood.MEDIUM,
            summary="the destination may have no listener on that port: its containers do "
            "not declare it (containerPorts are informational, but usually right)",
            evidence=undeclared[:5]))
    elif outcome == "refused" and ready:
        # A refusal is the destination's kernel answering that no socket listens: the
        # declared port says what the app should do, not what it does.
        found.append(Explanation(
            cause=Cause.NO_LISTENER, likelihood=Likelihood.HIGH,
            summary="the destination refused the connection although policies allow it and "
            "its pod is Ready: nothing listens on that port (the app listens on another, or "
            "only on localhost), a fault no object shows",
            evidence=[f"{e.name} declares containerPort {p} and is Ready"
                      for e, p in flow.targets if _pod_ready(view, e)][:5]))
    found.extend(_mtls(view, flow, outcome))
    if outcome == "timeout":
        unread = [f"{kind}: {why}" for kind in view.kinds()
                  if (why := view.unreadable(kind)) is not None]
        if unread:
            found.append(Explanation(
                cause=Cause.POLICY_NOT_IN_GRAPH, likelihood=Likelihood.MEDIUM,
                summary="a policy the graph cannot read may drop the traffic",
                evidence=unread[:5]))
    return found


def _mtls(view: GraphView, flow: Flow, outcome: str) -> list[Explanation]:
    if flow.source.mesh_proxy is not None:
        return []
    engine = PolicyEngine(view)
    strict = []
    for endpoint, port in flow.targets:
        if endpoint.mesh_proxy is None or endpoint.namespace is None:
            continue
        server = engine.istio.server_mode(endpoint, port)
        if server.mode is Mode.STRICT:
            setter = server.policy.name if server.policy else "(mesh-wide)"
            strict.append(f"{endpoint.name} runs {endpoint.mesh_proxy}; "
                          f"PeerAuthentication {setter} is STRICT on port {port}")
    if not strict:
        return []
    return [Explanation(
        cause=Cause.MESH_REQUIRES_MTLS,
        likelihood=Likelihood.HIGH if outcome in ("reset", "refused") else Likelihood.MEDIUM,
        summary="the destination's mesh requires mTLS, and the source sends plaintext: it has "
        "no mesh proxy", evidence=[f"source {flow.source.name} has no mesh proxy",
                                   *strict[:4]])]


def _news(view: GraphView, key: str, change: str, now: float) -> bool:
    """Whether a change is news to the data plane: an edit or a deletion, or an object
    created moments ago; not one listed again (a sync, a re-list), which is as old as its
    creationTimestamp says."""
    if change != "ADDED":
        return True
    record = view.get(key)
    created = record.created if record is not None else None
    try:
        at = datetime.strptime(created or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return False  # no creation time (a manifest): nothing says it is new
    return now - at.timestamp() <= RECENT


def _pod_ready(view: GraphView, endpoint: Endpoint) -> bool:
    record = view.get(endpoint.key) if endpoint.key else None
    return isinstance(record, PodRecord) and record.ready is True and not record.terminating


def _stale(view: GraphView, flow: Flow) -> list[Explanation]:
    """The graph, or the data plane, behind the cluster for an object of the flow."""
    evidence = [f"the {kind} watch has been down for {seconds:g}s"
                for kind, seconds in sorted(view.staleness().items())]
    involved = {e.key for e in (flow.source, *(e for e, _ in flow.targets)) if e.key}
    if flow.destination.service is not None:
        involved.add(flow.destination.service.key)
    involved |= {make_key(kind_id(ref.api_version or "", ref.kind), ref.namespace or "",
                          ref.name) for ref in flow.blocking}
    now = time.time()
    for n, change in enumerate(view.changes_since(0, newest_first=True)):
        if n >= CHANGES_SCANNED or now - change.at > RECENT:
            break
        if change.key in involved and _news(view, change.key, change.type.value, now):
            evidence.append(f"{change.key} changed {now - change.at:.1f}s ago (graph "
                            f"generation {change.generation}): the data plane or the graph "
                            "may not have caught up")
            break
    if not evidence:
        return []
    return [Explanation(cause=Cause.GRAPH_STALE,
                        likelihood=Likelihood.HIGH if view.staleness() else Likelihood.MEDIUM,
                        summary="the graph may not show the cluster as the probe met it",
                        evidence=evidence)]

