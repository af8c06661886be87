"""Istio Gateway servers whose credentialName Secret does not exist (istioctl's
gateway.SecretAnalyzer, the part that needs no Secret data).

A gateway proxy reads a server's certificate from the Secret ``credentialName`` names, in
the namespace the gateway pods run in (not the Gateway's own), or from ``namespace/name``
when the name carries one. Secrets are watched by name only (SECRET_METADATA): their
contents never reach netsight, so istioctl's checks of the keys and the certificate
itself (InvalidGatewayCredential, IST0161) are not made here. A Gateway that selects no
pod is reported by the Gateway pod check (NS0620).
"""

from __future__ import annotations

from netsight.analyzers import codes
from netsight.analyzers.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.objects import IstioGateway, Server
from netsight.graph.model import Kind, make_key
from netsight.graph.scoping import unrestricted
from netsight.graph.store import Source

SECRET = "Secret"


def credentials(ctx: MeshContext) -> None:
    gateways = [g for g in ctx.gateways if ctx.in_scope(g.record)
                and any(s.tls is not None and s.tls.credential_name for s in g.servers)]
    if not gateways:
        return
    unknown = ctx.unknown(Kind.POD, SECRET)
    if unknown is not None:
        ctx.skip("Istio Gateway credentialName Secrets", unknown)
        return
    # A Secret is read across namespaces (the gateway pods', often one the caller may not
    # read): whether it exists is decided on the whole graph, and a hidden one is not named.
    full, shows = unrestricted(ctx.view)
    for gateway in gateways:
        pods = list(ctx.pods_matching(gateway.selector))
        # istioctl's stand-in ingress pod counts only where no real gateway pod matches.
        pods = [p for p in pods if not p.assumed] or pods
        namespaces = sorted({p.record.namespace for p in pods})
        assumed = bool(pods) and all(p.assumed for p in pods)
        for server in gateway.servers:
            name = server.tls.credential_name if server.tls is not None else ""
            if not name:
                continue
            wanted = [tuple(name.split("/", 1))] if "/" in name else \
                [(namespace, name) for namespace in namespaces]
            missing = [f"{ns}/{secret}" if shows(make_key(SECRET, ns, secret)) else
                       f"{secret} (in a namespace you may not read)"
                       for ns, secret in wanted
                       if not full.exists(make_key(SECRET, ns, secret))]
            if missing:
                _report(ctx, gateway, server, name, missing, assumed=assumed)


def _report(ctx: MeshContext, gateway: IstioGateway, server: Server, name: str,
            missing: list[str], *, assumed: bool) -> None:
    record = gateway.record
    where = "not in the input (created elsewhere, e.g. by cert-manager?)" \
        if ctx.view.source is Source.MANIFESTS else "not found"
    note = " (the gateway pod is istioctl's stand-in istio-system/istio-ingressgateway, " \
        "assumed because the manifests define none)" if assumed else ""
    ctx.report(codes.ISTIO_GATEWAY_SECRET_NOT_FOUND.finding(
        ref(record), f"Gateway {record.ref} {server.path}: credential Secret "
        f"{', '.join(missing)} {where}",
        detail=f"{server.path}.tls.credentialName is {name!r}; the gateway pods selected by "
        f"{gateway.selector_text or 'all labels'}{note} read it from their own namespace, "
        f"where no Secret {name!r} exists, so they have no certificate for this server and "
        f"TLS handshakes for {list(server.hosts)} fail.",
        suggestion="Create the Secret (type kubernetes.io/tls, or generic with key, cert "
        "and optionally cacert) in the gateway pods' namespace, or correct credentialName.",
        evidence=[evidence(record, f"{server.path}.tls.credentialName", name)],
    ))
