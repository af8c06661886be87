"""The API resources the simulated API server serves: built-ins and CRD-registered ones."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.graph.model.api_versions import by_priority

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True, slots=True)
class ResourceType:
    group: str  # "" for the core group
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = VERBS

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular(self) -> str:
        return self.kind.lower()

    def path(self, namespace: str | None = None) -> str:
        """The collection path, e.g. /apis/apps/v1/namespaces/x/deployments."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"

    def discovery(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        return entry


    def aggregated(self) -> dict[str, Any]:
        """The resource as aggregated discovery (APIGroupDiscoveryList) lists it."""
        entry: dict[str, Any] = {
            "resource": self.plural,
            "responseKind": {"group": self.group, "version": self.version, "kind": self.kind},
            "scope": "Namespaced" if self.namespaced else "Cluster",
            "singularResource": self.singular,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        return entry


def _t(group: str, version: str, kind: str, plural: str, namespaced: bool = True,
       *short: str, verbs: tuple[str, ...] = VERBS) -> ResourceType:
    return ResourceType(group, version, kind, plural, namespaced, tuple(short), verbs)


BUILTIN: tuple[ResourceType, ...] = (
    _t("", "v1", "Namespace", "namespaces", False, "ns"),
    _t("", "v1", "Pod", "pods", True, "po"),
    _t("", "v1", "Service", "services", True, "svc"),
    _t("", "v1", "Endpoints", "endpoints", True, "ep"),
    _t("", "v1", "Node", "nodes", False, "no"),
    _t("", "v1", "ServiceAccount", "serviceaccounts", True, "sa"),
    _t("", "v1", "ConfigMap", "configmaps", True, "cm"),
    _t("", "v1", "Secret", "secrets", True),
    # Served (empty unless a test writes some) so that clients which read a namespace's
    # events, as kubernetes-mcp-server's events_list does, get a list and not a 404.
    _t("", "v1", "Event", "events", True, "ev"),
    _t("apps", "v1", "Deployment", "deployments", True, "deploy"),
    _t("apps", "v1", "ReplicaSet", "replicasets", True, "rs"),
    _t("apps", "v1", "StatefulSet", "statefulsets", True, "sts"),
    _t("apps", "v1", "DaemonSet", "daemonsets", True, "ds"),
    _t("batch", "v1", "Job", "jobs", True),
    _t("batch", "v1", "CronJob", "cronjobs", True, "cj"),
    _t("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    _t("events.k8s.io", "v1", "Event", "events", True, "ev"),
    _t("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, "netpol"),
    _t("networking.k8s.io", "v1", "Ingress", "ingresses", True, "ing"),
    _t("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
    _t("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
       False, "crd", "crds"),
    _t("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
       "mutatingwebhookconfigurations", False),
    _t("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False,
       verbs=("create",)),
    _t("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False,
       verbs=("create",)),
)

CRD_TYPE = next(t for t in BUILTIN if t.kind == "CustomResourceDefinition")


def types_from_crd(crd: Mapping[str, Any]) -> list[ResourceType]:
    """The resource types a CustomResourceDefinition serves (one per served version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not (isinstance(group, str) and isinstance(kind, str) and isinstance(plural, str)):
        raise ValueError("spec.group, spec.names.kind and spec.names.plural are required")
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    short = tuple(names.get("shortNames") or ())
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served")]
    if not versions:
        raise ValueError("spec.versions must hold at least one served version")
    return [ResourceType(group, str(v["name"]), kind, plural, namespaced, short)
            for v in versions]


@dataclass
class Registry:
    """Resource types by group/version/plural, kept in step with the CRDs that exist."""

    by_path: dict[tuple[str, str, str], ResourceType] = field(default_factory=dict)

    @classmethod
    def with_builtins(cls) -> Registry:
        registry = cls()
        for rtype in BUILTIN:
            registry.add(rtype)
        return registry

    def add(self, rtype: ResourceType) -> None:
        self.by_path[(rtype.group, rtype.version, rtype.plural)] = rtype

    def remove(self, rtype: ResourceType) -> None:
        self.by_path.pop((rtype.group, rtype.version, rtype.plural), None)

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self.by_path.get((group, version, plural))

    def for_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, sep, version = api_version.rpartition("/")
        if not sep:
            group, version = "", api_version
        for rtype in self.by_path.values():
            if rtype.group == group and rtype.version == version and rtype.kind == kind:
                return rtype
        return None

    def require(self, api_version: str, kind: str) -> ResourceType:
        """The type serving ``kind``; ValueError when none does (no CRD for it, say)."""
        rtype = self.for_kind(api_version, kind)
        if rtype is None:
            raise ValueError(f"the state does not serve {api_version} {kind}")
        return rtype

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(self.by_path.values())

    def groups(self) -> dict[str, list[str]]:
        """Group -> served versions (the core group excluded), highest priority first: the
        order an API server lists a group's versions in, the first being the preferred one
        (apiextensions orders every CRD version of a group so)."""
        found: dict[str, list[str]] = {}
        for rtype in self.by_path.values():
            if rtype.group:
                found.setdefault(rtype.group, []).append(rtype.version)
        return {group: by_priority(versions) for group, versions in found.items()}
