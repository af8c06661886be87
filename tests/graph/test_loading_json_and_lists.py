"""JSON files, ``kind: List``, typed lists from the API (items without kind/apiVersion) and
top-level arrays all expand into their objects."""

from __future__ import annotations

import json
from pathlib import Path

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphStore, ProblemKind
from tests.conftest import store_from_yaml


def test_json_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "svc.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Service",
                                "metadata": {"name": "web", "namespace": "shop"},
                                "spec": {"ports": [{"port": 80}]}}, indent=2))
    store = GraphStore()

    load_manifests(store, [str(path)])

    assert store.problems == {}
    record = store.state.record("Service/shop/web")
    assert isinstance(record, ServiceRecord)
    assert record.ports[0].port == 80


def test_json_array_and_list_kind(tmp_path: Path) -> None:
    path = tmp_path / "objects.json"
    path.write_text(json.dumps([
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}]},
    ]))
    store = GraphStore()

    report = load_manifests(store, [str(path)])

    assert set(store.state.graph) == {"Pod/default/a", "Pod/default/b"}
    assert report.objects == 2


def test_invalid_json_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "a"}\n')
    store = GraphStore()

    load_manifests(store, [str(path)])

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.UNPARSEABLE
    assert problem.location is not None
    assert problem.location.startswith(f"{path}:")


def test_kind_list_from_kubectl() -> None:
    store = store_from_yaml("""
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: shop}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop}
""")
    assert store.problems == {}
    assert set(store.state.graph) == {"Service/shop/web", "Deployment/shop/web"}


def test_typed_list_items_take_kind_and_api_version_from_the_list() -> None:
    store = store_from_yaml("""
apiVersion: v1
kind: ServiceList
items:
- metadata: {name: web, namespace: shop}
  spec: {ports: [{port: 80}]}
- metadata: {name: db, namespace: shop}
""")
    assert store.problems == {}
    record = store.state.record("Service/shop/web")
    assert isinstance(record, ServiceRecord)
    assert record.api_version == "v1"
    assert set(store.state.graph) == {"Service/shop/web", "Service/shop/db"}


def test_typed_list_in_a_group_keeps_the_group() -> None:
    store = store_from_yaml("""
apiVersion: networking.k8s.io/v1
kind: NetworkPolicyList
items:
- metadata: {name: deny, namespace: shop}
  spec: {podSelector: {}}
""")
    assert store.problems == {}
    assert set(store.state.graph) == {"NetworkPolicy/shop/deny"}


def test_top_level_yaml_array() -> None:
    store = store_from_yaml("""
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
- apiVersion: v1
  kind: Pod
  metadata: {name: b}
- not an object
""")
    assert set(store.state.graph) == {"Pod/default/a", "Pod/default/b"}
    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.NOT_AN_OBJECT
    # Line 2: the document's first line of content (the text opens with a newline).
    assert problem.location == "<stdin>:2[2]"
