"""The fields of Istio's mesh config that decide mTLS, read from istiod's ConfigMap.

istiod reads its MeshConfig from the ``mesh`` key (YAML) of the ConfigMap ``istio`` in its
own namespace. Of it netsight keeps what decides which policies apply where and whether
clients encrypt on their own: ``rootNamespace`` (where mesh-wide policies live; default
istiod's namespace, ``istio-system``) and ``enableAutoMtls`` (default true).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

MESH_CONFIG_MAP = ("istio-system", "istio")  # (namespace, name) of the default revision's
MESH_KEY = "mesh"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class MeshSettings:
    """What the mesh config sets (None: not set, Istio's default applies), or why it could
    not be read."""

    root_namespace: str | None = None
    auto_mtls: bool | None = None
    problem: str | None = None


def read_mesh_settings(namespace: str | None, name: str, data: Any) -> MeshSettings | None:
    """The settings of istiod's mesh ConfigMap; None for any other ConfigMap, or one whose
    data is not at hand."""
    if (namespace, name) != MESH_CONFIG_MAP or not isinstance(data, Mapping):
        return None
    raw = data.get(MESH_KEY)
    if raw is None:
        return MeshSettings()  # an empty mesh config: every default
    if not isinstance(raw, str):
        return MeshSettings(problem=f"data.{MESH_KEY} is not a string")
    try:
        mesh = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as error:
        return MeshSettings(problem=f"data.{MESH_KEY} is not YAML ({str(error)[:80]})")
    if mesh is None:
        return MeshSettings()
    if not isinstance(mesh, Mapping):
        return MeshSettings(problem=f"data.{MESH_KEY} is not a mapping")
    root, auto = mesh.get("rootNamespace"), mesh.get("enableAutoMtls")
    if root is not None and (not isinstance(root, str) or not root):
        return MeshSettings(problem="rootNamespace is not a namespace name")
    if auto is not None and not isinstance(auto, bool):
        return MeshSettings(problem="enableAutoMtls is not true or false")
    return MeshSettings(root, auto)
