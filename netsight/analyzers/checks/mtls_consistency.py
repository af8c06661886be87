"""Istio mTLS consistency: DestinationRule TLS against PeerAuthentication, as Kiali checks it.

Kiali's validations (kiali/kiali ``business/checkers/destinationrules`` and
``peerauthentications``) compare the mesh-wide (host ``*.local``) and namespace-wide (host
``*.<namespace>.svc.cluster.local``) DestinationRules with the PeerAuthentications of the
mesh (the root namespace) and of the namespace; a PeerAuthentication with a selector is not
namespace-wide. Each DestinationRule is judged against the rules exported to its namespace,
as Kiali validates a namespace. Kiali assumes auto mTLS on unless the mesh config says
otherwise, and the root namespace ``istio-system``: both are read from istiod's mesh config
ConfigMap where its data is at hand.

Beside them, netsight's own: a DestinationRule whose TLS the servers of its host refuse
(the verdict find_blocking_policies gives its clients), for rules naming one Service.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.codes import Code
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.core.declarations import AnalyzerMetadata, Check
from netsight.analyzers.policy.endpoints import Endpoint, from_pod
from netsight.analyzers.policy.istio_authz import IstioLayer
from netsight.analyzers.policy.istio_client_tls import (
    CONFIG_MAP,
    DESTINATION_RULE,
    DOMAIN,
    ClientRule,
    Mesh,
    TlsMode,
    mesh,
    rule_index,
)
from netsight.analyzers.policy.istio_model import (
    AUTHZ_KIND,
    GROUP,
    PEER_AUTHN_KIND,
    Mode,
    PeerAuthn,
)
from netsight.analyzers.policy.istio_model import build_peer_authn as read_peer_authn
from netsight.analyzers.policy.istio_mtls import Outcome
from netsight.analyzers.policy.peers import Namespaces
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel
from netsight.graph.model.records import GenericRecord, PodRecord, ServiceRecord, WorkloadRecord
from netsight.graph.store.live import GraphView

KIALI: tuple[Code, ...] = (
    codes.DESTINATION_RULE_MULTI_MATCH, codes.DESTINATION_RULE_TLS_OVERRIDDEN,
    codes.MESH_MTLS_PEER_AUTHENTICATION_MISSING,
    codes.NAMESPACE_MTLS_PEER_AUTHENTICATION_MISSING,
    codes.DESTINATION_RULE_DISABLES_MTLS_UNDER_STRICT, codes.DESTINATION_RULE_DISABLES_MESH_MTLS,
    codes.MESH_MTLS_DESTINATION_RULE_MISSING, codes.NAMESPACE_MTLS_DESTINATION_RULE_MISSING,
    codes.NAMESPACE_MTLS_DISABLED_BUT_REQUESTED, codes.MESH_MTLS_DISABLED_BUT_REQUESTED,
    codes.AUTHORIZATION_POLICY_REQUIRES_MTLS)

METADATA = AnalyzerMetadata(
    name="mtls_consistency",
    description="Istio mTLS consistency: DestinationRules whose TLS their servers refuse, and "
    "Kiali's DestinationRule/PeerAuthentication mTLS validations (KIA0201, KIA0204-KIA0208, "
    "KIA0401, KIA0501, KIA0505, KIA0506), and AuthorizationPolicies matching peer identities "
    "where mTLS is not enabled (KIA0105).",
    reads=frozenset({DESTINATION_RULE, PEER_AUTHN_KIND, AUTHZ_KIND, CONFIG_MAP, Kind.SERVICE,
                     Kind.NAMESPACE, *POD_LIKE_KINDS}),
    codes=(codes.DESTINATION_RULE_TLS_REFUSED, *KIALI),
)

# What each Kiali check says of its object, in the summary line.
SAYS: dict[str, str] = {
    "NS0763": "enables ISTIO_MUTUAL mesh-wide without a PeerAuthentication enabling mTLS",
    "NS0764": "enables ISTIO_MUTUAL for its namespace without a PeerAuthentication enabling "
              "mTLS",
    "NS0765": "disables TLS for its namespace under a STRICT PeerAuthentication",
    "NS0766": "disables TLS under the mesh-wide STRICT PeerAuthentication",
    "NS0767": "requires mTLS mesh-wide, but no DestinationRule makes clients send it",
    "NS0768": "requires mTLS, but no DestinationRule makes clients send it",
    "NS0769": "disables mTLS while a DestinationRule makes clients send it",
    "NS0770": "disables mTLS mesh-wide while a DestinationRule makes clients send it",
}
MESH_HOST = "*.local"
SUFFIX = f"svc.{DOMAIN}"  # Kiali's identity domain
MAX_PODS = 20  # server pods judged per DestinationRule and Service


@dataclass
class Inputs:
    view: GraphView
    mesh: Mesh
    rules: list[ClientRule]
    authns: dict[str, list[PeerAuthn]]  # namespace -> its PeerAuthentications, oldest first
    namespaces: list[str]

    def visible(self, namespace: str) -> list[ClientRule]:
        return [r for r in self.rules if r.problem is None and r.visible_to(namespace)]

    def mesh_authns(self) -> list[PeerAuthn]:
        return self.authns.get(self.mesh.root_namespace, [])


def _inputs(view: GraphView) -> Inputs:
    authns: dict[str, list[PeerAuthn]] = {}
    for record in view.for_each(PEER_AUTHN_KIND):
        if isinstance(record, GenericRecord) and record.api_version.startswith(GROUP + "/"):
            authns.setdefault(record.namespace, []).append(read_peer_authn(record))
    for found in authns.values():
        found.sort(key=lambda p: (p.record.created or "", p.record.name))
    rules = sorted(rule_index(view).rules(), key=lambda r: r.record.key)
    return Inputs(view, mesh(view), rules, authns, sorted(view.namespaces()))


# --- Kiali's readings (kubernetes/istio.go) -------------------------------------------------

def _rule_mode(rule: ClientRule) -> str:
    """DestinationRuleHasMTLSEnabled: the rule's own trafficPolicy.tls mode, or ''."""
    tls = rule.policy.tls if rule.policy is not None else None
    return tls.mode.value if tls is not None and tls.mode is not None else ""


def _host(rule: ClientRule) -> str:
    spec = rule.record.spec or {}
    host = spec.get("host")
    return host if isinstance(host, str) else ""


def _for_host(rule: ClientRule, expected: str) -> str:
    """DestinationRuleHasMTLSEnabledForHost: the rule's mode where its host is exactly
    ``expected``, else ''."""
    return _rule_mode(rule) if _host(rule) == expected else ""


def _mesh_mode(rule: ClientRule) -> str:
    return _for_host(rule, MESH_HOST)


def _namespace_mode(rule: ClientRule, namespace: str) -> str:
    return _for_host(rule, f"*.{namespace}.{SUFFIX}")


def _authn_mode(pa: PeerAuthn) -> str:
    """PeerAuthnHasMTLSEnabled: '' for one with a selector (not namespace-wide)."""
    if pa.problem is not None or pa.selector is not None:
        return ""
    return "" if pa.mode is Mode.UNSET else pa.mode.value


def _enabled(pa: PeerAuthn) -> bool:
    return _authn_mode(pa) in ("STRICT", "PERMISSIVE")


def _mutual(mode: str) -> bool:
    return mode in (TlsMode.ISTIO_MUTUAL.value, TlsMode.MUTUAL.value)


# --- DestinationRules -----------------------------------------------------------------------

def _rule_checks(inputs: Inputs, rule: ClientRule) -> Iterator[tuple[Code, str, str]]:
    """(code, why, field) for one DestinationRule, as Kiali's per-rule checkers."""
    namespace = rule.record.namespace
    own = inputs.authns.get(namespace, [])
    meshwide = inputs.mesh_authns()
    auto = inputs.mesh.auto_mtls
    ns_mode, mesh_mode = _namespace_mode(rule, namespace), _mesh_mode(rule)
    path = "spec.trafficPolicy.tls.mode"
    # DisabledNamespaceWideMTLSChecker
    if ns_mode == "DISABLE":
        disabled_here = False
        for pa in own:
            if _enabled(pa):
                if pa.mode is Mode.STRICT:
                    yield (codes.DESTINATION_RULE_DISABLES_MTLS_UNDER_STRICT,
                           f"PeerAuthentication {pa.name} is STRICT", path)
                break
            disabled_here = disabled_here or _authn_mode(pa) == "DISABLE"
        else:
            strict = next((pa for pa in meshwide if _authn_mode(pa) == "STRICT"), None)
            if not disabled_here and strict is not None:
                yield (codes.DESTINATION_RULE_DISABLES_MESH_MTLS,
                       f"mesh-wide PeerAuthentication {strict.name} is STRICT", path)
    # DisabledMeshWideMTLSChecker
    if mesh_mode == "DISABLE":
        strict = next((pa for pa in meshwide if _authn_mode(pa) == "STRICT"), None)
        if strict is not None:
            yield (codes.DESTINATION_RULE_DISABLES_MESH_MTLS,
                   f"mesh-wide PeerAuthentication {strict.name} is STRICT", path)
    # NamespaceWideMTLSChecker, MeshWideMTLSChecker (auto mTLS needs no PeerAuthentication)
    if ns_mode == "ISTIO_MUTUAL" and not auto and not any(
            _enabled(pa) for pa in (*own, *meshwide)):
        yield (codes.NAMESPACE_MTLS_PEER_AUTHENTICATION_MISSING,
               f"auto mTLS is off ({inputs.mesh.source}) and no PeerAuthentication of "
               f"{namespace} or the mesh enables mTLS", path)
    if mesh_mode == "ISTIO_MUTUAL" and not auto and not any(_enabled(pa) for pa in meshwide):
        yield (codes.MESH_MTLS_PEER_AUTHENTICATION_MISSING,
               f"auto mTLS is off ({inputs.mesh.source}) and no mesh-wide PeerAuthentication "
               f"in {inputs.mesh.root_namespace} enables mTLS", path)


def _non_local(rule: ClientRule) -> bool:
    """isNonLocalmTLSForServiceEnabled: a mesh-wide or own-namespace-wide ISTIO_MUTUAL rule."""
    return _mesh_mode(rule) == "ISTIO_MUTUAL" or \
        _namespace_mode(rule, rule.record.namespace) == "ISTIO_MUTUAL"


def _kiali_host(host: str, namespace: str, namespaces: list[str]) -> str:
    """Kiali's GetHost(...).String(): short, ``name.namespace`` and ``name.namespace.svc``
    forms made full; anything else as written."""
    parts = host.split(".")
    if (len(parts) == 2 and (parts[1] == namespace or parts[1] in namespaces)) or \
            (len(parts) == 3 and parts[2] == "svc"):
        return f"{parts[0]}.{parts[1]}.{SUFFIX}"
    if len(parts) == 1:
        return f"{host}.{namespace}.{SUFFIX}"
    return host


def _overlap(a: str, b: str) -> bool:
    def within(sub: str, wild: str) -> bool:
        return wild == "*" or (wild.startswith("*.") and sub.endswith(wild[1:]))
    return a == b or within(a, b) or within(b, a)


def _share_a_namespace(a: ClientRule, b: ClientRule, namespaces: list[str]) -> bool:
    """Whether some namespace sees both (Kiali validates one namespace's visible rules)."""
    return any(a.visible_to(n) and b.visible_to(n) for n in
               dict.fromkeys([a.record.namespace, b.record.namespace, *namespaces]))


def multi_match(inputs: Inputs) -> dict[str, list[ClientRule]]:
    """KIA0201: rule key -> the rules it collides with (same host and subset)."""
    rules = [r for r in inputs.rules if r.problem is None and not _non_local(r)]
    found: dict[str, list[ClientRule]] = {}
    hosts = {r.record.key: _kiali_host(_host(r), r.record.namespace, inputs.namespaces)
             for r in rules}
    for a, b in combinations(rules, 2):
        if not _overlap(hosts[a.record.key], hosts[b.record.key]):
            continue
        subsets_a = {s.name for s in a.subsets} or {"~"}
        subsets_b = {s.name for s in b.subsets} or {"~"}
        if "~" not in subsets_a and "~" not in subsets_b and not subsets_a & subsets_b:
            continue
        if not _share_a_namespace(a, b, inputs.namespaces):
            continue
        found.setdefault(a.record.key, []).append(b)
        found.setdefault(b.record.key, []).append(a)
    return found


def _parse_host(host: str, namespace: str) -> tuple[str, str, str]:
    """Kiali's ParseHost: (service, namespace, cluster), the last two empty where the host is
    neither a short name nor a full Service name (a ServiceEntry host, ``name.namespace``)."""
    parts = host.split(".")
    if len(parts) == 1:
        return host, namespace, SUFFIX
    if len(parts) > 2 and ".".join(parts[2:]) == SUFFIX:
        return parts[0], parts[1], SUFFIX
    return host, "", ""


def overridden(inputs: Inputs, rule: ClientRule) -> list[ClientRule]:
    """KIA0204 (TrafficPolicyChecker): the rules enabling mTLS for the rule's host from
    further away (mesh-wide, namespace-wide, or another rule of the same host) that a rule
    without TLS settings overrides. Rules are those visible to the rule's namespace."""
    policy = rule.policy
    if policy is not None and (policy.tls is not None or any(
            t.mode is not None for t in policy.ports.values())):
        return []
    namespace = rule.record.namespace
    service, host_ns, cluster = _parse_host(_host(rule), namespace)
    full = f"{service}.{host_ns}.{cluster}" if cluster else service
    found = []
    for other in inputs.visible(namespace):
        if other is rule:
            continue
        other_host = _host(other)
        if _non_local(other):
            o_service, o_ns, o_cluster = _parse_host(other_host, namespace)
            if o_service == MESH_HOST or (o_cluster, o_ns) == (cluster, host_ns):
                found.append(other)
                continue
        if _rule_mode(other) == "ISTIO_MUTUAL" and other_host in (
                f"*.{host_ns}.{cluster}", full):
            found.append(other)
    return found


# --- PeerAuthentications --------------------------------------------------------------------

def _authn_checks(inputs: Inputs, pa: PeerAuthn) -> Iterator[tuple[Code, str]]:
    namespace = pa.record.namespace
    rules = inputs.visible(namespace)
    mode = _authn_mode(pa)
    auto = inputs.mesh.auto_mtls
    if namespace == inputs.mesh.root_namespace:
        if mode == "DISABLE":  # DisabledMeshWideChecker
            enabling = next((r for r in rules if _mutual(_mesh_mode(r))), None)
            if enabling is not None:
                yield (codes.MESH_MTLS_DISABLED_BUT_REQUESTED,
                       f"DestinationRule {enabling.name} enables {_mesh_mode(enabling)} for "
                       f"{MESH_HOST}")
        if mode == "STRICT" and not auto and not any(  # MeshMtlsChecker
                _mesh_mode(r) == "ISTIO_MUTUAL" for r in rules):
            yield (codes.MESH_MTLS_DESTINATION_RULE_MISSING,
                   f"auto mTLS is off ({inputs.mesh.source}) and no DestinationRule for "
                   f"{MESH_HOST} enables ISTIO_MUTUAL")
        return
    if mode == "DISABLE":  # DisabledNamespaceWideChecker
        mesh_enabling: ClientRule | None = None
        for rule in rules:
            ns_mode = _namespace_mode(rule, namespace)
            if _mutual(ns_mode):
                yield (codes.NAMESPACE_MTLS_DISABLED_BUT_REQUESTED,
                       f"DestinationRule {rule.name} enables {ns_mode} for "
                       f"*.{namespace}.{SUFFIX}")
                break
            if ns_mode == "DISABLE":
                break
            if mesh_enabling is None and _mutual(_mesh_mode(rule)):
                mesh_enabling = rule
        else:
            if mesh_enabling is not None:
                yield (codes.NAMESPACE_MTLS_DISABLED_BUT_REQUESTED,
                       f"DestinationRule {mesh_enabling.name} enables mTLS for {MESH_HOST} "
                       "and no namespace-wide DestinationRule disables it")
    if mode == "STRICT" and not auto and not any(  # NamespaceMtlsChecker
            _namespace_mode(r, namespace) == "ISTIO_MUTUAL" or
            _mesh_mode(r) == "ISTIO_MUTUAL" for r in rules):
        yield (codes.NAMESPACE_MTLS_DESTINATION_RULE_MISSING,
               f"auto mTLS is off ({inputs.mesh.source}) and no DestinationRule for "
               f"*.{namespace}.{SUFFIX} or {MESH_HOST} enables ISTIO_MUTUAL")


# --- what servers make of a rule's TLS ------------------------------------------------------

def _servers(view: GraphView, service: ServiceRecord) -> list[Endpoint]:
    """The pods a Service selects (in manifests, the workload templates standing for them)."""
    found = [r for r in view.neighbors(service.key, Rel.SELECTS)
             if isinstance(r, PodRecord | WorkloadRecord)]
    pods = [r for r in found if isinstance(r, PodRecord)] or found
    return [from_pod(r) for r in sorted(pods, key=lambda r: r.key)[:MAX_PODS]]


def refused(view: GraphView, rule: ClientRule) -> Iterator[tuple[str, str, str]]:
    """(where, why, what the client sends) for each Service port of the rule's host whose
    servers refuse what the rule makes its own namespace's sidecar clients send."""
    service_name, namespace, cluster = _parse_host(rule.host, rule.record.namespace)
    if not cluster or rule.selector is not None or rule.problem is not None or \
            not rule.visible_to(rule.record.namespace):
        return
    service = view.get(f"{Kind.SERVICE}/{namespace}/{service_name}")
    if not isinstance(service, ServiceRecord):
        return
    client = Endpoint(f"(a sidecar client in {rule.record.namespace})", rule.record.namespace,
                      mesh_proxy="istio-proxy")
    servers = _servers(view, service)
    for entry in service.ports:
        if entry.protocol != "TCP":
            continue
        layer = IstioLayer(view, Namespaces(view), via=(service, entry.port))
        for server in servers:
            target = entry.target_port
            if isinstance(target, str):
                target = next((p.port for p in server.ports if p.name == target), -1)
            if target == -1:
                continue
            tls = layer.tls(client, server, target)
            if tls.outcome is Outcome.REFUSED and tls.rule == rule.ref:
                yield (f"{server.name} port {target} (Service port {entry.port})", tls.why,
                       tls.client)
                break  # one server per Service port says enough


def check(view: GraphView, namespace: str | None) -> Iterator[Finding]:
    inputs = _inputs(view)

    def mine(record: GenericRecord) -> bool:
        return namespace is None or record.namespace == namespace

    collisions = multi_match(inputs)
    for rule in inputs.rules:
        record = rule.record
        if not mine(record) or rule.problem is not None:
            continue
        where = list(refused(view, rule))
        if where:
            first, why, sent = where[0]
            fix = "Inject a sidecar into the servers (or let auto mTLS decide: remove the " \
                "rule's tls)" if sent.startswith(TlsMode.ISTIO_MUTUAL.value) else \
                "Set the rule's tls.mode to ISTIO_MUTUAL (or remove it: auto mTLS then " \
                "decides), or relax the PeerAuthentication to PERMISSIVE"
            yield codes.DESTINATION_RULE_TLS_REFUSED.finding(
                ref(record), f"DestinationRule {rule.name}: its clients' connections to "
                f"{first} are refused" + (f" (and {len(where) - 1} more ports)"
                                          if len(where) > 1 else ""),
                detail=f"{why}. find_blocking_policies denies these flows; "
                "istio_mtls_status shows them per port.",
                suggestion=f"{fix}.",
                evidence=[evidence(record, "spec.trafficPolicy", _rule_mode(rule) or None)])
        for code, why, path in _rule_checks(inputs, rule):
            yield code.finding(ref(record), f"DestinationRule {rule.name} {SAYS[code.code]} "
                               f"({why})",
                               detail=f"{code.description} Here: {why}.",
                               evidence=[evidence(record, path, _rule_mode(rule))])
        others = collisions.get(record.key)
        if others:
            names = ", ".join(o.name for o in others)
            yield codes.DESTINATION_RULE_MULTI_MATCH.finding(
                ref(record), f"DestinationRule {rule.name} targets the same host and subset "
                f"as {names}", detail=codes.DESTINATION_RULE_MULTI_MATCH.description,
                suggestion="Merge them into one DestinationRule per host.",
                evidence=[evidence(record, "spec.host", _host(rule))])
        over = overridden(inputs, rule)
        if over:
            names = ", ".join(o.name for o in over)
            yield codes.DESTINATION_RULE_TLS_OVERRIDDEN.finding(
                ref(record), f"DestinationRule {rule.name} has no TLS settings and overrides "
                f"the mTLS of {names}", detail=codes.DESTINATION_RULE_TLS_OVERRIDDEN.description,
                suggestion="Add trafficPolicy.tls (mode ISTIO_MUTUAL) to it.",
                evidence=[evidence(record, "spec.trafficPolicy", None)])
    for policy in view.for_each(AUTHZ_KIND, namespace):
        if isinstance(policy, GenericRecord) and policy.api_version.startswith(GROUP + "/"):
            yield from _requires_mtls(inputs, policy)
    for authns in inputs.authns.values():
        for pa in authns:
            if not mine(pa.record) or pa.problem is not None:
                continue
            for code, why in _authn_checks(inputs, pa):
                yield code.finding(pa.ref, f"PeerAuthentication {pa.name} {SAYS[code.code]} "
                                   f"({why})",
                                   detail=f"{code.description} Here: {why}.",
                                   evidence=[evidence(pa.record, "spec.mtls.mode",
                                                      pa.mode.value)])



# --- AuthorizationPolicies that need peer identities (Kiali's MtlsEnabledChecker, KIA0105) --

ENABLED, PARTIAL, NOT_ENABLED, DISABLED = ("MTLS_ENABLED", "MTLS_PARTIALLY_ENABLED",
                                           "MTLS_NOT_ENABLED", "MTLS_DISABLED")
# Condition keys whose value comes from the peer's certificate.
MTLS_KEYS = ("source.namespace", "source.principal", "connection.sni")
MTLS_SOURCE_FIELDS = ("principals", "notPrincipals", "namespaces", "notNamespaces")


@dataclass(frozen=True, slots=True)
class _Status:
    """Kiali's TlsStatus: the DestinationRule and PeerAuthentication modes found, and the
    status they make together."""

    dr: str
    pa: str
    overall: str


def _final(dr: str, pa: str, auto: bool) -> _Status:
    """finalStatus (util/mtls/status.go), with AllowPermissive as the checker sets it."""
    enabled = _mutual(dr) or (dr == "" and auto)
    disabled = dr == "DISABLE" or (dr == "" and auto)
    overall = PARTIAL
    if pa in ("STRICT", "PERMISSIVE") and enabled:
        overall = ENABLED
    elif pa == "DISABLE" and disabled:
        overall = DISABLED
    elif pa == "" and dr == "":
        overall = NOT_ENABLED
    return _Status(dr, pa, overall)


def _overall(ns: _Status | None, mesh_status: _Status, auto: bool) -> str:
    """OverallMtlsStatus: the namespace's status where it decides, else the mesh's."""
    if ns is not None and ns.overall in (ENABLED, DISABLED):
        return ns.overall
    if ns is not None and ns.overall == PARTIAL:
        return _overall(None, _final(ns.dr or mesh_status.dr, ns.pa or mesh_status.pa, auto),
                        auto)
    dr, pa = mesh_status.dr, mesh_status.pa
    if mesh_status.overall in (ENABLED, DISABLED):
        return mesh_status.overall
    if pa == "" and dr == "":
        return NOT_ENABLED
    if (pa == "DISABLE" and dr == "") or (dr == "DISABLE" and pa == ""):
        return DISABLED
    if auto and ((pa == "STRICT" and dr == "") or (_mutual(dr) and pa == "")
                 or (pa == "PERMISSIVE" and dr == "")):
        return ENABLED
    return PARTIAL


def _first(modes: Iterator[str]) -> str:
    return next((m for m in modes if m), "")


def _namespace_mtls(inputs: Inputs, namespace: str) -> str:
    """hasMtlsEnabledForNamespace: the namespace's status over the mesh's; nothing set and
    auto mTLS on counts as enabled."""
    auto = inputs.mesh.auto_mtls
    rules = [r for r in inputs.rules if r.problem is None]
    ns = _final(_first(_namespace_mode(r, namespace) for r in rules),
                _first(_authn_mode(pa) for pa in inputs.authns.get(namespace, [])), auto)
    mesh_dr = _first(_mesh_mode(r) for r in rules)
    mesh_pa = _first(_authn_mode(pa) for pa in inputs.mesh_authns())
    mesh_status = _Status(mesh_dr, mesh_pa,
                          _overall(None, _final(mesh_dr, mesh_pa, auto), auto))
    status = _overall(ns, mesh_status, auto)
    return ENABLED if status == NOT_ENABLED and auto else status


def _workload_mtls(inputs: Inputs, namespace: str, labels: dict[str, str]) -> str:
    """WorkloadMtlsStatus: the first PeerAuthentication of the namespace whose matchLabels
    select ``labels`` decides (PERMISSIVE: by the DestinationRules of its Services)."""
    for pa in inputs.authns.get(namespace, []):
        if pa.problem is not None or not pa.selector or \
                any(labels.get(k) != v for k, v in pa.selector.items()):
            continue
        if pa.mode is Mode.STRICT:
            return ENABLED
        if pa.mode is Mode.DISABLE:
            return DISABLED
        if pa.mode is Mode.PERMISSIVE:
            for service in inputs.view.for_each(Kind.SERVICE, namespace):
                if not isinstance(service, ServiceRecord) or not service.selector or \
                        any(service.selector.get(k) != v for k, v in pa.selector.items()):
                    continue
                for rule in inputs.rules:
                    if rule.problem is None and _names_service(rule, service):
                        mode = _rule_mode(rule)
                        if _mutual(mode):
                            return ENABLED
                        if mode == "DISABLE":
                            return DISABLED
            return NOT_ENABLED
    return NOT_ENABLED


def _names_service(rule: ClientRule, service: ServiceRecord) -> bool:
    """FilterByHost: the rule's host is the Service's short name (in its namespace),
    name.namespace, name.namespace.svc or its FQDN."""
    host, name, ns = _host(rule), service.name, service.namespace
    return (host == name and rule.record.namespace == ns) or \
        host in (f"{name}.{ns}", f"{name}.{ns}.svc", f"{name}.{ns}.{SUFFIX}")


def needs_mtls(spec: object) -> list[str]:
    """needsMtls: the fields of the policy's rules whose values come from the peer's
    certificate (source principals and namespaces, conditions on them or on the SNI)."""
    paths: list[str] = []
    rules = spec.get("rules") if isinstance(spec, dict) else None
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        rule = rule if isinstance(rule, dict) else {}
        froms = rule.get("from")
        for j, source in enumerate(froms if isinstance(froms, list) else []):
            fields = source.get("source") if isinstance(source, dict) else None
            for name in MTLS_SOURCE_FIELDS:
                if isinstance(fields, dict) and fields.get(name):
                    paths.append(f"spec.rules[{i}].from[{j}].source.{name}")
        whens = rule.get("when")
        for k, when in enumerate(whens if isinstance(whens, list) else []):
            if isinstance(when, dict) and when.get("key") in MTLS_KEYS:
                paths.append(f"spec.rules[{i}].when[{k}]")
    return paths


def _requires_mtls(inputs: Inputs, record: GenericRecord) -> Iterator[Finding]:
    paths = needs_mtls(record.spec)
    if not paths:
        return
    spec = record.spec or {}
    selector = spec.get("selector")
    raw = selector.get("matchLabels") if isinstance(selector, dict) else None
    labels = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    namespace_status = _namespace_mtls(inputs, record.namespace)
    status = _workload_mtls(inputs, record.namespace, labels)
    enabled = status == ENABLED or (status == NOT_ENABLED and namespace_status == ENABLED)
    if enabled:
        return
    yield codes.AUTHORIZATION_POLICY_REQUIRES_MTLS.finding(
        ref(record), f"AuthorizationPolicy {record.ref} matches on peer identities, but "
        "mTLS is not enabled for the workloads it applies to",
        detail=f"{', '.join(paths)} compare values taken from the client's mTLS "
        "certificate; with mTLS not enabled (PeerAuthentication and DestinationRule "
        "settings of the workload, namespace and mesh, auto mTLS "
        f"{'on' if inputs.mesh.auto_mtls else 'off'}) plaintext requests carry none, so "
        "these fields never match them.",
        suggestion="Enable mTLS (a STRICT or PERMISSIVE PeerAuthentication, with auto mTLS or "
        "an ISTIO_MUTUAL DestinationRule), or match on something else.",
        evidence=[evidence(record, path, None) for path in paths])


CHECK = Check(METADATA, check)
