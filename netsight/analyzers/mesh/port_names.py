"""Service ports whose protocol Istio cannot tell from the name or appProtocol
(istioctl's service.PortNameAnalyzer; protocol rules of pkg/config/kube ConvertProtocol).

Istio reads a port's protocol from ``appProtocol`` if set, else from the name's prefix
before the first ``-`` (``http-web`` is HTTP); UDP ports are UDP whatever their name, and
ports 25, 53, 3306 and 27017 default to TCP. Anything else is "unsupported": the proxy
sniffs or treats it as opaque TCP.
"""

from __future__ import annotations

from netsight.analyzers.core import codes, deadline
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.quoting import unset_or_quoted
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import VIRTUAL_SERVICE
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import ServicePort, ServiceRecord

PROTOCOLS = frozenset({"tcp", "udp", "grpc", "grpc-web", "http", "http_proxy", "http2",
                       "https", "tls", "mongo", "redis", "mysql", "hbone"})
_K8S_APP_PROTOCOLS = {"kubernetes.io/h2c": "http2", "kubernetes.io/ws": "http",
                      "kubernetes.io/wss": "http"}
WELL_KNOWN_TCP_PORTS = frozenset({25, 53, 3306, 27017})
# Namespaces Istio never injects; istioctl does not lint their Services.
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease",
                               "local-path-storage"})
# Services Istio itself deploys for Gateway API gateways, waypoints and east-west gateways
# (the gateway.istio.io/managed label): not the user's to name, so not linted.
MANAGED_LABEL = "gateway.istio.io/managed"
MANAGED_BY_ISTIO = frozenset({"istio.io-gateway-controller", "istio.io-mesh-controller",
                              "istio.io-eastwest-controller"})


def istio_protocol(port: ServicePort) -> str | None:
    """The protocol Istio gives the port, or None when it cannot tell."""
    if port.protocol == "UDP":
        return "udp"
    name = port.app_protocol if port.app_protocol is not None else (port.name or "")
    if name in _K8S_APP_PROTOCOLS:
        return _K8S_APP_PROTOCOLS[name]
    if name[:8].lower() == "grpc-web":
        return "grpc-web"
    prefix = name.partition("-")[0].lower()
    if prefix in PROTOCOLS:
        return prefix
    return "tcp" if port.port in WELL_KNOWN_TCP_PORTS else None


def _control_plane(service: ServiceRecord) -> bool:
    return "istio" in service.labels or service.labels.get("release") == "istio"


def _managed_gateway(service: ServiceRecord) -> bool:
    return service.labels.get(MANAGED_LABEL) in MANAGED_BY_ISTIO


def port_names(ctx: MeshContext) -> None:
    # Only where Istio runs: a cluster that serves its CRDs, or manifests (istioctl analyze
    # reads files as Istio configuration).
    if ctx.unknown(VIRTUAL_SERVICE) is not None:
        return
    for service in deadline.checked(ctx.view.for_each(Kind.SERVICE, ctx.namespace), every=64):
        if not isinstance(service, ServiceRecord) or service.namespace in SYSTEM_NAMESPACES \
                or _control_plane(service) or _managed_gateway(service):
            continue
        external = service.type == "ExternalName"
        for i, port in enumerate(service.ports):
            unknown = istio_protocol(port) is None
            if not (unknown or (external and port.name == "tcp")):
                continue
            path = f"spec.ports[{i}]"
            if external:
                ctx.report(codes.EXTERNAL_NAME_PORT_NAME_INVALID.finding(
                    ref(service), f"ExternalName Service {service.ref} port "
                    f"{port.describe()} has a name Istio forwards poorly",
                    detail="Istio makes no listener per port for ExternalName Services; a "
                    "port named tcp (or with no protocol Istio knows) may keep proxies "
                    "from forwarding its TCP traffic correctly.",
                    suggestion="Name the port with its real protocol (http-..., "
                    "https-..., tls-...), or drop the port name if it carries opaque TCP.",
                    evidence=[evidence(service, f"{path}.name", port.name)],
                ))
                continue
            ctx.report(codes.SERVICE_PORT_NAME_NOT_PROTOCOL.finding(
                ref(service), f"Service {service.ref} port {port.describe()} does not name "
                "its protocol",
                detail=f"Neither the name {unset_or_quoted(port.name)} nor appProtocol "
                f"{unset_or_quoted(port.app_protocol)} starts "
                "with a protocol Istio knows; the mesh "
                "sniffs the protocol (or treats it as TCP), so HTTP routing, retries and "
                "metrics may not apply.",
                suggestion="Name the port <protocol>[-<suffix>] (http-web, grpc, tcp-db) or "
                "set appProtocol.",
                evidence=[evidence(service, f"{path}.name", port.name)],
            ))
