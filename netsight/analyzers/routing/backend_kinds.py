"""Implementation-specific backendRef kinds: which GatewayClass controllers accept which, and
what such a backend points at.

BackendObjectReference gives Core support to Service in the core group only; any other
group/kind is implementation-specific, and a controller that does not know it sets
ResolvedRefs=False/InvalidKind. The controllers below document kinds of their own:

- kgateway (``kgateway.dev/kgateway``): ``Backend`` of ``gateway.kgateway.dev``
  (kgateway-dev/kgateway api/v1alpha1/kgateway/backend_types.go: static hosts, AWS Lambda,
  GCP, dynamic forward proxy).
- Istio (``istio.io/gateway-controller``, and ``istio.io/mesh-controller`` for GAMMA):
  ``Hostname`` of ``networking.istio.io``, a synthetic kind naming a host of the mesh
  registry, and ``ServiceEntry`` (istio pilot/pkg/config/kube/gateway conversion.go
  buildDestination).
- Envoy Gateway (``gateway.envoyproxy.io/gatewayclass-controller``): ``Backend`` of
  ``gateway.envoyproxy.io`` (gateway.envoyproxy.io docs, tasks/traffic/backend: FQDN, IP
  and unix socket endpoints; off unless the EnvoyGateway config enables it).
- Istio and Envoy Gateway both route to ``ServiceImport`` of ``multicluster.x-k8s.io``
  (the MCS API), which netsight does not watch: accepted, and what it holds not evaluated.

A route's backendRef of such a kind resolves when every controller of the route's Gateway
parents accepts it; one a controller does not know stays InvalidKind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from netsight.analyzers.routing.gateway_objects import as_list, as_map, opt_str, spec_of
from netsight.graph.model.kinds import api_group, make_key
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphView

KGATEWAY_CONTROLLER = "kgateway.dev/kgateway"
KGATEWAY_GROUP = "gateway.kgateway.dev"
ISTIO_GROUP = "networking.istio.io"
ENVOY_GATEWAY_GROUP = "gateway.envoyproxy.io"
MCS_GROUP = "multicluster.x-k8s.io"

# Kind ids in graph keys (graph/model/kinds.py): kgateway's Backend keeps the bare name,
# Envoy Gateway's carries its group.
KGATEWAY_BACKEND = "Backend"
ENVOY_GATEWAY_BACKEND = "Backend.gateway.envoyproxy.io"
SERVICE_ENTRY = "ServiceEntry"
EXTENSION_BACKEND_KINDS = (KGATEWAY_BACKEND, ENVOY_GATEWAY_BACKEND, SERVICE_ENTRY)

_ISTIO = frozenset({(ISTIO_GROUP, "Hostname"), (ISTIO_GROUP, "ServiceEntry"),
                    (MCS_GROUP, "ServiceImport")})

# controllerName -> (group, kind) of the backendRefs it accepts besides core Services.
ACCEPTED_KINDS: Mapping[str, frozenset[tuple[str, str]]] = {
    KGATEWAY_CONTROLLER: frozenset({(KGATEWAY_GROUP, "Backend")}),
    "istio.io/gateway-controller": _ISTIO,
    "istio.io/mesh-controller": _ISTIO,
    "gateway.envoyproxy.io/gatewayclass-controller": frozenset({
        (ENVOY_GATEWAY_GROUP, "Backend"), (MCS_GROUP, "ServiceImport")}),
}


def accepted_by(controllers: list[str | None], group: str, kind: str) -> bool:
    """Whether every controller of a route's Gateway parents accepts this backend kind (none
    known: not accepted, as a Core-only controller would answer)."""
    return bool(controllers) and all(
        c is not None and (group, kind) in ACCEPTED_KINDS.get(c, frozenset())
        for c in controllers)


@dataclass(frozen=True, slots=True)
class Target:
    """What an implementation-specific backend points at."""

    found: bool  # the object exists (a Hostname always does: it is a name)
    targets: tuple[str, ...]  # "host:port", "Service ns/name:port", ...
    not_evaluated: str | None = None  # what netsight cannot follow, and why
    service: ServiceRecord | None = None  # a static host that is a cluster Service
    port: int | None = None


def key_of(group: str, kind: str, namespace: str, name: str) -> str | None:
    """The graph key of the object a backendRef of this kind names (None: a synthetic or
    unwatched kind)."""
    kind_id = {(KGATEWAY_GROUP, "Backend"): KGATEWAY_BACKEND,
               (ENVOY_GATEWAY_GROUP, "Backend"): ENVOY_GATEWAY_BACKEND,
               (ISTIO_GROUP, "ServiceEntry"): SERVICE_ENTRY}.get((group, kind))
    return make_key(kind_id, namespace, name) if kind_id else None


def target_of(view: GraphView, group: str, kind: str, namespace: str, name: str,
              domain: str = "cluster.local") -> Target:
    if (group, kind) == (ISTIO_GROUP, "Hostname"):
        return _hostname(view, name)
    if (group, kind) == (MCS_GROUP, "ServiceImport"):
        return Target(True, (), "ServiceImport (MCS API) is not watched: the clusters it "
                      "imports from are not evaluated")
    key = key_of(group, kind, namespace, name)
    record = view.get(key) if key else None
    if record is None or api_group(record.api_version) != group:
        return Target(False, ())
    spec = spec_of(record)
    if group == KGATEWAY_GROUP:
        return _kgateway(view, spec, domain)
    if group == ENVOY_GATEWAY_GROUP:
        return _envoy_gateway(spec)
    hosts = [str(h) for h in as_list(spec.get("hosts"))]
    return Target(True, tuple(hosts), "ServiceEntry endpoints are not evaluated")


def _hostname(view: GraphView, host: str) -> Target:
    # A synthetic kind: the name is a host Istio looks up in its registry (ServiceEntries and
    # Services); a host no ServiceEntry declares gets no endpoints there.
    for record in view.for_each(SERVICE_ENTRY):
        if api_group(record.api_version) == ISTIO_GROUP and host in {
                str(h) for h in as_list(spec_of(record).get("hosts"))}:
            return Target(True, (host,), f"host declared by ServiceEntry {record.namespace}/"
                          f"{record.name}; its endpoints are not evaluated")
    return Target(True, (host,), f"no ServiceEntry in the graph declares host {host}: "
                  "whether Istio's registry knows it (a Service's name) is not evaluated")


def _kgateway(view: GraphView, spec: Mapping[str, object], domain: str) -> Target:
    static = as_map(spec.get("static"))
    if static:
        hosts = [(opt_str(as_map(h).get("host")) or "", as_map(h).get("port"))
                 for h in as_list(static.get("hosts"))]
        targets = tuple(f"{h}:{p}" for h, p in hosts)
        # A static host that is a cluster Service's DNS name: follow it to the Service.
        if len(hosts) == 1:
            service = _cluster_service(view, hosts[0][0], domain)
            port = hosts[0][1]
            if service is not None and isinstance(port, int):
                return Target(True, targets, None, service, port)
        return Target(True, targets, "static hosts outside the cluster: whether they answer "
                      "is not evaluated")
    for field, what in (("aws", "an AWS Lambda function"), ("gcp", "a GCP service"),
                        ("ai", "an AI provider"),
                        ("dynamicForwardProxy", "the host each request names")):
        config = as_map(spec.get(field))
        if config or str(spec.get("type") or "").lower() == field.lower():
            return Target(True, _described(field, config),
                          f"{what}, outside the cluster: not evaluated")
    return Target(True, (), "a Backend type netsight does not know: not evaluated")


def _described(field: str, config: Mapping[str, object]) -> tuple[str, ...]:
    if field == "aws":
        function = opt_str(as_map(config.get("lambda")).get("functionName"))
        region = opt_str(config.get("region")) or "us-east-1"
        return (f"aws lambda {function or '(unnamed)'} in {region}",)
    if field == "gcp":
        return (f"gcp {opt_str(config.get('host')) or '(no host)'}",)
    return ()


def _envoy_gateway(spec: Mapping[str, object]) -> Target:
    targets = []
    for raw in as_list(spec.get("endpoints")):
        endpoint = as_map(raw)
        fqdn, ip, unix = (as_map(endpoint.get(k)) for k in ("fqdn", "ip", "unix"))
        if fqdn:
            targets.append(f"{fqdn.get('hostname')}:{fqdn.get('port')}")
        elif ip:
            targets.append(f"{ip.get('address')}:{ip.get('port')}")
        elif unix:
            targets.append(f"unix:{unix.get('path')}")
    return Target(True, tuple(targets), "endpoints outside the cluster's Services: whether "
                  "they answer is not evaluated")


def _cluster_service(view: GraphView, host: str, domain: str) -> ServiceRecord | None:
    """The Service a name ``<service>.<namespace>.svc[.<domain>]`` is, if it exists."""
    host = host.rstrip(".").lower()
    for suffix in (f".svc.{domain}", ".svc"):
        if host.endswith(suffix):
            parts = host[:-len(suffix)].split(".")
            if len(parts) == 2:
                record = view.get(make_key("Service", parts[1], parts[0]))
                return record if isinstance(record, ServiceRecord) else None
    return None

