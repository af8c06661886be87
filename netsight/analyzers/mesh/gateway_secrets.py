"""Istio Gateway servers whose credentialName Secret does not exist, or holds no
certificate the gateway can serve (istioctl's gateway.SecretAnalyzer).

A gateway proxy reads a server's certificate from the Secret ``credentialName`` names, in
the namespace the gateway pods run in (not the Gateway's own), or from ``namespace/name``
when the name carries one. Whether it exists is known whenever Secrets are watched (by name
only, SECRET_METADATA). Its contents never reach netsight from a cluster; from manifests the
record builder keeps a verdict on them instead of the data (graph/model/pem.py): keys cert and
key, else tls.crt and tls.key, with values, and a first PEM block that is an X.509
certificate, whose validity is compared with the clock here (InvalidGatewayCredential,
IST0161). Where the data was not at hand, that part is reported as not evaluated. A Gateway
that selects no pod is reported by the Gateway pod check (NS0620).
"""

from __future__ import annotations

from datetime import UTC, datetime

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import IstioGateway, Server
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import SecretRecord
from netsight.graph.store.live import GraphView, Source
from netsight.graph.store.scoped import unrestricted

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
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for gateway in gateways:
        pods = list(ctx.pods_matching(gateway.selector))
        # istioctl's stand-in ingress pod counts only where no real gateway pod matches.
        pods = [p for p in pods if not p.assumed] or pods
        namespaces = sorted({p.record.namespace for p in pods})
        assumed = bool(pods) and all(p.assumed for p in pods)
        invalid: list[tuple[Server, str, str]] = []
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
                continue
            for ns, secret in wanted:
                shown = f"{ns}/{secret}" if shows(make_key(SECRET, ns, secret)) else \
                    f"{secret} (in a namespace you may not read)"
                problem = _credential_problem(ctx, full, make_key(SECRET, ns, secret), now)
                if problem is not None:
                    invalid.append((server, shown, problem))
        if invalid:
            _report_invalid(ctx, gateway, invalid)


def _credential_problem(ctx: MeshContext, full: GraphView, key: str, now: str) -> str | None:
    record = full.get(key)
    if not isinstance(record, SecretRecord):
        return None
    if not record.tls_checked:
        ctx.skip("Istio Gateway credential contents",
                 "Secrets are read by name only; their data never reaches netsight"
                 if ctx.view.source is Source.CLUSTER else
                 "a credential Secret in the input carries no data")
        return None
    if record.credential_problem is not None:
        return record.credential_problem
    if record.credential_not_after is not None and record.credential_not_after < now:
        return f"its certificate expired at {record.credential_not_after}"
    if record.credential_not_before is not None and now < record.credential_not_before:
        return f"its certificate is valid only from {record.credential_not_before}"
    return None


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
        f"TLS handshakes for {', '.join(server.hosts)} fail.",
        suggestion="Create the Secret (type kubernetes.io/tls, or generic with key, cert "
        "and optionally cacert) in the gateway pods' namespace, or correct credentialName.",
        evidence=[evidence(record, f"{server.path}.tls.credentialName", name)],
    ))


def _report_invalid(ctx: MeshContext, gateway: IstioGateway,
                    invalid: list[tuple[Server, str, str]]) -> None:
    record = gateway.record
    listed = "; ".join(f"{server.path}: Secret {secret} {problem}"
                       for server, secret, problem in invalid)
    ctx.report(codes.ISTIO_GATEWAY_CREDENTIAL_INVALID.finding(
        ref(record), f"Gateway {record.ref} has a credential Secret its gateway cannot serve "
        f"a certificate from ({listed})",
        detail="A gateway reads a server's certificate from keys cert and key, else tls.crt "
        "and tls.key (both with values); the certificate must be PEM X.509 and valid now. "
        "Without one the server has no certificate and TLS handshakes for its hosts fail.",
        suggestion="Store the certificate chain and key under tls.crt and tls.key (type "
        "kubernetes.io/tls) or cert and key, and renew an expired certificate.",
        evidence=[evidence(record, f"{server.path}.tls.credentialName",
                           server.tls.credential_name if server.tls is not None else None)
                  for server, _, _ in invalid],
    ))
