"""Evaluate one flow across every policy layer: Admin tier -> NetworkPolicy -> Baseline tier,
then, at the destination, the meshes' authorization: Istio's (istio_authz), Linkerd's
(linkerd_authz) and Kuma's (kuma_authz).

Per direction, at the pod the direction belongs to (egress at the source, ingress at the
destination): the first matching rule of the Admin tier (ANPs and ClusterNetworkPolicies
of tier Admin, by priority then rule order) decides Allow or Deny; Pass, or no match, goes
on to the NetworkPolicies isolating the pod, which decide if there are any; then the
Baseline tier (the BANP, ClusterNetworkPolicies of tier Baseline); then the default,
allow. Traffic flows when both directions allow it.

An engine lives for one tool call. It finds a pod's NetworkPolicies through the graph's
``applies_to`` edges; the policy models and the sorted cluster-scoped tiers it reads are
kept with the view across calls (:mod:`kept_models`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy import (
    anp,
    calico,
    calico_evaluation,
    cilium,
    cilium_evaluation,
    cnp,
    istio_authz,
    kuma_authz,
    linkerd_authz,
    netpol,
)
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.kept_models import ADMIN_KINDS, Tiers, kept
from netsight.analyzers.policy.peers import IPBlock, Namespaces
from netsight.analyzers.policy.verdict import (
    Action,
    Direction,
    DirectionVerdict,
    Layer,
    Step,
    Tri,
    Verdict,
    tri_all,
)
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel, make_key
from netsight.graph.model.records import GenericRecord, NetworkPolicyRecord, ServiceRecord
from netsight.graph.store.live import GraphView, ProblemKind

ROOT_NAMESPACE = istio_authz.ROOT_NAMESPACE  # Istio's (meshConfig.rootNamespace default)


@dataclass(frozen=True, slots=True)
class Unevaluated:
    """A policy kind netsight does not evaluate, and how far its effect reaches."""

    kind: str
    label: str
    cluster_wide: bool
    restrict_only: bool = False  # it can deny more, never allow what L3/L4 denies
    destination_only: bool = False
    group: str | None = None  # only objects of this API group (the kind name is shared)
    extra_namespace: str | None = None  # also looked for here (a mesh's root namespace)


UNEVALUATED: tuple[Unevaluated, ...] = (
    Unevaluated("NetworkPolicy.crd.antrea.io", "Antrea NetworkPolicy", False),
    # Antrea's (crd.antrea.io) shares the kind id; v1alpha2 and v1beta1 of
    # policy.networking.k8s.io are evaluated, every other group or version is not.
    Unevaluated(anp.CNP_KIND,
                "ClusterNetworkPolicy (not policy.networking.k8s.io/v1alpha2 or v1beta1)",
                True),
    # Mesh authorization sits on top of L3/L4: it can refuse what policies admit, never
    # admit what they refuse. Istio's, Linkerd's and Kuma's are evaluated (istio_authz,
    # linkerd_authz, kuma_authz).
)

# Kinds the engine reads; tools add the kinds they resolve names with.
READS: frozenset[str] = frozenset({
    Kind.POD, Kind.NAMESPACE, Kind.NETWORK_POLICY, anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND,
    "Node",  # labels, for ANP/CNP nodes peers
    *cilium.KINDS, *calico.POLICY_KINDS, calico.TIER_KIND, *calico.NON_POD_KINDS,
    *POD_LIKE_KINDS, *(u.kind for u in UNEVALUATED), *istio_authz.KINDS,
    *istio_authz.TLS_KINDS, *linkerd_authz.READS, *kuma_authz.KINDS,
    Kind.SERVICE,  # Istio reads a port's protocol from the Services selecting the pod
})

# Policy kinds whose unreadable objects leave a verdict undecided.
# (kind -> whether its policies can only restrict, like a mesh's authorization)
_POLICY_KINDS: dict[str, bool] = {
    **{u.kind.partition(".")[0]: u.restrict_only for u in UNEVALUATED},
    Kind.NETWORK_POLICY: False, anp.ANP_KIND: False, anp.BANP_KIND: False, anp.CNP_KIND: False,
    **dict.fromkeys(istio_authz.KINDS, True),
    **{k.partition(".")[0]: True for k in (*linkerd_authz.POLICY_KINDS, kuma_authz.MTP)},
    **dict.fromkeys(cilium.KINDS, False), **dict.fromkeys(calico.POLICY_KINDS, False),
    calico.TIER_KIND: False,
}

_APPLICABLE_LIMIT = 50_000  # subjects' answers kept per tiers (cleared past it)


class PolicyEngine:
    """Evaluates flows over one view; create one per tool call."""

    def __init__(self, view: GraphView, *, explain: bool = True,
                 request: istio_authz.Request | None = None,
                 via: tuple[ServiceRecord, int] | None = None) -> None:
        self.view = view
        # False: a denial carries no evidence of the rules that missed (tools asking about
        # many peers at once); verdicts, steps and reasons are the same.
        self.explain = explain
        self.namespaces = Namespaces(view)
        self.kept = kept(view)
        self._tiers: Tiers | None = None
        self._unreadable: tuple[str, ...] | None = None
        self._applicable: dict[tuple[str, int, bool], tuple[
            Mapping[str, str], list[anp.AdminPolicy], list[anp.AdminPolicy],
            dict[int, Tri]]] = {}
        self._unevaluated: dict[tuple[str | None, str | None],
                                tuple[tuple[str, ...], tuple[str, ...]]] = {}
        # HTTP attributes (method, path, host) only Istio's authorization reads.
        self.istio = istio_authz.IstioLayer(view, self.namespaces,
                                            request or istio_authz.Request(),
                                            self.kept.istio, via=via)
        self.linkerd = linkerd_authz.LinkerdLayer(view, request or istio_authz.Request())
        self.kuma = kuma_authz.KumaLayer(view, self.namespaces)
        self._calico_present: bool | None = None
        self._cilium_by_ns: dict[str | None, list[cilium.CiliumPolicy]] = {}
        self._calico_by_ns: dict[str | None, list[calico.CalicoPolicy]] = {}
        self._calico_tiers: dict[str, calico.Tier] | None = None

    # --- policies --------------------------------------------------------------------

    @property
    def tiers(self) -> Tiers:
        if self._tiers is None:
            self._tiers = self.kept.admin_tiers(self.view)
        return self._tiers

    def admin_policies(self) -> tuple[list[anp.AdminPolicy], list[anp.AdminPolicy]]:
        """(Admin tier: ANPs and Admin CNPs; Baseline tier: the BANP and Baseline CNPs),
        each sorted by priority then name."""
        return self.tiers.admins, self.tiers.baselines

    def admin_policies_for(self, namespace: str
                           ) -> tuple[list[anp.AdminPolicy], list[anp.AdminPolicy]]:
        """Only those whose subject could select pods of ``namespace`` (same order)."""
        tiers = self.tiers
        record = self.view.get(make_key(Kind.NAMESPACE, "", namespace))
        cached = tiers.by_namespace.get(namespace)
        if cached is not None and cached[0] is record:
            return cached[1], cached[2]
        ns = self.namespaces

        def could_select(policy: anp.AdminPolicy) -> bool:
            return policy.subject_problem is not None or policy.subject_namespaces is None \
                or ns.matches(policy.subject_namespaces, namespace) is not False

        admins = [p for p in tiers.admins if could_select(p)]
        baselines = [p for p in tiers.baselines if could_select(p)]
        tiers.by_namespace[namespace] = (record, admins, baselines)
        return admins, baselines

    def applicable(self, subject: Endpoint
                   ) -> tuple[list[anp.AdminPolicy], list[anp.AdminPolicy], dict[int, Tri]]:
        """:meth:`admin_policies_for` without those that certainly do not apply to
        ``subject`` (anp.evaluate skips them anyway), and whether each of the others does
        (by ``id``), kept for the call per what applies_to reads: namespace, labels and
        host networking. A tool asking about one pod against many peers then tests each
        policy's subject once."""
        assert subject.namespace is not None
        key = (subject.namespace, id(subject.labels), subject.host_network)
        found = self._applicable.get(key)
        if found is None or found[0] is not subject.labels:
            found = self._applicable[key] = (subject.labels, *self._applicable_kept(subject))
        return found[1], found[2], found[3]

    def _applicable_kept(self, subject: Endpoint
                         ) -> tuple[list[anp.AdminPolicy], list[anp.AdminPolicy],
                                    dict[int, Tri]]:
        """``applicable``, kept with the tiers (they hold the policies; their answers read
        only the subject's namespace labels, labels and host networking)."""
        assert subject.namespace is not None
        tiers = self.tiers
        record = self.view.get(make_key(Kind.NAMESPACE, "", subject.namespace))
        key = (subject.namespace, tuple(sorted(subject.labels.items())), subject.host_network)
        kept = tiers.applicable.get(key)
        if kept is not None and kept[0] is record:
            return kept[1], kept[2], kept[3]
        admins, baselines = self.admin_policies_for(subject.namespace)
        ns = self.namespaces
        applies = {id(p): p.applies_to(subject, ns) for p in (*admins, *baselines)}
        found = ([p for p in admins if applies[id(p)] is not False],
                 [p for p in baselines if applies[id(p)] is not False], applies)
        if len(tiers.applicable) >= _APPLICABLE_LIMIT:
            tiers.applicable.clear()
        tiers.applicable[key] = (record, *found)
        return found

    def mixed_versions(self) -> str | None:
        """Both AdminNetworkPolicy API versions in use: which one the CNI enforces is unknown."""
        kinds = self.tiers.kinds
        if anp.CNP_KIND in kinds and kinds & {anp.ANP_KIND, anp.BANP_KIND}:
            return ("both v1alpha1 AdminNetworkPolicy/BaselineAdminNetworkPolicy and "
                    "ClusterNetworkPolicy objects exist; their relative order is not defined")
        return None

    def network_policies(self, subject: Endpoint) -> list[netpol.NetPol]:
        if subject.key is None:
            return []
        found = []
        for record in self.view.neighbors(subject.key, Rel.APPLIES_TO, incoming=True,
                                          kind=Kind.NETWORK_POLICY):
            assert isinstance(record, NetworkPolicyRecord)
            model = self.kept.model(record, netpol.build)
            assert isinstance(model, netpol.NetPol)
            found.append(model)
        return found

    def network_policy(self, record: NetworkPolicyRecord) -> netpol.NetPol:
        """The model of one NetworkPolicy, kept with the view."""
        model = self.kept.model(record, netpol.build)
        assert isinstance(model, netpol.NetPol)
        return model

    def cilium_policies(self, subject: Endpoint) -> list[cilium.CiliumPolicy]:
        """The CNPs of the subject's namespace and every CCNP (cilium.io), sorted by key."""
        if subject.external:
            return []
        cached = self._cilium_by_ns.get(subject.namespace)
        if cached is not None:
            return cached
        found = []
        for kind, scope in ((cilium.CNP_KIND, subject.namespace), (cilium.CCNP_KIND, None)):
            for record in self.view.for_each(kind, scope):
                if isinstance(record, GenericRecord) and \
                        record.api_version.startswith(cilium.GROUP + "/"):
                    model = self.kept.model(record, cilium.build)
                    assert isinstance(model, cilium.CiliumPolicy)
                    found.append(model)
        found.sort(key=lambda p: p.record.key)
        self._cilium_by_ns[subject.namespace] = found  # (the view does not change during a call)
        return found

    def calico_present(self) -> bool:
        if self._calico_present is None:
            self._calico_present = any(
                isinstance(r, GenericRecord) and calico.is_calico(r)
                for kind in calico.POLICY_KINDS for r in self.view.for_each(kind))
        return self._calico_present

    def calico_policies(self, subject: Endpoint) -> list[calico.CalicoPolicy]:
        """The Calico policies of the subject's namespace and every global one."""
        cached = self._calico_by_ns.get(subject.namespace)
        if cached is not None:
            return cached
        found = []
        for kind in calico.POLICY_KINDS:
            scope = None if kind == calico.GNP_KIND else subject.namespace
            for record in self.view.for_each(kind, scope):
                if isinstance(record, GenericRecord) and calico.is_calico(record):
                    model = self.kept.model(record, calico.build)
                    assert isinstance(model, calico.CalicoPolicy)
                    found.append(model)
        self._calico_by_ns[subject.namespace] = found
        return found

    def calico_blocks(self) -> tuple[IPBlock, ...]:
        """Every CIDR a Calico rule names (nets and notNets, which pod IPs can match)."""
        found: dict[IPBlock, None] = {}
        for kind in calico.POLICY_KINDS:
            for record in self.view.for_each(kind):
                if isinstance(record, GenericRecord) and calico.is_calico(record):
                    model = self.kept.model(record, calico.build)
                    assert isinstance(model, calico.CalicoPolicy)
                    for rule in (*model.ingress, *model.egress):
                        for end in (rule.source, rule.destination):
                            found.update(dict.fromkeys((*(end.nets or ()),
                                                        *(end.not_nets or ()))))
        return tuple(found)

    def _calico(self, direction: Direction, subject: Endpoint, other: Endpoint,
                destination: Endpoint, port: int, protocol: str,
                admins: list[anp.AdminPolicy], baselines: list[anp.AdminPolicy],
                applies: dict[int, Tri]) -> DirectionVerdict | None:
        """Calico's answer, or None where Calico's workload policies do not reach (a
        host-network pod without host endpoints: the path without Calico decides)."""
        if self.cilium_present():
            why = ("both Cilium and Calico policies exist: which CNI enforces policy here is "
                   "unknown")
            return _finish(direction, subject, [Step(Layer.CALICO, Action.UNKNOWN, why)],
                           (), (why,))
        if subject.host_network:
            if not self.view.count("HostEndpoint"):
                return None
            why = (f"{subject.name} uses the host network: Calico host endpoint policy "
                   "governs it, which netsight does not evaluate")
            return _finish(direction, subject, [Step(Layer.CALICO, Action.UNKNOWN, why)],
                           (), (why,))
        if self._calico_tiers is None:
            self._calico_tiers = calico.tiers(
                r for r in self.view.for_each(calico.TIER_KIND)
                if isinstance(r, GenericRecord) and calico.is_calico(r))
        args = (direction, subject, other, destination, port, protocol, self.namespaces)
        decision = calico_evaluation.evaluate(
            direction=direction, subject=subject, other=other, destination=destination,
            port=port, proto=protocol, ns=self.namespaces,
            policies=self.calico_policies(subject), k8s=self.network_policies(subject),
            known_tiers=self._calico_tiers,
            admin=lambda: anp.evaluate(admins, *args, applies=applies),
            baseline=lambda: anp.evaluate(baselines, *args, applies=applies),
            non_pods=any(self.view.count(k) for k in calico.NON_POD_KINDS))
        return _finish(direction, subject, list(decision.steps), decision.blocking,
                       decision.not_evaluated)

    def cilium_present(self) -> bool:
        return any(self.view.count(kind, None) for kind in cilium.KINDS)

    def cilium_blocks(self) -> tuple[IPBlock, ...]:
        """Every CIDR a Cilium rule names (they cut the outside address space)."""
        found: dict[IPBlock, None] = {}
        for kind in cilium.KINDS:
            for record in self.view.for_each(kind):
                if isinstance(record, GenericRecord) and \
                        record.api_version.startswith(cilium.GROUP + "/"):
                    model = self.kept.model(record, cilium.build)
                    assert isinstance(model, cilium.CiliumPolicy)
                    found.update(dict.fromkeys(model.blocks()))
        return tuple(found)

    def unreadable(self) -> tuple[str, ...]:
        if self._unreadable is None:
            # Every kind the verdict reads or must rule out: one not listed (forbidden, not
            # synced yet) is not "none exist".
            kinds = dict.fromkeys((Kind.NETWORK_POLICY, Kind.POD, Kind.NAMESPACE, "Node",
                                   anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND, *cilium.KINDS,
                                   *calico.POLICY_KINDS, calico.TIER_KIND,
                                   *calico.NON_POD_KINDS, *(u.kind for u in UNEVALUATED),
                                   *istio_authz.KINDS, *linkerd_authz.POLICY_KINDS,
                                   *kuma_authz.KINDS))
            self._unreadable = tuple(
                reason for kind in kinds if (reason := self.view.unreadable(kind)) is not None)
        return self._unreadable

    def unevaluated(self, source: Endpoint, destination: Endpoint
                    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(kinds that could allow or deny, kinds that could only deny) bearing on the flow."""
        scope = (source.namespace, destination.namespace)
        found = self._unevaluated.get(scope)
        if found is None:
            found = self._unevaluated[scope] = self._count_unevaluated(source, destination)
        return found

    def _count_unevaluated(self, source: Endpoint, destination: Endpoint
                           ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        undecided: list[str] = []
        restricting: list[str] = []
        for kind in UNEVALUATED:
            ends = (destination,) if kind.destination_only else (source, destination)
            scopes: list[str | None] = [None] if kind.cluster_wide else \
                [e.namespace for e in ends if e.namespace is not None]
            if kind.extra_namespace is not None and scopes:
                scopes.append(kind.extra_namespace)
            if kind.kind == anp.CNP_KIND:
                count = sum(1 for r in self.view.for_each(kind.kind)
                            if not cnp.evaluated(r))
            elif kind.group is not None:
                count = sum(1 for scope in dict.fromkeys(scopes)
                            for r in self.view.for_each(kind.kind, scope)
                            if r.api_version.startswith(kind.group + "/"))
            else:
                count = sum(self.view.count(kind.kind, scope)
                            for scope in dict.fromkeys(scopes))
            if count:
                where = "in the cluster" if kind.cluster_wide else \
                    f"in namespace(s) {', '.join(s for s in dict.fromkeys(scopes) if s)}"
                why = f"{count} {kind.label} object(s) {where}: not evaluated by netsight"
                (restricting if kind.restrict_only else undecided).append(why)
        mixed = self.mixed_versions()
        if mixed:
            undecided.append(mixed)
        watched = self.view.watched_namespaces
        if watched is not None and (source.external or destination.external):
            # From a cluster watched in part, an address no watched pod has may still be a
            # pod: of a namespace not watched, whose policies, and whose labels that the
            # watched policies' selectors match, are unknown.
            undecided.append(
                "an address no watched pod has may be a pod of a namespace netsight does "
                f"not watch (it watches only {', '.join(watched)}): its labels and its own "
                "policies are unknown")
        for why, only_restricts in self._unread_policies(source, destination):
            (restricting if only_restricts else undecided).append(why)
        return tuple(undecided), tuple(restricting)

    def _unread_policies(self, source: Endpoint, destination: Endpoint
                         ) -> list[tuple[str, bool]]:
        """Policies that exist but could not be read (malformed), with whether they can only
        restrict: what they do is unknown, so flows they could govern are not decided as if
        they were absent."""
        namespaces = {source.namespace, destination.namespace} - {None}
        if destination.namespace is not None:
            namespaces.add(ROOT_NAMESPACE)  # Istio's mesh-wide policies live there
        found = []
        for problem in self.view.problems():
            kind = (problem.object_kind or "").partition(".")[0]
            if problem.kind is not ProblemKind.MALFORMED or kind not in _POLICY_KINDS:
                continue
            if problem.namespace and problem.namespace not in namespaces:
                continue  # a namespaced policy elsewhere governs neither end
            if kind in istio_authz.KINDS and problem.namespace not in (
                    destination.namespace, ROOT_NAMESPACE):
                continue  # Istio's are enforced at the destination only
            where = f"{problem.namespace}/{problem.name}" if problem.namespace else problem.name
            found.append((f"{problem.object_kind} {where} could not be read "
                          f"({problem.field_path}: {problem.message}); what it allows or "
                          "denies is unknown", _POLICY_KINDS[kind]))
        return found

    # --- evaluation ------------------------------------------------------------------

    def evaluate(self, source: Endpoint, destination: Endpoint, port: int,
                 protocol: str) -> Verdict:
        egress = self.direction(Direction.EGRESS, source, destination, destination, port,
                                protocol)
        ingress = self.direction(Direction.INGRESS, destination, source, destination, port,
                                 protocol)
        undecided, restricting = self.unevaluated(source, destination)
        return Verdict(source.name, destination.name, port, protocol, egress, ingress,
                       undecided + self.unreadable(), restricting)

    def direction(self, direction: Direction, subject: Endpoint, other: Endpoint,
                  destination: Endpoint, port: int, protocol: str) -> DirectionVerdict:
        """The decision at ``subject`` for traffic to or from ``other``: L3/L4, then for
        ingress the mesh's authorization, which can only refuse what L3/L4 admits."""
        found = self._l3l4(direction, subject, other, destination, port, protocol)
        if direction is not Direction.INGRESS or found.allowed is False:
            return found
        for layer in (self.istio, self.linkerd, self.kuma):
            mesh = layer.evaluate(other, subject, port, protocol)
            if mesh is None:
                continue
            found = DirectionVerdict(
                direction, subject.name, tri_all((found.allowed, mesh.allowed)),
                (*found.steps, mesh.step), (*found.blocking, *mesh.blocking),
                tuple(dict.fromkeys((*found.not_evaluated, *mesh.not_evaluated))))
            if found.allowed is False:
                break
        return found

    def _l3l4(self, direction: Direction, subject: Endpoint, other: Endpoint,
              destination: Endpoint, port: int, protocol: str) -> DirectionVerdict:
        if subject.external:
            return DirectionVerdict(direction, subject.name, True, (Step(
                Layer.DEFAULT, Action.ALLOW,
                f"{subject.name} is outside the cluster: no policy applies to its "
                f"{direction.value}"),))
        steps: list[Step] = []
        assert subject.namespace is not None
        admins, baselines, applies = self.applicable(subject)
        args = (direction, subject, other, destination, port, protocol, self.namespaces)
        # --- CNI layers: Calico decides the whole direction, its tiers around the admin ones
        if self.calico_present():
            calico_decision = self._calico(direction, subject, other, destination, port,
                                           protocol, admins, baselines, applies)
            if calico_decision is not None:
                return calico_decision
        # --- end CNI layers

        decision = anp.evaluate(admins, *args, applies=applies)
        if decision is not None:
            steps.append(decision.step)
            if decision.step.action is not Action.PASS:
                return _finish(direction, subject, steps, decision.blocking,
                               decision.not_evaluated)
        policies = self.network_policies(subject)
        if subject.host_network and any(direction in p.types for p in policies):
            why = (f"{subject.name} uses the host network: NetworkPolicy behaviour for "
                   "host-network pods is undefined")
            steps.append(Step(Layer.NETWORK_POLICY, Action.UNKNOWN, why))
            return _finish(direction, subject, steps, (), (why,))
        k8s_decision = netpol.evaluate(policies, *args, explain=self.explain)
        np_decision: netpol.Decision | None = k8s_decision
        # --- CNI layers: where Cilium policies exist they and the NetworkPolicies make one
        # policy per endpoint (cilium_evaluation.evaluate).
        cilium_policies = self.cilium_policies(subject)
        if cilium_policies:
            np_decision = cilium_evaluation.evaluate(
                cilium_policies, cilium_evaluation.netpol_say(k8s_decision), *args)
        # --- end CNI layers
        if np_decision is not None:
            steps.append(np_decision.step)
            return _finish(direction, subject, steps, np_decision.blocking,
                           np_decision.not_evaluated)
        decision = anp.evaluate(baselines, *args, applies=applies)
        if decision is not None:
            steps.append(decision.step)
            if decision.step.action is not Action.PASS:  # Pass (CNP Baseline): to the default
                return _finish(direction, subject, steps, decision.blocking,
                               decision.not_evaluated)
        steps.append(Step(Layer.DEFAULT, Action.ALLOW,
                          f"no policy isolates {subject.name} for {direction.value}"))
        return _finish(direction, subject, steps, (), ())


def _finish(direction: Direction, subject: Endpoint, steps: list[Step],
            blocking: tuple[ResourceRef, ...], not_evaluated: tuple[str, ...]
            ) -> DirectionVerdict:
    last = steps[-1].action
    allowed = True if last is Action.ALLOW else False if last is Action.DENY else None
    return DirectionVerdict(direction, subject.name, allowed, tuple(steps),
                            blocking, not_evaluated)


# --- warming ------------------------------------------------------------------------------

# Kinds whose records have models kept across calls: a change to one of them (or to a
# Namespace, whose labels narrow the admin tiers) may leave a model to build.
MODEL_KINDS: frozenset[str] = frozenset({
    Kind.NETWORK_POLICY, Kind.NAMESPACE, *ADMIN_KINDS, *cilium.KINDS, *calico.POLICY_KINDS,
    *istio_authz.KINDS})


def warm(view: GraphView, namespace: str | None) -> int:
    """Build now the models the first question about ``namespace`` would otherwise build
    (None: the cluster-scoped policies, which every question reads), kept as calls keep
    them: the NetworkPolicy, Cilium and Calico policy models, Istio's authorization and
    peer authentication, the admin tiers and their narrowing to the namespace. Answers do
    not change: a call finds the models it would have built. Returns how many models were
    built (0: nothing was cold)."""
    engine = PolicyEngine(view)
    built = engine.kept.built
    if namespace is None:
        _ = engine.tiers  # the admin policies' models, sorted and kept with the graph
        kinds: tuple[tuple[str, Callable[[GenericRecord], bool], Callable[[Any], object]], ...] \
            = ((cilium.CCNP_KIND, _cilium, cilium.build), (calico.GNP_KIND, calico.is_calico,
                                                           calico.build))
    else:
        engine.admin_policies_for(namespace)
        kinds = ((cilium.CNP_KIND, _cilium, cilium.build),
                 *((kind, calico.is_calico, calico.build) for kind in calico.NP_KINDS))
        for record in view.for_each(Kind.NETWORK_POLICY, namespace):
            if isinstance(record, NetworkPolicyRecord):
                engine.network_policy(record)
    for kind, wanted, build in kinds:
        for record in view.for_each(kind, namespace):
            if isinstance(record, GenericRecord) and wanted(record):
                engine.kept.model(record, build)
    istio = engine.istio.warm(namespace) if namespace is not None else 0
    return engine.kept.built - built + istio


def _cilium(record: GenericRecord) -> bool:
    return record.api_version.startswith(cilium.GROUP + "/")
