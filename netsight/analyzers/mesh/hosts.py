"""Istio host names: short names, FQDNs, wildcards, and what each namespace can see.

Istio resolves a short host (``reviews``) in the namespace of the object that names it
(``reviews.<namespace>.svc.cluster.local``); a name with a dot or a leading ``*`` is taken
as written. Services and ServiceEntries are visible where their exportTo says (a Service
through the ``networking.istio.io/exportTo`` annotation): ``*`` everywhere (the default),
``.`` in their own namespace, anything else in that namespace only. These are the rules of
istioctl's analyzers (pkg/config/analysis/analyzers/util: hosts.go, service_lookup.go) and
of pkg/config/host (Name.Matches).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from netsight.graph.model.records import Record

CLUSTER_DOMAIN = "cluster.local"  # meshConfig's default; netsight does not read MeshConfig
SERVICE_DOMAIN = f"svc.{CLUSTER_DOMAIN}"
EXPORT_ALL = "*"
EXPORT_LOCAL = "."
EXPORT_TO_ANNOTATION = "networking.istio.io/exportTo"

_FQDN = re.compile(rf"^(.+)\.(.+)\.{re.escape(SERVICE_DOMAIN)}$")


def is_wildcard(host: str) -> bool:
    return host.startswith("*")


def to_fqdn(namespace: str, host: str) -> str:
    """A short name completed in ``namespace``; wildcards and dotted names as written."""
    if not is_wildcard(host) and "." not in host:
        return f"{host}.{namespace}.{SERVICE_DOMAIN}"
    return host


def service_of(default_namespace: str, host: str) -> tuple[str, str]:
    """(namespace, name) a host refers to: parsed from ``name.ns.svc.cluster.local``, or the
    host itself as a short name in ``default_namespace``."""
    match = _FQDN.match(host)
    if match is None:
        return default_namespace, host
    return match.group(2), match.group(1)


def matches(a: str, b: str) -> bool:
    """Whether two host names overlap (one wildcard covers the other, or they are equal)."""
    if is_wildcard(a):
        if is_wildcard(b):
            shorter, longer = (a, b) if len(a) < len(b) else (b, a)
            return longer[1:].endswith(shorter[1:])
        return b.endswith(a[1:])
    if is_wildcard(b):
        return a.endswith(b[1:])
    return a == b


def names_for_namespace(hosts: Iterable[str], namespace: str) -> list[str]:
    """Hosts (``host``, ``ns/host`` or ``*/host``) that apply to ``namespace``, bare."""
    result = []
    for host in hosts:
        if "/" in host:
            scope, _, bare = host.partition("/")
            if scope not in (namespace, EXPORT_ALL):
                continue
            host = bare
        result.append(host)
    return result


def export_scopes(export_to: Sequence[str], namespace: str) -> list[str]:
    """The namespaces an object's exportTo makes it visible in (``*``: all)."""
    if not export_to or EXPORT_ALL in export_to:
        return [EXPORT_ALL]
    return list(dict.fromkeys(namespace if e == EXPORT_LOCAL else e for e in export_to))


@dataclass(frozen=True, slots=True)
class HostEntry:
    """A destination Istio knows: a Kubernetes Service or one host of a ServiceEntry."""

    record: Record
    ports: tuple[int, ...]
    workload_selector: Mapping[str, str] | None = None
    assumed: bool = False  # one of istioctl's default objects, not a real one
    field_path: str = "metadata.name"


@dataclass(slots=True)
class HostRegistry:
    """(scope, FQDN) -> the Service or ServiceEntry behind it, as istioctl builds it."""

    entries: dict[tuple[str, str], HostEntry] = field(default_factory=dict)

    def add(self, scope: str, namespace: str, host: str, entry: HostEntry) -> None:
        self.entries[(scope, to_fqdn(namespace, host))] = entry

    def lookup(self, namespace: str, export_to: Sequence[str], host: str) -> HostEntry | None:
        """The destination ``host`` names for an object in ``namespace`` with ``export_to``
        (upstream GetDestinationHost): exported-to-all first, then the object's own scopes,
        then wildcard ServiceEntry hosts visible in ``namespace``."""
        fqdn = to_fqdn(namespace, host)
        found = self.entries.get((EXPORT_ALL, fqdn))
        if found is not None:
            return found
        scopes = [namespace] if not export_to else \
            [namespace if e == EXPORT_LOCAL else e for e in export_to]
        for scope in scopes:
            found = self.entries.get((scope, fqdn))
            if found is not None:
                return found
        bare = host.removeprefix("*")
        for (scope, known), entry in self.entries.items():
            if is_wildcard(known) and scope in (EXPORT_ALL, namespace) and \
                    bare.endswith(known[1:]):
                return entry
        return None
