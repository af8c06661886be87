"""gateway_get: one Gateway — listeners, the routes attached to each, and the policies
attached to it through targetRefs (GEP-713), including the BackendTLSPolicies of its
routes' backends."""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from netsight.analyzers.core import codes
from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.base import did_you_mean, evidence, metadata, ref
from netsight.analyzers.core.contracts import ErrorCode, Finding, OmitNone, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import locate
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing import observed
from netsight.analyzers.routing.addresses import gateways_at
from netsight.analyzers.routing.attachment import Resolver, RouteResult
from netsight.analyzers.routing.backend_tls import BACKEND_TLS_POLICY, BackendTLSState
from netsight.analyzers.routing.declared import ATTACHED_CODES, ATTACHED_READS
from netsight.analyzers.routing.findings import gateway_findings
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    SERVICE,
    is_gateway_api,
    spec_of,
    status_of,
)
from netsight.analyzers.routing.gateways import GatewayState
from netsight.analyzers.routing.policies import (
    INHERITED,
    KNOWN_KINDS,
    Attachment,
    ancestor_conditions,
    gateway_attachments,
    route_policies,
)
from netsight.analyzers.routing.policy_findings import attachment_findings, backend_tls_findings
from netsight.analyzers.routing.report import (
    BackendTLSOut,
    Condition,
    GatewayOut,
    as_observed,
    backend_tls_out,
    computed,
    gateway_out,
)
from netsight.analyzers.tools.gateway_list import addresses
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.store.live import GraphView

NAME = "gateway_get"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="One Gateway: listeners, the routes attached to each, attached and backend "
    "TLS policies. Use it to see what a Gateway serves.",
    reads=ATTACHED_READS,
    codes=ATTACHED_CODES,
)


class Args(ToolArgs):
    gateway: ObjectName = Field(description="The Gateway as 'namespace/name'")


class AttachedRoute(OmitNone):
    route: str = Field(description='"namespace/name"')
    kind: str
    section_name: str | None = Field(default=None, description="parentRef sectionName")
    port: int | None = Field(default=None, description="parentRef port")
    listeners: list[str] | None = Field(default=None,
                                        description="Listeners that accept the route")
    accepted: Condition
    resolved_refs: Condition
    policies: list[str] | None = Field(
        default=None, description='Policies whose targetRefs name the route ("Kind ns/name")')


class AttachedPolicy(OmitNone):
    policy: str = Field(description='"namespace/name"')
    kind: str
    group: str
    target: str = Field(description='"Gateway", "Listener" or "GatewayClass"')
    section_name: str | None = None
    listeners: list[str] = Field(description="Listeners it reaches")
    attachment: str | None = Field(
        default=None, description="Direct (the target only) or Inherited (also the routes "
        "under it), as the provider defines the kind; absent: not known to netsight")
    reach: str | None = None
    routes: list[str] | None = Field(
        default=None, description="Inherited: the attached routes it reaches (routes with "
        "their own policy of the kind are in routes_with_own)")
    routes_with_own: list[str] | None = None
    observed: dict[str, Condition] | None = Field(
        default=None, description="status.ancestors conditions the controller wrote for "
        "this Gateway")


class BackendTLSPolicyOut(OmitNone):
    services: list[str] = Field(description="Backends of this Gateway's routes it configures, "
                                "as 'namespace/name:port' (none: another policy takes them)")
    tls: BackendTLSOut
    observed: dict[str, Condition] | None = Field(
        default=None, description="status.ancestors conditions the controller wrote for "
        "this Gateway")
    disagrees: list[str] | None = Field(
        default=None, description="Condition types whose status the controller set otherwise")


class Result(ToolResult):
    gateway: GatewayOut
    addresses: list[str] | None = None
    requested_addresses: list[str] | None = None
    routes: list[AttachedRoute]
    policies: list[AttachedPolicy]
    backend_tls: list[BackendTLSPolicyOut]
    findings: list[Finding]
    not_evaluated: list[str] = Field(description="What netsight could not decide, and why")


def find_gateway(view: GraphView, resolver: Resolver, ref: ObjectName) -> GatewayState:
    named = locate(view, ref, (GATEWAY,), argument="gateway", tool=NAME, at_address=gateways_at)
    namespace, name = named.namespace, named.name
    state = resolver.gateway(namespace, name)
    if state is not None:
        return state
    known = {r.name for r in view.for_each(GATEWAY, namespace) if is_gateway_api(r)}
    where = f" in namespace {namespace}" if known else \
        f"; namespace {namespace} has no Gateways"
    raise ToolFailure(ErrorCode.NOT_FOUND, f"gateway: Gateway {ref!r} not found{where}"
                      f"{did_you_mean(name, known)}", tool=NAME)


def _routes(view: GraphView, state: GatewayState, results: list[RouteResult]
            ) -> list[AttachedRoute]:
    found = []
    for result in results:
        route = result.route
        policies = route_policies(view, route.record) or None
        for parent in result.parents:
            if parent.gateway is not state:
                continue
            conditions = computed(parent.conditions)
            found.append(AttachedRoute(
                route=route.ref, kind=route.kind, section_name=parent.ref.section_name,
                port=parent.ref.port,
                listeners=[ls.listener.name for ls in parent.listeners] or None,
                accepted=conditions[c.ACCEPTED], resolved_refs=conditions[c.RESOLVED_REFS],
                policies=policies))
    return found


def _policy(state: GatewayState, attachment: Attachment, routes: list[AttachedRoute]
            ) -> AttachedPolicy:
    policy = attachment.policy
    kind = policy.kind.partition(".")[0]
    reached, own = None, None
    if attachment.kind is not None and attachment.kind.attachment == INHERITED:
        names = set(attachment.listeners)
        under = sorted({r.route for r in routes if names.intersection(r.listeners or ())})
        own_routes = {r.route for r in routes
                      if any(p.startswith(f"{kind} ") for p in r.policies or ())}
        reached = [r for r in under if r not in own_routes]
        own = sorted(own_routes.intersection(under)) or None
    return AttachedPolicy(
        policy=f"{policy.namespace}/{policy.name}", kind=kind,
        group=policy.api_version.rpartition("/")[0], target=attachment.scope,
        section_name=attachment.section_name, listeners=list(attachment.listeners),
        attachment=attachment.kind.attachment if attachment.kind else None,
        reach=attachment.kind.reach if attachment.kind else None,
        routes=reached, routes_with_own=own,
        observed=as_observed(ancestor_conditions(policy, state.record)))


def _backend_tls(resolver: Resolver, state: GatewayState, results: list[RouteResult]
                 ) -> tuple[list[BackendTLSPolicyOut], list[BackendTLSState]]:
    """Every BackendTLSPolicy targeting a backend Service of the routes the Gateway accepts,
    with the backends (Service:port) it configures; one another policy takes configures
    none and says why in its Accepted condition."""
    applies: dict[str, set[str]] = {}
    policies: dict[str, BackendTLSState] = {}
    for result in results:
        if not any(p.gateway is state and p.accepted for p in result.parents):
            continue
        for backend in result.backends:
            if not backend.ok or (backend.ref.group, backend.ref.kind) != ("", SERVICE):
                continue
            key = make_key(Kind.SERVICE, backend.ref.namespace, backend.ref.name)
            for record in resolver.backend_tls.of_service(key):
                tls = resolver.backend_tls.evaluate(record)
                policies[tls.ref] = tls
                applies.setdefault(tls.ref, set())
            if backend.tls is not None:
                applies[backend.tls.ref].add(f"{backend.ref.ref}:{backend.ref.port}")
    out = []
    for key in sorted(policies):
        tls = policies[key]
        shown = backend_tls_out(tls)
        assert shown is not None
        seen = ancestor_conditions(tls.record, state.record)
        out.append(BackendTLSPolicyOut(
            services=sorted(applies[key]), tls=shown, observed=as_observed(seen),
            disagrees=observed.disagreements(tls.conditions, seen) or None))
    return out, [policies[k] for k in sorted(policies)]


def _disagreements(state: GatewayState, backend_tls: list[BackendTLSPolicyOut],
                   tls_states: list[BackendTLSState]) -> list[Finding]:
    found = []
    for shown, tls in zip(backend_tls, tls_states, strict=True):
        if shown.disagrees:
            record = tls.record
            found.append(codes.CONTROLLER_STATUS_DISAGREES.finding(
                ref(record), f"BackendTLSPolicy {tls.ref} on Gateway {state.ref}: controller "
                f"status disagrees on {', '.join(shown.disagrees)}",
                detail="The controller wrote a status.ancestors entry for this Gateway other "
                "than what a conformant controller would set for the current spec: the status "
                "may be stale, or the controller decides otherwise.",
                suggestion="Compare 'observed' with 'tls' in backendTls; check the "
                "controller's logs and the condition's observedGeneration.",
                evidence=[evidence(record, "status.ancestors", shown.disagrees)]))
    return found


def analyze(view: GraphView, args: Args) -> Result:
    resolver = Resolver(view)
    state = find_gateway(view, resolver, args.gateway)
    resolver.count_attached(state)
    results = [resolver.resolve(route) for route in resolver.routes_of(state)]
    routes = _routes(view, state, results)
    routes.sort(key=lambda r: (r.accepted.status != c.TRUE, r.route, r.kind))
    attachments = gateway_attachments(view, state)
    policies = [_policy(state, a, routes) for a in attachments]
    backend_tls, tls_states = _backend_tls(resolver, state, results)
    findings = [*gateway_findings(state), *attachment_findings(state, attachments),
                *_disagreements(state, backend_tls, tls_states)]
    for tls in tls_states:
        findings.extend(backend_tls_findings(tls))
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))
    notes = list(state.notes)
    for attachment in attachments:
        if attachment.kind is None:
            notes.append(f"{attachment.ref}: a policy kind netsight has no definition for; "
                         "whether it also reaches the routes (Inherited) is not evaluated")
    repeated = Counter((p.kind, p.target, p.section_name) for p in policies)
    for (kind, target, section), n in repeated.items():
        if n > 1:
            where = f"listener {section}" if section else target
            notes.append(f"{n} {kind} policies attach to the {where}: how the provider "
                         "merges or orders them is provider-specific and not evaluated")
    for tls in tls_states:
        notes.extend(tls.notes)
    # A kind RBAC forbids (or not listed yet) is empty in the graph, not in the cluster.
    for kind in sorted({kind for _, kind in KNOWN_KINDS} | {BACKEND_TLS_POLICY}):
        reason = view.unreadable(kind)
        if reason is not None:
            notes.append(f"{reason}: policies of this kind may be missing from the answer")
    return Result(
        metadata=metadata(view, state.record.namespace),
        gateway=gateway_out(state),
        addresses=addresses(status_of(state.record).get("addresses")),
        requested_addresses=addresses(spec_of(state.record).get("addresses")),
        routes=routes,
        policies=policies,
        backend_tls=backend_tls,
        findings=findings,
        not_evaluated=list(dict.fromkeys(notes)),
    )


# Offered by a live server only while the Gateway API CRDs are installed.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.ROUTING, provider="gateway-api")
