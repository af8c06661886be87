"""ExternalName Services: cluster DNS answers them with a CNAME to spec.externalName, so
they get no endpoints and their selector is ignored."""

from __future__ import annotations

import ipaddress
import re

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.services.service_reports import ServiceReport
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.store.live import GraphView, Source

_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
# <service>.<namespace>.svc[.<cluster domain>]
_IN_CLUSTER_NAME = re.compile(rf"^({_LABEL})\.({_LABEL})\.svc(?:\..*)?$")


def check_external_name(view: GraphView, report: ServiceReport) -> None:
    service, findings = report.service, report.findings
    report.not_evaluated.append("endpoints: an ExternalName Service has none (DNS CNAME only)")
    if service.selector:
        findings.append(codes.EXTERNAL_NAME_SELECTOR_IGNORED.finding(
            ref(service), f"selector of ExternalName Service {service.ref} is ignored",
            detail="ExternalName Services are answered by cluster DNS with a CNAME; the "
            "selector selects nothing and no endpoints are created.",
            suggestion="Remove spec.selector, or change the type to ClusterIP to load-balance "
            "to the selected pods.",
            evidence=[evidence(service, "spec.selector", dict(service.selector))],
        ))
    target = service.external_name
    if target is None:
        findings.append(codes.EXTERNAL_NAME_MISSING.finding(
            ref(service), f"ExternalName Service {service.ref} has no externalName",
            detail="type: ExternalName requires spec.externalName, the DNS name the "
            "Service's name becomes a CNAME for.",
            suggestion="Set spec.externalName to a DNS name, e.g. db.example.com.",
            evidence=[evidence(service, "spec.externalName", None)],
        ))
        return
    if _is_ip(target):
        findings.append(codes.EXTERNAL_NAME_IS_IP.finding(
            ref(service), f"externalName of {service.ref} is the IP address {target}",
            detail="Cluster DNS answers with a CNAME to a DNS name made of the IP's "
            "digits, which does not resolve; ExternalName cannot point at an IP.",
            suggestion="Use a Service without selector and an EndpointSlice holding the "
            "IP, or point externalName at a DNS name.",
            evidence=[evidence(service, "spec.externalName", target)],
        ))
        return
    match = _IN_CLUSTER_NAME.match(target.rstrip(".").lower())
    if match:
        name, namespace = match.group(1), match.group(2)
        if view.source is Source.MANIFESTS and namespace not in view.namespaces():
            report.not_evaluated.append(
                f"spec.externalName: namespace {namespace} is not in the input, so whether "
                f"Service {namespace}/{name} exists is unknown")
        elif not view.exists(make_key(Kind.SERVICE, namespace, name)):
            findings.append(codes.EXTERNAL_NAME_TARGET_NOT_FOUND.finding(
                ref(service),
                f"externalName of {service.ref} points at Service {namespace}/{name}, "
                "which does not exist",
                detail=f"{target} is an in-cluster Service name; with no Service "
                f"{namespace}/{name}, the CNAME leads to NXDOMAIN.",
                suggestion=f"Create Service {namespace}/{name}, or fix spec.externalName.",
                evidence=[evidence(service, "spec.externalName", target)],
            ))


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
