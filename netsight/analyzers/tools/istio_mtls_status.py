"""istio_mtls_status: is traffic to a workload port mutual TLS, plaintext, or refused?

Per destination pod and port: the PeerAuthentication mode (and the policy setting it),
and the outcome for a client — the given ``source``, or without one, a client outside the
mesh and a sidecar client of the destination's namespace — with what the client sends
(its DestinationRule's TLS mode, or auto mTLS) and the objects that decide it. Pods with
the same answer are listed together.
"""

from __future__ import annotations

from itertools import islice

from pydantic import Field

from netsight.analyzers.core.arguments import Port, ToolArgs
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import Model, ResourceRef, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.policy.endpoints import Endpoint, port_targets, resolve
from netsight.analyzers.policy.istio_authz import KINDS, TLS_KINDS, IstioLayer
from netsight.analyzers.policy.istio_mesh import INJECT
from netsight.analyzers.policy.peers import Namespaces
from netsight.analyzers.tools.find_blocking_policies import (
    ENDPOINT_HELP,
    port_number,
)
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind
from netsight.graph.store.live import GraphView

NAME = "istio_mtls_status"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Whether traffic to a workload port is Istio mTLS, plaintext or refused, "
    "and why. Use it when mesh connections reset or principals are missing.",
    reads=frozenset({*KINDS, *TLS_KINDS, Kind.NAMESPACE, Kind.SERVICE, *POD_LIKE_KINDS}),
    codes=(),
)

MAX_ROWS = 200  # pod x port x client answers computed per call
MAX_PODS = 50  # destination pods looked at


class Args(ToolArgs):
    destination: ObjectName = Field(description=f"The server: {ENDPOINT_HELP}")
    source: ObjectName | None = Field(default=None, description="The client, as destination "
                                      "(default: a non-mesh one and a sidecar in its "
                                      "namespace)")
    port: Port | None = Field(default=None, description="Destination port (a Service's "
                              "for a Service; default: all TCP container ports)")


class ClientOutcome(Model):
    source: str
    outcome: str = Field(description="mtls, plaintext, refused or undecided")
    client: str = Field(description="What the client sends")
    reason: str
    deciding: list[ResourceRef] = Field(description="PeerAuthentication, DestinationRule")


class PortStatus(Model):
    pods: list[str] = Field(description="Destination pods with this answer (up to 5)")
    count: int
    port: int = Field(description="The pod's port")
    dataplane: str = Field(description="sidecar, ambient, none or unknown")
    mode: str = Field(description="PeerAuthentication mode in effect")
    peer_authentication: ResourceRef | None = None
    clients: list[ClientOutcome]


class Result(ToolResult):
    destination: str
    mesh: str = Field(description="Where rootNamespace and auto mTLS come from")
    ports: list[PortStatus]
    not_evaluated: list[str]


def _clients(view: GraphView, args: Args, namespace: str) -> tuple[Endpoint, ...]:
    if args.source is not None:
        return resolve(view, args.source, argument="source", tool=NAME).endpoints
    # Stand-ins: what any client of each kind gets (no labels, no Service account).
    return (Endpoint("(a client outside the mesh)", ips=("0.0.0.0",)),
            Endpoint(f"(a sidecar client in {namespace})", namespace,
                     annotations={INJECT: "true"}, mesh_proxy="istio-proxy"))


def analyze(view: GraphView, args: Args) -> Result:
    destinations = resolve(view, args.destination, argument="destination", tool=NAME)
    notes: list[str] = []
    asked = 0
    if args.port is not None:
        asked = port_number(destinations, args.port, "TCP", tool=NAME)
        targets, notes = port_targets(destinations, asked, "TCP", tool=NAME)
    else:
        targets = [(e, p.port) for e in destinations.endpoints for p in e.ports
                   if p.protocol == "TCP"]
    service = destinations.service
    layer = IstioLayer(view, Namespaces(view), via=(service, asked) if service is not None
                       and args.port is not None else None)
    rows: dict[object, tuple[PortStatus, list[str]]] = {}
    computed = 0
    pods = list(dict.fromkeys(e.name for e, _ in targets))
    if len(pods) > MAX_PODS:
        notes.append(f"only the first {MAX_PODS} of {len(pods)} destination pods were looked at")
        kept = set(pods[:MAX_PODS])
        targets = [(e, p) for e, p in targets if e.name in kept]
    for destination, port in targets:
        if destination.external or destination.namespace is None:
            notes.append(f"{destination.name} is outside the cluster: no Istio on its side")
            continue
        server = layer.server_mode(destination, port)
        member = layer.membership(destination)
        clients: list[ClientOutcome] = []
        for source in islice(_clients(view, args, destination.namespace), MAX_ROWS):
            if source.key is not None and source.key == destination.key:
                continue
            tls = layer.tls(source, destination, port)
            clients.append(ClientOutcome(source=source.name, outcome=tls.outcome.value,
                                         client=tls.client, reason=tls.why,
                                         deciding=list(tls.deciding)))
            computed += 1
        dataplane = member.dataplane.value if member.dataplane is not None else "unknown"
        key = (port, dataplane, server.mode, str(server.policy and server.policy.ref),
               tuple((c.source, c.outcome, c.reason) for c in clients))
        if key not in rows:
            rows[key] = (PortStatus(
                pods=[], count=0, port=port, dataplane=dataplane, mode=server.mode.value,
                peer_authentication=server.policy.ref if server.policy is not None else None,
                clients=clients), [])
        rows[key][1].append(destination.name)
        if computed >= MAX_ROWS:
            notes.append(f"stopped after {MAX_ROWS} answers; give a port or one pod")
            break
    if not targets:
        notes.append(f"{destinations.text} has no TCP port to look at; give a port")
    if layer.mesh.problem is not None:
        notes.append(f"{layer.mesh.problem}: Istio's defaults assumed")
    return Result(
        metadata=metadata(view, destinations.endpoints[0].namespace),
        destination=args.destination,
        mesh=f"root namespace {layer.root}, auto mTLS "
        f"{'on' if layer.mesh.auto_mtls else 'off'}, from {layer.mesh.source}",
        ports=sorted((row.model_copy(update={"pods": names[:5], "count": len(names)})
                      for row, names in rows.values()), key=lambda r: (r.port, r.pods)),
        not_evaluated=list(dict.fromkeys(notes)),
    )


# Offered by a live server only while the Istio CRDs are installed.
TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.MESH, provider="istio")
