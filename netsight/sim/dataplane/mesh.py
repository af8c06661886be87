"""Istio's mutual TLS at a destination, from PeerAuthentication (security.istio.io).

The mode a workload's sidecar enforces comes from the most specific policy: one of its
namespace whose selector matches it, else its namespace's policy without selector, else the
mesh-wide one in the root namespace (istio-system); ``portLevelMtls`` (keyed by the
container port) overrides at workload level; UNSET inherits; nothing means PERMISSIVE.
A STRICT sidecar resets a plaintext connection: only a client with its own sidecar speaks
mTLS to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from netsight.sim.dataplane.label_selectors import labels_of, matches
from netsight.sim.dataplane.snapshot import (
    PEER_AUTHENTICATION,
    Cluster,
    has_sidecar,
    name_of,
    namespace_of,
)

ROOT_NAMESPACE: Final = "istio-system"


def mtls_mode(cluster: Cluster, pod: Mapping[str, Any], port: int) -> tuple[str, str | None]:
    """(STRICT | PERMISSIVE | DISABLE, the deciding PeerAuthentication as ns/name) at
    ``pod`` on ``port``; PERMISSIVE without a policy."""
    namespace = namespace_of(pod)
    labels = labels_of(pod)
    policies = list(cluster.each(PEER_AUTHENTICATION, namespace))
    workload = sorted((p for p in policies if _selector(p)
                       and matches({"matchLabels": _selector(p)}, labels)), key=_age)
    namespace_wide = sorted((p for p in policies if not _selector(p)), key=_age)
    mesh_wide = sorted((p for p in cluster.each(PEER_AUTHENTICATION, ROOT_NAMESPACE)
                        if not _selector(p)), key=_age)
    for policy in workload[:1]:
        port_mode = ((policy.get("spec") or {}).get("portLevelMtls") or {}).get(str(port))
        mode = (port_mode or {}).get("mode")
        if mode and mode != "UNSET":
            return str(mode), _ref(policy)
    for policy in [*workload[:1], *namespace_wide[:1], *mesh_wide[:1]]:
        mode = ((policy.get("spec") or {}).get("mtls") or {}).get("mode")
        if mode and mode != "UNSET":
            return str(mode), _ref(policy)
    return "PERMISSIVE", None


def refuses_plaintext(cluster: Cluster, src: Mapping[str, Any] | None,
                      dst: Mapping[str, Any], port: int) -> str | None:
    """Why the destination's sidecar resets this connection, or None when it takes it."""
    if not has_sidecar(dst) or (src is not None and has_sidecar(src)):
        return None
    mode, policy = mtls_mode(cluster, dst, port)
    if mode != "STRICT":
        return None
    return (f"the destination's sidecar requires mTLS (PeerAuthentication {policy} STRICT) "
            "and the source has no sidecar")


def _selector(policy: Mapping[str, Any]) -> Mapping[str, str]:
    selector: Mapping[str, str] = ((policy.get("spec") or {}).get("selector") or {}).get(
        "matchLabels") or {}
    return selector


def _age(policy: Mapping[str, Any]) -> tuple[str, str]:
    # Istio takes the oldest policy where several apply at one level.
    return (str((policy.get("metadata") or {}).get("creationTimestamp") or ""), name_of(policy))


def _ref(policy: Mapping[str, Any]) -> str:
    return f"{namespace_of(policy)}/{name_of(policy)}"
