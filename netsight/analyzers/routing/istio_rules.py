"""What a request routed through Istio meets: where it enters (a sidecar or an Istio
Gateway), its client, the VirtualService http rules it is tried against, and the answer.

The pieces of pilot's routing that the resolution (routing/istio_routes.py), the matching
(routing/istio_matches.py), delegation (routing/istio_delegation.py) and destinations
(routing/istio_destinations.py) share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.core.quoting import quoted
from netsight.analyzers.mesh.hosts import EXPORT_ALL, export_scopes, is_wildcard
from netsight.analyzers.mesh.istio_objects import VirtualService

MESH = "mesh"
ROOT_NAMESPACE = "istio-system"  # meshConfig.rootNamespace's default (MeshConfig is not read)


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
        return f"{quoted(value)} is neither 'mesh' nor 'gateway <namespace>/<name>' (an Istio " \
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
    default_to: str | None = None  # the key of that Service (or ServiceEntry)
    # (rule, the rule or VirtualService before it that takes the request, why)
    shadowed: list[tuple[Rule, Rule | VirtualService, str]] = field(default_factory=list)
    # (the key of the VirtualService a note names, or None; the note): shown as the caller
    # may see that object
    notes: list[tuple[str | None, str]] = field(default_factory=list)


def rules_of(vs: VirtualService) -> list[Rule]:
    """The VirtualService's http rules, in spec order."""
    spec = vs.record.spec
    http = spec.get("http") if isinstance(spec, Mapping) else None
    return [Rule(vs, i, rule) for i, rule in enumerate(http if isinstance(http, list) else ())
            if isinstance(rule, Mapping)]


def exported_to(vs: VirtualService, namespace: str) -> bool:
    scopes = export_scopes(vs.export_to, vs.record.namespace)
    return EXPORT_ALL in scopes or namespace in scopes


def gateway_name(name: str, namespace: str) -> str:
    """A gateways entry as 'namespace/name' (a bare name is in the VirtualService's)."""
    return name if "/" in name else f"{namespace}/{name}"


def host_rank(vs_host: str, fqdn: str) -> tuple[int, int] | None:
    """How specifically a VirtualService (or DestinationRule) host covers the request host
    (higher first): the exact host, then the longest wildcard."""
    if vs_host == fqdn:
        return (1, len(vs_host))
    if vs_host == "*" or (is_wildcard(vs_host) and fqdn.endswith(vs_host[1:])):
        return (0, len(vs_host))
    return None
