"""Linkerd's inbound authorization at a meshed destination (policy.linkerd.io), as its proxy
enforces what the policy controller serves it.

A port some Server selects (the oldest, if several) admits a client only if one of its
authorizations does — ServerAuthorizations naming it (or selecting its labels),
AuthorizationPolicies targeting it or its namespace with their MeshTLSAuthentication,
NetworkAuthentication and ServiceAccount requirements (a missing one makes the controller
ignore the policy), and its accessPolicy; a port no Server selects takes the pod's
``config.linkerd.io/default-inbound-policy`` (``all-unauthenticated`` otherwise). Only a
client running the Linkerd proxy presents a TLS identity,
``<sa>.<ns>.serviceaccount.identity.linkerd.cluster.local``. Route-scoped authorizations
are left out: the simulator's probes open connections, not routed requests.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from netsight.sim.dataplane.label_selectors import labels_of, matches
from netsight.sim.dataplane.snapshot import Cluster, container_ports, name_of, namespace_of

PROXY: Final = "linkerd-proxy"
GROUP: Final = "policy.linkerd.io"
DOMAIN: Final = "cluster.local"
DEFAULT_POLICY: Final = "config.linkerd.io/default-inbound-policy"
# Who each default policy admits: (identity required, from the cluster's networks only).
DEFAULTS: Final = {"all-unauthenticated": (False, False), "all-authenticated": (True, False),
                   "cluster-unauthenticated": (False, True),
                   "cluster-authenticated": (True, True), "audit": (False, False)}


def meshed(pod: Mapping[str, Any] | None) -> bool:
    spec = (pod or {}).get("spec") or {}
    return any(c.get("name") == PROXY for section in ("containers", "initContainers")
               for c in spec.get(section) or ())


def _identity(pod: Mapping[str, Any] | None) -> str | None:
    if pod is None or not meshed(pod):
        return None
    account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    return f"{account}.{namespace_of(pod)}.serviceaccount.identity.linkerd.{DOMAIN}"


def _ip(pod: Mapping[str, Any] | None) -> str | None:
    return ((pod or {}).get("status") or {}).get("podIP")


def _identity_matches(pattern: str, name: str) -> bool:
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return name.endswith(pattern[1:])
    return pattern == name


def _in_networks(networks: list[Mapping[str, Any]] | None, ip: str | None) -> bool:
    if networks is None:
        return True
    if ip is None:
        return False
    address = ipaddress.ip_address(ip)
    for net in networks:
        cidr = ipaddress.ip_network(str(net.get("cidr")), strict=False)
        excepted = any(address in ipaddress.ip_network(str(e), strict=False)
                       for e in net.get("except") or ())
        if address.version == cidr.version and address in cidr and not excepted:
            return True
    return False


def refuses(cluster: Cluster, src: Mapping[str, Any] | None, dst: Mapping[str, Any],
            port: int) -> str | None:
    """Why ``dst``'s Linkerd proxy refuses ``src`` on ``port``, or None when it admits it."""
    if not meshed(dst):
        return None
    namespace, labels = namespace_of(dst), labels_of(dst)
    ports = {str(p.get("name")): int(p.get("containerPort") or 0) for p in container_ports(dst)}
    servers = sorted(
        (s for s in cluster.each((GROUP, "Server"), namespace)
         if matches((s.get("spec") or {}).get("podSelector") or {}, labels)
         and _port_of((s.get("spec") or {}).get("port"), ports) == port),
        key=lambda s: (str((s.get("metadata") or {}).get("creationTimestamp") or ""),
                       name_of(s)))
    identity, ip = _identity(src), _ip(src)
    if not servers:
        policy = ((dst.get("metadata") or {}).get("annotations") or {}).get(
            DEFAULT_POLICY, "all-unauthenticated")
        wanted = DEFAULTS.get(policy)
        if wanted is None and policy != "deny":
            return None  # an invalid value: the cluster default, all-unauthenticated
        if wanted is None or (wanted[0] and identity is None):
            return f"Linkerd's default policy {policy} of {namespace}/{name_of(dst)} refuses it"
        return None
    server = servers[0]
    if any(_admits(client, identity, ip)
           for client in _authorizations(cluster, server)):
        return None
    return (f"Linkerd Server {namespace}/{name_of(server)} authorizes no identity or network "
            f"of the source ({identity or 'no mesh identity'})")


def _port_of(raw: object, ports: Mapping[str, int]) -> int | None:
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        return int(raw) if raw.isdigit() else ports.get(raw)
    return None


# A client authorization: (identities required, or None for any client; networks, or
# None for all; whether any meshed client will do).
Client = tuple[list[str] | None, list[Mapping[str, Any]] | None, bool]


def _authorizations(cluster: Cluster, server: Mapping[str, Any]) -> list[Client]:
    namespace, name = namespace_of(server), name_of(server)
    found: list[Client] = []
    for saz in cluster.each((GROUP, "ServerAuthorization"), namespace):
        spec = saz.get("spec") or {}
        target = spec.get("server") or {}
        if target.get("name") != name and not (
                "selector" in target and matches(target["selector"], labels_of(server))):
            continue
        client = spec.get("client") or {}
        mtls = client.get("meshTLS") or {}
        ids = list(mtls.get("identities") or ()) + [
            f"{sa.get('name')}.{sa.get('namespace') or namespace}.serviceaccount.identity."
            f"linkerd.{DOMAIN}" for sa in mtls.get("serviceAccounts") or ()]
        if client.get("unauthenticated"):
            found.append((None, client.get("networks"), False))
        elif mtls.get("unauthenticatedTLS"):
            found.append((None, client.get("networks"), True))
        elif ids:
            found.append((ids, client.get("networks"), True))
    for policy in cluster.each((GROUP, "AuthorizationPolicy"), namespace):
        spec = policy.get("spec") or {}
        target = spec.get("targetRef") or {}
        if (target.get("kind"), target.get("name")) not in (("Server", name),
                                                            ("Namespace", namespace)):
            continue
        resolved = _resolve(cluster, namespace, spec.get("requiredAuthenticationRefs") or ())
        if resolved is not None:
            found.append(resolved)
    access = (server.get("spec") or {}).get("accessPolicy")
    if access in DEFAULTS:
        found.append((["*"] if DEFAULTS[access][0] else None, None, DEFAULTS[access][0]))
    return found


def _resolve(cluster: Cluster, namespace: str, refs: Any) -> Client | None:
    ids: list[str] | None = None
    networks: list[Mapping[str, Any]] | None = None
    for ref in refs:
        where = ref.get("namespace") or namespace
        if ref.get("kind") == "MeshTLSAuthentication":
            authn = cluster.get((GROUP, "MeshTLSAuthentication"), where, ref.get("name"))
            if authn is None:
                return None  # the controller ignores the policy
            spec = authn.get("spec") or {}
            ids = list(spec.get("identities") or ())
            for ident in spec.get("identityRefs") or ():
                ns = ident.get("namespace") or where
                ids.append(f"{ident.get('name')}.{ns}.serviceaccount.identity.linkerd.{DOMAIN}"
                           if ident.get("kind") == "ServiceAccount" else
                           f"*.{ident.get('name')}.serviceaccount.identity.linkerd.{DOMAIN}")
        elif ref.get("kind") == "NetworkAuthentication":
            authn = cluster.get((GROUP, "NetworkAuthentication"), where, ref.get("name"))
            if authn is None:
                return None
            networks = list((authn.get("spec") or {}).get("networks") or ())
        elif ref.get("kind") == "ServiceAccount":
            ids = [f"{ref.get('name')}.{where}.serviceaccount.identity.linkerd.{DOMAIN}"]
    return ids, networks, ids is not None


def _admits(client: Client, identity: str | None, ip: str | None) -> bool:
    ids, networks, needs_tls = client
    if not _in_networks(list(networks) if networks is not None else None, ip):
        return False
    if needs_tls and identity is None:
        return False
    return ids is None or (identity is not None and any(_identity_matches(p, identity)
                                                        for p in ids))
