"""One certificate served by several Istio Gateways of the same gateway pods (istioctl's
gateway.CertificateAnalyzer).

Browsers reuse an HTTP/2 connection for any host the server's certificate covers
(connection coalescing). When two Gateways present one certificate on separate servers,
Envoy builds a filter chain per server, matched by SNI at connection time; a request for
the other Gateway's host arriving on the reused connection meets the first server's
routes and gets 404 (envoyproxy/envoy#6767).

Like istioctl, the Gateways compared are those whose selector includes all of this one's
labels (so they select a subset of its pods); a certificate is the same when the
credentialName is, or, both without one, when serverCertificate and privateKey are.
"""

from __future__ import annotations

from collections.abc import Mapping

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import IstioGateway, Server, ServerTls


def duplicate_certificates(ctx: MeshContext) -> None:
    gateways = ctx.gateways
    for gateway in gateways:
        if not ctx.in_scope(gateway.record):
            continue
        for other in gateways:
            if other.record.key == gateway.record.key or \
                    not _within(gateway.selector, other.selector):
                continue
            shared = [(mine, theirs, mine.tls) for mine in gateway.servers
                      for theirs in other.servers
                      if mine.tls is not None and theirs.tls is not None
                      and _same_certificate(mine.tls, theirs.tls)]
            if shared:
                _report(ctx, gateway, other, shared)


def _within(selector: Mapping[str, str], other: Mapping[str, str]) -> bool:
    """Every label of ``selector`` is in ``other`` (an empty selector: every Gateway)."""
    return all(other.get(k) == v for k, v in selector.items())


def _same_certificate(a: ServerTls, b: ServerTls) -> bool:
    if a.credential_name or b.credential_name:
        return a.credential_name == b.credential_name != ""
    return bool(a.server_certificate and a.server_certificate == b.server_certificate
                and a.private_key and a.private_key == b.private_key)


def _certificate(tls: ServerTls) -> str:
    return f"credentialName {tls.credential_name!r}" if tls.credential_name else \
        f"serverCertificate {tls.server_certificate!r}"


def _report(ctx: MeshContext, gateway: IstioGateway, other: IstioGateway,
            shared: list[tuple[Server, Server, ServerTls]]) -> None:
    record = gateway.record
    mine, _, tls = shared[0]
    pairs = "; ".join(f"{a.path} and {other.record.ref} {b.path}" for a, b, _ in shared)
    ctx.report(codes.ISTIO_GATEWAY_DUPLICATE_CERTIFICATE.finding(
        ref(record), f"Gateway {record.ref} serves the same certificate as Gateway "
        f"{other.record.ref} ({_certificate(tls)})",
        detail=f"{pairs} present the same certificate on the gateway pods both select "
        f"({gateway.selector_text or 'all'}). Clients reuse an HTTP/2 connection for every "
        "host that certificate covers; a request for the other Gateway's hosts on that "
        "connection meets this server's routes and gets 404.",
        suggestion="Serve the hosts that share the certificate from one server (one "
        "Gateway, hosts listed together), or give each Gateway its own certificate.",
        evidence=[evidence(record, f"{mine.path}.tls", _certificate(tls))],
    ))
