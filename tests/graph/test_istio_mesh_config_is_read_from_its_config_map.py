"""istiod's mesh config (the ``mesh`` key of ConfigMap istio-system/istio): the fields that
decide mTLS are kept on the record, the rest of the data is not; any other ConfigMap keeps
none, and a mesh config that does not parse says why."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.graph.model.mesh_settings import MeshSettings
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import ConfigMapRecord


def config_map(name: str = "istio", namespace: str = "istio-system", **fields: Any
               ) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, **fields}


@pytest.mark.parametrize(("mesh", "settings"), [
    ("rootNamespace: mesh-root\nenableAutoMtls: false\ntrustDomain: x\n",
     MeshSettings("mesh-root", False)),
    ("defaultConfig:\n  discoveryAddress: istiod:15012\n", MeshSettings()),
    ("", MeshSettings()),
    ("enableAutoMtls: 'no'\n", MeshSettings(problem="enableAutoMtls is not true or false")),
    ("rootNamespace: [a]\n", MeshSettings(problem="rootNamespace is not a namespace name")),
    ("- a list\n", MeshSettings(problem="data.mesh is not a mapping")),
])
def test_the_mesh_config_fields_are_kept(mesh: str, settings: MeshSettings) -> None:
    record = to_record(config_map(data={"mesh": mesh, "meshNetworks": "networks: {}"}))
    assert isinstance(record, ConfigMapRecord)
    assert record.mesh_config == settings
    assert "discoveryAddress" not in repr(record)


def test_unparseable_yaml_is_a_problem() -> None:
    record = to_record(config_map(data={"mesh": "a: [b"}))
    assert isinstance(record, ConfigMapRecord)
    assert record.mesh_config is not None
    assert (record.mesh_config.problem or "").startswith("data.mesh is not YAML")


@pytest.mark.parametrize("raw", [
    config_map(name="other", data={"mesh": "enableAutoMtls: false"}),
    config_map(namespace="shop", data={"mesh": "enableAutoMtls: false"}),
    config_map(),  # metadata only, as a cluster's ConfigMaps arrive
])
def test_other_config_maps_and_metadata_keep_nothing(raw: dict[str, Any]) -> None:
    record = to_record(raw)
    assert isinstance(record, ConfigMapRecord)
    assert record.mesh_config is None
