"""TLS a DestinationRule originates without naming the CA to check the server by
(istioctl's destinationrule.CaCertificateAnalyzer).

With mode SIMPLE or MUTUAL the sidecar (or gateway) opens TLS to the destination itself;
``caCertificates`` names the CA bundle that must have signed the server's certificate.
Without it the proxy falls back to its defaults: depending on the Istio release and
istiod's VERIFY_CERTIFICATE_AT_CLIENT, the OS's public roots or no verification at all.
A rule with a workloadSelector (one applied to gateway pods) may instead take the CA from
its credentialName Secret (``<name>-cacert`` or the Secret's ``ca.crt``).
"""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import ClientTls, DestinationRule

ORIGINATING = frozenset({"SIMPLE", "MUTUAL"})


def ca_certificates(ctx: MeshContext) -> None:
    for rule in ctx.destination_rules:
        if not ctx.in_scope(rule.record):
            continue
        for tls in rule.tls:
            if tls.mode not in ORIGINATING or tls.ca_certificates:
                continue
            if tls.credential_name and rule.has_workload_selector:
                continue  # the credential Secret may carry the CA
            _report(ctx, rule, tls)


def _report(ctx: MeshContext, rule: DestinationRule, tls: ClientTls) -> None:
    record = rule.record
    port_level = tls.path != "spec.trafficPolicy.tls"
    where = f" port {tls.port}" if tls.port is not None else ""
    code = codes.DESTINATION_RULE_PORT_TLS_WITHOUT_CA if port_level else \
        codes.DESTINATION_RULE_TLS_WITHOUT_CA
    credential = (f" credentialName {tls.credential_name!r} does not count: the rule has no "
                  "workloadSelector, and only a rule applied to gateway pods reads it."
                  if tls.credential_name else "")
    ctx.report(code.finding(
        ref(record), f"DestinationRule {record.ref} originates {tls.mode} TLS to "
        f"{rule.host!r}{where} without caCertificates",
        detail=f"{tls.path} sets mode {tls.mode} but no caCertificates, so the proxy is not "
        "told which CA must have signed the server's certificate; it checks the server "
        "against its default roots only (or, where istiod does not verify at the client, "
        f"not at all), so a server presenting any certificate those roots accept passes."
        f"{credential}",
        suggestion=f"Set {tls.path}.caCertificates to the CA bundle of the server (a file "
        "mounted in the proxy), or use credentialName with a workloadSelector on gateways; "
        "ISTIO_MUTUAL needs neither for in-mesh destinations.",
        evidence=[evidence(record, f"{tls.path}.mode", tls.mode)],
    ))
