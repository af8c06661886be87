"""Istio networking objects (networking.istio.io) read from their generic records.

The graph keeps each object's spec as written (GenericRecord); this module reads the
fields mesh analysis needs into small frozen values, once per object version. Reading
never fails: a field of the wrong shape becomes a ``problem`` naming the field, and the
object is left out of the checks that would need it (reported as not evaluated), rather
than guessed at.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from netsight.graph.model.kinds import api_group
from netsight.graph.model.records import GenericRecord, Record
from netsight.graph.store.live import GraphView

GROUP = "networking.istio.io"
VIRTUAL_SERVICE = "VirtualService"
DESTINATION_RULE = "DestinationRule"
SERVICE_ENTRY = "ServiceEntry"
ISTIO_GATEWAY = f"Gateway.{GROUP}"  # the kind id: Gateway API's Gateway keeps the bare name
K8S_GATEWAY = "Gateway"
NODE = "Node"
MESH_GATEWAY = "mesh"  # the reserved gateway name: the sidecars of the mesh
# The label Istio puts on the pods of a Gateway API Gateway it deploys: the Gateway's name.
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"


class Unreadable(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def _map(raw: Any, path: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise Unreadable(path, f"must be an object, got {type(raw).__name__}")
    return raw


def _list(raw: Any, path: str) -> tuple[Any, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple):
        raise Unreadable(path, f"must be a list, got {type(raw).__name__}")
    return tuple(raw)


def _strings(raw: Any, path: str) -> tuple[str, ...]:
    values = _list(raw, path)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise Unreadable(f"{path}[{i}]", f"must be a string, got {type(value).__name__}")
    return values


def _string(raw: Any, path: str) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise Unreadable(path, f"must be a string, got {type(raw).__name__}")
    return raw


def _labels(raw: Any, path: str) -> Mapping[str, str]:
    labels = _map(raw, path)
    for key, value in labels.items():
        if not isinstance(value, str):
            raise Unreadable(f"{path}.{key}", "must be a string")
    return labels


def _port(raw: Any, path: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= 65535:
        raise Unreadable(path, f"must be a port number, got {raw!r}")
    return raw


def istio_records(view: GraphView, kind: str, namespace: str | None = None, *,
                  group: str = GROUP) -> Iterator[GenericRecord]:
    """The kind's objects of an Istio API group (networking.istio.io unless told), in key
    order (answers are stable)."""
    found = [r for r in view.for_each(kind, namespace)
             if isinstance(r, GenericRecord) and api_group(r.api_version) == group]
    yield from sorted(found, key=lambda r: r.key)


# --- VirtualService -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Destination:
    """One destination of a route or mirror, with where it is written."""

    host: str
    subset: str
    port: int | None
    path: str  # e.g. spec.http[0].route[1].destination
    mirror: bool = False


@dataclass(frozen=True, slots=True)
class RouteRule:
    """One http/tcp/tls rule: its name and its match entries as written."""

    protocol: str  # "http", "tcp" or "tls"
    index: int
    name: str
    matches: tuple[Mapping[str, Any], ...]

    @property
    def path(self) -> str:
        return f"spec.{self.protocol}[{self.index}]"

    @property
    def label(self) -> str:
        """How istioctl names the rule: its quoted name, else ``#index``."""
        return f'"{self.name}"' if self.name else f"#{self.index}"


@dataclass(frozen=True, slots=True)
class VirtualService:
    record: GenericRecord
    hosts: tuple[str, ...]
    gateways: tuple[str, ...]
    export_to: tuple[str, ...]
    rules: tuple[RouteRule, ...]
    destinations: tuple[Destination, ...]  # tcp, tls, then http routes (istioctl's order)
    mirrors: tuple[Destination, ...]

    @property
    def on_mesh(self) -> bool:
        """Applies to the sidecars: no gateways at all means "mesh"."""
        return not self.gateways or MESH_GATEWAY in self.gateways


def _destination(raw: Any, path: str, *, mirror: bool = False) -> Destination:
    spec = _map(raw, path)
    port = _map(spec.get("port"), f"{path}.port")
    return Destination(
        host=_string(spec.get("host"), f"{path}.host"),
        subset=_string(spec.get("subset"), f"{path}.subset"),
        port=_port(port.get("number"), f"{path}.port.number") if port else None,
        path=path,
        mirror=mirror,
    )


def read_virtual_service(record: GenericRecord) -> VirtualService:
    spec = _map(record.spec, "spec")
    rules: list[RouteRule] = []
    destinations: list[Destination] = []
    mirrors: list[Destination] = []
    for protocol in ("tcp", "tls", "http"):
        for i, raw in enumerate(_list(spec.get(protocol), f"spec.{protocol}")):
            path = f"spec.{protocol}[{i}]"
            rule = _map(raw, path)
            matches = tuple(_map(m, f"{path}.match[{j}]")
                            for j, m in enumerate(_list(rule.get("match"), f"{path}.match")))
            name = _string(rule.get("name"), f"{path}.name") if protocol == "http" else ""
            rules.append(RouteRule(protocol, i, name, matches))
            for j, route in enumerate(_list(rule.get("route"), f"{path}.route")):
                where = f"{path}.route[{j}]"
                destinations.append(_destination(
                    _map(route, where).get("destination"), f"{where}.destination"))
            if protocol != "http":
                continue
            if rule.get("mirror") is not None:
                mirrors.append(_destination(rule["mirror"], f"{path}.mirror", mirror=True))
            for j, entry in enumerate(_list(rule.get("mirrors"), f"{path}.mirrors")):
                where = f"{path}.mirrors[{j}]"
                mirrors.append(_destination(_map(entry, where).get("destination"),
                                            f"{where}.destination", mirror=True))
    # istioctl lists tcp, then tls, then http destinations; rules keep spec order per kind.
    return VirtualService(
        record=record,
        hosts=_strings(spec.get("hosts"), "spec.hosts"),
        gateways=_strings(spec.get("gateways"), "spec.gateways"),
        export_to=_strings(spec.get("exportTo"), "spec.exportTo"),
        rules=tuple(rules),
        destinations=tuple(destinations),
        mirrors=tuple(mirrors),
    )


# --- DestinationRule ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subset:
    name: str
    labels: Mapping[str, str]
    path: str


@dataclass(frozen=True, slots=True)
class ClientTls:
    """A trafficPolicy's tls settings (the rule's own, or one port's)."""

    mode: str  # DISABLE, SIMPLE, MUTUAL or ISTIO_MUTUAL
    ca_certificates: str
    credential_name: str
    path: str  # spec.trafficPolicy.tls or spec.trafficPolicy.portLevelSettings[i].tls
    port: int | None = None  # the port of a port-level setting


@dataclass(frozen=True, slots=True)
class DestinationRule:
    record: GenericRecord
    host: str
    export_to: tuple[str, ...]
    subsets: tuple[Subset, ...]
    tls: tuple[ClientTls, ...] = ()  # spec.trafficPolicy's, then its portLevelSettings'
    has_workload_selector: bool = False


# ClientTLSSettings.TLSmode in the order of its enum values (protobuf JSON takes either).
TLS_MODES = ("DISABLE", "SIMPLE", "MUTUAL", "ISTIO_MUTUAL")


def _client_tls(raw: Any, path: str, port: int | None = None) -> ClientTls | None:
    if raw is None:
        return None
    tls = _map(raw, path)
    mode = tls.get("mode", "DISABLE")
    if isinstance(mode, int) and not isinstance(mode, bool) and 0 <= mode < len(TLS_MODES):
        mode = TLS_MODES[mode]
    if mode not in TLS_MODES:
        raise Unreadable(f"{path}.mode", f"must be one of {', '.join(TLS_MODES)}, "
                         f"got {mode!r}")
    return ClientTls(mode, _string(tls.get("caCertificates"), f"{path}.caCertificates"),
                     _string(tls.get("credentialName"), f"{path}.credentialName"), path, port)


def _traffic_tls(raw: Any) -> tuple[ClientTls, ...]:
    policy = _map(raw, "spec.trafficPolicy")
    found = [_client_tls(policy.get("tls"), "spec.trafficPolicy.tls")]
    levels = _list(policy.get("portLevelSettings"), "spec.trafficPolicy.portLevelSettings")
    for i, level in enumerate(levels):
        path = f"spec.trafficPolicy.portLevelSettings[{i}]"
        setting = _map(level, path)
        port = _port(_map(setting.get("port"), f"{path}.port").get("number"),
                     f"{path}.port.number")
        found.append(_client_tls(setting.get("tls"), f"{path}.tls", port))
    return tuple(t for t in found if t is not None)


def read_destination_rule(record: GenericRecord) -> DestinationRule:
    spec = _map(record.spec, "spec")
    subsets = []
    for i, raw in enumerate(_list(spec.get("subsets"), "spec.subsets")):
        path = f"spec.subsets[{i}]"
        subset = _map(raw, path)
        subsets.append(Subset(_string(subset.get("name"), f"{path}.name"),
                              _labels(subset.get("labels"), f"{path}.labels"), path))
    return DestinationRule(record, _string(spec.get("host"), "spec.host"),
                           _strings(spec.get("exportTo"), "spec.exportTo"), tuple(subsets),
                           _traffic_tls(spec.get("trafficPolicy")),
                           spec.get("workloadSelector") is not None)


# --- ServiceEntry ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServiceEntry:
    record: GenericRecord
    hosts: tuple[str, ...]
    export_to: tuple[str, ...]
    ports: tuple[int, ...]
    workload_selector: Mapping[str, str] | None
    protocols: tuple[str, ...] = ()  # spec.ports[i].protocol as written ("" when unset)
    addresses: tuple[str, ...] = ()
    # status.addresses: the addresses istiod allocated (IP auto-allocation), by value.
    allocated: tuple[str, ...] = ()


def read_service_entry(record: GenericRecord) -> ServiceEntry:
    spec = _map(record.spec, "spec")
    ports, protocols = [], []
    for i, raw in enumerate(_list(spec.get("ports"), "spec.ports")):
        port = _map(raw, f"spec.ports[{i}]")
        ports.append(_port(port.get("number"), f"spec.ports[{i}].number") or 0)
        protocols.append(_string(port.get("protocol"), f"spec.ports[{i}].protocol"))
    selector = spec.get("workloadSelector")
    return ServiceEntry(
        record, _strings(spec.get("hosts"), "spec.hosts"),
        _strings(spec.get("exportTo"), "spec.exportTo"), tuple(ports),
        _labels(_map(selector, "spec.workloadSelector").get("labels"),
                "spec.workloadSelector.labels") if selector is not None else None,
        tuple(protocols), _strings(spec.get("addresses"), "spec.addresses"),
        _allocated(record.status),
    )


def _allocated(status: Any) -> tuple[str, ...]:
    # Written by istiod, not by the user: read what is there, never reject the object.
    entries = status.get("addresses") if isinstance(status, Mapping) else None
    if not isinstance(entries, list):
        return ()
    return tuple(str(e["value"]) for e in entries
                 if isinstance(e, Mapping) and e.get("value"))


# --- Gateway (networking.istio.io) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerTls:
    """The certificate a server presents: a Secret (credentialName) or files."""

    credential_name: str
    server_certificate: str
    private_key: str


@dataclass(frozen=True, slots=True)
class Server:
    index: int
    port: int | None
    hosts: tuple[str, ...]
    bind: str = ""
    tls: ServerTls | None = None

    @property
    def path(self) -> str:
        return f"spec.servers[{self.index}]"


@dataclass(frozen=True, slots=True)
class IstioGateway:
    record: GenericRecord
    selector: Mapping[str, str]
    servers: tuple[Server, ...]

    @property
    def selector_text(self) -> str:
        """The selector as apimachinery prints it: ``k=v`` pairs sorted by key."""
        return ",".join(f"{k}={v}" for k, v in sorted(self.selector.items()))


def read_gateway(record: GenericRecord) -> IstioGateway:
    spec = _map(record.spec, "spec")
    servers = []
    for i, raw in enumerate(_list(spec.get("servers"), "spec.servers")):
        path = f"spec.servers[{i}]"
        server = _map(raw, path)
        port = _map(server.get("port"), f"{path}.port")
        servers.append(Server(i, _port(port.get("number"), f"{path}.port.number")
                              if "number" in port else None,
                              _strings(server.get("hosts"), f"{path}.hosts"),
                              _string(server.get("bind"), f"{path}.bind"),
                              _server_tls(server.get("tls"), f"{path}.tls")))
    return IstioGateway(record, _labels(spec.get("selector"), "spec.selector"),
                        tuple(servers))


def _server_tls(raw: Any, path: str) -> ServerTls | None:
    if raw is None:
        return None
    tls = _map(raw, path)
    return ServerTls(_string(tls.get("credentialName"), f"{path}.credentialName"),
                     _string(tls.get("serverCertificate"), f"{path}.serverCertificate"),
                     _string(tls.get("privateKey"), f"{path}.privateKey"))


def labels_match(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Equality-based selection; an empty selector matches everything (apimachinery)."""
    return all(labels.get(k) == v for k, v in selector.items())


def describe(record: Record) -> str:
    return f"{record.kind.partition('.')[0]} {record.ref}"


# --- Sidecar --------------------------------------------------------------------------

SIDECAR = "Sidecar"


@dataclass(frozen=True, slots=True)
class Sidecar:
    record: GenericRecord
    # spec.workloadSelector.labels; empty when the Sidecar has no selector (or an empty
    # one), which makes it its namespace's default (Istio treats both alike).
    selector: Mapping[str, str]

    @property
    def namespace_wide(self) -> bool:
        return not self.selector

    @property
    def selector_text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(self.selector.items()))


def read_sidecar(record: GenericRecord) -> Sidecar:
    spec = _map(record.spec, "spec")
    selector = _map(spec.get("workloadSelector"), "spec.workloadSelector")
    return Sidecar(record, _labels(selector.get("labels"), "spec.workloadSelector.labels"))


# --- Telemetry (telemetry.istio.io) ---------------------------------------------------

TELEMETRY = "Telemetry"
TELEMETRY_GROUP = "telemetry.istio.io"


@dataclass(frozen=True, slots=True)
class Telemetry:
    record: GenericRecord
    # spec.selector.matchLabels when non-empty (the Telemetry selects pods by label), else
    # None; an empty one is left to neither rule, as upstream.
    match_labels: Mapping[str, str] | None
    has_selector: bool  # spec.selector is set
    targeted: bool  # spec.targetRef or spec.targetRefs is set

    @property
    def namespace_wide(self) -> bool:
        """No selector and no targetRefs: it applies to every workload of its namespace."""
        return not self.has_selector and not self.targeted


def read_telemetry(record: GenericRecord) -> Telemetry:
    spec = _map(record.spec, "spec")
    raw = spec.get("selector")
    labels = _labels(_map(raw, "spec.selector").get("matchLabels"),
                     "spec.selector.matchLabels")
    target = _map(spec.get("targetRef"), "spec.targetRef")
    targets = _list(spec.get("targetRefs"), "spec.targetRefs")
    for i, item in enumerate(targets):
        _map(item, f"spec.targetRefs[{i}]")
    return Telemetry(record, labels or None, raw is not None, bool(target or targets))


# --- EnvoyFilter ----------------------------------------------------------------------

ENVOY_FILTER = "EnvoyFilter"
# EnvoyFilter.ApplyTo and EnvoyFilter.Patch.Operation, the names Istio's CRD schema admits.
APPLY_TO = ("INVALID", "LISTENER", "FILTER_CHAIN", "NETWORK_FILTER", "HTTP_FILTER",
            "ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE", "CLUSTER",
            "EXTENSION_CONFIG", "BOOTSTRAP", "LISTENER_FILTER")
PATCH_OPERATIONS = ("INVALID", "MERGE", "ADD", "REMOVE", "INSERT_BEFORE", "INSERT_AFTER",
                    "INSERT_FIRST", "REPLACE")


@dataclass(frozen=True, slots=True)
class ConfigPatch:
    index: int
    apply_to: str
    operation: str
    # What istioctl compares between patches to tell that two patch the same filter: the
    # patch value's name (as JSON: any value may stand there), else the name of the filter
    # the patch matches in a listener's filterChain, else nothing ("", "").
    name: tuple[str, str]
    proxy_version: str  # match.proxy.proxyVersion, "" when unset

    @property
    def path(self) -> str:
        return f"spec.configPatches[{self.index}]"

    @property
    def shown_name(self) -> str:
        kind, value = self.name
        return f"name {value}" if kind == "value" else \
            f"filter {value!r}" if value else "no name"


@dataclass(frozen=True, slots=True)
class EnvoyFilter:
    record: GenericRecord
    priority: int
    patches: tuple[ConfigPatch, ...]
    # The first configPatch without a patch: Istio's validation refuses the filter, and
    # istioctl reads no configPatch from there on (nor does this reader).
    missing_patch: int | None = None


def _enum(raw: Any, path: str, names: tuple[str, ...]) -> str:
    if raw is None:
        return names[0]
    if not isinstance(raw, str) or raw not in names:
        raise Unreadable(path, f"must be one of {', '.join(names)}, got {raw!r}")
    return raw


def _patch_name(patch: Mapping[str, Any], match: Mapping[str, Any],
                path: str) -> tuple[str, str]:
    value = patch.get("value")
    if value is None:
        return ("", "")
    fields = _map(value, f"{path}.patch.value")
    if "name" in fields:
        return ("value", orjson.dumps(fields["name"], option=orjson.OPT_SORT_KEYS,
                                      default=str).decode())
    listener = _map(match.get("listener"), f"{path}.match.listener")
    chain = listener.get("filterChain")
    if chain is None:
        return ("", "")
    where = f"{path}.match.listener.filterChain"
    found = _map(_map(chain, where).get("filter"), f"{where}.filter")
    return ("", _string(found.get("name"), f"{where}.filter.name"))


def read_envoy_filter(record: GenericRecord) -> EnvoyFilter:
    spec = _map(record.spec, "spec")
    priority = spec.get("priority")
    if priority is None:
        priority = 0
    if isinstance(priority, bool) or not isinstance(priority, int) or \
            not -2**31 <= priority < 2**31:
        raise Unreadable("spec.priority", f"must be a 32-bit integer, got {priority!r}")
    patches, missing = [], None
    for i, raw in enumerate(_list(spec.get("configPatches"), "spec.configPatches")):
        path = f"spec.configPatches[{i}]"
        entry = _map(raw, path)
        if entry.get("patch") is None:
            missing = i
            break
        patch = _map(entry["patch"], f"{path}.patch")
        match = _map(entry.get("match"), f"{path}.match")
        proxy = _map(match.get("proxy"), f"{path}.match.proxy")
        patches.append(ConfigPatch(
            i, _enum(entry.get("applyTo"), f"{path}.applyTo", APPLY_TO),
            _enum(patch.get("operation"), f"{path}.patch.operation", PATCH_OPERATIONS),
            _patch_name(patch, match, path),
            _string(proxy.get("proxyVersion"), f"{path}.match.proxy.proxyVersion")))
    return EnvoyFilter(record, priority, tuple(patches), missing)
