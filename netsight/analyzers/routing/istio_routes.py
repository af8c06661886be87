"""Which Istio VirtualService http rule takes one request, as a sidecar or an Istio Gateway
would route it (diff_routes ``via``).

The VirtualServices and DestinationRules are read by the mesh checks' readers
(mesh/istio_objects.py through MeshContext) and hosts resolved by their rules (mesh/hosts.py).
What follows is pilot's routing (pilot/pkg/networking/core: httproute.go, gateway.go,
route/route.go; pilot/pkg/model: virtualservice.go, push_context.go):

- VirtualServices are taken oldest first (creationTimestamp, then name, then namespace).
- A sidecar (``via: mesh``) uses the VirtualServices bound to ``mesh`` (no ``gateways``, or
  ``mesh`` among them) and exported to the client's namespace. One VirtualService owns a host:
  Envoy picks the exact host before a wildcard (the most specific wildcard first), and of
  VirtualServices claiming the same host the oldest keeps it, the others' virtual host being
  dropped as a duplicate domain. Without one, a Service's host gets the default route to it.
- An Istio Gateway (``via: gateway ns/name``) merges the http rules of every VirtualService
  bound to it for a host its servers serve to the VirtualService's namespace, in that order.
- Within the rules, the first whose match fits takes the request (match entries are ORed,
  fields of one entry ANDed). ``sourceLabels``, ``sourceNamespace`` and ``gateways`` of an
  entry select the proxy; ``uri``, ``method``, ``authority``, ``headers``, ``queryParams``,
  ``withoutHeaders`` and ``port`` the request. Regexes are RE2's (Envoy's engine), matched
  whole.

A rule that delegates is replaced by the rules of the delegate VirtualService (one without
hosts, exported to the root's namespace), each merged with the root rule as pilot merges
them (model/virtualservice.go: a delegate match must be a subset of a root match, or the
delegate rule is dropped; unset fields are inherited). One level, as Istio supports.

Not evaluated, and answered undecided with the reason: ``scheme`` matches, a delegate's
rule that delegates again, a sidecar's ``sourceLabels`` or ``port`` when the request does
not give them, and a gateway's ``sourceLabels``/``sourceNamespace`` (its pods' labels and
namespace).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.core import regex
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import (
    EXPORT_ALL,
    SERVICE_DOMAIN,
    export_scopes,
    is_wildcard,
    service_of,
    to_fqdn,
)
from netsight.analyzers.mesh.hosts import matches as hosts_match
from netsight.analyzers.mesh.istio_objects import (
    ISTIO_GATEWAY,
    MESH_GATEWAY,
    VIRTUAL_SERVICE,
    DestinationRule,
    IstioGateway,
    Unreadable,
    VirtualService,
    read_gateway,
)
from netsight.analyzers.mesh.virtual_services import istio_gateway_hosts
from netsight.analyzers.routing.references import ready_endpoints
from netsight.analyzers.routing.requests import Request
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import EndpointSliceRecord, GenericRecord, ServiceRecord
from netsight.graph.store.live import GraphView

MESH = "mesh"
ROOT_NAMESPACE = "istio-system"  # meshConfig.rootNamespace's default (MeshConfig is not read)
_HTTP_SERVER_PROTOCOLS = ("HTTP", "HTTPS", "HTTP2", "GRPC")
# A fit: True, False, or the reason it cannot be decided.
Fit = bool | str


@dataclass(frozen=True, slots=True)
class Via:
    """Where the request is routed: a sidecar (``gateway`` None) or an Istio Gateway."""

    gateway: tuple[str, str] | None = None

    @property
    def entry(self) -> str:
        return MESH if self.gateway is None else f"gateway {'/'.join(self.gateway)}"


def parse_via(value: str) -> Via | str:
    """The ``via`` argument, or what is wrong with it."""
    if value == MESH:
        return Via()
    kind, _, name = value.partition(" ")
    namespace, sep, gateway = name.strip().partition("/")
    if kind != "gateway" or not sep or not namespace or not gateway or "/" in gateway:
        return f"{value!r} is neither 'mesh' nor 'gateway <namespace>/<name>' (an Istio " \
            "Gateway, e.g. 'gateway istio-system/ingress')"
    return Via((namespace, gateway))


@dataclass(frozen=True, slots=True)
class Source:
    """The client of a sidecar: its namespace, and its pod labels when given."""

    namespace: str
    labels: Mapping[str, str] | None


@dataclass(frozen=True, slots=True)
class Destination:
    host: str  # as written
    fqdn: str
    backend: str  # "namespace/name" of a Service, else the FQDN
    subset: str
    port: int | None
    weight: int
    share: float
    resolved: bool
    reason: str | None
    ready_endpoints: int | None
    mirror: bool = False


@dataclass(frozen=True, slots=True)
class Rule:
    """One http rule of a VirtualService, in the (merged) order the proxy tries them."""

    vs: VirtualService
    index: int
    spec: Mapping[str, Any]
    root: Rule | None = None  # the rule that delegated to this one (merged with it)

    @property
    def label(self) -> str:
        label = f"VirtualService {self.vs.record.ref} http[{self.index}]"
        return label if self.root is None else f"{label} (delegated from {self.root.label})"


@dataclass
class Resolution:
    entry: str
    port: int | None = None
    owner: VirtualService | None = None  # the VirtualService owning the host (a sidecar's)
    rule: Rule | None = None
    match: int | None = None  # the match entry that fits; None: the rule has none
    outcome: str = "404"
    undecided: str | None = None
    destinations: list[Destination] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    default_route: bool = False  # no VirtualService: the sidecar's route to the Service
    # (rule, the rule or VirtualService before it that takes the request, why)
    shadowed: list[tuple[Rule, Rule | VirtualService, str]] = field(default_factory=list)
    # (the key of the VirtualService a note names, or None; the note): shown as the caller
    # may see that object
    notes: list[tuple[str | None, str]] = field(default_factory=list)


# --- StringMatch and match entries ---------------------------------------------------------


def string_fit(spec: Any, value: str | None, *, ignore_case: bool = False) -> Fit:
    """An Istio StringMatch (exact, prefix or regex; an empty one: the value is present)."""
    if not isinstance(spec, Mapping):
        return "a StringMatch that is not an object"
    if value is None:
        return False
    if "exact" in spec or "prefix" in spec:
        want = str(spec.get("exact", spec.get("prefix")))
        got = value.lower() if ignore_case else value
        want = want.lower() if ignore_case else want
        return got == want if "exact" in spec else got.startswith(want)
    if "regex" in spec:
        pattern = str(spec["regex"])
        fits = regex.fullmatcher(pattern)
        if isinstance(fits, str):
            return f"regex {pattern!r} is not valid RE2 ({fits}): the proxies refuse the route"
        return fits(value)
    return True  # {}: Istio makes it a presence match


def _all(fits: list[Fit]) -> Fit:
    if any(f is False for f in fits):
        return False
    reasons = [f for f in fits if isinstance(f, str)]
    return reasons[0] if reasons else True


def _map_fit(spec: Any, values: Mapping[str, str], *, lower: bool, invert: bool) -> Fit:
    if not isinstance(spec, Mapping):
        return True
    fits: list[Fit] = []
    for name, want in spec.items():
        fit = string_fit(want, values.get(str(name).lower() if lower else str(name)))
        fits.append(fit if isinstance(fit, str) or not invert else not fit)
    return _all(fits)


def match_fit(match: Mapping[str, Any], request: Request, *, authority: str, via: Via,
              vs_namespace: str, port: int | None, source: Source | None) -> Fit:
    """Whether one HTTPMatchRequest fits the request on this proxy."""
    fits: list[Fit] = []
    gateways = match.get("gateways")
    if isinstance(gateways, list) and gateways:
        names = {MESH if g == MESH_GATEWAY else _gateway_name(str(g), vs_namespace)
                 for g in gateways}
        fits.append((MESH if via.gateway is None else "/".join(via.gateway)) in names)
    labels = match.get("sourceLabels")
    if isinstance(labels, Mapping) and labels:
        if via.gateway is not None:
            fits.append("sourceLabels on a gateway select its pods, whose labels netsight "
                        "does not compare")
        elif source is None or source.labels is None:
            fits.append("the match has sourceLabels and the request gives no source_labels")
        else:
            fits.append(all(source.labels.get(k) == v for k, v in labels.items()))
    namespace = match.get("sourceNamespace")
    if isinstance(namespace, str) and namespace:
        if via.gateway is not None or source is None:
            fits.append("sourceNamespace on a gateway is its pods' namespace, which netsight "
                        "does not look up")
        else:
            fits.append(source.namespace == namespace)
    want_port = match.get("port")
    if isinstance(want_port, int) and want_port:
        fits.append(want_port == port if port is not None else
                    "the match has a port and the request gives none")
    if "uri" in match:
        fits.append(string_fit(match["uri"], request.path,
                               ignore_case=bool(match.get("ignoreUriCase"))))
    if "scheme" in match:
        fits.append("scheme matches are not evaluated (the request's scheme is not given)")
    if "method" in match:
        fits.append(string_fit(match["method"], request.method))
    if "authority" in match:
        fits.append(string_fit(match["authority"], authority))
    fits.append(_map_fit(match.get("headers"), request.lowered, lower=True, invert=False))
    fits.append(_map_fit(match.get("withoutHeaders"), request.lowered, lower=True,
                         invert=True))
    fits.append(_map_fit(match.get("queryParams"), request.query, lower=False, invert=False))
    return _all(fits)


def _gateway_name(name: str, namespace: str) -> str:
    """A gateways entry as 'namespace/name' (a bare name is in the VirtualService's)."""
    return name if "/" in name else f"{namespace}/{name}"


def rule_fit(rule: Rule, request: Request, *, authority: str, via: Via, port: int | None,
             source: Source | None) -> tuple[Fit, int | None]:
    """(whether the rule takes the request, the match entry that fits)."""
    raw = rule.spec.get("match")
    matches = [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []
    if not matches:
        return True, None
    reasons: list[str] = []
    for i, match in enumerate(matches):
        fit = match_fit(match, request, authority=authority, via=via,
                        vs_namespace=rule.vs.record.namespace, port=port, source=source)
        if fit is True:
            # An earlier undecided entry may have fitted first; the rule fits either way.
            return True, i if not reasons else None
        if isinstance(fit, str):
            reasons.append(fit)
    return (reasons[0] if reasons else False), None


# --- which VirtualServices --------------------------------------------------------------


def _order(vs: VirtualService) -> tuple[str, str, str]:
    record = vs.record
    return (record.created or "9999", record.name, record.namespace)


def _host_rank(vs_host: str, fqdn: str) -> tuple[int, int] | None:
    """How specifically a VirtualService host covers the request host (higher first)."""
    if vs_host == fqdn:
        return (1, len(vs_host))
    if vs_host == "*" or (is_wildcard(vs_host) and fqdn.endswith(vs_host[1:])):
        return (0, len(vs_host))
    return None


def _best_host(vs: VirtualService, candidates: list[str]) -> tuple[tuple[int, int], str] | None:
    best: tuple[tuple[int, int], str] | None = None
    for host in vs.hosts:
        fqdn_host = to_fqdn(vs.record.namespace, host)
        for fqdn in candidates:
            rank = _host_rank(fqdn_host, fqdn)
            if rank is not None and (best is None or rank > best[0]):
                best = (rank, fqdn_host)
    return best


@dataclass(frozen=True, slots=True)
class HostIndex:
    """VirtualServices with hosts by each host they claim (resolved to an FQDN in their
    namespace), so a request reads those that may claim its host, not all of them."""

    by_host: Mapping[str, tuple[VirtualService, ...]]

    def claiming(self, names: list[str]) -> list[VirtualService]:
        """The VirtualServices a host of which is one of ``names`` or a wildcard covering
        one (``*.b.c`` covers ``a.b.c`` and ``x.a.b.c``), oldest first."""
        found: dict[str, VirtualService] = {}
        for name in names:
            keys = [name, "*"]
            labels = name.split(".")
            keys.extend("*." + ".".join(labels[i:]) for i in range(1, len(labels)))
            for key in keys:
                for vs in self.by_host.get(key, ()):
                    found.setdefault(vs.record.key, vs)
        return sorted(found.values(), key=_order)


def host_index(ctx: MeshContext) -> HostIndex:
    """Kept with the graph until a VirtualService changes (rebuilt for an overlay). Read
    through ``ctx`` first, so that VirtualServices Istio's schema would refuse (left out
    of the index) are among its findings."""
    if not ctx.virtual_services:
        return HostIndex({})

    def build(graph: GraphView) -> HostIndex:
        by_host: dict[str, list[VirtualService]] = {}
        for vs in MeshContext(graph, None).virtual_services:
            for host in dict.fromkeys(to_fqdn(vs.record.namespace, h) for h in vs.hosts):
                by_host.setdefault(host, []).append(vs)
        return HostIndex({host: tuple(found) for host, found in by_host.items()})

    return ctx.view.derived(("diff_routes", "virtual_service_hosts"), (VIRTUAL_SERVICE,),
                            build)


def request_fqdns(view: GraphView, host: str, namespace: str | None) -> list[str]:
    """The names a request host stands for: as written, and for a sidecar the short
    forms Envoy's virtual hosts accept for a Service (name, name.ns, name.ns.svc)."""
    found = [host]
    if namespace is None or is_wildcard(host):
        return found
    parts = host.split(".")
    if len(parts) == 1:
        found.append(f"{host}.{namespace}.{SERVICE_DOMAIN}")
    elif len(parts) == 2 and view.exists(make_key(Kind.SERVICE, parts[1], parts[0])):
        found.append(f"{host}.{SERVICE_DOMAIN}")
    elif len(parts) == 3 and parts[2] == "svc":
        found.append(f"{parts[0]}.{parts[1]}.{SERVICE_DOMAIN}")
    return found


def _exported_to(vs: VirtualService, namespace: str) -> bool:
    scopes = export_scopes(vs.export_to, vs.record.namespace)
    return EXPORT_ALL in scopes or namespace in scopes


def _rules(vs: VirtualService) -> list[Rule]:
    spec = vs.record.spec
    http = spec.get("http") if isinstance(spec, Mapping) else None
    return [Rule(vs, i, rule) for i, rule in enumerate(http if isinstance(http, list) else ())
            if isinstance(rule, Mapping)]


def istio_gateway(view: GraphView, via: Via) -> IstioGateway | str | None:
    """The Istio Gateway ``via`` names (None: not found; a string: why it is unreadable)."""
    assert via.gateway is not None
    record = view.get(make_key(ISTIO_GATEWAY, *via.gateway))
    if not isinstance(record, GenericRecord):
        return None
    try:
        return read_gateway(record)
    except Unreadable as exc:
        return str(exc)


def resolve(ctx: MeshContext, via: Via, request: Request, *, authority: str,
            port: int | None, source: Source | None, gateway: IstioGateway | None) -> Resolution:
    """The VirtualService rule that takes the request through ``via`` on ``ctx.view``."""
    view = ctx.view
    answer = Resolution(entry=via.entry, port=port)
    index = host_index(ctx)
    if via.gateway is None:
        assert source is not None
        candidates = request_fqdns(view, request.host, source.namespace)
        claims = [(found, vs) for vs in index.claiming(candidates)
                  if vs.on_mesh and _exported_to(vs, source.namespace)
                  and (found := _best_host(vs, candidates)) is not None]
        _sidecar_scope(ctx, answer, source.namespace)
        if not claims:
            _default_route(ctx, answer, candidates, source)
            return answer
        best = max(rank for (rank, _), _ in claims)
        owners = [(host, vs) for (rank, host), vs in claims if rank == best]
        owner_host, owner = owners[0]
        answer.owner = owner
        for (rank, _), vs in claims:
            if vs is owner:
                continue
            because = f"the older VirtualService keeps host {owner_host}; a sidecar takes " \
                "one per host" if rank == best else f"host {owner_host} is more specific"
            answer.shadowed.extend((rule, owner, because) for rule in _rules(vs))
        rules = _rules(owner)
        proxy_namespace = source.namespace
    else:
        if gateway is None:
            return answer
        served = [s for s in gateway.servers
                  if (port is None or s.port == port)]
        protocols = _server_protocols(gateway)
        served = [s for s in served if protocols.get(s.index, "") in _HTTP_SERVER_PROTOCOLS]
        if not served:
            answer.outcome = "404"
            answer.notes.append((None, f"{via.entry}: no HTTP server"
                                 + (f" on port {port}" if port is not None else "")))
            return answer
        name = "/".join(via.gateway)
        proxy_namespace = via.gateway[0]
        groups: dict[str, list[VirtualService]] = {}
        best_rank: tuple[int, int] | None = None
        for vs in index.claiming([request.host]):
            if not any(_gateway_name(g, vs.record.namespace) == name for g in vs.gateways
                       if g != MESH_GATEWAY) or not _exported_to(vs, proxy_namespace):
                continue
            allowed = [h for s in served
                       for h in istio_gateway_hosts(gateway.record, vs.record.namespace,
                                                    servers=(s.index,))]
            found = _best_host(vs, [request.host])
            if found is None:
                continue
            if not any(hosts_match(h, found[1]) for h in allowed) \
                    or not any(hosts_match(h, request.host) for h in allowed):
                on_port = f" on port {port}" if port is not None else ""
                answer.notes.append((vs.record.key, f"VirtualService {vs.record.ref} is "
                                     f"bound to {via.entry}, but no server{on_port} serves "
                                     f"{request.host} to namespace {vs.record.namespace}"))
                continue
            groups.setdefault(found[1], []).append(vs)
            if best_rank is None or found[0] > best_rank:
                best_rank = found[0]
        if not groups:
            answer.notes.append((None, f"{via.entry}: no VirtualService bound to it "
                                 f"serves host {request.host}"))
            return answer
        host = max(groups, key=lambda h: _host_rank(h, request.host) or (0, 0))
        rules = [rule for vs in groups[host] for rule in _rules(vs)]
        answer.owner = groups[host][0]
        if proxy_namespace and any(not (not vs.export_to or EXPORT_ALL in vs.export_to)
                                   for vs in groups[host]):
            answer.notes.append((None, f"{via.entry}: VirtualService exportTo is decided "
                                 f"for the Gateway's namespace {proxy_namespace} (its pods' "
                                 "namespace is assumed the same)"))
    rules = _delegated(ctx, rules, answer)
    _first_match(ctx, answer, rules, request, authority=authority, via=via, port=port,
                 source=source, proxy_namespace=proxy_namespace)
    return answer


def _sidecar_scope(ctx: MeshContext, answer: Resolution, namespace: str) -> None:
    """A Sidecar of the client's namespace (or the root namespace's default) whose egress
    does not import every host may hide VirtualServices from the client: not evaluated."""
    for sidecar in ctx.sidecars:
        record = sidecar.record
        if record.namespace not in (namespace, ROOT_NAMESPACE):
            continue
        spec = record.spec if isinstance(record.spec, Mapping) else {}
        egress = spec.get("egress")
        hosts = [h for listener in egress if isinstance(listener, Mapping)
                 for h in listener.get("hosts") or ()] if isinstance(egress, list) else []
        if egress is not None and "*/*" not in hosts:
            answer.notes.append((record.key, f"Sidecar {record.ref} limits the hosts its "
                                 f"workloads import ({', '.join(map(str, hosts))}); which "
                                 "VirtualServices the client sees through it is not "
                                 "evaluated"))


def _server_protocols(gateway: IstioGateway) -> dict[int, str]:
    spec = gateway.record.spec
    servers = spec.get("servers") if isinstance(spec, Mapping) else None
    found = {}
    for i, server in enumerate(servers if isinstance(servers, list) else ()):
        port = server.get("port") if isinstance(server, Mapping) else None
        protocol = port.get("protocol") if isinstance(port, Mapping) else None
        found[i] = str(protocol or "").upper()
    return found


def _first_match(ctx: MeshContext, answer: Resolution, rules: list[Rule], request: Request,
                 *, authority: str, via: Via, port: int | None, source: Source | None,
                 proxy_namespace: str) -> None:
    for rule in rules:
        fit, match = rule_fit(rule, request, authority=authority, via=via, port=port,
                              source=source)
        if fit is False:
            continue
        if answer.rule is not None:
            if fit is True:
                answer.shadowed.append((rule, answer.rule, "an earlier rule matches first"))
            continue
        if isinstance(fit, str):
            answer.rule, answer.outcome = rule, "undecided"
            answer.undecided = f"{rule.label}: {fit}"
            return
        if "delegate" in rule.spec:
            answer.rule, answer.match, answer.outcome = rule, match, "undecided"
            answer.undecided = f"{rule.label} delegates again; Istio supports one level " \
                "of delegation and netsight does not follow more"
            return
        answer.rule, answer.match = rule, match
        _take(ctx, answer, rule, port=port, proxy_namespace=proxy_namespace)
    if answer.rule is None:
        answer.outcome = "404"


# --- delegation (pilot/pkg/model/virtualservice.go) ---------------------------------------

_INHERITED = ("rewrite", "timeout", "retries", "fault", "mirror", "mirrorPercent",
              "mirrorPercentage", "corsPolicy", "headers")


def _delegated(ctx: MeshContext, rules: list[Rule], answer: Resolution) -> list[Rule]:
    """``rules`` with each delegating rule replaced by the delegate's rules merged with it
    (a delegate that is missing or not exported to the root's namespace drops the rule)."""
    if not any("delegate" in rule.spec for rule in rules):
        return rules
    delegates = {(vs.record.namespace, vs.record.name): vs
                 for vs in ctx.virtual_services if not vs.hosts}
    found: list[Rule] = []
    for rule in rules:
        target = rule.spec.get("delegate")
        if "delegate" not in rule.spec:
            found.append(rule)
            continue
        root_ns = rule.vs.record.namespace
        name = str(target.get("name") or "") if isinstance(target, Mapping) else ""
        namespace = str(target.get("namespace") or root_ns) \
            if isinstance(target, Mapping) else root_ns
        delegate = delegates.get((namespace, name))
        if delegate is None or not _exported_to(delegate, root_ns):
            why = "does not exist (or has hosts)" if delegate is None else \
                f"is not exported to namespace {root_ns}"
            answer.notes.append((rule.vs.record.key, f"{rule.label} delegates to "
                                 f"VirtualService {namespace}/{name}, which {why}: Istio "
                                 "drops the rule"))
            continue
        for sub in _rules(delegate):
            merged = _merge_rule(rule.spec, sub.spec)
            if merged is None:
                answer.notes.append((delegate.record.key, f"{sub.label} conflicts with the "
                                     f"match of {rule.label} that delegates to it: Istio "
                                     "drops it"))
                continue
            found.append(Rule(delegate, sub.index, merged, root=rule))
    return found


def _merge_rule(root: Mapping[str, Any], sub: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """pilot's mergeHTTPRoute: the delegate rule with the root's matches folded in and the
    root's settings where it has none; None when a delegate match conflicts."""
    root_matches = [m for m in root.get("match") or () if isinstance(m, Mapping)]
    sub_matches = [m for m in sub.get("match") or () if isinstance(m, Mapping)]
    if not root_matches:
        matches = sub_matches
    elif not sub_matches:
        matches = root_matches
    else:
        matches = []
        for leaf in sub_matches:
            fits = [_merge_match(top, leaf) for top in root_matches
                    if not _match_conflict(top, leaf)]
            if not fits:
                return None
            matches.extend(fits)
    merged = dict(sub)
    merged["match"] = matches
    for key in _INHERITED:
        if merged.get(key) is None and root.get(key) is not None:
            merged[key] = root[key]
    return merged


def _merge_match(root: Mapping[str, Any], leaf: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(leaf)
    for key in ("uri", "scheme", "method", "authority"):
        if out.get(key) is None and root.get(key) is not None:
            out[key] = root[key]
    for key in ("headers", "withoutHeaders", "queryParams", "sourceLabels"):
        union = {**(root.get(key) or {}), **(leaf.get(key) or {})}
        if union:
            out[key] = union
    for key in ("port", "sourceNamespace", "gateways"):
        if not out.get(key) and root.get(key):
            out[key] = root[key]
    return out


def _match_conflict(root: Mapping[str, Any], leaf: Mapping[str, Any]) -> bool:
    """pilot's hasConflict: the leaf match is not within the root match."""
    for key in ("uri", "scheme", "method", "authority"):
        if _string_conflict(root.get(key), leaf.get(key)):
            return True
    for key in ("headers", "withoutHeaders", "queryParams"):
        mine, theirs = root.get(key) or {}, leaf.get(key) or {}
        if any(_string_conflict(mine.get(k), v) for k, v in theirs.items()):
            return True
    if bool(root.get("ignoreUriCase")) != bool(leaf.get("ignoreUriCase")):
        return True
    if root.get("port") and leaf.get("port") and root["port"] != leaf["port"]:
        return True
    if root.get("sourceNamespace") and leaf.get("sourceNamespace") != root["sourceNamespace"]:
        return True
    labels = root.get("sourceLabels") or {}
    if any(k in labels and labels[k] != v for k, v in (leaf.get("sourceLabels") or {}).items()):
        return True
    mine, theirs = root.get("gateways") or [], leaf.get("gateways") or []
    return bool(mine and theirs and not set(theirs) <= set(mine))


def _string_conflict(root: Any, leaf: Any) -> bool:
    """pilot's stringMatchConflict."""
    if not isinstance(root, Mapping) or not isinstance(leaf, Mapping):
        return False
    if root.get("regex") and (leaf.get("regex") or leaf.get("prefix") or leaf.get("exact")):
        return True
    if leaf.get("regex") and (root.get("regex") or root.get("prefix") or root.get("exact")):
        return True
    exact = root.get("exact")
    if exact:
        return bool(leaf.get("prefix")) or leaf.get("exact") != exact
    prefix = root.get("prefix")
    if prefix:
        if leaf.get("prefix"):
            return not str(leaf["prefix"]).startswith(str(prefix))
        if leaf.get("exact"):
            return not str(leaf["exact"]).startswith(str(prefix))
    return True


def _take(ctx: MeshContext, answer: Resolution, rule: Rule, *, port: int | None,
          proxy_namespace: str) -> None:
    spec = rule.spec
    answer.filters = _filters(spec)
    redirect = spec.get("redirect")
    direct = spec.get("directResponse")
    if isinstance(redirect, Mapping):
        answer.filters.append(f"redirect {dict(redirect)}")
        answer.outcome = "redirect"
        return
    if isinstance(direct, Mapping):
        # A response the rule gives on purpose, not a failure to forward.
        answer.filters.append(f"directResponse {dict(direct)}")
        answer.outcome = "direct"  # as a Gateway API DirectResponse filter's
        return
    routes = [r for r in spec.get("route") or () if isinstance(r, Mapping)]
    weights = [_weight(r, len(routes)) for r in routes]
    total = sum(weights)
    for r, weight in zip(routes, weights, strict=True):
        answer.destinations.append(destination(
            ctx, rule.vs, r.get("destination"), weight=weight,
            share=round(100 * weight / total, 1) if total else 0.0, port=port,
            proxy_namespace=proxy_namespace))
    for mirror in _mirrors(spec):
        answer.destinations.append(destination(ctx, rule.vs, mirror, weight=0, share=0.0,
                                                port=port, proxy_namespace=proxy_namespace,
                                                mirror=True))
    answer.outcome = _outcome([d for d in answer.destinations if not d.mirror and d.weight])


def _weight(route: Mapping[str, Any], count: int) -> int:
    weight = route.get("weight")
    if isinstance(weight, int) and not isinstance(weight, bool):
        return weight if count > 1 or weight else 100
    return 100 if count == 1 else 0


def _mirrors(spec: Mapping[str, Any]) -> list[Any]:
    found = [spec["mirror"]] if isinstance(spec.get("mirror"), Mapping) else []
    mirrors = spec.get("mirrors")
    if isinstance(mirrors, list):
        found.extend(m.get("destination") for m in mirrors if isinstance(m, Mapping))
    return found


def _outcome(forwarded: list[Destination]) -> str:
    if not forwarded:
        return "503"  # no destination with weight: Envoy has no cluster to pick
    if all(not d.resolved for d in forwarded):
        return "503"  # unknown host or subset: no cluster (NC) or a blackhole
    if all(d.ready_endpoints == 0 for d in forwarded if d.resolved):
        return "503"
    return "forwarded"


def _filters(spec: Mapping[str, Any]) -> list[str]:
    found = []
    for key in ("rewrite", "headers", "fault", "retries", "timeout", "corsPolicy"):
        value = spec.get(key)
        if value:
            found.append(f"{key} {value}")
    return found


def destination(ctx: MeshContext, vs: VirtualService, raw: Any, *, weight: int = 0,
                share: float = 0.0, port: int | None = None,
                proxy_namespace: str | None = None, mirror: bool = False) -> Destination:
    """One route or mirror destination: the Service or ServiceEntry behind its host, its
    subset (defined by the DestinationRule a proxy of ``proxy_namespace`` applies) and
    ready endpoints."""
    proxy_namespace = proxy_namespace or vs.record.namespace
    spec = raw if isinstance(raw, Mapping) else {}
    host = str(spec.get("host") or "")
    subset = str(spec.get("subset") or "")
    raw_port = spec.get("port")
    number = raw_port.get("number") if isinstance(raw_port, Mapping) else None
    dest_port = number if isinstance(number, int) and not isinstance(number, bool) else None
    fqdn = to_fqdn(vs.record.namespace, host)
    entry = ctx.hosts.lookup(vs.record.namespace, vs.export_to, host)
    namespace, name = service_of(vs.record.namespace, fqdn)
    backend = f"{namespace}/{name}" if fqdn.endswith(f".{SERVICE_DOMAIN}") else fqdn

    def out(resolved: bool, reason: str | None, ready: int | None) -> Destination:
        return Destination(host, fqdn, backend, subset, dest_port, weight, share, resolved,
                           reason, ready, mirror)

    if entry is None:
        return out(False, f"no Service or ServiceEntry {fqdn} visible to {vs.record.ref}",
                   None)
    ports = entry.ports
    if dest_port is None and len(ports) > 1 and port not in ports:
        return out(False, f"{fqdn} has ports {', '.join(map(str, ports))} and the "
                   "destination names none", None)
    if dest_port is not None and ports and dest_port not in ports:
        return out(False, f"{fqdn} has no port {dest_port}", None)
    labels: Mapping[str, str] | None = None
    if subset:
        rule = destination_rule(ctx, fqdn, proxy_namespace)
        labels = next((s.labels for s in rule.subsets if s.name == subset), None) \
            if rule is not None else None
        if rule is None or labels is None:
            where = f"DestinationRule {rule.record.ref}" if rule is not None else \
                "no DestinationRule"
            return out(False, f"subset {subset!r} is not defined ({where} for {fqdn} "
                       f"applies to namespace {proxy_namespace})", None)
    ready = None
    if isinstance(entry.record, ServiceRecord) and not entry.assumed:
        ready = ready_endpoints(ctx.view, entry.record) if labels is None else \
            _ready_in_subset(ctx.view, entry.record, labels)
    return out(True, None, ready)


def _ready_in_subset(view: GraphView, service: ServiceRecord,
                     labels: Mapping[str, str]) -> int | None:
    """Ready endpoints of the Service whose pods carry the subset's labels; None when an
    endpoint names no pod the graph holds (its labels are unknown)."""
    if ready_endpoints(view, service) is None:
        return None
    ready: set[str] = set()
    for record in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                 kind=Kind.ENDPOINT_SLICE):
        if not isinstance(record, EndpointSliceRecord):
            continue
        for endpoint in record.group.endpoints:
            if not endpoint.is_ready or endpoint.terminating:
                continue
            pod = view.get(make_key(Kind.POD, service.namespace, endpoint.target_pod)) \
                if endpoint.target_pod else None
            if pod is None:
                return None
            if all(pod.labels.get(k) == v for k, v in labels.items()):
                ready.add(pod.key)
    return len(ready)


def destination_rule(ctx: MeshContext, fqdn: str, proxy_namespace: str
                     ) -> DestinationRule | None:
    """The DestinationRule a proxy in ``proxy_namespace`` applies to ``fqdn``: looked up in
    the proxy's namespace, then the host's, then the root namespace; an exact host before
    a wildcard; exported to the proxy's namespace (pilot's DestinationRule lookup)."""
    service_namespace = service_of("", fqdn)[0]
    for namespace in dict.fromkeys((proxy_namespace, service_namespace, ROOT_NAMESPACE)):
        found = []
        for rule in ctx.destination_rules:
            home = rule.record.namespace
            if home != namespace or rule.has_workload_selector:
                continue
            scopes = export_scopes(rule.export_to, home)
            if EXPORT_ALL not in scopes and proxy_namespace not in scopes:
                continue
            rank = _host_rank(to_fqdn(home, rule.host), fqdn)
            if rank is not None:
                found.append((rank, rule))
        if found:
            return max(found, key=lambda item: item[0])[1]
    return None


def _default_route(ctx: MeshContext, answer: Resolution, candidates: list[str],
                   source: Source) -> None:
    """No VirtualService for the host: a sidecar routes a Service's host to the Service."""
    for fqdn in candidates:
        entry = ctx.hosts.lookup(source.namespace, (), fqdn)
        if entry is None or entry.assumed:
            continue
        answer.default_route = True
        service = entry.record if isinstance(entry.record, ServiceRecord) else None
        ready = ready_endpoints(ctx.view, service) if service is not None else None
        full = to_fqdn(source.namespace, fqdn)
        backend = service.ref if service is not None else full
        answer.destinations = [Destination(fqdn, full, backend, "", None, 100, 100.0, True,
                                           None, ready)]
        answer.outcome = _outcome(answer.destinations)
        return
    answer.notes.append((None, f"mesh: no VirtualService exported to {source.namespace} "
                         f"and no Service or ServiceEntry for host {candidates[0]}"))
