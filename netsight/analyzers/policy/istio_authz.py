"""Istio authorization: the layer after L3/L4, at the destination's proxy.

Istio enforces AuthorizationPolicy where traffic enters a workload — its sidecar, or the
ztunnel of an ambient pod — so it only ever refuses what NetworkPolicies let through, and
only for destinations in the mesh. Per the API reference the order is: "If there are any
CUSTOM policies that match the request, evaluate and deny the request if the evaluation
result is deny. If there are any DENY policies that match the request, deny the request. If
there are no ALLOW policies for the workload, allow the request. If any of the ALLOW
policies match the request, allow the request. Deny the request." AUDIT policies "do not
affect whether requests are allowed or denied".

Peer identity needs mTLS: a source outside the mesh has no principal and no namespace, so
rules requiring them do not match it, and a STRICT PeerAuthentication refuses it outright.
What the query does not say (HTTP method, path, host; JWTs; headers) leaves a rule that
reads it as "may match", and the verdict undecided with the reason. CUSTOM policies are an
external authorizer netsight cannot ask: if one may match, an allow becomes undecided.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field, replace

from netsight.analyzers.core.contracts import Evidence, ResourceRef
from netsight.analyzers.policy import istio_client_tls, istio_mtls
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.istio_match import (
    Context,
    Match,
    Peer,
    Request,
    policy_matches,
)
from netsight.analyzers.policy.istio_mesh import (
    EXCLUDE_INBOUND,
    INCLUDE_INBOUND,
    ROOT_NAMESPACE,
    USE_WAYPOINT,
    Dataplane,
    Membership,
    membership,
    principal,
)
from netsight.analyzers.policy.istio_model import (
    AUTHZ_KIND,
    GROUP,
    PEER_AUTHN_KIND,
    Action,
    Attribute,
    AuthzPolicy,
    Mode,
    PeerAuthn,
    TargetRef,
    build_authz,
    build_peer_authn,
)
from netsight.analyzers.policy.peers import IPBlock, Namespaces
from netsight.analyzers.policy.verdict import Action as Verb
from netsight.analyzers.policy.verdict import Layer, Step, Tri
from netsight.graph.model.records import GenericRecord, ServiceRecord
from netsight.graph.store.live import GraphView, Source

KINDS = (AUTHZ_KIND, PEER_AUTHN_KIND)
# What clients originate (istio_mtls), and the mesh config's rootNamespace and auto mTLS.
TLS_KINDS = (istio_client_tls.DESTINATION_RULE, istio_client_tls.CONFIG_MAP)
__all__ = ["KINDS", "ROOT_NAMESPACE", "TLS_KINDS", "Decision", "IstioLayer", "Request",
           "cidrs"]


@dataclass(frozen=True, slots=True)
class Decision:
    """The Istio layer's say on one flow."""

    allowed: Tri
    step: Step
    blocking: tuple[ResourceRef, ...] = ()
    not_evaluated: tuple[str, ...] = ()


def _step(action: Verb, text: str, policy: ResourceRef | None = None,
          rule: int | None = None, evidence: tuple[Evidence, ...] = ()) -> Step:
    return Step(Layer.ISTIO, action, text, policy, rule, evidence)


def _evidence(policy: AuthzPolicy | PeerAuthn, path: str, value: object = None) -> Evidence:
    return Evidence(resource=policy.ref, field_path=path, value=value)


M = AuthzPolicy | PeerAuthn
GATEWAY_NAME = "gateway.networking.k8s.io/gateway-name"  # on the pods Istio deploys for one
# Istio protocols whose bytes the proxy does not parse as HTTP (protocol selection).
_OPAQUE = frozenset({"tcp", "tls", "https", "mongo", "mysql", "redis"})
_MODEL_LIMIT = 20_000


@dataclass
class IstioLayer:
    """Istio's policies over one view, for one tool call."""

    view: GraphView
    namespaces: Namespaces
    request: Request = field(default_factory=Request)
    models: MutableMapping[str, tuple[GenericRecord, M]] = field(default_factory=dict)
    _by_namespace: dict[tuple[str, str], list[M]] = field(default_factory=dict)
    _members: dict[tuple[str | None, str], Membership] = field(default_factory=dict)
    # The Service (and its port) the question names: clients address that name, so its
    # DestinationRules apply rather than those of every Service of the pod.
    via: tuple[ServiceRecord, int] | None = None
    _client_sides: dict[tuple[str | None, int, str], istio_mtls.ClientSide] = field(
        default_factory=dict)

    def __post_init__(self) -> None:
        self.mesh = istio_client_tls.mesh(self.view)
        self.root = self.mesh.root_namespace
        self.rules = istio_client_tls.rule_index(self.view)

    def _policies(self, kind: str, namespace: str) -> list[M]:
        cached = self._by_namespace.get((kind, namespace))
        if cached is not None:
            return cached
        found: list[M] = []
        for record in self.view.for_each(kind, namespace):
            if not isinstance(record, GenericRecord) or \
                    not record.api_version.startswith(GROUP + "/"):
                continue
            kept = self.models.get(record.key)
            if kept is None or kept[0] is not record:
                if len(self.models) >= _MODEL_LIMIT:
                    self.models.clear()  # bounded: deleted policies never pile up
                model: M = build_authz(record) if kind == AUTHZ_KIND else \
                    build_peer_authn(record)
                kept = self.models[record.key] = (record, model)
            found.append(kept[1])
        # Oldest first: where Istio must pick one of several, it takes the oldest.
        found.sort(key=lambda m: (m.record.created or "", m.record.name))
        self._by_namespace[(kind, namespace)] = found
        return found

    def warm(self, namespace: str) -> int:
        """Build the models of ``namespace``'s policies now (engine.warm); how many were
        not kept yet."""
        cold = sum(1 for kind in KINDS for record in self.view.for_each(kind, namespace)
                   if isinstance(record, GenericRecord)
                   and record.api_version.startswith(GROUP + "/")
                   and (self.models.get(record.key) or (None,))[0] is not record)
        for kind in KINDS:
            self._policies(kind, namespace)
        return cold

    def anywhere(self) -> bool:
        """Whether any Istio policy exists (peers must then be told apart by identity)."""
        return any(self.view.count(kind) for kind in KINDS)

    def present(self, namespace: str) -> bool:
        """Whether any Istio policy could bear on a destination in ``namespace``."""
        return self.rules.tls_anywhere or not self.mesh.auto_mtls or any(
            self.view.count(kind, ns) for kind in KINDS
            for ns in dict.fromkeys((namespace, self.root)))

    def membership(self, endpoint: Endpoint) -> Membership:
        key = (endpoint.key, endpoint.name)
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = membership(
                endpoint, self.namespaces, live=self.view.source is not Source.MANIFESTS)
        return found

    def authorization_policies(self, destination: Endpoint
                               ) -> tuple[list[AuthzPolicy], list[AuthzPolicy]]:
        """(those whose selector scope takes in ``destination``, those attached by targetRefs
        in its namespaces — they apply to gateways and waypoints, not sidecars)."""
        assert destination.namespace is not None
        applies: list[AuthzPolicy] = []
        targeted: list[AuthzPolicy] = []
        for namespace in dict.fromkeys((self.root, destination.namespace)):
            for policy in self._policies(AUTHZ_KIND, namespace):
                assert isinstance(policy, AuthzPolicy)
                root = namespace == self.root
                if policy.problem is None and policy.target_refs:
                    if any(self._targets_gateway(ref, policy, destination)
                           for ref in policy.target_refs):
                        applies.append(policy)
                    elif root and GATEWAY_NAME in destination.labels and any(
                            r.kind == "GatewayClass" for r in policy.target_refs):
                        # A class's gateways: which class this gateway is of is not read.
                        applies.append(replace(policy, problem=(
                            "spec.targetRefs: it targets a GatewayClass, and the class of "
                            f"gateway {destination.labels[GATEWAY_NAME]!r} is not "
                            "evaluated")))
                    else:
                        targeted.append(policy)
                    continue
                # "The selector will match with workloads in the same namespace as the
                # authorization policy. If the authorization policy is in the root
                # namespace, the selector will additionally match with workloads in all
                # namespaces." Unreadable ones are kept when they could apply.
                if not root and namespace != destination.namespace:
                    continue
                if policy.selector is None or all(
                        destination.labels.get(k) == v for k, v in policy.selector.items()):
                    applies.append(policy)
        return applies, targeted

    @staticmethod
    def _targets_gateway(ref: TargetRef, policy: AuthzPolicy, destination: Endpoint) -> bool:
        """A Gateway API Gateway's own pods (Istio labels them with the gateway's name)."""
        return ref.kind == "Gateway" and ref.group == "gateway.networking.k8s.io" and \
            destination.namespace == policy.record.namespace and \
            destination.labels.get(GATEWAY_NAME) == ref.name

    def server_mode(self, destination: Endpoint, port: int) -> istio_mtls.ServerMode:
        """The PeerAuthentication mode of ``destination`` on its ``port`` (istio_mtls)."""
        return istio_mtls.server_mode(destination, port, self.root, self._peer_authns)

    def _peer_authns(self, namespace: str) -> list[PeerAuthn]:
        return [p for p in self._policies(PEER_AUTHN_KIND, namespace)
                if isinstance(p, PeerAuthn)]

    def client_side(self, source: Endpoint, destination: Endpoint, port: int
                    ) -> istio_mtls.ClientSide:
        """The TLS ``source``'s sidecar sends to ``destination`` on ``port``."""
        # Rules with a workloadSelector make the client's labels matter; rare, so the
        # cache keys on them only then.
        labels = str(sorted(source.labels.items())) if any(
            r.selector is not None for r in self.rules.by_namespace.get(
                source.namespace or "", ())) else ""
        key = (destination.key, port, f"{source.namespace}|{labels}")
        found = self._client_sides.get(key)
        if found is None:
            if len(self._client_sides) >= _MODEL_LIMIT:
                self._client_sides.clear()
            found = self._client_sides[key] = istio_mtls.client_side(
                self.view, self.rules, self.mesh, source, destination, port, self.via)
        return found

    def tls(self, source: Endpoint, destination: Endpoint, port: int
            ) -> istio_mtls.TlsVerdict:
        """Whether ``source`` -> ``destination`` on ``port`` is mTLS, plaintext or refused."""
        dest = self.membership(destination)
        server = self.server_mode(destination, port)
        if dest.dataplane is Dataplane.AMBIENT and server.mode is Mode.DISABLE:
            # ztunnel ignores DISABLE: HBONE is always mTLS, plaintext still accepted.
            server = istio_mtls.ServerMode(Mode.PERMISSIVE, server.policy, server.path,
                                           server.problems)
        src = self.membership(source)
        return istio_mtls.decide(source, src, destination, dest, port, server,
                                 lambda: self.client_side(source, destination, port),
                                 self.mesh)

    # --- the decision ---------------------------------------------------------------------

    def evaluate(self, source: Endpoint, destination: Endpoint, port: int, protocol: str
                 ) -> Decision | None:
        """None when Istio has no say (no policy could bear on the flow)."""
        if destination.external or destination.namespace is None or \
                not self.present(destination.namespace):
            return None
        applies, targeted = self.authorization_policies(destination)
        server = self.server_mode(destination, port)
        # No policy bears on the flow: Istio has a say only if a client's TLS fails.
        quiet = not applies and server.policy is None and not server.problems and \
            not targeted
        if quiet and not self.rules.tls_anywhere and self.mesh.auto_mtls:
            return None
        dest = self.membership(destination)
        if dest.dataplane is Dataplane.NONE:
            # Istio policies do not apply to it, but a client's DestinationRule may still
            # open TLS it cannot terminate.
            tls = self.tls(source, destination, port) if protocol == "TCP" else None
            if tls is not None and tls.outcome in (istio_mtls.Outcome.REFUSED,
                                                   istio_mtls.Outcome.UNDECIDED) \
                    and tls.rule is not None:
                return self._tls_decision(tls)
            if quiet:
                return None
            names = ", ".join(p.name for p in applies)
            return Decision(True, _step(Verb.ALLOW, f"{dest.why}: Istio policies do not "
                                        "apply to it" + (f" (AuthorizationPolicy: {names})"
                                                         if names else "")))
        if dest.dataplane is None:
            return Decision(None, _step(Verb.UNKNOWN, dest.why), not_evaluated=(dest.why,))
        if protocol != "TCP":
            return Decision(True, _step(Verb.ALLOW, f"Istio proxies capture TCP only; "
                                        f"{protocol} to {destination.name} bypasses them"))
        bypass = self._bypasses_sidecar(destination, port, dest.dataplane)
        if bypass:
            return Decision(True, _step(Verb.ALLOW, bypass))
        tls = self.tls(source, destination, port)
        if quiet and tls.outcome in (istio_mtls.Outcome.MTLS, istio_mtls.Outcome.PLAINTEXT):
            return None
        src = self.membership(source)
        if src.dataplane is None and tls.server.mode is not Mode.STRICT and \
                tls.outcome is istio_mtls.Outcome.UNDECIDED:
            # Only rules on the peer's identity care whether it has one.
            peer = Peer(source.name, source.ips, None, None, known=False, plaintext=src.why)
        elif tls.outcome in (istio_mtls.Outcome.REFUSED, istio_mtls.Outcome.UNDECIDED):
            return self._tls_decision(tls)
        else:
            peer = self._peer(source, tls)
        if dest.dataplane is Dataplane.AMBIENT:
            waypoint = destination.labels.get(USE_WAYPOINT) or (
                self.namespaces.labels(destination.namespace) or {}).get(USE_WAYPOINT)
            if waypoint and waypoint != "none":
                why = (f"{destination.name} uses waypoint {waypoint!r}: the policies attached "
                       "to it (targetRefs) decide, and netsight does not evaluate waypoints")
                return Decision(None, _step(Verb.UNKNOWN, why), not_evaluated=(why,))
        mtls = ""
        if tls.outcome is istio_mtls.Outcome.MTLS and tls.server.policy is not None:
            mtls = f"; mTLS {tls.server.mode.value} by PeerAuthentication " \
                f"{tls.server.policy.name}"
        if tls.outcome is istio_mtls.Outcome.MTLS and tls.rule is not None:
            mtls += f"; Istio mTLS by DestinationRule {tls.rule.namespace}/{tls.rule.name}"
        ctx = Context(peer, port, self.request, self._tcp_port(destination, port))
        return self._authorize(applies, targeted, ctx, destination, dest.dataplane, mtls)

    def _tcp_port(self, destination: Endpoint, port: int) -> str:
        """Why Istio takes ``port`` of ``destination`` for opaque TCP, or "" (HTTP, or
        detected from the bytes: unknown). Istio reads a port's protocol from the Services
        that select the workload (appProtocol, else the port name's prefix)."""
        found: set[str] = set()
        for service, entry in istio_mtls.targeting(self.view, destination, port):
            declared = (entry.app_protocol or (entry.name or "").partition("-")[0]).lower()
            found.add(f"Service {service.ref} port {entry.name or entry.port}: "
                      f"{declared}" if declared in _OPAQUE else "")
        return found.pop() if len(found) == 1 else ""

    @staticmethod
    def _bypasses_sidecar(destination: Endpoint, port: int, dataplane: Dataplane) -> str:
        if dataplane is not Dataplane.SIDECAR:
            return ""
        annotations = destination.annotations
        excluded = {p.strip() for p in annotations.get(EXCLUDE_INBOUND, "").split(",")}
        if str(port) in excluded:
            return (f"port {port} is excluded from sidecar capture ({EXCLUDE_INBOUND} on "
                    f"{destination.name}): no Istio policy sees it")
        included = annotations.get(INCLUDE_INBOUND)
        if included is not None and included.strip() != "*" and \
                str(port) not in {p.strip() for p in included.split(",")}:
            return (f"port {port} is not in {INCLUDE_INBOUND} of {destination.name}: the "
                    "sidecar does not capture it, so no Istio policy sees it")
        return ""

    @staticmethod
    def _tls_decision(tls: istio_mtls.TlsVerdict) -> Decision:
        """A connection Istio refuses (or may refuse) before any AuthorizationPolicy."""
        policy = tls.rule if tls.server.policy is None else tls.server.policy.ref
        text = tls.why
        if tls.outcome is istio_mtls.Outcome.REFUSED:
            return Decision(False, _step(Verb.DENY, text, policy, evidence=tls.evidence),
                            tls.deciding)
        return Decision(None, _step(Verb.UNKNOWN, text, policy, evidence=tls.evidence),
                        not_evaluated=(text,))

    def _peer(self, source: Endpoint, tls: istio_mtls.TlsVerdict) -> Peer:
        """The peer as the destination's proxy sees it: an identity only over mTLS."""
        if tls.outcome is istio_mtls.Outcome.MTLS:
            return Peer(source.name, source.ips, principal(source), source.namespace)
        return Peer(source.name, source.ips, None, None, plaintext=tls.why)

    def _authorize(self, applies: list[AuthzPolicy], targeted: list[AuthzPolicy],
                   ctx: Context, destination: Endpoint, dataplane: Dataplane,
                   mtls: str = "") -> Decision:
        unknown: list[tuple[str, AuthzPolicy, int | None]] = []
        enforced = [p for p in applies if not p.dry_run and p.action is not Action.AUDIT]
        readable: list[AuthzPolicy] = []
        # Policies netsight cannot match; whether one is an ALLOW matters below.
        unread_allows = False
        for policy in enforced:
            if policy.problem is not None:
                unknown.append((f"AuthorizationPolicy {policy.name} is not evaluated "
                                f"({policy.problem}); what it allows or denies is unknown",
                                policy, None))
                unread_allows = True  # its action may be unreadable too
            elif dataplane is Dataplane.AMBIENT and policy.layer7:
                unknown.append((f"AuthorizationPolicy {policy.name} reads HTTP attributes, "
                                f"which the ztunnel of ambient pod {destination.name} cannot "
                                "see; netsight does not evaluate it", policy, None))
                unread_allows = unread_allows or policy.action is Action.ALLOW
            else:
                readable.append(policy)
        # 1. CUSTOM: an external authorizer decides whatever such a policy matches.
        for policy in (p for p in readable if p.action is Action.CUSTOM):
            found, rule = policy_matches(policy, ctx)
            if found.value is not False:
                unknown.append((f"CUSTOM AuthorizationPolicy {policy.name} "
                                + (f"rules[{rule}] " if rule is not None else "")
                                + ("matches" if found.value else f"may match ({found.why})")
                                + f": external authorizer {policy.provider!r} decides, which "
                                "netsight cannot evaluate", policy, rule))
        # 2. DENY: any match denies.
        for policy in (p for p in readable if p.action is Action.DENY):
            found, rule = policy_matches(policy, ctx)
            if found.value is True:
                return Decision(False, _step(
                    Verb.DENY, f"{policy.name} rules[{rule}] matches: {found.why}",
                    policy.ref, rule, (_evidence(policy, found.path or f"spec.rules[{rule}]"),
                                       _evidence(policy, "spec.action", "DENY"))),
                    (policy.ref,))
            if found.value is None:
                unknown.append((f"DENY AuthorizationPolicy {policy.name} rules[{rule}] may "
                                f"match: {found.why}", policy, rule))
        # 3.-5. No ALLOW policy: allow. Else one must match, or the request is denied.
        allows = [p for p in readable if p.action is Action.ALLOW]
        matched: tuple[AuthzPolicy, int | None, Match] | None = None
        may = False
        missed: list[str] = []
        for policy in allows:
            found, rule = policy_matches(policy, ctx)
            if found.value is False:
                missed.append(f"{policy.name}: {found.why}")
            if found.value is True:
                matched = (policy, rule, found)
                break
            if found.value is None:
                may = True
                unknown.append((f"ALLOW AuthorizationPolicy {policy.name} rules[{rule}] may "
                                f"match: {found.why}", policy, rule))
        if allows and matched is None and not may and not unread_allows:
            misses = "; ".join(missed[:3]) + ("; ..." if len(missed) > 3 else "")
            return Decision(False, _step(
                Verb.DENY, f"ALLOW policies apply to {destination.name} and none matches "
                f"({misses})", allows[0].ref if len(allows) == 1 else None, None,
                tuple(_evidence(p, "spec.rules") for p in allows)),
                tuple(p.ref for p in allows))
        if unknown:
            why, policy, rule = unknown[0]
            return Decision(None, _step(Verb.UNKNOWN, why, policy.ref, rule),
                            not_evaluated=tuple(u[0] for u in unknown))
        notes = [p.name for p in applies if p.dry_run or p.action is Action.AUDIT]
        if matched is not None:
            policy, rule, found = matched
            text = f"{policy.name} rules[{rule}] matches: {found.why}"
            step = _step(Verb.ALLOW, text, policy.ref, rule, (_evidence(policy, found.path),))
        else:
            text = f"no DENY policy matches and no ALLOW policy applies to {destination.name}"
            step = _step(Verb.ALLOW, text)
        extra = mtls
        if notes:
            extra += f" (not enforcing: {', '.join(notes)})"
        if targeted:
            extra += (f"; {', '.join(p.name for p in targeted)} attach by targetRefs to "
                      "gateways or waypoints, not to this workload")
        if extra:
            step = _step(step.action, step.text + extra, step.policy, step.rule, step.evidence)
        return Decision(True, step)


def cidrs(view: GraphView) -> Iterator[IPBlock]:
    """Every address block an Istio policy compares source addresses with (for grouping
    peers exactly: pods on either side of such a block can get different verdicts)."""
    for record in view.for_each(AUTHZ_KIND):
        if not isinstance(record, GenericRecord) or not record.api_version.startswith(
                GROUP + "/"):
            continue
        policy = build_authz(record)
        for rule in policy.rules:
            for clause in rule.clauses:
                if clause.attribute is Attribute.SOURCE_IP:
                    for network in clause.networks:
                        yield IPBlock(network)
