"""The discovery documents the simulator serves, as kube-apiserver writes them: APIGroup,
APIResourceList, and aggregated discovery's APIGroupDiscoveryList (every version of each
group, highest priority first, with its resources, in one answer)."""

from __future__ import annotations

from typing import Any

from netsight.sim.resources import Registry
from netsight.sim.state import ApiError


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    # ``versions`` come highest priority first; a real API server prefers the first.
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
            "preferredVersion": entries[0]}


def aggregated(registry: Registry, version: str, *, core: bool
               ) -> tuple[dict[str, Any], int, dict[str, str]]:
    """json_response's arguments for the core group's or the others' aggregated discovery."""
    groups = {"": ["v1"]} if core else registry.groups()
    items = [{"metadata": {"name": group} if group else {},
              "versions": [{"version": v, "freshness": "Current", "resources": [
                  t.aggregated() for t in registry
                  if t.group == group and t.version == v]} for v in versions]}
             for group, versions in groups.items()]
    kind = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
    return ({"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
             "metadata": {}, "items": items}, 200, {"Content-Type": kind})


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any]:
    types = [t for t in registry if t.group == group and t.version == version]
    if not types:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": [t.discovery() for t in types]}
