"""Kiali's Sidecar validations (kiali/kiali business/checkers/sidecars): egress hosts that
name nothing in the service registry (KIA1004, EgressHostChecker) and a root-namespace
Sidecar with a workloadSelector (KIA1006, GlobalChecker).

An egress host is ``namespace/dnsName``; ``*/*``, ``~/*``, ``./*`` and ``namespace/*`` name
every host of a scope and are never flagged. A short dnsName is completed in the Sidecar's
namespace, ``name.namespace`` of a known namespace to its Service FQDN, and a wildcard in
the Sidecar's own namespace passes, as Kiali does. Kiali's root namespace is istio-system
(meshConfig.rootNamespace's default).
"""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.hosts import SERVICE_DOMAIN, HostRegistry, is_wildcard
from netsight.analyzers.mesh.istio_objects import SERVICE_ENTRY, Sidecar
from netsight.analyzers.mesh.jwt_claim_routes import ROOT_NAMESPACE
from netsight.graph.model.kinds import Kind


def kiali_checks(ctx: MeshContext) -> None:
    for sidecar in ctx.sidecars:
        if not ctx.in_scope(sidecar.record):
            continue
        if sidecar.record.namespace == ROOT_NAMESPACE and sidecar.selector:
            _root_selector(ctx, sidecar)
        _egress_hosts(ctx, sidecar)


def _root_selector(ctx: MeshContext, sidecar: Sidecar) -> None:
    record = sidecar.record
    ctx.report(codes.ROOT_SIDECAR_HAS_SELECTOR.finding(
        ref(record), f"Sidecar {record.ref} in the root namespace has a workloadSelector",
        detail=f"A Sidecar in {ROOT_NAMESPACE} without workloadSelector is the default of "
        "every namespace that has none of its own; with a selector "
        f"({sidecar.selector_text}) it applies only to matching pods of {ROOT_NAMESPACE}.",
        suggestion="Remove spec.workloadSelector to make it the mesh-wide default, or move "
        "it to the namespace of the workloads it is meant for.",
        evidence=[evidence(record, "spec.workloadSelector", dict(sidecar.selector))]))


def fqdn_of(host: str, namespace: str, namespaces: list[str]) -> str:
    """Kiali's ParseHost: a short name in ``namespace``, ``name.namespace`` of a known
    namespace as that Service, anything else as written."""
    if is_wildcard(host):
        return host
    parts = host.split(".")
    if len(parts) == 1:
        return f"{host}.{namespace}.{SERVICE_DOMAIN}"
    if len(parts) == 2 and parts[1] in namespaces:
        return f"{host}.{SERVICE_DOMAIN}"
    return host


def in_registry(registry: HostRegistry, fqdn: str, namespace: str) -> bool:
    """Whether a Service or ServiceEntry of any namespace provides the host (a wildcard
    within ``namespace`` always does)."""
    if is_wildcard(fqdn) and fqdn.endswith(f".{namespace}.{SERVICE_DOMAIN}"):
        return True
    for (_, known), _entry in registry.entries.items():
        if known == fqdn or (is_wildcard(known) and fqdn.endswith(known[1:])):
            return True
    return False


def _egress_hosts(ctx: MeshContext, sidecar: Sidecar) -> None:
    record = sidecar.record
    spec = record.spec if isinstance(record.spec, dict) else {}
    namespace = record.namespace
    egresses = spec.get("egress")
    for i, egress in enumerate(egresses if isinstance(egresses, list) else []):
        hosts = egress.get("hosts") if isinstance(egress, dict) else None
        for j, host in enumerate(hosts if isinstance(hosts, list) else []):
            _, sep, dns = str(host).partition("/")
            if not sep or dns == "*":
                continue  # a whole scope ("ns/*", "*/*", "~/*", "./*"), or not this form
            unknown = ctx.unknown(Kind.SERVICE, SERVICE_ENTRY)
            if unknown is not None:
                ctx.skip(f"Sidecar {record.ref} egress hosts", unknown)
                return
            fqdn = fqdn_of(dns, namespace, ctx.namespaces)
            if in_registry(ctx.hosts, fqdn, namespace):
                continue
            path = f"spec.egress[{i}].hosts[{j}]"
            ctx.report(codes.SIDECAR_EGRESS_HOST_NOT_FOUND.finding(
                ref(record), f"{path} of Sidecar {record.ref} names {host}, which no "
                "Service or ServiceEntry provides",
                detail=f"{dns} ({fqdn}) is not a host of any Service or ServiceEntry: the "
                "Sidecar's proxies get no route to it.",
                suggestion="Fix the host, or declare the destination with a ServiceEntry.",
                evidence=[evidence(record, path, host)]))
