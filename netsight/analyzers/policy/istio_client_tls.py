"""The TLS a client's sidecar originates toward a Service: DestinationRules as Istio picks them.

A client proxy takes the DestinationRule for a Service host in this order (istio/istio
``PushContext.destinationRule``): the client's own namespace (rules local to it), then the
Service's namespace (rules exported to the client's), then the mesh's root namespace (rules
exported to the client's). In each, the rule whose host matches the most specifically wins
(an exact host before the longest wildcard); several rules of one namespace for one host are
merged (the oldest traffic policy, subsets by first name). ``exportTo`` defaults to every
namespace; a rule with a ``workloadSelector`` applies to the selected clients of its own
namespace only. A ``portLevelSettings`` entry of the Service port replaces the rule's
traffic policy entirely (its omitted ``tls`` is no TLS setting), and a subset's policy
overrides the rule's.

The mesh config (``rootNamespace``, ``enableAutoMtls``) comes from istiod's ConfigMap where
its data is at hand (manifests); otherwise Istio's defaults hold, and answers say so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy.istio_model import Invalid
from netsight.analyzers.policy.spec_reading import digits
from netsight.graph.model.mesh_settings import MESH_CONFIG_MAP
from netsight.graph.model.records import ConfigMapRecord, GenericRecord
from netsight.graph.store.live import GraphView

DESTINATION_RULE = "DestinationRule"
NETWORKING_GROUP = "networking.istio.io"
CONFIG_MAP = "ConfigMap"
DEFAULT_ROOT_NAMESPACE = "istio-system"
DOMAIN = "cluster.local"
TLS_MODES = ("DISABLE", "SIMPLE", "MUTUAL", "ISTIO_MUTUAL")  # ClientTLSSettings.TLSmode


class TlsMode(StrEnum):
    DISABLE = "DISABLE"
    SIMPLE = "SIMPLE"
    MUTUAL = "MUTUAL"
    ISTIO_MUTUAL = "ISTIO_MUTUAL"


@dataclass(frozen=True, slots=True)
class Mesh:
    """The mesh config's say on mTLS, and where it comes from."""

    root_namespace: str = DEFAULT_ROOT_NAMESPACE
    auto_mtls: bool = True
    source: str = "Istio's defaults (the mesh config is not readable)"
    problem: str | None = None


def mesh(view: GraphView) -> Mesh:
    """The mesh settings of ``view``, kept until a ConfigMap changes."""
    return view.derived(("istio_tls", "mesh"), (CONFIG_MAP,), _mesh)


def _mesh(view: GraphView) -> Mesh:
    namespace, name = MESH_CONFIG_MAP
    record = view.get(f"{CONFIG_MAP}/{namespace}/{name}")
    if not isinstance(record, ConfigMapRecord) or record.mesh_config is None:
        return Mesh()
    settings, where = record.mesh_config, f"ConfigMap {namespace}/{name}"
    if settings.problem is not None:
        return Mesh(source=f"Istio's defaults ({where} cannot be read)",
                    problem=f"{where}: {settings.problem}")
    return Mesh(settings.root_namespace or DEFAULT_ROOT_NAMESPACE,
                settings.auto_mtls if settings.auto_mtls is not None else True, where)


@dataclass(frozen=True, slots=True)
class ClientTls:
    """A traffic policy's TLS: its mode (None: no ``tls``, so auto mTLS decides) and field."""

    mode: TlsMode | None
    path: str


@dataclass(frozen=True, slots=True)
class TrafficTls:
    tls: ClientTls | None  # the policy's own (None: no trafficPolicy.tls)
    ports: Mapping[int, ClientTls] = field(default_factory=dict)  # portLevelSettings

    def at(self, port: int) -> ClientTls | None:
        """The TLS on Service port ``port``: a port-level setting replaces the policy."""
        return self.ports.get(port, self.tls)


@dataclass(frozen=True, slots=True)
class SubsetTls:
    name: str
    labels: Mapping[str, str]
    policy: TrafficTls | None  # None: the subset has no trafficPolicy


@dataclass(frozen=True, slots=True)
class ClientRule:
    """A DestinationRule as it bears on TLS."""

    record: GenericRecord
    host: str  # fully qualified as Istio resolves a short name
    export_to: frozenset[str]
    selector: Mapping[str, str] | None = None
    policy: TrafficTls | None = None
    subsets: tuple[SubsetTls, ...] = ()
    problem: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(kind=DESTINATION_RULE, namespace=self.record.namespace,
                           name=self.record.name, api_version=self.record.api_version)

    @property
    def name(self) -> str:
        return f"{self.record.namespace}/{self.record.name}"

    def visible_to(self, namespace: str) -> bool:
        """``exportTo``: '*' every namespace, '.' its own, '~' none, else the names."""
        own = self.record.namespace
        if self.selector is not None:
            return namespace == own  # workload-selected rules are never exported
        return not self.export_to or "*" in self.export_to or namespace in self.export_to \
            or (namespace == own and "." in self.export_to)


def fqdn(host: str, namespace: str) -> str:
    """Istio's ResolveShortnameToFQDN: a name without a dot is of the object's namespace."""
    if host == "*" or "." in host or ":" in host:
        return host
    return f"{host}.{namespace}.svc.{DOMAIN}"


def host_matches(pattern: str, host: str) -> bool:
    if pattern == host or pattern == "*":
        return True
    return pattern.startswith("*") and host.endswith(pattern[1:])


def _map(raw: Any, path: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise Invalid(path, "must be an object")
    return raw


def _list(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise Invalid(path, "must be a list")
    return list(raw)


def _labels(raw: Any, path: str) -> dict[str, str]:
    labels = _map(raw, path)
    if not all(isinstance(v, str) for v in labels.values()):
        raise Invalid(path, "label values must be strings")
    return {str(k): v for k, v in labels.items()}


def _tls(raw: Any, path: str) -> ClientTls | None:
    if raw is None:
        return None
    mode = _map(raw, path).get("mode", "DISABLE")
    if isinstance(mode, int) and not isinstance(mode, bool) and 0 <= mode < len(TLS_MODES):
        mode = TLS_MODES[mode]  # protobuf JSON takes the enum's number too
    if mode not in TLS_MODES:
        raise Invalid(f"{path}.mode", f"{mode!r} is not one of {', '.join(TLS_MODES)}")
    return ClientTls(TlsMode(mode), f"{path}.mode")


def _traffic(raw: Any, path: str) -> TrafficTls | None:
    if raw is None:
        return None
    policy = _map(raw, path)
    ports: dict[int, ClientTls] = {}
    for i, entry in enumerate(_list(policy.get("portLevelSettings"),
                                    f"{path}.portLevelSettings")):
        where = f"{path}.portLevelSettings[{i}]"
        setting = _map(entry, where)
        number = digits(str(_map(setting.get("port"), f"{where}.port").get("number", "")))
        if number is None or not 0 < number <= 65535:
            raise Invalid(f"{where}.port.number", "must be a port number")
        if number not in ports:  # Istio takes the first entry of a port
            ports[number] = _tls(setting.get("tls"), f"{where}.tls") or \
                ClientTls(None, f"{where}.tls")
    return TrafficTls(_tls(policy.get("tls"), f"{path}.tls"), ports)


def read_rule(record: GenericRecord) -> ClientRule:
    """Never fails: a spec Istio would reject becomes a rule with a ``problem``."""
    spec = record.spec or {}
    host_raw = spec.get("host") if isinstance(spec, Mapping) else None
    host = fqdn(host_raw, record.namespace) if isinstance(host_raw, str) and host_raw else ""
    try:
        spec = _map(record.spec, "spec")
        if not host:
            raise Invalid("spec.host", "must be set")
        selector_raw = spec.get("workloadSelector")
        selector = _labels(_map(selector_raw, "spec.workloadSelector").get("matchLabels"),
                           "spec.workloadSelector.matchLabels") \
            if selector_raw is not None else None
        subsets = []
        for i, raw in enumerate(_list(spec.get("subsets"), "spec.subsets")):
            where = f"spec.subsets[{i}]"
            subset = _map(raw, where)
            subsets.append(SubsetTls(str(subset.get("name", "")),
                                     _labels(subset.get("labels"), f"{where}.labels"),
                                     _traffic(subset.get("trafficPolicy"),
                                              f"{where}.trafficPolicy")))
        export = _list(spec.get("exportTo"), "spec.exportTo")
        if not all(isinstance(e, str) for e in export):
            raise Invalid("spec.exportTo", "must be a list of strings")
        return ClientRule(record, host, frozenset(export),
                          selector, _traffic(spec.get("trafficPolicy"), "spec.trafficPolicy"),
                          tuple(subsets))
    except Invalid as error:
        return ClientRule(record, host, frozenset(), problem=str(error))


@dataclass
class RuleIndex:
    """Every DestinationRule of a view by namespace, oldest first, with the lookups made."""

    by_namespace: dict[str, list[ClientRule]]
    tls_anywhere: bool  # whether any rule sets TLS at all (else auto mTLS decides everywhere)
    lookups: dict[tuple[str, str, str], tuple[ClientRule, ...]] = field(default_factory=dict)

    def rules(self) -> Iterator[ClientRule]:
        for found in self.by_namespace.values():
            yield from found


def rule_index(view: GraphView) -> RuleIndex:
    """Kept with the view until a DestinationRule changes."""
    return view.derived(("istio_tls", "rules"), (DESTINATION_RULE,), _index)


def _sets_tls(rule: ClientRule) -> bool:
    policies = [rule.policy, *(s.policy for s in rule.subsets)]
    return rule.problem is not None or any(
        p is not None and (p.tls is not None or any(t.mode for t in p.ports.values()))
        for p in policies)


def _index(view: GraphView) -> RuleIndex:
    by_namespace: dict[str, list[ClientRule]] = {}
    for record in view.for_each(DESTINATION_RULE):
        if isinstance(record, GenericRecord) and \
                record.api_version.startswith(NETWORKING_GROUP + "/"):
            by_namespace.setdefault(record.namespace, []).append(read_rule(record))
    for found in by_namespace.values():
        found.sort(key=lambda r: (r.record.created or "", r.record.name))
    return RuleIndex(by_namespace, any(_sets_tls(r) for f in by_namespace.values()
                                       for r in f))


def tls_scopes(view: GraphView) -> frozenset[str] | None:
    """The namespaces whose pods a DestinationRule setting TLS may concern, as client (the
    rule's namespace) or server (its host's); None where a wildcard host reaches across
    namespaces."""
    found: set[str] = set()
    for rule in rule_index(view).rules():
        if not _sets_tls(rule):
            continue
        found.add(rule.record.namespace)
        parts = rule.host.split(".")
        if rule.host.endswith(f".svc.{DOMAIN}") and len(parts) == 5 and parts[1] != "*":
            found.add(parts[1])
        elif rule.host.startswith("*") or not rule.host:
            return None
    return frozenset(found)


_LOOKUP_LIMIT = 50_000


def rules_for(index: RuleIndex, client_namespace: str, host: str, root: str
              ) -> tuple[ClientRule, ...]:
    """The DestinationRules a client of ``client_namespace`` merges for ``host`` (a Service's
    FQDN), oldest first, selector-bearing ones included (the caller matches their
    selector); empty when none applies."""
    key = (client_namespace, host, root)
    found = index.lookups.get(key)
    if found is None:
        if len(index.lookups) >= _LOOKUP_LIMIT:
            index.lookups.clear()
        found = index.lookups[key] = _lookup(index, client_namespace, host, root)
    return found


def _lookup(index: RuleIndex, client_namespace: str, host: str, root: str
            ) -> tuple[ClientRule, ...]:
    service_namespace = host.split(".")[1] if host.count(".") >= 2 else ""
    order = [client_namespace, service_namespace, root]
    for step, namespace in enumerate(order):
        if not namespace or namespace in order[:step]:
            continue
        candidates = [r for r in index.by_namespace.get(namespace, ())
                      if r.host and host_matches(r.host, host)
                      and (r.visible_to(client_namespace) if step else
                           r.selector is not None or r.visible_to(namespace))]
        if candidates:
            # Most specific host: an exact one, else the longest wildcard.
            best = max(candidates, key=lambda r: (r.host == host, len(r.host))).host
            return tuple(r for r in candidates if r.host == best)
    return ()


@dataclass(frozen=True, slots=True)
class Chosen:
    """The TLS a client originates on one Service port: the setting and where it is."""

    tls: ClientTls | None  # None: no rule sets TLS there (auto mTLS decides)
    rule: ClientRule | None
    subsets: tuple[tuple[str, ClientTls | None], ...] = ()  # subsets of other TLS the pod is in
    problem: str | None = None


def choose(rules: tuple[ClientRule, ...], client_labels: Mapping[str, str],
           service_port: int, server_labels: Mapping[str, str]) -> Chosen:
    """Merge ``rules`` (one namespace, one host) as Istio does for this client, and read the
    TLS of ``service_port``: the default (no subset), and the subsets of other TLS whose
    labels the server pod carries (a VirtualService may route the client there)."""
    applying = [r for r in rules if r.selector is None or all(
        client_labels.get(k) == v for k, v in r.selector.items())]
    # A rule selecting this client comes before one for every client of its namespace.
    applying.sort(key=lambda r: r.selector is None)
    if not applying:
        return Chosen(None, None)
    broken = next((r for r in applying if r.problem is not None), None)
    if broken is not None:
        return Chosen(None, broken, problem=f"DestinationRule {broken.name} could not be "
                      f"read ({broken.problem}); the TLS its clients send is unknown")
    owner = next((r for r in applying if r.policy is not None), applying[0])
    tls = owner.policy.at(service_port) if owner.policy is not None else None
    seen: set[str] = set()
    others: list[tuple[str, ClientTls | None]] = []
    for rule in applying:
        for subset in rule.subsets:
            if subset.name in seen:
                continue
            seen.add(subset.name)
            if subset.policy is None or not all(server_labels.get(k) == v
                                                for k, v in subset.labels.items()):
                continue
            own = subset.policy.ports.get(service_port)
            chosen = own if own is not None else (subset.policy.tls or tls)
            if (chosen.mode if chosen else None) != (tls.mode if tls else None):
                others.append((subset.name, chosen))
    return Chosen(tls, owner, tuple(others))
