"""Whether each networking provider is running and current, read from the graph: its
controllers' and node agents' rollout status and images, the CRD versions it serves, its
GatewayClasses' acceptance, and for Istio its revisions and revision tags.

Every component is reported as a finding: NS1040 when it is well, a code of NS1010-NS1030
when not. Nothing here asks the API server; what the informers do not watch is said to be
unknown (``not_evaluated``), never taken for absent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding, Severity
from netsight.analyzers.policy import cni_detection as cni
from netsight.graph.model.kinds import Kind, api_group
from netsight.graph.model.records import (
    CustomResourceDefinitionRecord,
    GenericRecord,
    Record,
    WorkloadRecord,
)
from netsight.graph.store.live import GraphView
from netsight.graph.store.sync_status import Source

GATEWAY_CLASS = "GatewayClass"
WEBHOOK = "MutatingWebhookConfiguration"
REV_LABEL, TAG_LABEL = "istio.io/rev", "istio.io/tag"
READS = frozenset({Kind.DEPLOYMENT, Kind.DAEMON_SET, GATEWAY_CLASS, WEBHOOK, *cni.READS})

Match = Callable[[WorkloadRecord], str | None]  # the component's role, or None


def _by(kind: str, role: str, *, names: Iterable[str] = (),
        labels: Iterable[tuple[str, str]] = ()) -> Match:
    wanted_names, wanted_labels = frozenset(names), tuple(labels)

    def match(record: WorkloadRecord) -> str | None:
        if record.kind != kind:
            return None
        if record.name in wanted_names or any(record.labels.get(k) == v
                                              for k, v in wanted_labels):
            return role
        return None
    return match


def _linkerd(record: WorkloadRecord) -> str | None:
    component = record.labels.get("linkerd.io/control-plane-component")
    return component if record.kind == Kind.DEPLOYMENT and component else None


def _istiod(record: WorkloadRecord) -> str | None:
    if record.kind != Kind.DEPLOYMENT or record.labels.get("app") != "istiod":
        return None
    return f"istiod revision {revision(record)}"


def revision(record: Record) -> str:
    """An istiod's (or webhook's) revision; unlabelled is the default revision."""
    return record.labels.get(REV_LABEL) or "default"


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    components: tuple[Match, ...]
    groups: tuple[str, ...] = ()  # the API groups of its CRDs
    # GatewayClass spec.controllerName values its controller answers to.
    controllers: tuple[str, ...] = ()
    node_agents: frozenset[str] = field(default_factory=frozenset)  # roles on every node


DS, DEP = Kind.DAEMON_SET, Kind.DEPLOYMENT

PROVIDERS: tuple[Provider, ...] = (
    Provider("istio", (
        _istiod,
        _by(DS, "ztunnel", names=("ztunnel",), labels=(("app", "ztunnel"),)),
        _by(DS, "istio-cni", names=("istio-cni-node",), labels=(("k8s-app", "istio-cni-node"),)),
        _by(DEP, "ingress gateway", labels=(("istio", "ingressgateway"),)),
        _by(DEP, "egress gateway", labels=(("istio", "egressgateway"),)),
    ), ("networking.istio.io", "security.istio.io"), ("istio.io/gateway-controller",),
        frozenset({"ztunnel", "istio-cni"})),
    Provider("linkerd", (_linkerd, _by(DS, "linkerd-cni", labels=(("k8s-app", "linkerd-cni"),))),
             ("policy.linkerd.io", "linkerd.io"), (), frozenset({"linkerd-cni"})),
    Provider("cilium", (
        _by(DS, "agent", names=("cilium",), labels=(("k8s-app", "cilium"),)),
        _by(DEP, "operator", names=("cilium-operator",), labels=(("io.cilium/app", "operator"),)),
    ), ("cilium.io",), ("io.cilium/gateway-controller",), frozenset({"agent"})),
    Provider("calico", (
        _by(DS, "agent", names=("calico-node",), labels=(("k8s-app", "calico-node"),)),
        _by(DEP, "kube-controllers", names=("calico-kube-controllers",),
            labels=(("k8s-app", "calico-kube-controllers"),)),
        _by(DEP, "typha", names=("calico-typha",), labels=(("k8s-app", "calico-typha"),)),
        _by(DEP, "operator", names=("tigera-operator",), labels=(("k8s-app", "tigera-operator"),)),
    ), ("crd.projectcalico.org",), (), frozenset({"agent"})),
    Provider("kgateway", (
        _by(DEP, "controller", names=("kgateway",),
            labels=(("app.kubernetes.io/name", "kgateway"),)),
    ), ("gateway.kgateway.dev",), ("kgateway.dev/kgateway",)),
    Provider("envoy-gateway", (
        _by(DEP, "controller", names=("envoy-gateway",),
            labels=(("control-plane", "envoy-gateway"),)),
    ), ("gateway.envoyproxy.io",), ("gateway.envoyproxy.io/gatewayclass-controller",)),
    Provider("gateway-api", (), ("gateway.networking.k8s.io",)),
)
NAMES: tuple[str, ...] = (*(p.name for p in PROVIDERS), "cni")


@dataclass(frozen=True, slots=True)
class ProviderState:
    name: str
    status: str  # healthy, degraded, unavailable, unknown, not installed, not detected
    versions: tuple[str, ...]
    served: tuple[str, ...]  # group/version of its CRDs


@dataclass
class Evaluation:
    findings: list[Finding] = field(default_factory=list)
    providers: list[ProviderState] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)


def tag(image: str) -> str:
    """An image's tag (its version), or its digest when it has no tag."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return digest[:19] if digest else "latest"


def evaluate(view: GraphView, provider: str | None) -> Evaluation:
    found = Evaluation()
    for kind in (Kind.DEPLOYMENT, Kind.DAEMON_SET, "Node", WEBHOOK):
        why = view.untracked(kind)
        if why is not None:
            found.not_evaluated.append(why)
    workloads = sorted((r for kind in (Kind.DEPLOYMENT, Kind.DAEMON_SET)
                        for r in view.for_each(kind) if isinstance(r, WorkloadRecord)),
                       key=lambda r: r.key)
    nodes = view.count("Node") if view.untracked("Node") is None else None
    crds = [r for r in view.for_each("CustomResourceDefinition")
            if isinstance(r, CustomResourceDefinitionRecord)]
    classes = sorted((r for r in view.for_each(GATEWAY_CLASS) if isinstance(r, GenericRecord)
                      and api_group(r.api_version) == "gateway.networking.k8s.io"),
                     key=lambda r: r.key)
    reported: set[str] = set()
    for spec in PROVIDERS:
        if provider not in (None, spec.name):
            continue
        members = [(w, role) for w in workloads for role in [_role(spec, w)] if role]
        before = len(found.findings)
        versions: Counter[str] = Counter()
        for record, role in members:
            reported.add(record.key)
            versions.update(tag(i) for i in record.images[:1])
            found.findings.extend(_health(spec, record, role, nodes))
        if len(versions) > 1:
            found.findings.append(_versions(spec, members))
        if spec.name == "istio":
            found.findings.extend(_istio_tags(view, members))
        ours = [c for c in classes if _controller(c) in spec.controllers or
                (spec.name == "gateway-api" and not any(
                    _controller(c) in p.controllers for p in PROVIDERS))]
        found.findings.extend(_gateway_class(view, c, spec.name) for c in ours)
        served = _served(view, crds, spec.groups)
        if len(found.findings) == before and not served:
            if provider is not None:
                found.providers.append(ProviderState(spec.name, "not installed", (), ()))
            continue
        # Its CRDs served but nothing of it seen (no component, no GatewayClass: installed
        # outside the namespaces watched, or not at all): nothing says it runs.
        state = _status(found.findings[before:], [r for r, _ in members]) \
            if len(found.findings) > before else "unknown"
        found.providers.append(ProviderState(spec.name, state, tuple(sorted(versions)), served))
    if provider in (None, "cni"):
        found.findings.extend(_cni(view, workloads, reported, nodes, found))
    return found


def _role(spec: Provider, record: WorkloadRecord) -> str | None:
    return next((role for match in spec.components if (role := match(record))), None)


def _status(findings: list[Finding], members: list[WorkloadRecord]) -> str:
    worst = min((f.severity.rank for f in findings), default=Severity.OK.rank)
    if worst == Severity.CRITICAL.rank:
        return "unavailable"
    if worst == Severity.WARNING.rank:
        return "degraded"
    # Without a reported status (manifests) nothing says it runs.
    return "unknown" if any(m.rollout is None for m in members) else "healthy"


def _served(view: GraphView, crds: list[CustomResourceDefinitionRecord],
            groups: tuple[str, ...]) -> tuple[str, ...]:
    """From CRDs in the graph (manifests) the versions they serve, from a cluster those of
    its kinds netsight watches (each kind in the version discovery prefers)."""
    found = {f"{c.group}/{v}" for c in crds if c.group in groups for v in c.served}
    found.update(v for v in view.served().values() if api_group(v) in groups)
    return tuple(sorted(found))


def _health(spec: Provider, record: WorkloadRecord, role: str, nodes: int | None
            ) -> Iterator[Finding]:
    label = f"{spec.name} {role}: {record.kind} {record.ref}"
    version = ", ".join(dict.fromkeys(tag(i) for i in record.images)) or "no image"
    proof = [evidence(record, "spec.template.spec.containers[0].image",
                      record.images[0] if record.images else None)]
    rollout = record.rollout
    if rollout is None:
        yield codes.PROVIDER_STATUS.finding(
            ref(record), f"{label} ({version}); no status reported",
            detail="The object carries no status (a manifest): its readiness is unknown.",
            evidence=proof)
        return
    counts = f"{rollout.ready}/{rollout.desired} ready"
    proof.append(evidence(record, "status", counts))
    problem = False
    if rollout.desired and (rollout.ready or 0) < rollout.desired:
        problem = True
        yield codes.PROVIDER_CONTROLLER_NOT_READY.finding(
            ref(record), f"{label} has {counts} ({version})",
            detail=f"{rollout.desired} pod(s) wanted, {rollout.ready or 0} ready: what this "
            f"{role} serves is " + ("down." if not rollout.ready else "degraded."),
            severity=None if not rollout.ready else Severity.WARNING,
            suggestion=f"kubectl -n {record.namespace} describe {record.kind.lower()} "
            f"{record.name}, and the logs of its pods.",
            evidence=proof)
    if rollout.observed is False or (rollout.desired is not None and rollout.updated
                                     is not None and rollout.updated < rollout.desired):
        problem = True
        yield codes.PROVIDER_ROLLOUT_INCOMPLETE.finding(
            ref(record), f"{label}: {rollout.updated}/{rollout.desired} pods of the current "
            "template" + ("; latest spec not yet observed" if rollout.observed is False
                          else ""),
            detail="A rollout is under way or stuck: pods of an older version still run.",
            evidence=proof)
    if role in spec.node_agents and nodes is not None and rollout.desired is not None \
            and rollout.desired < nodes:
        problem = True
        yield codes.PROVIDER_AGENTS_MISSING_NODES.finding(
            ref(record), f"{label} runs on {rollout.desired} of {nodes} nodes",
            detail="Pods on the other nodes have no agent (unless its nodeSelector or "
            "taints leave them out on purpose).",
            evidence=proof)
    if not problem:
        yield codes.PROVIDER_STATUS.finding(
            ref(record), f"{label}: {counts} ({version})",
            detail="Every wanted pod is ready and of the current template.", evidence=proof)


def _versions(spec: Provider, members: list[tuple[WorkloadRecord, str]]) -> Finding:
    shown = ", ".join(f"{role} {tag(r.images[0])}" for r, role in members if r.images)
    record = members[0][0]
    return codes.PROVIDER_VERSIONS_DIFFER.finding(
        ref(record), f"{spec.name} components run different versions: {shown}",
        detail="Expected during an upgrade or with canary revisions; otherwise components "
        "of different versions may disagree.",
        evidence=[evidence(r, "spec.template.spec.containers[0].image", r.images[0])
                  for r, _ in members if r.images])


def _istio_tags(view: GraphView, members: list[tuple[WorkloadRecord, str]]
                ) -> Iterator[Finding]:
    if view.untracked(Kind.DEPLOYMENT) is not None:
        return
    running = {revision(r) for r, role in members if role.startswith("istiod")}
    for hook in sorted(view.for_each(WEBHOOK), key=lambda r: r.key):
        if REV_LABEL not in hook.labels:
            continue
        rev, name = hook.labels[REV_LABEL], hook.labels.get(TAG_LABEL)
        what = f"revision tag {name!r}" if name else f"injection webhook of revision {rev!r}"
        if rev in running:
            yield codes.PROVIDER_STATUS.finding(
                ref(hook), f"istio {what} ({hook.name}) -> istiod revision {rev}",
                detail="The revision it points to runs.",
                evidence=[evidence(hook, f"metadata.labels.{REV_LABEL}", rev)])
            continue
        yield codes.ISTIO_TAG_REVISION_MISSING.finding(
            ref(hook), f"istio {what} ({hook.name}) points to revision {rev!r}, which no "
            "istiod runs",
            detail="Pods of namespaces labelled with it get no sidecar (the webhook's "
            f"service has no istiod behind it). Revisions running: "
            f"{', '.join(sorted(running)) or 'none'}.",
            suggestion=f"istioctl tag set {name or rev} --revision <running revision> "
            "--overwrite, or install the revision.",
            evidence=[evidence(hook, f"metadata.labels.{REV_LABEL}", rev)])


def _controller(record: GenericRecord) -> str:
    return str((record.spec or {}).get("controllerName") or "")


def _gateway_class(view: GraphView, record: GenericRecord, provider: str) -> Finding:
    conditions = (record.status or {}).get("conditions") or ()
    accepted = next((c for c in conditions if isinstance(c, dict)
                     and c.get("type") == "Accepted"), None)
    controller = _controller(record)
    proof = [evidence(record, "spec.controllerName", controller)]
    if accepted is not None and accepted.get("status") == "True":
        return codes.PROVIDER_STATUS.finding(
            ref(record), f"{provider} GatewayClass {record.name} is Accepted by {controller}",
            detail="Its controller has accepted it.", evidence=proof)
    if accepted is None and view.source is Source.MANIFESTS:
        return codes.PROVIDER_STATUS.finding(
            ref(record), f"{provider} GatewayClass {record.name} ({controller}); no status "
            "reported", detail="A manifest: whether its controller accepts it is unknown.",
            evidence=proof)
    if accepted is None:
        return codes.GATEWAY_CLASS_NOT_ACCEPTED.finding(
            ref(record), f"GatewayClass {record.name}: no controller has reported on it "
            f"({controller})", severity=Severity.WARNING,
            detail="No Accepted condition: the controller named is not running, or not "
            "installed.", evidence=proof)
    reason = accepted.get("reason") or ""
    return codes.GATEWAY_CLASS_NOT_ACCEPTED.finding(
        ref(record), f"GatewayClass {record.name} is not Accepted: {reason}",
        detail=str(accepted.get("message") or "its controller refused it."),
        evidence=[*proof, evidence(record, "status.conditions[Accepted]", reason)])


def _cni(view: GraphView, workloads: list[WorkloadRecord], reported: set[str],
         nodes: int | None, found: Evaluation) -> Iterator[Finding]:
    detection = cni.detect(view)
    every = [w for w in workloads if w.kind == Kind.DAEMON_SET
             and any(s.matches(w) for s in cni.SIGNATURES)]
    agents = [w for w in every if w.key not in reported]  # not already shown as a provider's
    spec = Provider("cni", (), node_agents=frozenset({"agent"}))
    findings = [f for w in agents for f in _health(spec, w, "agent", nodes)]
    enforced = {True: "enforces NetworkPolicy", False: "enforces no NetworkPolicy",
                None: "NetworkPolicy enforcement unknown"}[detection.enforced]
    names = ", ".join(detection.names) or "not detected"
    summary = codes.PROVIDER_STATUS.finding(
        None, f"CNI: {names}; {enforced}", detail=detection.reason,
        evidence=[e for d in detection.found for e in d.evidence])
    found.providers.append(ProviderState(
        "cni", _status(findings, agents) if detection.found else "not detected",
        tuple(sorted({tag(w.images[0]) for w in every if w.images})), ()))
    yield summary
    yield from findings
