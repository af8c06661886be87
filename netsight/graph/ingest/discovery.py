"""Which kinds to watch: the core networking kinds, those of the networking providers
whose CRDs are installed, and the kinds watched by name only (metadata)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from netsight.graph.ingest.api_responses import NotServed, Transport, get_json
from netsight.graph.model.api_versions import by_priority
from netsight.graph.model.kinds import WORKLOAD_KINDS, kind_id, parse_key
from netsight.graph.model.records import DNS_CONFIG_MAPS

META_GROUP = "meta.k8s.io"
# Every probe pod netsight creates carries this label (netsight/probes). Probe pods are
# never watched into the graph: they copy a source pod's labels, so Services and policies
# would select them and every analyzer would count a pod that lives for seconds.
PROBE_ID_LABEL = "netsight.io/probe-id"


@dataclass(frozen=True, slots=True)
class WatchedKind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    # Listed and watched as PartialObjectMetadata: the object's identity and labels, never
    # its body (a Secret's data must not even reach netsight's memory).
    metadata_only: bool = False
    # One object only, by namespace and name (a fieldSelector on metadata.name, which RBAC's
    # resourceNames can then authorize): the cluster DNS ConfigMaps, with DNS_CONFIG.
    only: tuple[str, str] | None = None
    # Objects ("namespace/name") another informer of the kind keeps: never applied or
    # deleted by this one.
    excluded: frozenset[str] = frozenset()
    # Watched only in these namespaces (a provider's controllers), one informer each.
    namespaces: tuple[str, ...] | None = None
    # A label selector every list and watch sends (Istio's webhooks: istio.io/rev).
    labels: str | None = None

    @property
    def accept(self) -> tuple[str, str] | None:
        """Accept headers asking for metadata only, for lists and for watches."""
        if not self.metadata_only:
            return None
        # No plain application/json fallback: a server that cannot answer with metadata
        # only must refuse (406) rather than send whole Secrets.
        return (f"application/json;as=PartialObjectMetadataList;g={META_GROUP};v=v1",
                f"application/json;as=PartialObjectMetadata;g={META_GROUP};v=v1")

    @property
    def label_selector(self) -> str | None:
        """The selector every list and watch of this kind sends, if any."""
        if self.labels is not None:
            return self.labels
        return f"!{PROBE_ID_LABEL}" if self.group == "" and self.kind == "Pod" else None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.only is not None:
            return f"{base}/namespaces/{self.only[0]}/{self.plural}"
        return f"{base}/{self.plural}"

    def path_in(self, namespace: str) -> str:
        """The collection of one namespace's objects (a namespaced kind)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/namespaces/{namespace}/{self.plural}"

    @property
    def selection(self) -> list[tuple[str, str]]:
        """Query parameters narrowing lists and watches: to :attr:`only`, and by
        :attr:`label_selector`."""
        found = [] if self.only is None else [("fieldSelector", f"metadata.name={self.only[1]}")]
        if (labels := self.label_selector) is not None:
            found.append(("labelSelector", labels))
        return found

    @property
    def kind_id(self) -> str:
        """The kind as graph keys spell it."""
        return kind_id(self.api_version, self.kind)

    @property
    def status_key(self) -> str:
        """Where the informer's sync status is kept: the kind, or the one object watched."""
        if self.only is None:
            return self.kind_id
        return f"{self.kind_id}/{self.only[0]}/{self.only[1]}"

    def keeps(self, namespace: str, name: str) -> bool:
        """Whether this informer applies (and reconciles) the object."""
        if self.only is not None:
            return (namespace, name) == self.only
        return f"{namespace}/{name}" not in self.excluded

    def keeps_object(self, obj: Mapping[str, Any]) -> bool:
        """:meth:`keeps` for a raw object (a malformed one is kept: its apply reports it)."""
        if self.only is None and not self.excluded:
            return True
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping):
            return True
        return self.keeps(str(meta.get("namespace") or ""), str(meta.get("name") or ""))

    def kept_elsewhere(self, keys: Iterable[str]) -> set[str]:
        """Of the graph keys of this kind, those another informer keeps (the cluster DNS
        ConfigMaps, and the ConfigMaps watched by name only, keep apart ones)."""
        if self.only is None and not self.excluded:
            return set()
        return {key for key in keys if not self.keeps(*parse_key(key)[1:])}


# Kinds watched whenever the API serves them.
CORE_KINDS: tuple[tuple[str, str], ...] = (
    ("", "Namespace"), ("", "Pod"), ("", "Service"),
    ("discovery.k8s.io", "EndpointSlice"), ("networking.k8s.io", "NetworkPolicy"),
    ("networking.k8s.io", "Ingress"), ("networking.k8s.io", "IngressClass"),
)

# Kinds whose objects only matter by name (a TLS certificateRef, a CA bundle reference):
# watched as metadata only, when the settings keep them.
METADATA_ONLY_KINDS: frozenset[tuple[str, str]] = frozenset({("", "Secret"), ("", "ConfigMap")})

# Provider API groups -> (provider name, kinds to watch; None: every kind in the group).
PROVIDER_GROUPS: dict[str, tuple[str, frozenset[str] | None]] = {
    "gateway.networking.k8s.io": ("gateway-api", None),
    "gateway.networking.x-k8s.io": ("gateway-api", None),
    "policy.networking.k8s.io": ("network-policy-api", None),
    "networking.istio.io": ("istio", frozenset({
        "VirtualService", "DestinationRule", "Gateway", "ServiceEntry", "Sidecar",
        "WorkloadEntry", "WorkloadGroup", "EnvoyFilter"})),
    "security.istio.io": ("istio", frozenset({
        "AuthorizationPolicy", "PeerAuthentication", "RequestAuthentication"})),
    # Istio's policies that attach to a Gateway through targetRefs, like the two above.
    "telemetry.istio.io": ("istio", frozenset({"Telemetry"})),
    "extensions.istio.io": ("istio", frozenset({"WasmPlugin"})),
    "cilium.io": ("cilium", frozenset({
        "CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy", "CiliumCIDRGroup"})),
    "crd.projectcalico.org": ("calico", frozenset({
        "NetworkPolicy", "GlobalNetworkPolicy", "NetworkSet", "GlobalNetworkSet", "Tier"})),
    # projectcalico.org (Calico's API server) serves the same objects as these CRDs: not
    # watched twice.
    "policy.linkerd.io": ("linkerd", frozenset({
        "Server", "ServerAuthorization", "AuthorizationPolicy", "MeshTLSAuthentication",
        "NetworkAuthentication", "HTTPRoute"})),
    "linkerd.io": ("linkerd", frozenset({"ServiceProfile"})),
    "kuma.io": ("kuma", frozenset({
        "Mesh", "MeshTrafficPermission", "MeshHTTPRoute", "MeshTCPRoute", "MeshService",
        "TrafficPermission", "TrafficRoute"})),
    "gateway.kgateway.dev": ("kgateway", None),
    # Envoy Gateway's policies attach to Gateways, listeners and routes through targetRefs;
    # its Backend is a route's backendRef.
    "gateway.envoyproxy.io": ("envoy-gateway", frozenset({
        "ClientTrafficPolicy", "BackendTrafficPolicy", "SecurityPolicy",
        "EnvoyExtensionPolicy", "Backend"})),
}

# Kinds objects refer to (as owners) that no informer watches.
NEVER_WATCHED: frozenset[str] = WORKLOAD_KINDS | {"Node"}

CRD_KIND = WatchedKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                       "customresourcedefinitions", False)


# With PROVIDER_STATUS, what check_provider_status and the CNI detection read: the
# Deployments and DaemonSets of the namespaces networking providers install into (never
# every workload of the cluster), the Nodes by name and annotations, and the injection
# webhooks of Istio's revisions and tags, by their label.
PROVIDER_NAMESPACES: tuple[str, ...] = (
    "kube-system", "kube-flannel", "calico-system", "tigera-operator", "istio-system",
    "linkerd", "kgateway-system", "envoy-gateway-system", "cilium", "ovn-kubernetes",
    "kuma-system")
PROVIDER_KINDS: tuple[WatchedKind, ...] = (
    WatchedKind("apps", "v1", "Deployment", "deployments", True,
                namespaces=PROVIDER_NAMESPACES),
    WatchedKind("apps", "v1", "DaemonSet", "daemonsets", True, namespaces=PROVIDER_NAMESPACES),
    WatchedKind("", "v1", "Node", "nodes", False, metadata_only=True),
    WatchedKind("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations", False, metadata_only=True,
                labels="istio.io/rev"),
)


# The cluster DNS ConfigMaps (graph/model/records.py's DNS_CONFIG_MAPS), each watched whole
# by name with DNS_CONFIG.
DNS_CONFIG_OBJECTS = frozenset(f"{ns}/{name}" for ns, name in DNS_CONFIG_MAPS)


async def discover(transport: Transport,
                   metadata_only: frozenset[tuple[str, str]] = METADATA_ONLY_KINDS,
                   dns_config: bool = False, provider_status: bool = False
                   ) -> list[WatchedKind]:
    """The kinds to watch: core networking kinds, those of installed providers, the
    ``metadata_only`` kinds (by name only), with ``dns_config`` the cluster DNS
    ConfigMaps, each by name (the ConfigMaps watched by name only then leave them out), and
    with ``provider_status`` the PROVIDER_KINDS."""
    found: list[WatchedKind] = []
    groups = await get_json(transport, "/apis", accept=AGGREGATED)
    aggregated = groups.get("kind") == "APIGroupDiscoveryList"
    core_v1 = None
    if aggregated:
        core_v1 = _versions_of(await get_json(transport, "/api", accept=AGGREGATED)).get("v1")
    if core_v1 is None:
        core_v1 = await get_json(transport, "/api/v1")
    found.extend(_kinds_of("", "v1", core_v1, metadata_only))
    if dns_config:
        found = _with_dns_config(found, core_v1)
    for group in groups.get("items" if aggregated else "groups") or ():
        name = str(((group.get("metadata") or {}) if aggregated else group).get("name") or "")
        if name not in PROVIDER_GROUPS and not any(g == name for g, _ in CORE_KINDS):
            continue
        if aggregated:
            listed = _versions_of({"items": [group]})
            found.extend(await _group_kinds(name, list(listed), _at_hand(listed),
                                            metadata_only))
        else:
            found.extend(await _group_kinds(name, _listed_versions(group),
                                            _asking(transport, name), metadata_only))
    kept = [k for k in found if k.metadata_only or k.only or wanted(k.group, k.kind)]
    # Served by every API server netsight supports (apps/v1 and admissionregistration/v1
    # are GA since 1.9 and 1.16): no discovery request for them.
    return kept + list(PROVIDER_KINDS) if provider_status else kept


# Aggregated discovery (v2 from Kubernetes 1.30, v2beta1 from 1.27): every group's versions
# and resources in one answer. An older server answers the plain lists (the last type).
AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
              "application/json")

# A version's resources as an APIResourceList holds them; None: the version is not served.
Resources = Callable[[str], Awaitable[Mapping[str, Any] | None]]


def _versions_of(answer: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Version -> resources (as an APIResourceList holds them) of the first group of an
    APIGroupDiscoveryList, in its order: the preferred version first."""
    found: dict[str, dict[str, Any]] = {}
    for group in (answer.get("items") or ())[:1]:
        for version in group.get("versions") or ():
            found[str(version.get("version"))] = {"resources": [
                {"name": r.get("resource", ""), "kind": (r.get("responseKind") or {}).get("kind"),
                 "namespaced": r.get("scope") == "Namespaced", "verbs": r.get("verbs")}
                for r in version.get("resources") or ()]}
    return found


def _listed_versions(group: Mapping[str, Any]) -> list[str]:
    """An APIGroup's versions, the preferred one first."""
    preferred = str((group.get("preferredVersion") or {}).get("version") or "")
    listed = [str(v["version"]) for v in group.get("versions") or ()
              if isinstance(v, Mapping) and v.get("version")]
    return ([preferred] if preferred else []) + [v for v in listed if v != preferred]


def _at_hand(listed: Mapping[str, Mapping[str, Any]]) -> Resources:
    async def get(version: str) -> Mapping[str, Any] | None:
        return listed.get(version)
    return get


def _asking(transport: Transport, group: str) -> Resources:
    async def get(version: str) -> Mapping[str, Any] | None:
        try:
            return await get_json(transport, f"/apis/{group}/{version}")
        except NotServed:
            return None
    return get


async def _group_kinds(name: str, versions: list[str], resources_of: Resources,
                       metadata_only: frozenset[tuple[str, str]]) -> list[WatchedKind]:
    """Each kind of the group once: in the preferred version (the first of ``versions``)
    if that serves it, else in the highest-priority version that does, as client-go's
    discovery picks. A group's kinds need not share a version (Gateway API's
    ReferenceGrant is v1beta1 only, beside v1)."""
    needed = _kinds_needed(name, metadata_only)
    kinds: dict[str, WatchedKind] = {}
    for version in versions[:1] + by_priority(versions[1:]):
        if needed is not None and needed <= kinds.keys():
            break  # no request for versions that can add nothing watched
        resources = await resources_of(version)
        if resources is None:
            continue
        for kind in _kinds_of(name, version, resources, metadata_only):
            kinds.setdefault(kind.kind, kind)
    return list(kinds.values())


def _kinds_needed(group: str, metadata_only: frozenset[tuple[str, str]]
                  ) -> frozenset[str] | None:
    """The kinds of ``group`` discover() keeps; None: every kind."""
    _, provided = PROVIDER_GROUPS.get(group, ("", frozenset()))
    if provided is None:
        return None
    return frozenset({*provided, *(k for g, k in CORE_KINDS if g == group),
                      *(k for g, k in metadata_only if g == group)})


def _with_dns_config(found: list[WatchedKind], core: Mapping[str, Any]) -> list[WatchedKind]:
    served = [k for k in _kinds_of("", "v1", core) if k.kind == "ConfigMap"]
    if not served:
        return found
    kept = [replace(k, excluded=DNS_CONFIG_OBJECTS) if k.kind == "ConfigMap" else k
            for k in found]
    return kept + [replace(served[0], only=only) for only in DNS_CONFIG_MAPS]


def wanted(group: str, kind: str) -> bool:
    if (group, kind) in CORE_KINDS:
        return True
    provider = PROVIDER_GROUPS.get(group)
    return provider is not None and (provider[1] is None or kind in provider[1])


def providers_of(kinds: Iterable[WatchedKind]) -> set[str]:
    return {PROVIDER_GROUPS[k.group][0] for k in kinds if k.group in PROVIDER_GROUPS}


def _kinds_of(group: str, version: str, resources: Mapping[str, Any],
              metadata_only: frozenset[tuple[str, str]] = frozenset()) -> list[WatchedKind]:
    kinds = []
    for entry in resources.get("resources") or ():
        name = str(entry.get("name", ""))
        verbs = entry.get("verbs") or ()
        if "/" in name or "list" not in verbs or "watch" not in verbs:
            continue  # subresources (pods/status) and kinds that cannot be watched
        kind = str(entry["kind"])
        kinds.append(WatchedKind(group, version, kind, name, bool(entry.get("namespaced")),
                                 metadata_only=(group, kind) in metadata_only))
    return kinds
