"""The vocabulary of the graph: object kinds, relationship types and node keys.

Every node is keyed by a string, ``Kind/namespace/name`` for namespaced objects and
``Kind/name`` for cluster-scoped ones, so keys read the same way users type them.
Kinds whose bare name is ambiguous across API groups (Istio's ``Gateway`` and Gateway
API's ``Gateway``) carry their group: ``Gateway.networking.istio.io``.
"""

from __future__ import annotations

import functools
import sys
from enum import StrEnum
from typing import NamedTuple


class Kind(StrEnum):
    """Kinds netsight models with a record of their own; any other kind is generic."""

    NAMESPACE = "Namespace"
    POD = "Pod"
    SERVICE = "Service"
    ENDPOINT_SLICE = "EndpointSlice"
    ENDPOINTS = "Endpoints"
    NETWORK_POLICY = "NetworkPolicy"
    INGRESS = "Ingress"
    INGRESS_CLASS = "IngressClass"
    # Workloads carry a pod template: in manifests they stand for the pods they would create.
    DEPLOYMENT = "Deployment"
    STATEFUL_SET = "StatefulSet"
    DAEMON_SET = "DaemonSet"
    REPLICA_SET = "ReplicaSet"
    REPLICATION_CONTROLLER = "ReplicationController"
    JOB = "Job"
    CRON_JOB = "CronJob"


WORKLOAD_KINDS: frozenset[str] = frozenset(
    {
        Kind.DEPLOYMENT,
        Kind.STATEFUL_SET,
        Kind.DAEMON_SET,
        Kind.REPLICA_SET,
        Kind.REPLICATION_CONTROLLER,
        Kind.JOB,
        Kind.CRON_JOB,
    }
)

# Kinds that run pods, or stand for pods: label selectors of Services and policies match these.
POD_LIKE_KINDS: frozenset[str] = WORKLOAD_KINDS | {Kind.POD}

# (group, kind) -> the kind id used in keys. The core group is "".
_MODELED: dict[tuple[str, str], str] = {
    ("", "Namespace"): Kind.NAMESPACE,
    ("", "Pod"): Kind.POD,
    ("", "Service"): Kind.SERVICE,
    ("", "Endpoints"): Kind.ENDPOINTS,
    ("", "ReplicationController"): Kind.REPLICATION_CONTROLLER,
    ("discovery.k8s.io", "EndpointSlice"): Kind.ENDPOINT_SLICE,
    ("networking.k8s.io", "NetworkPolicy"): Kind.NETWORK_POLICY,
    ("networking.k8s.io", "Ingress"): Kind.INGRESS,
    ("networking.k8s.io", "IngressClass"): Kind.INGRESS_CLASS,
    ("extensions", "Ingress"): Kind.INGRESS,
    ("apps", "Deployment"): Kind.DEPLOYMENT,
    ("apps", "StatefulSet"): Kind.STATEFUL_SET,
    ("apps", "DaemonSet"): Kind.DAEMON_SET,
    ("apps", "ReplicaSet"): Kind.REPLICA_SET,
    ("batch", "Job"): Kind.JOB,
    ("batch", "CronJob"): Kind.CRON_JOB,
}

# Bare kind names that exist in more than one API group. The group users mean most often
# keeps the bare name; the others carry their group in the key.
_PRIMARY_GROUP: dict[str, str] = {
    "Gateway": "gateway.networking.k8s.io",
    "NetworkPolicy": "networking.k8s.io",
    "AuthorizationPolicy": "security.istio.io",
    "HTTPRoute": "gateway.networking.k8s.io",  # also policy.linkerd.io
    "GRPCRoute": "gateway.networking.k8s.io",
    "Backend": "gateway.kgateway.dev",  # also gateway.envoyproxy.io
}

# Cluster-scoped kinds netsight knows of. For other kinds the manifest decides: an object
# without metadata.namespace is taken as cluster-scoped only when its kind is listed here.
CLUSTER_SCOPED: frozenset[str] = frozenset(
    {
        Kind.NAMESPACE,
        Kind.INGRESS_CLASS,
        "Node",
        "PersistentVolume",
        "StorageClass",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "PriorityClass",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "APIService",
        "GatewayClass",
        "AdminNetworkPolicy",
        "BaselineAdminNetworkPolicy",
        "ClusterNetworkPolicy",
        "CiliumClusterwideNetworkPolicy",
        "GlobalNetworkPolicy",
        "GlobalNetworkSet",
        "HostEndpoint",
        "Mesh",  # Kuma's
    }
)


class Rel(StrEnum):
    """Edge types, each read as ``source --rel--> target``."""

    CONTAINS = "contains"  # Namespace -> namespaced object
    SELECTS = "selects"  # Service -> Pod or workload template
    BELONGS_TO = "belongs_to"  # EndpointSlice/Endpoints -> Service
    TARGETS = "targets"  # EndpointSlice/Endpoints -> Pod
    APPLIES_TO = "applies_to"  # NetworkPolicy -> Pod or workload template
    # Ingress, Gateway API route or Istio VirtualService -> backend (destination) Service
    ROUTES_TO = "routes_to"
    USES_CLASS = "uses_class"  # Ingress -> IngressClass, Gateway -> GatewayClass
    OWNED_BY = "owned_by"  # object -> its controller owner
    # Gateway API route -> a parentRef (Gateway, ListenerSet, or mesh Service); ListenerSet ->
    # its parent Gateway
    ATTACHES_TO = "attaches_to"
    # A policy -> the object its spec.targetRef(s) name (Gateway API policy attachment,
    # GEP-713): BackendTLSPolicy -> Service, ClientTrafficPolicy -> Gateway, ...
    TARGET_REF = "target_ref"
    # Istio VirtualService (its hosts) or DestinationRule (its host) -> the Service it acts on
    CONFIGURES = "configures"


def api_group(api_version: str) -> str:
    """``apps/v1`` -> ``apps``; ``v1`` -> ``""`` (the core group)."""
    group, sep, _ = api_version.rpartition("/")
    return group if sep else ""


# The longest apiVersion (a DNS subdomain, "/", a DNS label) and kind Kubernetes accepts:
# longer pairs (from a caller's proposal) are resolved without being kept.
_LONGEST_PAIR = 253 + 1 + 63 + 63


def kind_id(api_version: str, kind: str) -> str:
    """The kind id used in node keys for an object of this apiVersion and kind."""
    if len(api_version) + len(kind) > _LONGEST_PAIR:
        return _kind_id(api_version, kind)
    return _cached_kind_id(api_version, kind)


def _kind_id(api_version: str, kind: str) -> str:
    group = api_group(api_version)
    modeled = _MODELED.get((group, kind))
    if modeled is not None:
        return modeled
    primary = _PRIMARY_GROUP.get(kind)
    if primary is not None and group != primary:
        return f"{kind}.{group}"
    return kind


# Called for every object and owner reference, with a handful of distinct pairs.
_cached_kind_id = functools.lru_cache(maxsize=1024)(_kind_id)


def is_cluster_scoped(kind: str) -> bool:
    return kind in CLUSTER_SCOPED


class ObjectId(NamedTuple):
    """What identifies one object: its kind id, namespace ("" if cluster-scoped) and name."""

    kind: str
    namespace: str
    name: str

    @property
    def key(self) -> str:
        return make_key(self.kind, self.namespace, self.name)


def make_key(kind: str, namespace: str, name: str) -> str:
    # Interned: a key is stored in the graph, its adjacency and several indexes, and is
    # rebuilt from records again and again; one string object per key, not one per use.
    return sys.intern(f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}")


def parse_key(key: str) -> ObjectId:
    kind, _, rest = key.partition("/")
    namespace, sep, name = rest.partition("/")
    if not sep:
        return ObjectId(kind, "", namespace)
    return ObjectId(kind, namespace, name)
