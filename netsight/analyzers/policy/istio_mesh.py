"""Who is in an Istio mesh, and as whom.

Istio enforces its policies where a workload's traffic enters its proxy: a sidecar, or the
ztunnel of an ambient pod. A pod outside the mesh neither enforces them nor presents a
peer identity; one inside has the SPIFFE identity of its service account.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import Namespaces
from netsight.analyzers.policy.verdict import Tri

ROOT_NAMESPACE = "istio-system"  # Istio's default root namespace (meshConfig.rootNamespace)
TRUST_DOMAIN = "cluster.local"  # meshConfig.trustDomain's default
INJECT = "sidecar.istio.io/inject"
DATAPLANE_MODE = "istio.io/dataplane-mode"
USE_WAYPOINT = "istio.io/use-waypoint"
EXCLUDE_INBOUND = "traffic.sidecar.istio.io/excludeInboundPorts"
INCLUDE_INBOUND = "traffic.sidecar.istio.io/includeInboundPorts"
_NEVER_INJECTED = ("kube-system", "kube-public")  # the injector's webhook skips them


class Dataplane(StrEnum):
    SIDECAR = "sidecar"
    AMBIENT = "ambient"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Membership:
    """Whether an endpoint is in the mesh (None: cannot tell) and why."""

    dataplane: Dataplane | None
    why: str


def membership(endpoint: Endpoint, namespaces: Namespaces, *, live: bool) -> Membership:
    """Sidecar: an ``istio-proxy`` container, or (where the pod is yet to be created: manifests,
    templates) the injector's rules — "If either label is disabled, the pod is not injected";
    "If either label is enabled, the pod is injected" (the namespace's ``istio-injection`` or
    ``istio.io/rev``, the pod's ``sidecar.istio.io/inject``). Ambient: the namespace (or pod)
    labelled ``istio.io/dataplane-mode=ambient``, and no sidecar."""
    if endpoint.external:
        return Membership(Dataplane.NONE, f"{endpoint.name} is outside the cluster")
    if endpoint.host_network:
        return Membership(Dataplane.NONE, f"{endpoint.name} uses the host network, which "
                          "Istio neither injects nor captures")
    if endpoint.mesh_proxy:
        return Membership(Dataplane.SIDECAR, f"{endpoint.name} runs the "
                          f"{endpoint.mesh_proxy} sidecar")
    assert endpoint.namespace is not None
    ns_labels = namespaces.labels(endpoint.namespace)
    labels = endpoint.labels
    injected: Tri
    if live and not endpoint.template:
        injected, why = False, "its spec has no istio-proxy container"
    elif endpoint.namespace in _NEVER_INJECTED:
        injected, why = False, f"namespace {endpoint.namespace} is never injected"
    elif labels.get(INJECT) == "false" or (ns_labels or {}).get("istio-injection") == "disabled":
        injected, why = False, "sidecar injection is disabled by label"
    elif labels.get(INJECT) == "true" or "istio.io/rev" in labels or (
            ns_labels is not None and (ns_labels.get("istio-injection") == "enabled"
                                       or "istio.io/rev" in ns_labels)):
        injected = endpoint.annotations.get(INJECT) != "false"
        why = "sidecar injection is enabled by label" if injected else \
            f"annotation {INJECT}=false opts it out of injection"
    elif ns_labels is None:
        return Membership(None, f"namespace {endpoint.namespace} is not in the input, so "
                          f"whether {endpoint.name} gets an Istio sidecar is unknown")
    else:
        injected, why = False, "no injection label on the pod or its namespace"
    if injected:
        return Membership(Dataplane.SIDECAR, f"{endpoint.name}: {why}")
    pod_mode = labels.get(DATAPLANE_MODE)
    if endpoint.annotations.get("ambient.istio.io/redirection") == "enabled" or (
            pod_mode != "none" and (pod_mode == "ambient" or (
                ns_labels is not None and ns_labels.get(DATAPLANE_MODE) == "ambient"))):
        return Membership(Dataplane.AMBIENT, f"{endpoint.name} is in ambient mode "
                          f"({DATAPLANE_MODE}=ambient)")
    if ns_labels is None and pod_mode is None:
        return Membership(None, f"namespace {endpoint.namespace} is not in the input, so "
                          f"whether {endpoint.name} is in ambient mode is unknown")
    return Membership(Dataplane.NONE, f"{endpoint.name} is not in the mesh ({why}; not "
                      "ambient)")


def principal(endpoint: Endpoint) -> str:
    """The SPIFFE identity Istio issues a pod, as policies write it (no ``spiffe://``)."""
    return f"{TRUST_DOMAIN}/ns/{endpoint.namespace}/sa/{endpoint.service_account or 'default'}"


def identity_facts(endpoint: Endpoint) -> tuple[object, ...]:
    """What besides namespace and labels Istio's verdict can depend on, per pod."""
    annotations: Mapping[str, str] = endpoint.annotations
    return (endpoint.service_account, endpoint.mesh_proxy,
            tuple(sorted((k, v) for k, v in annotations.items()
                         if k in (INJECT, EXCLUDE_INBOUND, INCLUDE_INBOUND,
                                  "ambient.istio.io/redirection"))))
